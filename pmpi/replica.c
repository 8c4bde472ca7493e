/* replica.c: transparent partial replication (pmpi/replica.h says what
 * and why; docs/DESIGN.md, "Replication", how it was chosen). At MPI_Init
 * the job is split into logical ranks and replicas, and MPI_COMM_WORLD
 * gets its map; every communicator made from a replicated one gets its
 * own (ftp_repl_derive). The calls the table marks @replicas=own come
 * here from their wrappers, after the seam has found the communicator and
 * checked for failures; each returns through its call's post.
 *
 * The stream: a primary tells its replica, in program order, the outcome
 * of every call whose outcome depends on timing, and the results of the
 * collectives; the replica reads it at the same calls. Records are ints:
 * the call's result, its outcome (flag, index, count), then (index,
 * source, tag) for each request or message it completed or matched. */
#include "ftshim_config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmpi/replica.h"
#include "pmpi/requests.h"
#include "src/log.h"

struct ftp_replication ftp_repl = {.partner = -1, .stream = MPI_COMM_NULL};

static struct ft_replica_spec spec;

enum { TAG_DECIDE = 1, TAG_DATA = 2 };

/* Records of up to this many completions live on the stack. */
#define STACK_ENTRIES 16
#define REC_HEAD 2

/* --- setting up --------------------------------------------------------- */

int ftp_repl_parse(char *err, size_t errlen)
{
	return ft_replica_spec_parse(ftp.cfg.replicas, &spec, err, errlen);
}

/* A host id per world rank: the index of the first rank on its host. */
static uint32_t *host_ids(uint32_t size)
{
	uint32_t *ids = malloc((size_t)size * sizeof *ids);

	for (uint32_t k = 0; ids && k < size; k++) {
		ids[k] = k;
		for (uint32_t j = 0; j < k; j++)
			if (strncmp(ftp.peers[j].host, ftp.peers[k].host,
				    sizeof ftp.peers[k].host) == 0) {
				ids[k] = j;
				break;
			}
	}
	return ids;
}

void ftp_repl_release(struct ftp_comm *e)
{
	struct ftp_repl_comm *x = e->repl;

	if (!x)
		return;
	if (x->team != MPI_COMM_NULL && ftp_active())
		ftp_mpi.PMPI_Comm_free(&x->team);
	free(x->primary);
	free(x->replica);
	free(x);
	e->repl = NULL;
}

/* The replication of e, whose members (e->core, in e->real's rank order)
 * are world ranks: primaries and singles give the program ranks in their
 * order, each replica goes with its primary. Collective over e->real (the
 * team is split from it). */
void ftp_repl_derive(struct ftp_comm *e)
{
	const struct ft_comm *core = e->core;
	uint32_t nreal = core->local_size;
	struct ftp_repl_comm *x = calloc(1, sizeof *x);
	int32_t *pos = malloc(((size_t)ftp_repl.plan.n + ftp_repl.plan.r + 1) * sizeof *pos);
	int32_t *real_of = NULL;
	struct ft_rank_map *map = calloc(1, sizeof *map);
	bool ok = x && pos && map && core->remote_size == 0;

	if (ok) {
		x->team = MPI_COMM_NULL;
		x->primary = malloc(((size_t)nreal + 1) * sizeof *x->primary);
		x->replica = malloc(((size_t)nreal + 1) * sizeof *x->replica);
		real_of = malloc(((size_t)nreal + 1) * sizeof *real_of);
		ok = x->primary && x->replica && real_of;
	}
	for (uint32_t k = 0; ok && k < ftp_repl.plan.n + ftp_repl.plan.r; k++)
		pos[k] = -1;
	for (uint32_t q = 0; ok && q < nreal; q++) {
		int32_t w = core->members[q];
		if (w < 0 || (uint32_t)w >= ftp_repl.plan.n + ftp_repl.plan.r)
			ok = false;
		else
			pos[w] = (int32_t)q;
	}
	/* Program rank order: the primaries and singles in real order. */
	for (uint32_t q = 0; ok && q < nreal; q++) {
		int32_t w = core->members[q];
		if (ft_replica_plan_is_replica(&ftp_repl.plan, w))
			continue;
		int32_t rw = ftp_repl.plan.replica_of[w];
		x->primary[x->size] = (int32_t)q;
		x->replica[x->size] = rw >= 0 ? pos[rw] : -1;
		x->size++;
	}
	bool replica = ftp_repl.copy == FTP_COPY_REPLICA;
	for (uint32_t l = 0; ok && l < x->size; l++)
		real_of[l] = replica && x->replica[l] >= 0 ? x->replica[l] : x->primary[l];
	int rc = MPI_SUCCESS;
	/* Every member splits, whatever went wrong here, or the others hang. */
	if (core->remote_size == 0)
		rc = ftp_mpi.PMPI_Comm_split(e->real, replica ? MPI_UNDEFINED : 0, 0,
					     x ? &x->team : &(MPI_Comm){0});
	if (ok && rc == MPI_SUCCESS && ft_rank_map_init(map, real_of, x->size, nreal) == 0) {
		e->repl = x;
		ftp_comm_give_map(e, map);
		x = NULL;
		map = NULL;
	} else {
		/* Its calls would run unreplicated, each copy for itself. */
		ft_error("a communicator of %u processes cannot be replicated (out of memory): the "
			 "job ends",
			 nreal);
		ftp_mpi.PMPI_Abort(ftp.world, 1);
	}
	if (x && x->team != MPI_COMM_NULL)
		ftp_mpi.PMPI_Comm_free(&x->team);
	if (x) {
		free(x->primary);
		free(x->replica);
		free(x);
	}
	free(map);
	free(real_of);
	free(pos);
}

