/* coll.c: collectives on a replicated communicator (PartRePer V-C): they
 * run among the primaries and singles (the communicator's team), and each
 * primary forwards the result to its replica on the stream; every copy
 * logs its input first (coll_log.c), and a collective under way when a
 * promotion rebuilds the team runs again on the new one (team.c). The
 * wrappers' forms (pmpi/coll_forms.c) hand every blocking collective to
 * ftp_repl_coll_run, and every nonblocking one to ftp_repl_icoll_run,
 * whose runs on the team are team.c's. Collectives on a communicator
 * complete in the order they started, at every copy, so that forwarded
 * results travel in that order. What a call reads and writes, and
 * starting it, are coll_args.c's. Application thread. */
#include "ftshim_config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi/mode/replication/coll.h"
#include "pmpi/mode/replication/coll_args.h"
#include "pmpi/mode/replication/coll_log.h"
#include "pmpi/mode/replication/stream.h"
#include "pmpi/mode/replication/runs.h"
#include "pmpi/mode/replication/team.h"

/* The message that carries a collective's result, out, on the stream:
 * MPI_ERR_COUNT if it does not fit one. */
struct fwd_msg {
	void *buf;
	int count;
	MPI_Datatype type;
};

static int fwd_msg_of(const struct coll_span *out, struct fwd_msg *m)
{
	if (out->count > INT_MAX || out->count < 0)
		return MPI_ERR_COUNT;
	m->count = (int)out->count;
	m->buf = m->count ? (void *)out->buf : NULL;
	m->type = m->count ? out->type : MPI_BYTE;
	return MPI_SUCCESS;
}

/* The result of a collective, out, over the stream: sent by a primary,
 * received by its replica. */
