/* retire.h: MPI_Comm_free for communicators a failure touched
 * (pmpi/retire.c). */
#ifndef FTSHIM_PMPI_RETIRE_H
#define FTSHIM_PMPI_RETIRE_H

#include "pmpi/comm_lookup.h"

/* Free the MPI's communicator of e, which nothing uses any more: one
 * that may still have stale messages in flight is retired, not freed at
 * once. */
int ftp_comm_free_mpi(struct ftp_comm *e);

#endif