/* A replica's stdout and stderr as they were, before they went to the
 * run directory (-1: not moved). */
static int terminal_fd[2] = {-1, -1};

/* A replica's output would repeat its primary's: its stdout and stderr go
 * to replica-L.out and replica-L.err in the run directory (L its logical
 * rank); ftshim's own lines still reach the terminal. */
static void redirect_output(int logical)
{
	static const char *const ext[2] = {"out", "err"};

	for (int i = 0; i < 2; i++) {
		char name[64], path[PATH_MAX];
		snprintf(name, sizeof name, "replica-%d.%s", logical, ext[i]);
		int fd = ftp_rundir_path(name, path, sizeof path) == 0
			     ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600)
			     : -1;
		if (fd < 0) {
			ft_warn("cannot write %s (%s): this replica's output goes to the terminal",
				name, strerror(errno));
			return;
		}
		fflush(i == 0 ? stdout : stderr);
		terminal_fd[i] = fcntl(i + 1, F_DUPFD_CLOEXEC, 3);
		if (i == 1 && terminal_fd[i] >= 0 && !ftp.cfg.log_file[0])
			ft_log_set_fd(terminal_fd[i]);
		dup2(fd, i + 1);
		close(fd);
	}
}

/* The split of the launched processes, once the world's size is known. */
static uint32_t split_n, split_r;

int ftp_repl_check(char *err, size_t errlen)
{
	if (spec.value == 0 || ftp.world_base != 0)
		return 0;
	return ft_replica_split(&spec, (uint32_t)ftp.world_size, &split_n, &split_r, err, errlen);
}

int ftp_repl_start(void)
{
	uint32_t n = split_n, r = split_r;
	char err[256];

	if (r == 0)
		return 0;
	uint32_t *hosts = host_ids((uint32_t)ftp.world_size);
	int rc = hosts ? ft_replica_plan_make(&ftp_repl.plan, n, r, hosts) : -ENOMEM;
	free(hosts);
	if (rc != 0) {
		snprintf(err, sizeof err, "FTSHIM_REPLICAS=%s: cannot place %u replicas (%s)",
			 ftp.cfg.replicas, r, strerror(-rc));
		ft_error("%s; the job goes on without replicas", err);
		return rc;
	}
	ftp_repl.r = r;
	ftp_repl.copy = ft_replica_plan_is_replica(&ftp_repl.plan, ftp.rank) ? FTP_COPY_REPLICA
			: ftp_repl.plan.replica_of[ftp.rank] >= 0	     ? FTP_COPY_PRIMARY
									     : FTP_COPY_SINGLE;
	ftp_repl.partner = ft_replica_plan_partner(&ftp_repl.plan, ftp.rank);
	ftp_mpi.PMPI_Comm_dup(ftp.world, &ftp_repl.stream);
	struct ftp_comm *world = ftp_seam_comm(ftp.world);
	if (world)
		ftp_repl_derive(world);
	if (ftp_repl.copy == FTP_COPY_REPLICA)
		redirect_output(ftp_repl.plan.logical_of[ftp.rank]);
	if (ftp_repl.copy == FTP_COPY_REPLICA)
		ft_debug("replica of rank %d (process %d of %u launched)",
			 ftp_repl.plan.logical_of[ftp.rank], ftp.rank, n + r);
	else if (ftp.rank == 0) {
		char dir[PATH_MAX];
		if (ftp_rundir_path("", dir, sizeof dir) != 0)
			snprintf(dir, sizeof dir, "(none)/");
		ft_info("replication: %u logical ranks, %u of them with a replica; replicas write "
			"their output to %sreplica-RANK.out and .err",
			n, r, dir);
	}
	return 0;
}

/* --- refusing --------------------------------------------------------------- */

int ftp_repl_refuse(struct ftp_call *c)
{
	static const char *const names[] = FTP_FN_NAMES;

	ft_error("%s on a replicated communicator is not supported yet (FTSHIM_REPLICAS=%s); "
		 "run without FTSHIM_REPLICAS, or see 'man 7 ftshim' (REPLICATION) for what is",
		 names[c->fn], ftp.cfg.replicas);
	ftp_mpi.PMPI_Comm_call_errhandler(c->comm->handle, MPI_ERR_UNSUPPORTED_OPERATION);
	return MPI_ERR_UNSUPPORTED_OPERATION;
}

/* --- the stream ----------------------------------------------------------------- */

/* One message to or from the partner on the stream, watched on it. */
static int stream_io(bool send, void *buf, int count, MPI_Datatype type, int tag,
		     MPI_Status *status)
{
	struct ftp_call c = FTP_CALL_INIT(send ? FTP_FN_MPI_Send : FTP_FN_MPI_Recv);
	struct ftp_comm *world = ftp_seam_comm(ftp.world);
	int partner = ftp_repl.partner;

	if (!world || partner < 0)
		return FTP_ERR_PROC_FAILED;
	ftp_call_on(&c, world,
		    (struct ftp_watch){.kind = FTP_WATCH_PEER, .rank = partner, .recv = !send});
	c.real = ftp_repl.stream;
	int rc = send ? ftp_mpi.PMPI_Isend(buf, count, type, partner, tag, c.real, &c.req)
		      : ftp_mpi.PMPI_Irecv(buf, count, type, partner, tag, c.real, &c.req);
	return ftp_block(&c, rc, status);
}

