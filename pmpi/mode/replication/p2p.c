/* p2p.c: point-to-point on a replicated communicator (PartRePer V-B):
 * each send goes to the copies of its destination that the view names,
 * counted and logged for a copy that may need it again (counts.c), and a
 * send to a copy that dies while the other lives is dropped; a receive or
 * probe from a named rank follows the copies that serve it (recv.c); from
 * MPI_ANY_SOURCE the primary decides and tells its replica on the stream.
 * The wrappers call the ftp_repl_MPI_* forms. Application thread. */
#include "ftshim_config.h"

#include <stdlib.h>

#include "pmpi/mode/replication/p2p.h"
#include "pmpi/mode/replication/complete.h"
#include "pmpi/mode/replication/recv.h"
#include "pmpi/mode/replication/stream.h"
#include "pmpi/held_msg.h"
#include "src/log.h"

/* The primary: tell the outcome of a receive or probe (rc; found: it
 * matched the message of status). */
static void tell_match(int rc, bool found, const MPI_Status *status)
{
	int v[REC_HEAD + 3];
	struct rec r = {.v = v, .n = REC_HEAD};

	v[0] = rc;
	v[1] = found;
	if (found)
		ftp_repl_rec_add(&r, 0, status);
	ftp_repl_tell(v, r.n);
}

/* The replica: hear that outcome: MPI_SUCCESS with *found and the
 * matched message's *source (the program's rank), or the primary's
 * error. */
static int hear_match(bool *found, int *source)
{
	int v[REC_HEAD + 3], n = 0;
	int rc = ftp_repl_hear(v, REC_HEAD + 3, &n);

	if (rc != MPI_SUCCESS)
		return rc;
	if (v[0] != MPI_SUCCESS)
		return v[0];
	*found = v[1] != 0;
	if (*found && n < REC_HEAD + 3)
		return MPI_ERR_INTERN;
	if (*found)
		*source = v[REC_HEAD + 1];
	return MPI_SUCCESS;
}

/* A follower's blocking receive or probe from MPI_ANY_SOURCE takes the
 * source its primary matched (*source): MPI_SUCCESS, also once the
 * stream has ended (it then matches for itself), or the primary's error. */
static int follow_any_source(int *source)
{
	bool found = false;
	int rc = hear_match(&found, source);

	if (rc == STREAM_ENDED)
		return MPI_SUCCESS;
	return rc != MPI_SUCCESS ? rc : found ? MPI_SUCCESS : MPI_ERR_INTERN;
}

/* Program rank k of e has two copies: a receive from it moves when the
 * one it is posted to dies. */
static bool paired_rank(const struct ftp_comm *e, int k)
{
	return ftp_repl_copy(e, k, FT_SLOT_PRIMARY) >= 0 && ftp_repl_copy(e, k, FT_SLOT_REPLICA) >= 0;
}

/* A send to program rank dest: its number among the sends to (dest,
 * tag), and its bytes in the log when a copy of this process may need to
 * give them again: a primary's sends to a replicated rank (its replica
 * may die), a replica's to any (its primary may). Returns the number (0:
 * not counted, out of memory); skip[slot] says that copy of dest has the
 * message already (from this rank's dead copy). */
static uint64_t note_send(const struct ftp_comm *e, int dest, int tag, const void *buf, int count,
			  MPI_Datatype type, bool skip[2])
{
	struct ft_msg_counts *n = ft_msg_counts_get(&ftp_repl_msg_counts, e->core->id, dest, tag);

	skip[FT_SLOT_PRIMARY] = skip[FT_SLOT_REPLICA] = false;
	if (!n)
		return 0;
	uint64_t seq = ++n->sent;
	skip[FT_SLOT_PRIMARY] = seq <= n->skip[FT_SLOT_PRIMARY];
	skip[FT_SLOT_REPLICA] = seq <= n->skip[FT_SLOT_REPLICA];
	bool logged = ftp_repl.copy == FTP_COPY_REPLICA ||
		      (ftp_repl.copy == FTP_COPY_PRIMARY && ftp_repl_paired() &&
		       ftp_repl_copy(e, dest, FT_SLOT_REPLICA) >= 0);
	if (!logged)
		return seq;
	int size = 0, pos = 0;
	if (ftp_mpi.PMPI_Pack_size(count, type, e->real, &size) != MPI_SUCCESS || size < 0)
		return seq;
	struct ft_logged *m =
	    ft_send_log_append(&ftp_repl_send_log, e->core->id, dest, tag, seq, (size_t)size);
	if (m && ftp_mpi.PMPI_Pack(buf, count, type, m->data, size, &pos, e->real) == MPI_SUCCESS)
		m->len = (size_t)pos;
	return seq;
}

