/* preflight.c: the MPI-free checks MPI_Init makes before MPI starts (see
 * preflight.h); their lines are the library's, word for word, wherever
 * they are printed. */
#include "ftshim_config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>

#include "src/preflight.h"
#include "src/log.h"
#include "src/overlay.h"

int ft_preflight_unknown(char *const *envp, char *out, size_t outlen)
{
	/* Room for the sentence around the names. */
	char names[FT_CONFIG_ERR_MAX - 128];
	int n = ft_config_unknown(envp, names, sizeof names);

	if (n > 0)
		snprintf(out, outlen,
			 "warning: %s %s not %s of ftshim's, ignored; the variables are listed in "
			 "'man 7 ftshim'",
			 names, n == 1 ? "is" : "are", n == 1 ? "a variable" : "variables");
	return n;
}

int ft_preflight_log_file(const struct ft_config *cfg, char *err, size_t errlen)
{
	char path[PATH_MAX];

	if (!cfg->log_file[0] || ft_log_expand_path(cfg->log_file, 0, path, sizeof path) != -EINVAL)
		return 0;
	snprintf(err, errlen,
		 "FTSHIM_LOG_FILE=%s: unknown %%-sequence; accepted: %%r (rank), %%h (host), %%p (pid), %%%%",
		 cfg->log_file);
	return -EINVAL;
}

int ft_preflight_iface(const struct ft_config *cfg, char *err, size_t errlen)
{
	char why[128];

	if (ft_overlay_check_iface(cfg->iface, why, sizeof why) == 0)
		return 0;
	snprintf(err, errlen, "FTSHIM_IFACE=%s: %s; accepted: an interface name or IPv4 address of this host",
		 cfg->iface, why);
	return -EINVAL;
}