/* The primary: its replica could not be told (it died): it is told
 * nothing more. */
static void drop_replica(void)
{
	ft_info("replica %d is gone: rank %d goes on alone", ftp_repl.partner, ftp.rank);
	ftp_repl.partner = -1;
}

/* The primary: tell the replica (a replica that died is not told). */
static void tell(const int *rec, int n)
{
	if (ftp_repl.copy != FTP_COPY_PRIMARY || !ftp_repl_paired())
		return;
	if (stream_io(true, (void *)rec, n, MPI_INT, TAG_DECIDE, MPI_STATUS_IGNORE) != MPI_SUCCESS)
		drop_replica();
}

/* The replica: hear the next record (at most max ints); its length. */
static int hear(int *rec, int max, int *n)
{
	MPI_Status st;
	int rc = stream_io(false, rec, max, MPI_INT, TAG_DECIDE, &st);

	if (rc == MPI_SUCCESS)
		ftp_mpi.PMPI_Get_count(&st, MPI_INT, n);
	if (rc == MPI_SUCCESS && *n < REC_HEAD) {
		ft_error("replica: a record of %d ints from the primary; expected at least %d", *n,
			 REC_HEAD);
		rc = MPI_ERR_INTERN;
	}
	return rc;
}

/* A record buffer for up to `entries` completions. */
struct rec {
	int *v;
	int n;
	int stack[REC_HEAD + 3 * STACK_ENTRIES];
};

static int rec_open(struct rec *r, int entries)
{
	size_t want = REC_HEAD + 3 * (size_t)(entries > 0 ? entries : 0);

	r->n = REC_HEAD;
	r->v =
	    want <= sizeof r->stack / sizeof r->stack[0] ? r->stack : malloc(want * sizeof *r->v);
	return r->v ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static void rec_close(struct rec *r)
{
	if (r->v != r->stack)
		free(r->v);
}

static void rec_add(struct rec *r, int index, const MPI_Status *st)
{
	r->v[r->n++] = index;
	r->v[r->n++] = st ? st->MPI_SOURCE : MPI_ANY_SOURCE;
	r->v[r->n++] = st ? st->MPI_TAG : MPI_ANY_TAG;
}

/* The primary: tell the outcome of a receive or probe (rc; found: it
 * matched the message of status). */
static void tell_match(int rc, bool found, const MPI_Status *status)
{
	int v[REC_HEAD + 3];
	struct rec r = {.v = v, .n = REC_HEAD};

	v[0] = rc;
	v[1] = found;
	if (found)
		rec_add(&r, 0, status);
	tell(v, r.n);
}

/* The replica: hear that outcome: MPI_SUCCESS with *found and the
 * matched message's *source (the program's rank), or the primary's
 * error. */
static int hear_match(bool *found, int *source)
{
	int v[REC_HEAD + 3], n = 0;
	int rc = hear(v, REC_HEAD + 3, &n);

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

/* --- MPI_ANY_SOURCE receives of a replica: posted once the primary says ----- */

/* A replica's nonblocking receive from MPI_ANY_SOURCE: the application
 * holds a generalized request; the receive itself starts when a
 * completion call hears which message its primary matched. */
struct any_recv {
	struct ftp_op op;
	void *buf;
	int count, tag;
	MPI_Datatype type; /* a duplicate: the program may free its own */
	bool ready;
};

static bool any_progress(struct ftp_op *op)
{
	return ((struct any_recv *)op)->ready;
}

static void any_destroy(struct ftp_op *op)
{
	struct any_recv *a = (struct any_recv *)op;

	if (a->type != MPI_DATATYPE_NULL && ftp_active())
		ftp_mpi.PMPI_Type_free(&a->type);
	free(a);
}

/* Whether request is a receive from MPI_ANY_SOURCE on a replicated
 * communicator: a primary reports what it matched, a replica waits to be
 * told. *a: the replica's pending receive. */
static bool is_any(MPI_Request request, struct any_recv **a)
{
	struct ftp_req r;

	*a = NULL;
	if (request == MPI_REQUEST_NULL || !ftp_req_find(request, &r))
		return false;
	if (ftp_repl.copy == FTP_COPY_REPLICA) {
		if (!r.op || r.op->progress != any_progress)
			return false;
		*a = (struct any_recv *)r.op;
		return !(*a)->ready;
	}
	return !r.op && r.watch.kind == FTP_WATCH_ANY && r.watch.recv && ftp_repl_comm(r.comm);
}

/* The replica: receive from the source the primary matched (as the
 * program numbers it), now, and let the request complete with its
 * status. With the program's own tag: messages from one sender do not
 * overtake each other, so the first that matches is the primary's. */
static void any_resolve(struct any_recv *a, int source)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Recv);
	struct ftp_comm *e = a->op.comm;
	MPI_Status st;

	ftp_call_on(&c, e, ftp_watch_on(e, FTP_WATCH_PEER, source, true));
	int rc = ftp_mpi.PMPI_Irecv(a->buf, a->count, a->type, ftp_rank_in(e, source), a->tag,
				    e->real, &c.req);
	rc = ftp_block(&c, rc, &st);
	st.MPI_SOURCE = source;
	a->op.status = st;
	a->op.has_status = true;
	a->op.rc = rc;
	a->ready = true;
	ftp_ops_progress();
}

