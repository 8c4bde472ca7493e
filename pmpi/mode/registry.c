/* registry.c: the recovery modes ftshim is built with, the choice of the
 * active one at MPI_Init (pmpi/mode/mode.h), and the one line a call gets
 * when the active mode has no form of it on a covered communicator. A new
 * mode is one more entry of `modes`, and a folder beside replication/.
 * Called by pmpi/init.c (ftp_mode_select) and by the wrappers, generated
 * and hand-written (ftp_mode_refuse). */
#include "ftshim_config.h"

#include <errno.h>
#include <stdio.h>

#include "pmpi/call.h"
#include "pmpi/mode/mode.h"
#include "src/log.h"

extern const struct ftp_mode ftp_replication_mode;

static const struct ftp_mode *const modes[] = {&ftp_replication_mode};

const struct ftp_mode *ftp_mode_active;

int ftp_mode_select(char *err, size_t errlen)
{
	const struct ftp_mode *chosen = NULL;

	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		int rc = modes[i]->parse(err, errlen);
		if (rc < 0)
			return rc;
		if (rc == 0)
			continue;
		if (chosen) {
			snprintf(err, errlen,
				 "%s=%s and %s=%s ask for two recovery modes; accepted: one of them",
				 chosen->variable, *chosen->setting, modes[i]->variable,
				 *modes[i]->setting);
			return -EINVAL;
		}
		chosen = modes[i];
	}
	ftp_mode_active = chosen;
	return 0;
}

int ftp_mode_refuse_because(struct ftp_call *c, const char *why)
{
	static const char *const names[] = FTP_FN_NAMES;
	const struct ftp_mode *m = ftp_mode_active;

	ft_error("%s on a %s communicator is not supported%s (%s=%s); run without %s, or see "
		 "'man 7 ftshim' (%s) for what is",
		 names[c->fn], m->covered_as, why, m->variable, *m->setting, m->variable, m->man_section);
	ftp_mpi.PMPI_Comm_call_errhandler(c->comm->handle, MPI_ERR_UNSUPPORTED_OPERATION);
	return MPI_ERR_UNSUPPORTED_OPERATION;
}

int ftp_mode_refuse(struct ftp_call *c)
{
	return ftp_mode_refuse_because(c, " yet");
}
