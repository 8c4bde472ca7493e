/* create_group.h: a communicator of given processes, made by the MPI
 * (pmpi/create_group.c). */
#ifndef FTSHIM_PMPI_CREATE_GROUP_H
#define FTSHIM_PMPI_CREATE_GROUP_H

#include <mpi.h>
#include <stdint.h>

#include "pmpi/fn_table.h"

/* MPI_Comm_create_group(comm, the n processes of job ranks world, tag)
 * for the call fn, under the hang watch: an MPI error code. */
int ftp_create_group_of(MPI_Comm comm, const int32_t *world, uint32_t n, int tag, enum ftp_fn fn,
			MPI_Comm *out);

#endif