/* --- point to point ---------------------------------------------------------- */

/* The real ranks a send to program rank dest goes to (V-B): a replica
 * sends to replicas only (to a single, MPI_PROC_NULL: its primary sends);
 * a primary to primaries and singles; a single to both copies. */
struct targets {
	int n;
	int rank[2];
};

static struct targets dest_targets(const struct ftp_comm *e, int dest)
{
	const struct ftp_repl_comm *x = e->repl;
	struct targets t = {.n = 1, .rank = {ftp_rank_in(e, dest), MPI_PROC_NULL}};

	if (dest < 0 || (uint32_t)dest >= x->size)
		return t;
	switch (ftp_repl.copy) {
	case FTP_COPY_REPLICA:
		t.rank[0] = x->replica[dest] >= 0 ? x->replica[dest] : MPI_PROC_NULL;
		break;
	case FTP_COPY_PRIMARY:
		t.rank[0] = x->primary[dest];
		break;
	case FTP_COPY_SINGLE:
		t.rank[0] = x->primary[dest];
		if (x->replica[dest] >= 0)
			t.rank[t.n++] = x->replica[dest];
		break;
	}
	return t;
}

typedef int (*isend_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);

/* Wait for a send to real rank `to` that c started into c->req. A send to
 * a replica that has died is dropped. */
static int send_wait(struct ftp_call *c, int rc, int to, bool to_replica)
{
	c->watch = (struct ftp_watch){.kind = FTP_WATCH_PEER, .rank = to};
	rc = ftp_block(c, rc, MPI_STATUS_IGNORE);
	return to_replica && rc == FTP_ERR_PROC_FAILED ? MPI_SUCCESS : rc;
}

