/* coll_p2p.h: ftshim's own point-to-point collectives (pmpi/coll_p2p.c). */
#ifndef FTSHIM_PMPI_COLL_P2P_H
#define FTSHIM_PMPI_COLL_P2P_H

#include <stdbool.h>
#include <stdint.h>

#include "pmpi/state.h"

/* Read the MPI's tag bound (ftp.coll_tag_ub), at MPI_Init. */
void ftp_coll_p2p_start(void);
/* Whether the exchanges run on this MPI (then ftp.private_world must be
 * a duplicate of the world's). */
bool ftp_coll_p2p_wanted(void);
/* Whether ftp.private_world exists and the MPI's tags leave room for
 * the exchanges' (above 32767). */
bool ftp_coll_p2p_tags_fit(void);
/* The exchanges' tag of kind (0 or 1) for the communicator of job-wide
 * id id on ftp.private_world: the same at every member. */
int ftp_coll_p2p_tag(uint64_t id, int kind);

#endif
