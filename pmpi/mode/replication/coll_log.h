/* coll_log.h: the log of collectives (coll_log.c). */
#ifndef FTSHIM_PMPI_MODE_REPLICATION_COLL_LOG_H
#define FTSHIM_PMPI_MODE_REPLICATION_COLL_LOG_H

#include "pmpi/mode/replication/state.h"

/* Forget the logged collectives of x numbered below seq. */
void ftp_repl_coll_log_trim(struct ftp_repl_comm *x, uint64_t seq);
/* Log collective seq of e, about to run (NULL: out of memory); say it
 * completed here (or its result was received). */
struct coll_rec *ftp_repl_coll_log_add(struct ftp_comm *e, const struct coll_args *a,
				       uint64_t seq);
void ftp_repl_coll_completed(struct ftp_repl_comm *x, const struct coll_rec *r, enum ftp_fn fn,
			     uint64_t seq, bool blocking);

#endif
