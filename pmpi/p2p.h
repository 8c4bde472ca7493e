/* p2p.h: what pmpi/p2p.c, the hand-written point-to-point wrappers, lends
 * a recovery mode's forms of them (pmpi/mode/mode.h). */
#ifndef FTSHIM_PMPI_P2P_H
#define FTSHIM_PMPI_P2P_H

#include <mpi.h>

struct ftp_call;

/* MPI_Probe's own path from the program's source on: translated, polled
 * under the watch, its status in the program's ranks. */
int ftp_probe_on(struct ftp_call *c, int source, int tag, MPI_Status *status);

#endif