/* The real ranks a send to program rank dest goes to (V-B): a replica
 * sends to replicas, and to a rank whose replica carries it alone, only
 * (to a single, MPI_PROC_NULL: its primary sends); a primary to primaries
 * and singles; a single or a promoted replica to both copies, less one
 * that has the message already (from this rank's dead copy: note_send). */
struct targets {
	int n;
	int rank[2];
};

struct send_args {
	const void *buf;
	int count, tag;
	MPI_Datatype type;
};

static struct targets dest_targets(const struct ftp_comm *e, int dest, struct send_args a)
{
	const struct ftp_repl_comm *x = ftp_repl_of(e);
	struct targets t = {.n = 1, .rank = {ftp_rank_in(e, dest), MPI_PROC_NULL}};
	bool skip[2] = {false, false};

	if (dest < 0 || (uint32_t)dest >= x->size)
		return t;
	int32_t primary = ftp_repl_copy(e, dest, FT_SLOT_PRIMARY),
		replica = ftp_repl_copy(e, dest, FT_SLOT_REPLICA);
	if (replica >= 0 || ftp_repl_replica_class())
		note_send(e, dest, a.tag, a.buf, a.count, a.type, skip);
	switch (ftp_repl.copy) {
	case FTP_COPY_REPLICA:
		t.rank[0] = replica >= 0 ? replica : MPI_PROC_NULL;
		break;
	case FTP_COPY_PRIMARY:
		t.rank[0] = primary >= 0 ? primary : MPI_PROC_NULL;
		break;
	case FTP_COPY_SINGLE:
	case FTP_COPY_PROMOTED:
		t.n = 0;
		if (primary >= 0 && !skip[FT_SLOT_PRIMARY])
			t.rank[t.n++] = primary;
		if (replica >= 0 && !skip[FT_SLOT_REPLICA])
			t.rank[t.n++] = replica;
		if (t.n == 0)
			t.rank[t.n++] = MPI_PROC_NULL;
		break;
	}
	return t;
}

typedef int (*isend_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);

/* Wait for a send to real rank `to` that c started into c->req. A send to
 * a copy that died while its other copy lives is dropped: the survivors'
 * logs and the view change give the others what it would have passed
 * on. */
static int send_wait(struct ftp_call *c, int rc, int to)
{
	c->watch = (struct ftp_watch){.kind = FTP_WATCH_PEER, .rank = to};
	rc = ftp_block(c, rc, MPI_STATUS_IGNORE);
	return rc == FTP_ERR_PROC_FAILED && ftp_repl_covered(ftp_repl_world_at(c->comm, to))
		   ? MPI_SUCCESS
		   : rc;
}

static int send_blocking(struct ftp_call *c, isend_fn start, const void *buf, int count,
			 MPI_Datatype type, int dest, int tag)
{
	struct targets t = dest_targets(c->comm, dest, (struct send_args){buf, count, tag, type});
	MPI_Request second = MPI_REQUEST_NULL;
	int rc2 = MPI_SUCCESS;

	if (t.n == 2)
		rc2 = start(buf, count, type, t.rank[1], tag, c->real, &second);
	int rc = send_wait(c, start(buf, count, type, t.rank[0], tag, c->real, &c->req), t.rank[0]);
	if (t.n == 2) {
		c->req = second;
		rc2 = send_wait(c, rc2, t.rank[1]);
	}
	return ftp_post_send(c, rc != MPI_SUCCESS ? rc : rc2);
}

int ftp_repl_MPI_Send(struct ftp_call *c, const void *buf, int count, MPI_Datatype datatype,
		      int dest, int tag)
{
	return send_blocking(c, ftp_mpi.PMPI_Isend, buf, count, datatype, dest, tag);
}

int ftp_repl_MPI_Ssend(struct ftp_call *c, const void *buf, int count, MPI_Datatype datatype,
		       int dest, int tag)
{
	return send_blocking(c, ftp_mpi.PMPI_Issend, buf, count, datatype, dest, tag);
}

int ftp_repl_MPI_Rsend(struct ftp_call *c, const void *buf, int count, MPI_Datatype datatype,
		       int dest, int tag)
{
	return send_blocking(c, ftp_mpi.PMPI_Irsend, buf, count, datatype, dest, tag);
}

/* A nonblocking send to a copy that may die while its other copy lives,
 * or a single's to both copies of a replicated rank: one request for the
 * program, done when the sends are (a send to a copy that died is
 * dropped, as in send_wait). */
struct send_pair {
	struct ftp_op op;
	MPI_Request req[2];
	int32_t peer[2]; /* world ranks */
};

