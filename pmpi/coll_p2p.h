/* coll_p2p.h: ftshim's own point-to-point collectives (pmpi/coll_p2p.c). */
#ifndef FTSHIM_PMPI_COLL_P2P_H
#define FTSHIM_PMPI_COLL_P2P_H

#include "pmpi/state.h"

/* Make ftp.private_world; collective over
 * MPI_COMM_WORLD, called by every rank from MPI_Init. */
void ftp_coll_p2p_start(void);

#endif
