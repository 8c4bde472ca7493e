/* recv.c: the receives on a replicated communicator that a death may
 * move (struct peer_recv, state.h: posted to the copy of the sender
 * that serves this process, moved to its other copy when that one dies),
 * their nonblocking form (struct recv_op), and a follower's nonblocking
 * receives from MPI_ANY_SOURCE, posted once its primary says what it
 * matched (struct any_recv). p2p.c starts them; complete.c resolves the
 * MPI_ANY_SOURCE ones; views.c and promote.c settle and move those from a
 * dead copy (ftp_repl_settle_recvs_from, ftp_repl_repost_recvs_from).
 * Application thread. */
#include "ftshim_config.h"

#include <stdlib.h>

#include "pmpi/mode/replication/recv.h"
#include "src/log.h"

/* A message from program rank source with tag was matched here. */
static void count_received(const struct ftp_comm *e, int source, int tag)
{
	struct ft_msg_counts *n =
	    source >= 0 ? ft_msg_counts_get(&ftp_repl_msg_counts, e->core->id, source, tag) : NULL;

	if (n)
		n->received++;
}

/* The last of the pending receives (ftp_repl_recvs_head, state.c). */
static struct peer_recv *recvs_tail;

static void recv_unlink(struct peer_recv *p)
{
	if (!p->linked)
		return;
	*(p->prev ? &p->prev->next : &ftp_repl_recvs_head) = p->next;
	*(p->next ? &p->next->prev : &recvs_tail) = p->prev;
	p->linked = false;
}

/* p is done, with rc (st: what it matched, or NULL): unlisted, its
 * status in the program's ranks, its message counted. */
static void recv_finish(struct peer_recv *p, int rc, const MPI_Status *st)
{
	recv_unlink(p);
	p->done = true;
	p->rc = rc;
	if (st)
		p->status = *st;
	if (p->source != MPI_ANY_SOURCE)
		p->status.MPI_SOURCE = p->source;
	else if (st)
		ftp_status_out(p->e, &p->status);
	if (rc == MPI_SUCCESS && st)
		count_received(p->e, p->status.MPI_SOURCE, st->MPI_TAG);
}

/* Post p to the copy its source is addressed at now. */
static void recv_post(struct peer_recv *p)
{
	int q = p->source == MPI_ANY_SOURCE ? MPI_ANY_SOURCE : ftp_rank_in(p->e, p->source);
	int rc = ftp_mpi.PMPI_Irecv(p->buf, p->count, p->type, q, p->tag, p->e->real, &p->req);

	p->from = q == MPI_ANY_SOURCE ? -1 : ftp_repl_world_at(p->e, q);
	if (rc != MPI_SUCCESS)
		recv_finish(p, rc, NULL);
}

void ftp_repl_recv_start(struct peer_recv *p)
{
	p->req = MPI_REQUEST_NULL;
	p->done = false;
	p->prev = recvs_tail;
	p->next = NULL;
	*(recvs_tail ? &recvs_tail->next : &ftp_repl_recvs_head) = p;
	recvs_tail = p;
	p->linked = true;
	recv_post(p);
}

/* A message from MPI_ANY_SOURCE that came from a dead primary after it
 * was dropped from the view (discard_from, promote.c, saw the others):
 * its replica sends it again, so this one is passed over. */
bool ftp_repl_from_dropped(const struct ftp_comm *e, const MPI_Status *st)
{
	int r = st->MPI_SOURCE;

	ftp_rank_out(e, &r);
	return r < 0 && st->MPI_SOURCE >= 0;
}

void ftp_repl_recv_poll(struct peer_recv *p)
{
	MPI_Status st;
	int flag = 0;

	if (p->done || p->req == MPI_REQUEST_NULL)
		return;
	int rc = ftp_mpi.PMPI_Test(&p->req, &flag, &st);
	if (rc == MPI_SUCCESS && flag && p->source == MPI_ANY_SOURCE &&
	    ftp_repl_from_dropped(p->e, &st)) {
		recv_post(p);
		return;
	}
	if (rc != MPI_SUCCESS || flag)
		recv_finish(p, rc, &st);
}

