/* coll_args.h: what a collective call reads and writes (coll_args.c). */
#ifndef FTSHIM_PMPI_MODE_REPLICATION_COLL_ARGS_H
#define FTSHIM_PMPI_MODE_REPLICATION_COLL_ARGS_H

#include "pmpi/mode/replication/state.h"
#include "pmpi/view_coll.h"

/* What this process gives a collective (in) and where its result lands
 * (out). */
void ftp_repl_coll_spans(const struct ftp_comm *e, const struct coll_args *a,
			 struct coll_span *in, struct coll_span *out);
/* The bytes count elements of type span from buf, from *lb on. */
size_t ftp_repl_bytes_of(MPI_Datatype type, int64_t count, MPI_Aint *lb);

#endif