static int send_blocking(struct ftp_call *c, isend_fn start, const void *buf, int count,
			 MPI_Datatype type, int dest, int tag)
{
	struct targets t = dest_targets(c->comm, dest);
	MPI_Request second = MPI_REQUEST_NULL;
	int rc2 = MPI_SUCCESS;

	if (t.n == 2)
		rc2 = start(buf, count, type, t.rank[1], tag, c->real, &second);
	int rc = send_wait(c, start(buf, count, type, t.rank[0], tag, c->real, &c->req), t.rank[0],
			   false);
	if (t.n == 2) {
		c->req = second;
		rc2 = send_wait(c, rc2, t.rank[1], true);
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

/* A single's nonblocking send to both copies of a replicated rank: one
 * request for the program, done when both sends are (a send to a replica
 * that died is dropped). */
struct send_pair {
	struct ftp_op op;
	MPI_Request req[2];
	int32_t peer[2]; /* world ranks */
};

static bool pair_progress(struct ftp_op *op)
{
	struct send_pair *p = (struct send_pair *)op;
	bool events = ftp_events() != 0;

	for (int i = 0; i < 2; i++) {
		int flag = 0;
		if (p->req[i] == MPI_REQUEST_NULL)
			continue;
		ftp_mpi.PMPI_Test(&p->req[i], &flag, MPI_STATUS_IGNORE);
		if (!flag && events && p->peer[i] >= 0 &&
		    ft_proc_ever_failed(&ftp.procs, (uint32_t)p->peer[i])) {
			ftp_mpi.PMPI_Cancel(&p->req[i]);
			ftp_mpi.PMPI_Request_free(&p->req[i]);
			if (i == 0)
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
	struct targets t = dest_targets(c->comm, dest);

	c->watch = (struct ftp_watch){.kind = FTP_WATCH_PEER, .rank = t.rank[0]};
	if (t.n == 1)
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
		p->peer[i] = ftp_peer_world(c->comm->core, t.rank[i]);
		if (rc == MPI_SUCCESS)
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

/* A receive (c's watch set), blocking. From MPI_ANY_SOURCE the primary
 * tells what it matched and the replica receives just that. */
static int recv_blocking(struct ftp_call *c, void *buf, int count, MPI_Datatype type, int source,
			 int tag, MPI_Status *status)
{
	MPI_Status mine;
	bool any = source == MPI_ANY_SOURCE && ftp_repl_paired(), found = false;
	int rc;

	if (status == MPI_STATUS_IGNORE)
		status = &mine;
	if (any && ftp_repl.copy == FTP_COPY_REPLICA) {
		rc = hear_match(&found, &source);
		if (rc != MPI_SUCCESS || !found)
			return rc != MPI_SUCCESS ? rc : MPI_ERR_INTERN;
		c->watch = ftp_watch_on(c->comm, FTP_WATCH_PEER, source, true);
	}
	rc = ftp_block(c,
		       ftp_mpi.PMPI_Irecv(buf, count, type, ftp_rank_in(c->comm, source), tag,
					  c->real, &c->req),
		       status);
	ftp_status_out(c->comm, status);
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
	if (source != MPI_ANY_SOURCE || ftp_repl.copy != FTP_COPY_REPLICA)
		return ftp_post_ireq(c,
				     ftp_mpi.PMPI_Irecv(buf, count, datatype,
							ftp_rank_in(c->comm, source), tag, c->real,
							request),
				     request, false);
	struct any_recv *a = calloc(1, sizeof *a);
	if (!a)
		return ftp_post_plain(c, MPI_ERR_NO_MEM);
	a->op.progress = any_progress;
	a->op.destroy = any_destroy;
	a->buf = buf;
	a->count = count;
	a->tag = tag;
	a->type = MPI_DATATYPE_NULL;
	int rc = ftp_mpi.PMPI_Type_dup(datatype, &a->type);
	if (rc != MPI_SUCCESS) {
		free(a);
		return ftp_post_plain(c, rc);
	}
	return ftp_post_plain(c, ftp_op_start(c, &a->op, request));
}

int ftp_repl_MPI_Sendrecv(struct ftp_call *c, const void *sendbuf, int sendcount,
			  MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
			  int recvcount, MPI_Datatype recvtype, int source, int recvtag,
			  MPI_Status *status)
{
	struct targets t = dest_targets(c->comm, dest);
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
		int rs = send_wait(c, MPI_SUCCESS, t.rank[i], i == 1);
		if (rc == MPI_SUCCESS)
			rc = rs;
	}
	return rc;
}

/* Probes: the primary's outcome, and the message it saw, decide. */
int ftp_repl_MPI_Iprobe(struct ftp_call *c, int source, int tag, int *flag, MPI_Status *status)
{
	MPI_Status mine;
	bool found = false;
	int rc;

	if (status == MPI_STATUS_IGNORE)
		status = &mine;
	if (ftp_repl.copy == FTP_COPY_REPLICA) {
		rc = hear_match(&found, &source);
		*flag = rc == MPI_SUCCESS && found;
		if (*flag)
			rc = ftp_probe_on(c, source, tag, status);
		return ftp_post_iprobe(c, rc);
	}
	rc = ftp_mpi.PMPI_Iprobe(ftp_rank_in(c->comm, source), tag, c->real, flag, status);
	if (rc == MPI_SUCCESS && *flag)
		ftp_status_out(c->comm, status);
	tell_match(rc, rc == MPI_SUCCESS && *flag, status);
	return ftp_post_iprobe(c, rc);
}

int ftp_repl_MPI_Probe(struct ftp_call *c, int source, int tag, MPI_Status *status)
{
	MPI_Status mine;
	bool any = source == MPI_ANY_SOURCE && ftp_repl_paired(), found = false;
	int rc;

	if (status == MPI_STATUS_IGNORE)
		status = &mine;
	if (any && ftp_repl.copy == FTP_COPY_REPLICA) {
		rc = hear_match(&found, &source);
		if (rc != MPI_SUCCESS || !found)
			return rc != MPI_SUCCESS ? rc : MPI_ERR_INTERN;
	}
	rc = ftp_probe_on(c, source, tag, status);
	if (any && ftp_repl.copy == FTP_COPY_PRIMARY)
		tell_match(rc, true, status);
	return rc;
}

/* --- completion calls ------------------------------------------------------- */

/* The primary's statuses when the program ignores them. */
static MPI_Status *statuses_for(MPI_Status *given, int count, MPI_Status *stack, MPI_Status **heap)
{
	*heap = NULL;
	if (given != MPI_STATUSES_IGNORE)
		return given;
	if (count <= STACK_ENTRIES)
		return stack;
	*heap = malloc((size_t)count * sizeof **heap);
	return *heap;
}

/* The replica: hear the record of a call with up to `entries`
 * completions into r. */
static int hear_rec(struct rec *r, int entries)
{
	int rc = rec_open(r, entries);

	if (rc == MPI_SUCCESS)
		rc = hear(r->v, REC_HEAD + 3 * (entries > 0 ? entries : 0), &r->n);
	return rc;
}

/* The replica: start the receive of each MPI_ANY_SOURCE request the
 * record names. */
static void resolve_all(const struct rec *r, int count, MPI_Request requests[])
{
	struct any_recv *a;

	for (int k = REC_HEAD; k + 2 < r->n; k += 3) {
		int i = r->v[k];
		if (i >= 0 && i < count && is_any(requests[i], &a) && a)
			any_resolve(a, r->v[k + 1]);
	}
}

/* Wait for count requests, as the program's call would (one: MPI_Wait). */
static int wait_plain_n(int count, MPI_Request requests[], MPI_Status statuses[])
{
	if (count != 1)
		return ftp_waitall_plain(count, requests, statuses);
	return ftp_wait_plain(requests,
			      statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : statuses);
}

static bool any_of(int count, const MPI_Request requests[])
{
	struct any_recv *a;

	for (int i = 0; i < count; i++)
		if (is_any(requests[i], &a))
			return true;
	return false;
}

int ftp_repl_wait(MPI_Request *request, MPI_Status *status)
{
	return ftp_repl_waitall(1, request,
				status == MPI_STATUS_IGNORE ? MPI_STATUSES_IGNORE : status);
}

int ftp_repl_waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
	MPI_Status stack[STACK_ENTRIES], *heap, *st;
	struct rec r;
	int rc;

	/* Deterministic, unless a receive from MPI_ANY_SOURCE is among them. */
	if (count <= 0 || !any_of(count, requests))
		return wait_plain_n(count, requests, statuses);
	if (ftp_repl.copy == FTP_COPY_REPLICA) {
		rc = hear_rec(&r, count);
		if (rc == MPI_SUCCESS)
			resolve_all(&r, count, requests);
		rec_close(&r);
		if (rc != MPI_SUCCESS)
			return rc;
		return wait_plain_n(count, requests, statuses);
	}
	st = statuses_for(statuses, count, stack, &heap);
	if (!st || rec_open(&r, count) != MPI_SUCCESS) {
		free(heap);
		return MPI_ERR_NO_MEM;
	}
	rc = wait_plain_n(count, requests, st);
	r.v[0] = rc;
	r.v[1] = 1;
	for (int i = 0; i < count; i++)
		rec_add(&r, i, &st[i]);
	tell(r.v, r.n);
	rec_close(&r);
	free(heap);
	return rc;
}

int ftp_repl_test(MPI_Request *request, int *flag, MPI_Status *status)
{
	return ftp_repl_testall(1, request, flag,
				status == MPI_STATUS_IGNORE ? MPI_STATUSES_IGNORE : status);
}

int ftp_repl_testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
	MPI_Status stack[STACK_ENTRIES], *heap, *st;
	struct rec r;
	int rc;

	if (ftp_repl.copy == FTP_COPY_REPLICA) {
		rc = hear_rec(&r, count);
		int told = rc == MPI_SUCCESS ? r.v[0] : rc, done = rc == MPI_SUCCESS && r.v[1];
		if (done)
			resolve_all(&r, count, requests);
		rec_close(&r);
		*flag = done;
		if (!done)
			return told;
		return wait_plain_n(count, requests, statuses);
	}
	st = statuses_for(statuses, count, stack, &heap);
	if (!st || rec_open(&r, count) != MPI_SUCCESS) {
		free(heap);
		return MPI_ERR_NO_MEM;
	}
	rc = count == 1 ? ftp_test_plain(requests, flag, st)
			: ftp_testall_plain(count, requests, flag, st);
	r.v[0] = rc;
	r.v[1] = *flag;
	for (int i = 0; *flag && i < count; i++)
		rec_add(&r, i, &st[i]);
	tell(r.v, r.n);
	rec_close(&r);
	free(heap);
	return rc;
}

/* Waitany and Testany (test: flag is not NULL). */
static int repl_any(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
	MPI_Status mine;
	struct rec r;
	int rc;

	if (ftp_repl.copy == FTP_COPY_REPLICA) {
		rc = hear_rec(&r, 1);
		int told = rc == MPI_SUCCESS ? r.v[0] : rc, done = rc == MPI_SUCCESS && r.v[1];
		int i = done && r.n >= REC_HEAD + 3 ? r.v[REC_HEAD] : MPI_UNDEFINED;
		if (done)
			resolve_all(&r, count, requests);
		rec_close(&r);
		if (flag)
			*flag = done;
		*index = i;
		if (!done || i == MPI_UNDEFINED || i < 0 || i >= count)
			return told;
		return ftp_wait_plain(&requests[i], status);
	}
	if (status == MPI_STATUS_IGNORE)
		status = &mine;
	rc = flag ? ftp_testany_plain(count, requests, index, flag, status)
		  : ftp_waitany_plain(count, requests, index, status);
	rec_open(&r, 1);
	r.v[0] = rc;
	r.v[1] = flag ? *flag : 1;
	if (r.v[1])
		rec_add(&r, *index, *index == MPI_UNDEFINED ? NULL : status);
	tell(r.v, r.n);
	rec_close(&r);
	return rc;
}

int ftp_repl_waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
	return repl_any(count, requests, index, NULL, status);
}

int ftp_repl_testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
	return repl_any(count, requests, index, flag, status);
}