/* p's copy is dead and none took over (its logical rank is lost): a last
 * look, then its error. */
static void recv_give_up(struct peer_recv *p, int err)
{
	MPI_Status st;
	int rc = ftp_cancel_p2p(&p->req, p->from, FTP_P2P_RECV, err, &st);

	recv_finish(p, rc, rc == MPI_SUCCESS ? &st : NULL);
}

/* Whether p waits on a dead copy that no view change will move it from:
 * one whose other copy is dead too (a view change moves p to a living
 * copy, perhaps not yet: the process table can show a death before
 * ftp_repl_views has applied it). */
static bool recv_stranded(const struct peer_recv *p)
{
	return !p->done && p->from >= 0 && ft_proc_is_failed(&ftp.procs, (uint32_t)p->from) &&
	       !ftp_repl_covered(p->from);
}

/* Block until p is done (c: the call, whose watch follows p's copy). */
static int recv_wait(struct ftp_call *c, struct peer_recv *p, MPI_Status *status)
{
	uint64_t seen = 0, polls = 0;

	for (;;) {
		ftp_repl_recv_poll(p);
		if (p->done)
			break;
		c->watch = p->source == MPI_ANY_SOURCE
			       ? (struct ftp_watch){.kind = FTP_WATCH_ANY, .rank = MPI_ANY_SOURCE, .recv = true}
			       : (struct ftp_watch){.kind = FTP_WATCH_PEER,
						    .rank = ftp_rank_in(p->e, p->source),
						    .recv = true};
		int err = ftp_poll_step(c, false, &seen, &polls);
		if (err != MPI_SUCCESS && !p->done &&
		    (err == FTP_ERR_REVOKED || p->from < 0 || recv_stranded(p)))
			recv_give_up(p, err);
	}
	if (status != MPI_STATUS_IGNORE)
		*status = p->status;
	return p->rc;
}

/* A blocking receive that a death may move (struct peer_recv). */
int ftp_repl_recv_from(struct ftp_call *c, void *buf, int count, MPI_Datatype type, int source,
		       int tag, MPI_Status *status)
{
	struct peer_recv p = {
	    .e = c->comm, .buf = buf, .count = count, .source = source, .tag = tag, .type = type};

	ftp_repl_recv_start(&p);
	return recv_wait(c, &p, status);
}

bool ftp_repl_recv_op_progress(struct ftp_op *op)
{
	struct peer_recv *p = &((struct recv_op *)op)->p;

	ftp_mode_failures();
	ftp_repl_recv_poll(p);
	if (!p->done && recv_stranded(p))
		recv_give_up(p, FTP_ERR_PROC_FAILED);
	if (!p->done && p->from < 0 && ftp_events()) {
		struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Recv);
		ftp_call_on(&c, p->e, (struct ftp_watch){.kind = FTP_WATCH_ANY, .rank = MPI_ANY_SOURCE, .recv = true});
		int err = ftp_check(&c, false);
		if (err != MPI_SUCCESS)
			recv_give_up(p, err);
	}
	if (!p->done)
		return false;
	op->status = p->status;
	op->has_status = true;
	op->rc = p->rc;
	return true;
}

void ftp_repl_recv_op_destroy(struct ftp_op *op)
{
	struct peer_recv *p = &((struct recv_op *)op)->p;

	recv_unlink(p);
	if (p->req != MPI_REQUEST_NULL && ftp_active()) {
		ftp_mpi.PMPI_Cancel(&p->req);
		ftp_mpi.PMPI_Request_free(&p->req);
	}
	if (p->type != MPI_DATATYPE_NULL && ftp_active())
		ftp_mpi.PMPI_Type_free(&p->type);
	free(op);
}

