/* leave.c: the ways this process ends on ftshim's decision, from any
 * thread (pmpi/state.h declares them): leaving the job (ftp_leave), ending
 * with it (ftp_end_with_job), and telling Hydra's proxy this rank is done
 * first. Below every module that may decide to end the process. */
#include "ftshim_config.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "pmpi/leave.h"
#include "pmpi/state.h"
#include "pmpi/ranks.h"
#include "src/log.h"
#include "src/pmi.h"
#include "src/pmix.h"

/* Set while the MPI library's own MPI_Finalize runs: it talks on the PMI
 * connection then (a barrier), and ftp_leave must not. Application
 * thread writes; any thread reads. */
static _Atomic bool mpi_finalizing;

void ftp_pmi_done(int timeout_ms)
{
	int fd = ft_pmi_fd(), rc;

	if (fd >= 0 && (rc = ft_pmi_finalize(fd, timeout_ms)) != 0)
		ft_debug("PMI finalize on fd %d: %s", fd, strerror(-rc));
}

_Noreturn void ftp_end_with_job(int status)
{
	if (!atomic_load(&mpi_finalizing))
		ftp_pmi_done(500);
	ft_log_close();
	_exit(status);
}

_Noreturn void ftp_leave(int status)
{
	/* Open MPI: an orted that sees a rank exit with an error status never
	 * counts it as ended (see src/pmix.h), unless it killed it itself.
	 * (Not when the whole job ends, ftp_end_with_job: that kill would
	 * hold each rank up for the daemon's sigkill pause.) */
	if (ftp.world_size > 0) {
		uint32_t me = (uint32_t)ftp_world_of_job(ftp.rank);
		ft_pmix_kill(&me, 1);
	}
	ftp_end_with_job(status);
}

void ftp_leave_mpi_finalizing(void)
{
	atomic_store(&mpi_finalizing, true);
}