static bool pair_progress(struct ftp_op *op)
{
	struct send_pair *p = (struct send_pair *)op;
	bool events = ftp_events() != 0;

	/* The completion calls wait on ftshim's operations without a check
	 * of their own: a death is applied here, so that a process waiting
	 * only on sends still tells a promoted replica its counts. */
	if (events)
		ftp_mode_failures();

	for (int i = 0; i < 2; i++) {
		int flag = 0;
		if (p->req[i] == MPI_REQUEST_NULL)
			continue;
		ftp_mpi.PMPI_Test(&p->req[i], &flag, MPI_STATUS_IGNORE);
		if (!flag && events && p->peer[i] >= 0 &&
		    ft_proc_ever_failed(&ftp.procs, (uint32_t)p->peer[i])) {
			ftp_mpi.PMPI_Cancel(&p->req[i]);
			ftp_mpi.PMPI_Request_free(&p->req[i]);
			if (!ftp_repl_covered(p->peer[i]))
				op->rc = FTP_ERR_PROC_FAILED;
		}
	}
	return p->req[0] == MPI_REQUEST_NULL && p->req[1] == MPI_REQUEST_NULL;
}

static void pair_destroy(struct ftp_op *op)
{
	free(op);
}

static int isend_nonblocking(struct ftp_call *c, isend_fn start, const void *buf, int count,
			     MPI_Datatype type, int dest, int tag, MPI_Request *request)
{
	struct targets t = dest_targets(c->comm, dest, (struct send_args){buf, count, tag, type});

	c->watch = (struct ftp_watch){.kind = FTP_WATCH_PEER, .rank = t.rank[0]};
	if (t.n == 1 && !ftp_repl_has_copy(ftp_repl_world_at(c->comm, t.rank[0])))
		return ftp_post_ireq(c, start(buf, count, type, t.rank[0], tag, c->real, request),
				     request, false);
	struct send_pair *p = calloc(1, sizeof *p);
	if (!p)
		return ftp_post_plain(c, MPI_ERR_NO_MEM);
	p->op.progress = pair_progress;
	p->op.destroy = pair_destroy;
	int rc = MPI_SUCCESS;
	for (int i = 0; i < 2; i++) {
		p->req[i] = MPI_REQUEST_NULL;
		p->peer[i] = i < t.n ? ftp_repl_world_at(c->comm, t.rank[i]) : -1;
		if (rc == MPI_SUCCESS && i < t.n)
			rc = start(buf, count, type, t.rank[i], tag, c->real, &p->req[i]);
	}
	if (rc != MPI_SUCCESS) {
		for (int i = 0; i < 2; i++)
			if (p->req[i] != MPI_REQUEST_NULL)
				ftp_mpi.PMPI_Request_free(&p->req[i]);
		free(p);
		return ftp_post_plain(c, rc);
	}
	return ftp_post_plain(c, ftp_op_start(c, &p->op, request));
}

int ftp_repl_MPI_Isend(struct ftp_call *c, const void *buf, int count, MPI_Datatype datatype,
		       int dest, int tag, MPI_Request *request)
{
	return isend_nonblocking(c, ftp_mpi.PMPI_Isend, buf, count, datatype, dest, tag, request);
}

int ftp_repl_MPI_Issend(struct ftp_call *c, const void *buf, int count, MPI_Datatype datatype,
			int dest, int tag, MPI_Request *request)
{
	return isend_nonblocking(c, ftp_mpi.PMPI_Issend, buf, count, datatype, dest, tag, request);
}

int ftp_repl_MPI_Irsend(struct ftp_call *c, const void *buf, int count, MPI_Datatype datatype,
			int dest, int tag, MPI_Request *request)
{
	return isend_nonblocking(c, ftp_mpi.PMPI_Irsend, buf, count, datatype, dest, tag, request);
}

/* Whether a receive from program rank source goes through struct
 * peer_recv: a replica's from a named rank; a primary's or single's
 * from a rank with two copies, or from MPI_ANY_SOURCE (its messages are
 * counted). */
static bool moved_recv(const struct ftp_comm *e, int source)
{
	if (source == MPI_ANY_SOURCE)
		return !ftp_repl_replica_class() || !ftp_repl_following();
	return source >= 0 && (ftp_repl_replica_class() || paired_rank(e, source));
}

/* A receive (c's watch set), blocking. From MPI_ANY_SOURCE the primary
 * tells what it matched and the follower receives just that. */