bool ftp_repl_any_progress(struct ftp_op *op)
{
	struct any_recv *a = (struct any_recv *)op;

	if (a->ready)
		return true;
	if (ftp_repl_following())
		return false;
	if (!a->posted) {
		a->posted = true;
		ftp_repl_recv_start(&a->p);
	}
	ftp_repl_recv_poll(&a->p);
	if (!a->p.done)
		return false;
	a->op.status = a->p.status;
	a->op.has_status = true;
	a->op.rc = a->p.rc;
	a->ready = true;
	return true;
}

void ftp_repl_any_destroy(struct ftp_op *op)
{
	struct any_recv *a = (struct any_recv *)op;

	recv_unlink(&a->p);
	if (a->p.req != MPI_REQUEST_NULL && ftp_active()) {
		ftp_mpi.PMPI_Cancel(&a->p.req);
		ftp_mpi.PMPI_Request_free(&a->p.req);
	}
	if (a->p.type != MPI_DATATYPE_NULL && ftp_active())
		ftp_mpi.PMPI_Type_free(&a->p.type);
	free(a);
}

/* Whether request is a receive from MPI_ANY_SOURCE on a replicated
 * communicator: a primary reports what it matched, a follower waits to be
 * told. *a: the follower's pending receive. */
bool ftp_repl_is_any(MPI_Request request, struct any_recv **a)
{
	struct ftp_req r;

	*a = NULL;
	if (request == MPI_REQUEST_NULL || !ftp_req_find(request, &r) || !r.op)
		return false;
	if (r.op->progress == ftp_repl_any_progress) {
		*a = (struct any_recv *)r.op;
		return !(*a)->ready && !(*a)->posted;
	}
	return r.op->progress == ftp_repl_recv_op_progress &&
	       ((struct recv_op *)r.op)->p.source == MPI_ANY_SOURCE;
}

/* The follower: receive from the source the primary matched (as the
 * program numbers it), now, and let the request complete with its
 * status. With the program's own tag: messages from one sender do not
 * overtake each other, so the first that matches is the primary's. */
void ftp_repl_any_resolve(struct any_recv *a, int source)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Recv);
	struct ftp_comm *e = a->op.comm;
	MPI_Status st;

	ftp_call_on(&c, e, ftp_watch_on(e, FTP_WATCH_PEER, source, true));
	int rc = ftp_repl_recv_from(&c, a->p.buf, a->p.count, a->p.type, source, a->p.tag, &st);
	a->op.status = st;
	a->op.has_status = true;
	a->op.rc = rc;
	a->ready = true;
	ftp_ops_progress();
}

/* Settle every pending receive posted to world rank dead: a last look
 * (what it sent before it died may be here), else it waits, unposted,
 * to move. */
void ftp_repl_settle_recvs_from(int32_t dead)
{
	struct peer_recv *p, *next;

	for (p = ftp_repl_recvs_head; p; p = next) {
		next = p->next;
		if (p->from != dead || p->req == MPI_REQUEST_NULL)
			continue;
		MPI_Status st;
		int rc = ftp_cancel_p2p(&p->req, dead, FTP_P2P_RECV, FTP_ERR_PROC_FAILED, &st);
		ft_debug("a receive from rank %d (tag %d) posted to process %d: %s", p->source, p->tag,
			 dead, rc == MPI_SUCCESS ? "matched" : "cancelled");
		if (rc == MPI_SUCCESS)
			recv_finish(p, rc, &st);
	}
}

/* Post again the receives ftp_repl_settle_recvs_from left waiting (the
 * view now sends them to the copy that took over). */
void ftp_repl_repost_recvs_from(int32_t dead)
{
	for (struct peer_recv *p = ftp_repl_recvs_head; p; p = p->next)
		if (p->from == dead && p->req == MPI_REQUEST_NULL)
			recv_post(p);
}
