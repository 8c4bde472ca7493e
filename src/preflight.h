/* preflight.h: the checks of the configuration and of this node that
 * MPI_Init makes before MPI starts and that need no MPI, in one place for
 * the two that make them: the library (pmpi/init.c, which stops the rank
 * on an error) and ftshim-info --check (which reports it without a job).
 * Each fills one line, without the "ftshim: " prefix, naming the
 * variable, the value, what is wrong and what is accepted. Thread rule:
 * any thread; they read only their arguments and the host's interfaces. */
#ifndef FTSHIM_PREFLIGHT_H
#define FTSHIM_PREFLIGHT_H

#include <stddef.h>

#include "src/config.h"

/* The warning for the FTSHIM_ names of envp far from every variable's (a
 * near miss is ft_config_load's error): how many, and the line in out. */
int ft_preflight_unknown(char *const *envp, char *out, size_t outlen);

/* FTSHIM_LOG_FILE's template has only known %-sequences: 0, or -EINVAL
 * with the line in err. */
int ft_preflight_log_file(const struct ft_config *cfg, char *err, size_t errlen);

/* FTSHIM_IFACE, if set, names an IPv4 interface or address of this host:
 * 0, or -EINVAL with the line in err. */
int ft_preflight_iface(const struct ft_config *cfg, char *err, size_t errlen);

#endif