static int stream_out(bool send, const struct coll_span *out, int tag)
{
	struct fwd_msg m;
	int rc = fwd_msg_of(out, &m);

	return rc != MPI_SUCCESS ? rc
				 : ftp_repl_stream_io(send, m.buf, m.count, m.type, tag, MPI_STATUS_IGNORE);
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

/* The result of an MPI_Alltoallw: its blocks, each of its own type at
 * its byte displacement, as one struct type (empty blocks, whose type
 * may be anything, left out). */
static struct coll_span out_w(struct coll_span out, const int counts[], const int displs[],
			      const MPI_Datatype types[], int n, MPI_Datatype *built)
{
	int *cs = malloc(((size_t)n + 1) * sizeof *cs);
	MPI_Aint *at = malloc(((size_t)n + 1) * sizeof *at);
	MPI_Datatype *ts = malloc(((size_t)n + 1) * sizeof *ts);
	int m = 0;

	*built = MPI_DATATYPE_NULL;
	for (int i = 0; cs && at && ts && i < n; i++)
		if (counts[i] > 0) {
			cs[m] = counts[i];
			at[m] = displs[i];
			ts[m++] = types[i];
		}
	bool made = cs && at && ts &&
		    ftp_mpi.PMPI_Type_create_struct(m, cs, at, ts, built) == MPI_SUCCESS &&
		    ftp_mpi.PMPI_Type_commit(built) == MPI_SUCCESS;
	free(cs);
	free(at);
	free(ts);
	if (!made)
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
	if (a->fn == FTP_FN_MPI_Alltoallw && out.count > 0)
		return out_w(out, a->rcounts, a->rdispls, a->rtypes, n, built);
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

/* A nonblocking collective on a replicated communicator, as an ftshim
 * operation (the program holds a generalized request): a primary,
 * single or promoted replica runs it on the team (run), and a primary
 * forwards its result once it is over; a follower receives that result
 * (fwd), or, if its primary dies first, runs it on the team as a
 * promoted replica. The communicator's list (struct ftp_repl_comm's
 * icoll_head) keeps them in the order started: one completes only after
 * those before it. */
struct icoll {
	struct ftp_op op;
	struct icoll *next;
	struct ftp_comm *e;
	struct coll_rec *r;	/* its log entry, pinned until it completes */
	struct team_run *run;	/* its run on the team, or NULL */
	MPI_Request fwd;	/* a follower's receive of the result */
	bool cut;		/* that receive completed in error: awaits the promotion */
	struct coll_span out;	/* what is forwarded */
	MPI_Datatype built;	/* out's type, if made for it */
	bool over;		/* its result is in; op.rc set */
};

/* Take the completed collectives at the head of e's list off it, in
 * order: counted as done, their log entries unpinned. */
static void icolls_pop(struct ftp_repl_comm *x)
{
	struct icoll *o;

	while ((o = x->icoll_head) && o->over) {
		x->icoll_head = o->next;
		if (!x->icoll_head)
			x->icoll_tail = NULL;
		o->r->pinned = false;
		if (o->op.rc == MPI_SUCCESS)
			ftp_repl_coll_completed(x, o->r, o->r->kept.a.fn, o->r->seq, false);
	}
}

/* Bring e's nonblocking collectives on in order: a run over is
 * forwarded by a primary; a follower's received result completes it. A
 * primary's forward waits for the replica to take it, meanwhile the
 * other communicators' collectives are brought on, not this one's. */
static void icolls_poll(struct ftp_comm *e)
{
	struct ftp_repl_comm *x = ftp_repl_of(e);
	struct icoll *o;

	if (x->icolls_polling)
		return;
	x->icolls_polling = true;
	while ((o = x->icoll_head) && !o->over) {
		int rc = MPI_SUCCESS, flag = 0;
		bool ran = o->run != NULL;
		if (ran) {
			if (!ftp_repl_team_irun_over(e, o->run, &rc))
				break;
			ftp_repl_team_irun_end(e, o->run);
			o->run = NULL;
		} else if (o->fwd != MPI_REQUEST_NULL) {
			rc = ftp_mpi.PMPI_Test(&o->fwd, &flag, MPI_STATUS_IGNORE);
			if (rc != MPI_SUCCESS) {
				/* Cut short: its primary died sending it (Open
				 * MPI's single copy from a dead sender), so no
				 * result; the promotion runs it on the team
				 * (ftp_repl_icolls_promoted). */
				o->fwd = MPI_REQUEST_NULL;
				o->cut = true;
			}
			if (rc != MPI_SUCCESS || !flag)
				break;
		} else if (o->cut)
			break;
		o->op.rc = rc;
		o->over = true;
		/* Counted as done before the forward, in which a rebuild of the
		 * team may ask how far this process got. */
		icolls_pop(x);
		if (ran && rc == MPI_SUCCESS && ftp_repl.copy == FTP_COPY_PRIMARY && ftp_repl_paired() &&
		    stream_out(true, &o->out, x->stream_tag) != MPI_SUCCESS)
			ftp_repl_drop_replica();
	}
	x->icolls_polling = false;
}

static bool icoll_progress(struct ftp_op *op)
{
	struct icoll *o = (struct icoll *)op;

	/* The completion calls wait on ftshim's operations without a check
	 * of their own: a death is applied here (a promotion rebuilds the
	 * team, and the run starts again on it). */
	if (!o->over) {
		ftp_mode_failures();
		icolls_poll(o->e);
	}
	return o->over;
}

static void icoll_destroy(struct ftp_op *op)
{
	struct icoll *o = (struct icoll *)op;

	/* Still listed only if its request could not be made (ftp_op_start
	 * failed): then it is the list's tail. */
	if (!o->over) {
		struct ftp_repl_comm *x = ftp_repl_of(o->e);
		struct icoll **p = &x->icoll_head, *prev = NULL;
		while (*p && *p != o) {
			prev = *p;
			p = &(*p)->next;
		}
		if (*p) {
			*p = o->next;
			if (x->icoll_tail == o)
				x->icoll_tail = prev;
		}
		if (o->run)
			ftp_repl_team_irun_end(o->e, o->run);
		o->r->pinned = false;
	}

	if (o->built != MPI_DATATYPE_NULL && ftp_active())
		ftp_mpi.PMPI_Type_free(&o->built);
	free(o);
}

/* Complete c's communicator's nonblocking collectives, before a blocking
 * one starts. */
static void icolls_drain(struct ftp_call *c)
{
	struct ftp_repl_comm *x = ftp_repl_of(c->comm);
	uint64_t seen = 0, polls = 0;

	while (x->icoll_head) {
		icolls_poll(c->comm);
		if (x->icoll_head)
			(void)ftp_poll_step(c, false, &seen, &polls); /* their own check ends them */
	}
}

int ftp_repl_icoll_run(struct ftp_call *c, const struct coll_args *a, MPI_Request *request)
{
	struct ftp_comm *e = c->comm;
	struct ftp_repl_comm *x = ftp_repl_of(e);
	uint64_t seq = x->coll_started + 1;
	struct icoll *o = calloc(1, sizeof *o);
	struct coll_rec *r = o ? ftp_repl_coll_log_add(e, a, seq) : NULL;
	int rc = MPI_SUCCESS;

	if (!r) {
		free(o);
		return ftp_post_plain(c, MPI_ERR_NO_MEM);
	}
	x->coll_started = seq;
	r->pinned = true;
	o->e = e;
	o->r = r;
	o->fwd = MPI_REQUEST_NULL;
	o->out = forwarded_span(e, a, &o->built);
	if (ftp_repl_following() && ftp_repl.copy == FTP_COPY_REPLICA) {
		struct fwd_msg m;
		rc = fwd_msg_of(&o->out, &m);
		if (rc == MPI_SUCCESS)
			rc = ftp_mpi.PMPI_Irecv(m.buf, m.count, m.type, ftp_repl.partner, x->stream_tag,
						ftp_repl.stream, &o->fwd);
		o->over = rc != MPI_SUCCESS;
	} else if (x->fwd_head && seq <= x->replay_lo) {
		rc = fwd_take(x, &o->out);
		o->over = true;
	} else {
		if (x->fwd_head)
			ftp_repl_fwd_drop(x);
		o->run = ftp_repl_team_irun(e, r);
		rc = o->run ? MPI_SUCCESS : MPI_ERR_NO_MEM;
		o->over = !o->run;
	}
	o->op.rc = rc;
	*(x->icoll_tail ? &x->icoll_tail->next : &x->icoll_head) = o;
	x->icoll_tail = o;
	icolls_pop(x);
	o->op.progress = icoll_progress;
	o->op.destroy = icoll_destroy;
	return ftp_post_plain(c, ftp_op_start(c, &o->op, request));
}

void ftp_repl_icolls_promoted(int32_t dead)
{
	for (size_t i = 0; i < ftp_repl_ncomms; i++) {
		struct ftp_comm *e = ftp_repl_comms[i];
		struct ftp_repl_comm *x = ftp_repl_of(e);
		for (struct icoll *o = x->icoll_head; o; o = o->next) {
			if (o->over || o->run)
				continue;
			if (o->fwd != MPI_REQUEST_NULL) {
				MPI_Status st;
				if (ftp_cancel_p2p(&o->fwd, dead, FTP_P2P_RECV, FTP_ERR_PROC_FAILED,
						   &st) == MPI_SUCCESS) {
					o->op.rc = MPI_SUCCESS;
					o->over = true;
					continue;
				}
			}
			o->fwd = MPI_REQUEST_NULL;
			if (!(o->run = ftp_repl_team_irun(e, o->r))) {
				o->op.rc = MPI_ERR_NO_MEM;
				o->over = true;
			}
		}
		icolls_pop(x);
	}
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

	icolls_drain(c);
	uint64_t seq = x->coll_started + 1;
	x->coll_started = seq;
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
	bool ran = false;
	while (rc == STREAM_ENDED || rc == TEAM_REBUILT) {
		if (rc == TEAM_REBUILT && r && r->in_rbuf && r->in_bytes)
			memcpy((char *)a->rbuf + r->in_lb, r->in, r->in_bytes);
		bool abandoned = false;
		rc = ftp_repl_team_run(c, a, x->team_epoch, &abandoned);
		ran = rc == MPI_SUCCESS;
		/* Counted as done before the forward, in which a rebuild of
		 * the team may ask how far this process got: counted after,
		 * it said one less, no member ran this one again, and a
		 * promoted replica that lacked it ran it alone (a hang). */
		if (ran)
			ftp_repl_coll_completed(x, r, a->fn, seq, true);
		if (ran && ftp_repl.copy == FTP_COPY_PRIMARY && ftp_repl_paired() &&
		    stream_out(true, &out, x->stream_tag) != MPI_SUCCESS)
			ftp_repl_drop_replica();
	}
	if (rc == MPI_SUCCESS && !ran)
		ftp_repl_coll_completed(x, r, a->fn, seq, true);
	if (built != MPI_DATATYPE_NULL)
		ftp_mpi.PMPI_Type_free(&built);
	return ftp_post_coll(c, rc);
}