static int recv_blocking(struct ftp_call *c, void *buf, int count, MPI_Datatype type, int source,
			 int tag, MPI_Status *status)
{
	MPI_Status mine;
	bool any = source == MPI_ANY_SOURCE;
	int rc;

	if (status == MPI_STATUS_IGNORE)
		status = &mine;
	if (any && ftp_repl_following() && (rc = follow_any_source(&source)) != MPI_SUCCESS)
		return rc;
	if (moved_recv(c->comm, source)) {
		rc = ftp_repl_recv_from(c, buf, count, type, source, tag, status);
	} else {
		rc = ftp_block(c,
			       ftp_mpi.PMPI_Irecv(buf, count, type, ftp_rank_in(c->comm, source),
						  tag, c->real, &c->req),
			       status);
		ftp_status_out(c->comm, status);
	}
	if (any && ftp_repl.copy == FTP_COPY_PRIMARY)
		tell_match(rc, true, status);
	return rc;
}

int ftp_repl_MPI_Recv(struct ftp_call *c, void *buf, int count, MPI_Datatype datatype, int source,
		      int tag, MPI_Status *status)
{
	return ftp_post_recv(c, recv_blocking(c, buf, count, datatype, source, tag, status));
}

int ftp_repl_MPI_Irecv(struct ftp_call *c, void *buf, int count, MPI_Datatype datatype, int source,
		       int tag, MPI_Request *request)
{
	bool any = source == MPI_ANY_SOURCE && ftp_repl_following();

	if (!any && !moved_recv(c->comm, source))
		return ftp_post_ireq(c,
				     ftp_mpi.PMPI_Irecv(buf, count, datatype,
							ftp_rank_in(c->comm, source), tag, c->real,
							request),
				     request, false);
	struct peer_recv p = {.e = c->comm, .buf = buf, .count = count, .source = source,
			      .tag = tag, .type = MPI_DATATYPE_NULL, .req = MPI_REQUEST_NULL};
	int rc = ftp_mpi.PMPI_Type_dup(datatype, &p.type);
	if (rc != MPI_SUCCESS)
		return ftp_post_plain(c, rc);
	if (any) {
		struct any_recv *a = calloc(1, sizeof *a);
		if (!a) {
			ftp_mpi.PMPI_Type_free(&p.type);
			return ftp_post_plain(c, MPI_ERR_NO_MEM);
		}
		a->op.progress = ftp_repl_any_progress;
		a->op.destroy = ftp_repl_any_destroy;
		a->p = p;
		return ftp_post_plain(c, ftp_op_start(c, &a->op, request));
	}
	struct recv_op *o = calloc(1, sizeof *o);
	if (!o) {
		ftp_mpi.PMPI_Type_free(&p.type);
		return ftp_post_plain(c, MPI_ERR_NO_MEM);
	}
	o->op.progress = ftp_repl_recv_op_progress;
	o->op.destroy = ftp_repl_recv_op_destroy;
	o->p = p;
	ftp_repl_recv_start(&o->p);
	return ftp_post_plain(c, ftp_op_start(c, &o->op, request));
}

int ftp_repl_MPI_Sendrecv(struct ftp_call *c, const void *sendbuf, int sendcount,
			  MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
			  int recvcount, MPI_Datatype recvtype, int source, int recvtag,
			  MPI_Status *status)
{
	struct targets t =
	    dest_targets(c->comm, dest, (struct send_args){sendbuf, sendcount, sendtag, sendtype});
	MPI_Request sreq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
	int rc = MPI_SUCCESS;

	for (int i = 0; i < t.n && rc == MPI_SUCCESS; i++)
		rc = ftp_mpi.PMPI_Isend(sendbuf, sendcount, sendtype, t.rank[i], sendtag, c->real,
					&sreq[i]);
	if (rc == MPI_SUCCESS) {
		c->watch = ftp_watch_on(c->comm, ftp_source_kind(source), source, true);
		rc = recv_blocking(c, recvbuf, recvcount, recvtype, source, recvtag, status);
	}
	for (int i = 0; i < t.n; i++) {
		if (sreq[i] == MPI_REQUEST_NULL)
			continue;
		if (rc != MPI_SUCCESS) {
			ftp_mpi.PMPI_Cancel(&sreq[i]);
			ftp_mpi.PMPI_Request_free(&sreq[i]);
			continue;
		}
		c->req = sreq[i];
		int rs = send_wait(c, MPI_SUCCESS, t.rank[i]);
		if (rc == MPI_SUCCESS)
			rc = rs;
	}
	return rc;
}

/* A probe of program rank source (not MPI_ANY_SOURCE) served by a copy
 * that may die while the other lives: when it does, again on the copy
 * that took over. The status names source: a message the dead copy sent
 * before it died may be what the probe saw, after the view stopped
 * mapping that copy. */