/* Waitsome and Testsome. */
static int repl_some(bool test, int incount, MPI_Request requests[], int *outcount, int indices[],
		     MPI_Status statuses[])
{
	MPI_Status stack[STACK_ENTRIES], *heap, *st;
	struct rec r;
	int rc;

	if (ftp_repl.copy == FTP_COPY_REPLICA) {
		rc = hear_rec(&r, incount);
		int told = rc == MPI_SUCCESS ? r.v[0] : rc;
		*outcount = rc == MPI_SUCCESS ? r.v[1] : 0;
		if (rc == MPI_SUCCESS)
			resolve_all(&r, incount, requests);
		for (int k = 0; rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED && k < *outcount;
		     k++) {
			int i = r.v[REC_HEAD + 3 * k];
			indices[k] = i;
			int rw = ftp_wait_plain(&requests[i], statuses == MPI_STATUSES_IGNORE
								  ? MPI_STATUS_IGNORE
								  : &statuses[k]);
			if (told == MPI_SUCCESS)
				told = rw;
		}
		rec_close(&r);
		return told;
	}
	st = statuses_for(statuses, incount, stack, &heap);
	if (!st || rec_open(&r, incount) != MPI_SUCCESS) {
		free(heap);
		return MPI_ERR_NO_MEM;
	}
	rc = test ? ftp_testsome_plain(incount, requests, outcount, indices, st)
		  : ftp_waitsome_plain(incount, requests, outcount, indices, st);
	r.v[0] = rc;
	r.v[1] = *outcount;
	for (int k = 0; *outcount != MPI_UNDEFINED && k < *outcount; k++)
		rec_add(&r, indices[k], &st[k]);
	tell(r.v, r.n);
	rec_close(&r);
	free(heap);
	return rc;
}

