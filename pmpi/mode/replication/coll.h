/* coll.h: collectives on a replicated communicator (coll.c). */
#ifndef FTSHIM_PMPI_MODE_REPLICATION_COLL_H
#define FTSHIM_PMPI_MODE_REPLICATION_COLL_H

#include "pmpi/mode/replication/state.h"

/* Run a's blocking collective on c's communicator, replicated (the
 * runner of the replicated kind, struct ftp_cover_kind.coll); returns
 * through the call's post. */
int ftp_repl_coll_run(struct ftp_call *c, const struct coll_args *a);

#endif
