/* mode.c: the core's side of the recovery-mode contract (pmpi/mode/mode.h):
 * the active mode, which pmpi/mode/registry.c sets at MPI_Init, and the
 * one line a call gets when the active mode has no form of it on a
 * covered communicator. Called by the wrappers, generated and
 * hand-written; below every mode. */
#include "ftshim_config.h"

#include "pmpi/call.h"
#include "pmpi/mode/mode.h"
#include "src/log.h"

const struct ftp_mode *ftp_mode_active;

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
