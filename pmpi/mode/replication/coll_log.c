/* coll_log.c: each replicated communicator's log of its latest
 * collectives (struct coll_rec, state.h: the arguments, their arrays
 * and a copy of the input, within FTSHIM_REPLICA_LOG_MIB), kept so that a
 * team rebuilt after a promotion can run them again with the members that
 * had not completed them (team.c). coll.c adds to it and says what
 * completed, which trims it; comm.c empties it with the communicator.
 * Application thread. */
#include "ftshim_config.h"

#include <stdlib.h>
#include <string.h>

#include "pmpi/mode/replication/coll_log.h"
#include "pmpi/mode/replication/coll_args.h"

/* Every member's output depends on every member's input: once this
 * process has completed a blocking one, every member has entered it,
 * and so completed every older one (a blocking collective starts once
 * the nonblocking ones before it completed, coll.c): none will need an
 * older one run again. A nonblocking one does not say so: a member may
 * have entered it with an older one still under way. */
static bool coll_syncs(enum ftp_fn fn)
{
	return fn == FTP_FN_MPI_Barrier || fn == FTP_FN_MPI_Allreduce ||
	       fn == FTP_FN_MPI_Allgather || fn == FTP_FN_MPI_Allgatherv ||
	       fn == FTP_FN_MPI_Alltoall || fn == FTP_FN_MPI_Alltoallv || fn == FTP_FN_MPI_Alltoallw ||
	       fn == FTP_FN_MPI_Reduce_scatter || fn == FTP_FN_MPI_Reduce_scatter_block;
}

static size_t coll_log_bytes;

static void coll_rec_free(struct coll_rec *r)
{
	coll_log_bytes -= r->in_bytes;
	ftp_coll_kept_free(&r->kept);
	free(r->in);
	free(r);
}

/* Forget the logged collectives of x numbered below seq. */
void ftp_repl_coll_log_trim(struct ftp_repl_comm *x, uint64_t seq)
{
	while (x->coll_log && x->coll_log->seq < seq) {
		struct coll_rec *r = x->coll_log;
		x->coll_log = r->next;
		coll_rec_free(r);
	}
	if (!x->coll_log)
		x->coll_log_tail = NULL;
}

/* Log collective seq of e, about to run with args a (NULL: out of
 * memory; it cannot be run again). */
struct coll_rec *ftp_repl_coll_log_add(struct ftp_comm *e, const struct coll_args *a, uint64_t seq)
{
	struct ftp_repl_comm *x = ftp_repl_of(e);
	struct coll_rec *r = calloc(1, sizeof *r);
	struct coll_span in, out;
	int n = ftp_repl_coll_size(e), me = ftp_repl_my_rank_in(e);

	if (!r)
		return NULL;
	r->seq = seq;
	ftp_repl_coll_spans(e, a, &in, &out);
	r->in_rbuf = in.count > 0 && in.buf == a->rbuf;
	r->in_bytes = ftp_repl_bytes_of(in.type, in.count, &r->in_lb);
	r->in = r->in_bytes ? malloc(r->in_bytes) : NULL;
	if ((r->in_bytes && !r->in) || ftp_coll_keep(&r->kept, a, n, me) != MPI_SUCCESS) {
		free(r->in);
		free(r);
		return NULL;
	}
	if (r->in_bytes)
		memcpy(r->in, (const char *)in.buf + r->in_lb, r->in_bytes);
	coll_log_bytes += r->in_bytes;
	/* Within FTSHIM_REPLICA_LOG_MIB, the oldest of this communicator go
	 * first (running one again then ends the job, saying so). */
	while (x->coll_log && !x->coll_log->pinned &&
	       coll_log_bytes > ((size_t)ftp.cfg.replica_log_mib << 20)) {
		struct coll_rec *old = x->coll_log;
		x->coll_log = old->next;
		coll_rec_free(old);
	}
	if (!x->coll_log)
		x->coll_log_tail = NULL;
	*(x->coll_log_tail ? &x->coll_log_tail->next : &x->coll_log) = r;
	x->coll_log_tail = r;
	return r;
}

/* A collective completed here (or its result was received). */
void ftp_repl_coll_completed(struct ftp_repl_comm *x, const struct coll_rec *r, enum ftp_fn fn,
			     uint64_t seq, bool blocking)
{
	x->coll_done = seq;
	if (blocking && coll_syncs(fn))
		ftp_repl_coll_log_trim(x, seq);
	else if (!r)
		ftp_repl_coll_log_trim(x,
				       seq + 1); /* what was before it cannot be run again either */
}
