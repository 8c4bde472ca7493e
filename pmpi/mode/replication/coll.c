/* coll.c: collectives on a replicated communicator (PartRePer V-C): they
 * run among the primaries and singles (the communicator's team), and each
 * primary forwards the result to its replica on the stream; every copy
 * logs its input first (coll_log.c), and a collective under way when a
 * promotion rebuilds the team runs again on the new one (team.c). The
 * wrappers' forms (pmpi/coll_forms.c) hand every blocking collective to
 * ftp_repl_coll_run; what a call reads and writes, and starting it, are
 * coll_args.c's. Application thread. */
#include "ftshim_config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi/mode/replication/coll.h"
#include "pmpi/mode/replication/coll_args.h"
#include "pmpi/mode/replication/coll_log.h"
#include "pmpi/mode/replication/stream.h"
#include "pmpi/mode/replication/team.h"

/* The result of a collective, out, over the stream: sent by a primary,
 * received by its replica. */
static int stream_out(bool send, const struct coll_span *out, int tag)
{
	int count = out->count > INT_MAX ? -1 : (int)out->count;

	if (count < 0)
		return MPI_ERR_COUNT;
	return ftp_repl_stream_io(send, count ? (void *)out->buf : NULL, count,
				  count ? out->type : MPI_BYTE, tag, MPI_STATUS_IGNORE);
}

/* The result of a v-collective is a set of blocks of its buffer: sent as
 * one indexed type over them. */
static struct coll_span out_v(struct coll_span out, const int counts[], const int displs[], int n,
			      MPI_Datatype *built)
{
	*built = MPI_DATATYPE_NULL;
	if (out.count <= 0)
		return out;
	if (ftp_mpi.PMPI_Type_indexed(n, counts, displs, out.type, built) != MPI_SUCCESS ||
	    ftp_mpi.PMPI_Type_commit(built) != MPI_SUCCESS)
		return (struct coll_span){.buf = out.buf, .count = -1, .type = out.type};
	return (struct coll_span){.buf = out.buf, .count = 1, .type = *built};
}

/* What a collective forwards: its output, less Exscan's at rank 0 (left
 * undefined by the MPI), as one message. */
static struct coll_span forwarded_span(const struct ftp_comm *e, const struct coll_args *a,
				       MPI_Datatype *built)
{
	struct coll_span in, out;
	int n = ftp_repl_coll_size(e), me = ftp_repl_my_rank_in(e);

	*built = MPI_DATATYPE_NULL;
	ftp_repl_coll_spans(e, a, &in, &out);
	if (a->fn == FTP_FN_MPI_Exscan && me == 0)
		out.count = 0;
	if (a->fn == FTP_FN_MPI_Gatherv && me == a->root)
		return out_v(out, a->rcounts, a->rdispls, n, built);
	if (a->fn == FTP_FN_MPI_Allgatherv)
		return out_v(out, a->rcounts, a->rdispls, n, built);
	if (a->fn == FTP_FN_MPI_Alltoallv)
		return out_v(out, a->rcounts, a->rdispls, n, built);
	return out;
}

/* The next forwarded result, into out. */
static int fwd_take(struct ftp_repl_comm *x, const struct coll_span *out)
{
	struct fwd *f = x->fwd_head;
	int pos = 0, rc = MPI_SUCCESS;

	x->fwd_head = f->next;
	if (!x->fwd_head)
		x->fwd_tail = NULL;
	x->fwd_count--;
	if (out->count > 0)
		rc = ftp_mpi.PMPI_Unpack(f->data, f->len, &pos, (void *)out->buf, (int)out->count,
					 out->type, ftp_repl.stream);
	free(f);
	return rc;
}

/* Run a collective on e's team (c->comm's): a follower takes what its
 * primary forwards; a primary, single or promoted replica runs it on the
 * team, again on the new team if the team is rebuilt meanwhile, and a
 * primary forwards the result. Every copy logs its input first. Returns
 * through the call's post. */
int ftp_repl_coll_run(struct ftp_call *c, const struct coll_args *a)
{
	struct ftp_comm *e = c->comm;
	struct ftp_repl_comm *x = ftp_repl_of(e);
	uint64_t seq = x->coll_done + 1;
	struct coll_rec *r = ftp_repl_coll_log_add(e, a, seq);
	MPI_Datatype built = MPI_DATATYPE_NULL;
	struct coll_span out = forwarded_span(e, a, &built);
	int rc = STREAM_ENDED;

	/* A promoted replica runs the collectives on the team from its
	 * promotion on, forwarded or not (ftp_repl_teams_rebuild counted
	 * so). */
	if (ftp_repl_following() && ftp_repl.copy == FTP_COPY_REPLICA) {
		rc = ftp_repl_stream_end(stream_out(false, &out, x->stream_tag), ftp_repl.partner);
		/* Promoted while it waited: the rebuilt team counted this one
		 * as received (fwd_in_flight) and every member had it, or runs
		 * it with this process. */
		if (rc == MPI_SUCCESS && ftp_repl.copy == FTP_COPY_PROMOTED && seq > x->replay_lo)
			rc = STREAM_ENDED;
		x->fwd_in_flight = 0;
	} else if (x->fwd_head && seq <= x->replay_lo)
		rc = fwd_take(x, &out);
	else if (x->fwd_head)
		ftp_repl_fwd_drop(x);
	while (rc == STREAM_ENDED || rc == TEAM_REBUILT) {
		if (rc == TEAM_REBUILT && r && r->in_rbuf && r->in_bytes)
			memcpy((char *)a->rbuf + r->in_lb, r->in, r->in_bytes);
		bool abandoned = false;
		rc = ftp_repl_team_run(c, a, x->team_epoch, &abandoned);
		if (rc == MPI_SUCCESS && ftp_repl.copy == FTP_COPY_PRIMARY && ftp_repl_paired() &&
		    stream_out(true, &out, x->stream_tag) != MPI_SUCCESS)
			ftp_repl_drop_replica();
	}
	if (rc == MPI_SUCCESS)
		ftp_repl_coll_completed(x, r, a->fn, seq);
	if (built != MPI_DATATYPE_NULL)
		ftp_mpi.PMPI_Type_free(&built);
	return ftp_post_coll(c, rc);
}
