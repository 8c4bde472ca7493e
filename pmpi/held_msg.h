/* held_msg.h: matched messages ftshim received for the program, under
 * message handles of the MPI's own (held_msg.c). */
#ifndef FTSHIM_PMPI_HELD_MSG_H
#define FTSHIM_PMPI_HELD_MSG_H

#include <mpi.h>

#include "pmpi/call_base.h"

/* Hold the message a matched probe of c found: data, its bytes packed
 * (malloc'd: held_msg.c owns it from here, also on failure), status the
 * probe's in the program's ranks. *message: the handle the program's
 * MPI_Mrecv or MPI_Imrecv gives back. MPI_SUCCESS or the MPI's error. */
int ftp_held_put(struct ftp_call *c, void *data, int bytes, const MPI_Status *status,
		 MPI_Message *message);

#endif