static int probe_copy(struct ftp_call *c, int source, int tag, MPI_Status *status)
{
	int rc;

	for (;;) {
		int32_t from = ftp_repl_world_at(c->comm, ftp_rank_in(c->comm, source));
		c->watch = ftp_watch_on(c->comm, FTP_WATCH_PEER, source, true);
		rc = ftp_probe_on(c, source, tag, status);
		if (rc == MPI_SUCCESS && status != MPI_STATUS_IGNORE)
			status->MPI_SOURCE = source;
		if (rc != FTP_ERR_PROC_FAILED || !ftp_repl_covered(from))
			return rc;
		ftp_mode_await_peer(from);
	}
}

/* Probes: the primary's outcome, and the message it saw, decide. This
 * is MPI_Iprobe's outcome, not posted. */
static int iprobe(struct ftp_call *c, int source, int tag, int *flag, MPI_Status *status)
{
	MPI_Status mine;
	bool found = false;
	int rc;

	if (status == MPI_STATUS_IGNORE)
		status = &mine;
	if (ftp_repl_following()) {
		rc = hear_match(&found, &source);
		if (rc != STREAM_ENDED) {
			*flag = rc == MPI_SUCCESS && found;
			if (*flag)
				rc = probe_copy(c, source, tag, status);
			return rc;
		}
	}
	for (;;) {
		rc = ftp_mpi.PMPI_Iprobe(ftp_rank_in(c->comm, source), tag, c->real, flag, status);
		if (rc != MPI_SUCCESS || !*flag || source != MPI_ANY_SOURCE ||
		    !ftp_repl_from_dropped(c->comm, status))
			break;
		ftp_repl_discard_one(c->comm, status);
	}
	if (rc == MPI_SUCCESS && *flag)
		ftp_status_out(c->comm, status);
	tell_match(rc, rc == MPI_SUCCESS && *flag, status);
	return rc;
}

int ftp_repl_MPI_Iprobe(struct ftp_call *c, int source, int tag, int *flag, MPI_Status *status)
{
	return ftp_post_iprobe(c, iprobe(c, source, tag, flag, status));
}

int ftp_repl_MPI_Probe(struct ftp_call *c, int source, int tag, MPI_Status *status)
{
	MPI_Status mine;
	bool any = source == MPI_ANY_SOURCE;
	int rc;

	if (status == MPI_STATUS_IGNORE)
		status = &mine;
	if (any && ftp_repl_following() && (rc = follow_any_source(&source)) != MPI_SUCCESS)
		return rc;
	rc = source >= 0 && (ftp_repl_replica_class() || paired_rank(c->comm, source))
		 ? probe_copy(c, source, tag, status)
		 : ftp_probe_on(c, source, tag, status);
	if (any && ftp_repl.copy == FTP_COPY_PRIMARY)
		tell_match(rc, true, status);
	return rc;
}

/* A probed message received whole (pmpi/held_msg.h): from whichever copy
 * of the sender lives, as any receive here. */
static int recv_whole(struct ftp_call *c, void *buf, int bytes, int source, int tag)
{
	return recv_blocking(c, buf, bytes, MPI_PACKED, source, tag, MPI_STATUS_IGNORE);
}

int ftp_repl_MPI_Mprobe(struct ftp_call *c, int source, int tag, MPI_Message *message,
			MPI_Status *status)
{
	return ftp_held_mprobe(c, source, tag, ftp_repl_MPI_Probe, recv_whole, message, status);
}

int ftp_repl_MPI_Improbe(struct ftp_call *c, int source, int tag, int *flag, MPI_Message *message,
			 MPI_Status *status)
{
	return ftp_post_iprobe(
	    c, ftp_held_improbe(c, source, tag, iprobe, recv_whole, flag, message, status));
}

/* Receive and drop the message a probe of e found (status st). */
void ftp_repl_discard_one(const struct ftp_comm *e, const MPI_Status *st)
{
	int bytes = 0;

	ftp_mpi.PMPI_Get_count(st, MPI_BYTE, &bytes);
	void *junk = malloc((size_t)(bytes > 0 ? bytes : 1));
	if (junk)
		ftp_mpi.PMPI_Recv(junk, bytes, MPI_BYTE, st->MPI_SOURCE, st->MPI_TAG, e->real,
				  MPI_STATUS_IGNORE);
	free(junk);
	ft_debug("a message of tag %d from the dead copy at rank %d of communicator %llx, which "
		 "its replica sends again: dropped",
		 st->MPI_TAG, st->MPI_SOURCE, (unsigned long long)e->core->id);
}