int ftp_repl_waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
		      MPI_Status statuses[])
{
	return repl_some(false, incount, requests, outcount, indices, statuses);
}

int ftp_repl_testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
		      MPI_Status statuses[])
{
	return repl_some(true, incount, requests, outcount, indices, statuses);
}

/* --- collectives ----------------------------------------------------------------- */

/* Where a collective's result lands in this process: count of type at buf
 * (count 0: nothing; type of a v-collective: built here and freed). */
struct coll_out {
	void *buf;
	int count;
	MPI_Datatype type;
	bool built;
};

static const struct coll_out NO_OUT = {.buf = NULL, .count = 0, .type = MPI_DATATYPE_NULL};

static struct coll_out out_of(void *buf, int count, MPI_Datatype type)
{
	return (struct coll_out){.buf = buf, .count = count, .type = type};
}

/* The blocks of recvcounts and displs (in units of type's extent) of a
 * v-collective's receive buffer, as one datatype. */
static struct coll_out out_v(void *buf, const int counts[], const int displs[], MPI_Datatype type,
			     int n)
{
	struct coll_out o = {.buf = buf, .count = 1, .built = true};

	if (ftp_mpi.PMPI_Type_indexed(n, counts, displs, type, &o.type) != MPI_SUCCESS ||
	    ftp_mpi.PMPI_Type_commit(&o.type) != MPI_SUCCESS)
		o.count = -1;
	return o;
}

static int team_size(const struct ftp_call *c)
{
	return (int)c->comm->repl->size;
}

/* The result o over the stream: sent by a primary, received by its
 * replica; o's datatype is freed if built. */
static int stream_out(bool send, struct coll_out o)
{
	int rc = o.count < 0 ? MPI_ERR_NO_MEM
			     : stream_io(send, o.count ? o.buf : NULL, o.count,
					 o.count ? o.type : MPI_BYTE, TAG_DATA, MPI_STATUS_IGNORE);

	if (o.built && o.count >= 0)
		ftp_mpi.PMPI_Type_free(&o.type);
	return rc;
}

/* A replica: the result its primary forwards. */
static int forwarded(struct ftp_call *c, struct coll_out o)
{
	return ftp_post_coll(c, ftp_repl_paired() ? stream_out(false, o) : MPI_SUCCESS);
}

/* A primary or single has started the collective's twin on the team
 * (rc, c->req): wait, and a primary forwards the result. */
static int forward(struct ftp_call *c, int rc, struct coll_out o)
{
	rc = ftp_block(c, rc, MPI_STATUS_IGNORE);
	if (rc == MPI_SUCCESS && ftp_repl.copy == FTP_COPY_PRIMARY && ftp_repl_paired()) {
		int frc = stream_out(true, o);
		if (frc == MPI_ERR_NO_MEM)
			rc = frc;
		else if (frc != MPI_SUCCESS)
			drop_replica();
	} else if (o.built && o.count >= 0) {
		ftp_mpi.PMPI_Type_free(&o.type);
	}
	return ftp_post_coll(c, rc);
}

/* A collective on a replicated communicator, whose result lands in o: a
 * replica takes what its primary forwards; a primary or single runs
 * start, the nonblocking twin on c->real (made the team first) into
 * c->req, and a primary forwards the result. Returns through the post. */
#define TEAM_THEN_FORWARD(c, o, start)                                                             \
	(ftp_repl.copy == FTP_COPY_REPLICA                                                         \
	     ? forwarded((c), (o))                                                                 \
	     : ((c)->real = (c)->comm->repl->team, forward((c), (start), (o))))

int ftp_repl_MPI_Barrier(struct ftp_call *c)
{
	return TEAM_THEN_FORWARD(c, NO_OUT, ftp_mpi.PMPI_Ibarrier(c->real, &c->req));
}

int ftp_repl_MPI_Bcast(struct ftp_call *c, void *buffer, int count, MPI_Datatype datatype, int root)
{
	return TEAM_THEN_FORWARD(
	    c, out_of(buffer, count, datatype),
	    ftp_mpi.PMPI_Ibcast(buffer, count, datatype, root, c->real, &c->req));
}

/* The logical rank of this process in c's communicator: a replica's is
 * its primary's. */
static int my_rank(const struct ftp_call *c)
{
	int me = -1;

	ftp_mpi.PMPI_Comm_rank(c->comm->real, &me);
	ftp_rank_out(c->comm, &me);
	return me;
}

int ftp_repl_MPI_Reduce(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
			MPI_Datatype datatype, MPI_Op op, int root)
{
	struct coll_out o = my_rank(c) == root ? out_of(recvbuf, count, datatype) : NO_OUT;

	return TEAM_THEN_FORWARD(
	    c, o,
	    ftp_mpi.PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, c->real, &c->req));
}

int ftp_repl_MPI_Allreduce(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
			   MPI_Datatype datatype, MPI_Op op)
{
	return TEAM_THEN_FORWARD(
	    c, out_of(recvbuf, count, datatype),
	    ftp_mpi.PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, c->real, &c->req));
}

int ftp_repl_MPI_Scan(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
		      MPI_Datatype datatype, MPI_Op op)
{
	return TEAM_THEN_FORWARD(
	    c, out_of(recvbuf, count, datatype),
	    ftp_mpi.PMPI_Iscan(sendbuf, recvbuf, count, datatype, op, c->real, &c->req));
}

