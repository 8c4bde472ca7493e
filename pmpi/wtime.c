/* wtime.c: MPI_Wtime, which a recovery mode may decide (pmpi/mode/mode.h:
 * a replica reads its primary's clock, so that a program that decides by
 * the time decides the same on both copies); else the MPI's. Any thread. */
#include "ftshim_config.h"

#include "pmpi/state.h"
#include "pmpi/mode/mode.h"

FT_EXPORT double MPI_Wtime(void)
{
	if (__builtin_expect(ftp_mode_on(), 0) && ftp_mode_active->wtime && ftp_active())
		return ftp_mode_active->wtime();
	return ftp_mpi.PMPI_Wtime();
}
FTP_ALSO_PMPI(MPI_Wtime);
