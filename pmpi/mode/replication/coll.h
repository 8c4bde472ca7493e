/* coll.h: collectives on a replicated communicator (coll.c). */
#ifndef FTSHIM_PMPI_MODE_REPLICATION_COLL_H
#define FTSHIM_PMPI_MODE_REPLICATION_COLL_H

#include "pmpi/mode/replication/state.h"

/* Run a's blocking collective on c's communicator, replicated (the
 * runner of the replicated kind, struct ftp_cover_kind.coll); returns
 * through the call's post. */
int ftp_repl_coll_run(struct ftp_call *c, const struct coll_args *a);
/* Start a's nonblocking collective on c's communicator, replicated, into
 * *request (the kind's icoll); returns through the call's post. */
int ftp_repl_icoll_run(struct ftp_call *c, const struct coll_args *a, MPI_Request *request);
/* A follower whose primary `dead` died carries its rank on: its
 * nonblocking collectives whose result had not come run on the team. */
void ftp_repl_icolls_promoted(int32_t dead);

#endif