int ftp_repl_MPI_Exscan(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
			MPI_Datatype datatype, MPI_Op op)
{
	/* Rank 0's receive buffer is undefined after it: nothing to forward. */
	struct coll_out o = my_rank(c) == 0 ? NO_OUT : out_of(recvbuf, count, datatype);

	return TEAM_THEN_FORWARD(
	    c, o, ftp_mpi.PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, c->real, &c->req));
}

int ftp_repl_MPI_Reduce_scatter_block(struct ftp_call *c, const void *sendbuf, void *recvbuf,
				      int recvcount, MPI_Datatype datatype, MPI_Op op)
{
	return TEAM_THEN_FORWARD(c, out_of(recvbuf, recvcount, datatype),
				 ftp_mpi.PMPI_Ireduce_scatter_block(
				     sendbuf, recvbuf, recvcount, datatype, op, c->real, &c->req));
}

int ftp_repl_MPI_Reduce_scatter(struct ftp_call *c, const void *sendbuf, void *recvbuf,
				const int recvcounts[], MPI_Datatype datatype, MPI_Op op)
{
	struct coll_out o = out_of(recvbuf, recvcounts[my_rank(c)], datatype);

	return TEAM_THEN_FORWARD(c, o,
				 ftp_mpi.PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts,
							      datatype, op, c->real, &c->req));
}

int ftp_repl_MPI_Gather(struct ftp_call *c, const void *sendbuf, int sendcount,
			MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
			int root)
{
	struct coll_out o =
	    my_rank(c) == root ? out_of(recvbuf, recvcount * team_size(c), recvtype) : NO_OUT;

	return TEAM_THEN_FORWARD(c, o,
				 ftp_mpi.PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf,
						      recvcount, recvtype, root, c->real, &c->req));
}

int ftp_repl_MPI_Gatherv(struct ftp_call *c, const void *sendbuf, int sendcount,
			 MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
			 const int displs[], MPI_Datatype recvtype, int root)
{
	struct coll_out o = my_rank(c) == root
				? out_v(recvbuf, recvcounts, displs, recvtype, team_size(c))
				: NO_OUT;

	return TEAM_THEN_FORWARD(c, o,
				 ftp_mpi.PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf,
						       recvcounts, displs, recvtype, root, c->real,
						       &c->req));
}

/* The root's own block stays in sendbuf when it receives in place. */
static struct coll_out scattered(void *recvbuf, int recvcount, MPI_Datatype recvtype)
{
	return recvbuf == MPI_IN_PLACE ? NO_OUT : out_of(recvbuf, recvcount, recvtype);
}

int ftp_repl_MPI_Scatter(struct ftp_call *c, const void *sendbuf, int sendcount,
			 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
			 int root)
{
	return TEAM_THEN_FORWARD(c, scattered(recvbuf, recvcount, recvtype),
				 ftp_mpi.PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf,
						       recvcount, recvtype, root, c->real,
						       &c->req));
}

int ftp_repl_MPI_Scatterv(struct ftp_call *c, const void *sendbuf, const int sendcounts[],
			  const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount,
			  MPI_Datatype recvtype, int root)
{
	return TEAM_THEN_FORWARD(c, scattered(recvbuf, recvcount, recvtype),
				 ftp_mpi.PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype,
							recvbuf, recvcount, recvtype, root, c->real,
							&c->req));
}

int ftp_repl_MPI_Allgather(struct ftp_call *c, const void *sendbuf, int sendcount,
			   MPI_Datatype sendtype, void *recvbuf, int recvcount,
			   MPI_Datatype recvtype)
{
	return TEAM_THEN_FORWARD(c, out_of(recvbuf, recvcount * team_size(c), recvtype),
				 ftp_mpi.PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf,
							 recvcount, recvtype, c->real, &c->req));
}

int ftp_repl_MPI_Allgatherv(struct ftp_call *c, const void *sendbuf, int sendcount,
			    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
			    const int displs[], MPI_Datatype recvtype)
{
	struct coll_out o = out_v(recvbuf, recvcounts, displs, recvtype, team_size(c));

	return TEAM_THEN_FORWARD(c, o,
				 ftp_mpi.PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf,
							  recvcounts, displs, recvtype, c->real,
							  &c->req));
}

int ftp_repl_MPI_Alltoall(struct ftp_call *c, const void *sendbuf, int sendcount,
			  MPI_Datatype sendtype, void *recvbuf, int recvcount,
			  MPI_Datatype recvtype)
{
	return TEAM_THEN_FORWARD(c, out_of(recvbuf, recvcount * team_size(c), recvtype),
				 ftp_mpi.PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf,
							recvcount, recvtype, c->real, &c->req));
}

int ftp_repl_MPI_Alltoallv(struct ftp_call *c, const void *sendbuf, const int sendcounts[],
			   const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
			   const int recvcounts[], const int rdispls[], MPI_Datatype recvtype)
{
	struct coll_out o = out_v(recvbuf, recvcounts, rdispls, recvtype, team_size(c));

	return TEAM_THEN_FORWARD(c, o,
				 ftp_mpi.PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype,
							 recvbuf, recvcounts, rdispls, recvtype,
							 c->real, &c->req));
}
