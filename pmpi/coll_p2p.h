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
/* Whether the MPI's tags leave room for the exchanges' (above 32767,
 * where MPI promises only 32767). */
bool ftp_coll_p2p_tags_fit(void);
/* The exchanges' tag of kind (0 or 1) for the communicator of job-wide
 * id id on ftp.private_world: the same at every member. */
int ftp_coll_p2p_tag(uint64_t id, int kind);
/* The tag of the seq-th collective of the communicator of id (a view's,
 * whose nonblocking collectives may run together): one of
 * FTP_COLL_P2P_SEQ_TAGS in turn from its kind-0 tag on, so that as many
 * collectives in flight at once never match each other's messages. */
#define FTP_COLL_P2P_SEQ_TAGS 256
int ftp_coll_p2p_tag_seq(uint64_t id, uint32_t seq);

#endif
