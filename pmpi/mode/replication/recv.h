/* recv.h: receives that a death may move (recv.c). */
#ifndef FTSHIM_PMPI_MODE_REPLICATION_RECV_H
#define FTSHIM_PMPI_MODE_REPLICATION_RECV_H

#include "pmpi/mode/replication/state.h"

/* A struct peer_recv's life: started (listed and posted), polled; and a
 * blocking one whole. */
void ftp_repl_recv_start(struct peer_recv *p);
void ftp_repl_recv_poll(struct peer_recv *p);
int ftp_repl_recv_from(struct ftp_call *c, void *buf, int count, MPI_Datatype type, int source,
		       int tag, MPI_Status *status);
/* A message from MPI_ANY_SOURCE from a dead primary dropped from the view. */
bool ftp_repl_from_dropped(const struct ftp_comm *e, const MPI_Status *st);
/* A struct recv_op's operation. */
bool ftp_repl_recv_op_progress(struct ftp_op *op);
void ftp_repl_recv_op_destroy(struct ftp_op *op);
/* A struct any_recv's operation; whether a request is a receive from
 * MPI_ANY_SOURCE on a replicated communicator (*a: the follower's, not
 * posted yet); the follower's receive from the source its primary
 * matched. */
bool ftp_repl_any_progress(struct ftp_op *op);
void ftp_repl_any_destroy(struct ftp_op *op);
bool ftp_repl_is_any(MPI_Request request, struct any_recv **a);
void ftp_repl_any_resolve(struct any_recv *a, int source);
/* The receives posted to dead copy `dead`: settle them, then post them
 * again to the copy that took over. */
void ftp_repl_settle_recvs_from(int32_t dead);
void ftp_repl_repost_recvs_from(int32_t dead);

#endif
