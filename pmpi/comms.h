/* comms.h: the communicator registry's start and end (pmpi/comms.c), for
 * MPI_Init and MPI_Finalize. */
#ifndef FTSHIM_PMPI_COMMS_H
#define FTSHIM_PMPI_COMMS_H

#include "pmpi/ftp.h"

/* Register the predefined communicators (MPI_Init); unregister
 * everything (after PMPI_Finalize). */
int ftp_comms_init(void);
void ftp_comms_fini(void);

#endif
