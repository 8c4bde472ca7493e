/* leave.h: the ways this process ends on ftshim's decision (pmpi/leave.c),
 * from any thread. */
#ifndef FTSHIM_PMPI_LEAVE_H
#define FTSHIM_PMPI_LEAVE_H

#include "pmpi/state.h"

/* Leave on purpose, after MPI_Init: exit with status (an FT_EXIT_*) from
 * any thread, once its line is logged. A decision, not a crash: the rank
 * says PMI finalize first (unless the MPI's own MPI_Finalize is talking
 * there), or Hydra takes it for crashed: it signals every other proxy,
 * which at the end of a job can kill mpiexec with SIGPIPE (exit 141), and
 * may pass on a provisional raw status 1 ("Hangup") for this one. */
_Noreturn void ftp_leave(int status);

/* End this process with the job (its MPI_Abort or fatal error, or
 * another rank's), from any thread: the launcher is told as by
 * ftp_leave, so that Hydra passes on status rather than take the exit
 * for a crash ("Hangup", status 1). */
_Noreturn void ftp_end_with_job(int status);

/* Tell Hydra's proxy that this rank is done (see src/pmi.h), waiting at
 * most timeout_ms for its answer. */
void ftp_pmi_done(int timeout_ms);

/* The MPI's own MPI_Finalize starts: it talks on the PMI connection (a
 * barrier), and leaving must not any more (application thread). */
void ftp_leave_mpi_finalizing(void);

#endif
