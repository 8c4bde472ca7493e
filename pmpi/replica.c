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

#include "ftshim.h"
#include "pmpi/replica.h"
#include "pmpi/requests.h"
#include "src/log.h"
#include "src/repl_log.h"

struct ftp_replication ftp_repl = {.partner = -1, .stream = MPI_COMM_NULL};

static struct ft_replica_spec spec;

/* Tags on the stream: records, forwarded results, and the counts a
 * replica gives the primary of a logical rank whose replica died. */
enum { TAG_DECIDE = 1, TAG_DATA = 2, TAG_COUNTS = 3 };

/* Every replicated communicator this process holds (their views change
 * when a copy dies). Application thread. */
static struct ftp_comm **repl_comms;
static size_t nrepl_comms, repl_comms_cap;

/* What this process counted of its messages on replicated communicators
 * and, a primary, the bytes of its latest sends to replicated ranks
 * (src/repl_log.h). Application thread. */
static struct ft_msg_table msg_counts;
static struct ft_send_log send_log;

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
	for (size_t i = 0; i < nrepl_comms; i++)
		if (repl_comms[i] == e) {
			repl_comms[i] = repl_comms[--nrepl_comms];
			break;
		}
	ft_msg_table_drop_comm(&msg_counts, e->core->id);
	ft_send_log_drop_comm(&send_log, e->core->id);
	if (x->team != MPI_COMM_NULL && ftp_active())
		ftp_mpi.PMPI_Comm_free(&x->team);
	if (x->base != MPI_COMM_NULL && ftp_active())
		ftp_mpi.PMPI_Comm_free(&x->base);
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
		x->base = MPI_COMM_NULL;
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
		int32_t rw = ftp_repl.plan.replica_of[w]; /* -1 once dropped */
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
	if (ok && nrepl_comms == repl_comms_cap) {
		size_t cap = repl_comms_cap ? 2 * repl_comms_cap : 16;
		struct ftp_comm **more = realloc(repl_comms, cap * sizeof *more);
		ok = more != NULL;
		if (more) {
			repl_comms = more;
			repl_comms_cap = cap;
		}
	}
	if (ok && rc == MPI_SUCCESS && ft_rank_map_init(map, real_of, x->size, nreal) == 0) {
		repl_comms[nrepl_comms++] = e;
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

int ftp_repl_plan(void)
{
	uint32_t n = split_n, r = split_r;
	char err[256];

	if (r == 0 || ftp.world_base != 0)
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
	ft_msg_table_init(&msg_counts);
	ft_send_log_init(&send_log, (size_t)ftp.cfg.replica_log_mib << 20);
	ftp_repl.dropped = calloc((size_t)n + r, 1);
	return 0;
}

int ftp_repl_start(void)
{
	uint32_t n = ftp_repl.plan.n, r = ftp_repl.r;

	if (r == 0)
		return 0;
	/* Collectives over every copy, before any copy can be dropped: one
	 * that dies in them ends the others' MPI_Init (status 76), as a death
	 * in any creation does, rather than hang it. */
	struct ftp_comm *world = ftp_seam_comm(ftp.world);
	if (world)
		ftp_hang_watch_begin(FTP_FN_MPI_Init, world->core->members, world->core->local_size);
	ftp_mpi.PMPI_Comm_dup(ftp.world, &ftp_repl.stream);
	if (world)
		ftp_repl_derive(world);
	ftp_hang_watch_end();
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

/* One message to or from world rank peer on the stream, watched on it. */
static int stream_with(int peer, bool send, void *buf, int count, MPI_Datatype type, int tag,
		       MPI_Status *status)
{
	struct ftp_call c = FTP_CALL_INIT(send ? FTP_FN_MPI_Send : FTP_FN_MPI_Recv);
	struct ftp_comm *world = ftp_seam_comm(ftp.world);

	if (!world || peer < 0)
		return FTP_ERR_PROC_FAILED;
	ftp_call_on(&c, world,
		    (struct ftp_watch){.kind = FTP_WATCH_PEER, .rank = peer, .recv = !send});
	c.real = ftp_repl.stream;
	int rc = send ? ftp_mpi.PMPI_Isend(buf, count, type, peer, tag, c.real, &c.req)
		      : ftp_mpi.PMPI_Irecv(buf, count, type, peer, tag, c.real, &c.req);
	return ftp_block(&c, rc, status);
}

/* The same with the partner. */
static int stream_io(bool send, void *buf, int count, MPI_Datatype type, int tag,
		     MPI_Status *status)
{
	return stream_with(ftp_repl.partner, send, buf, count, type, tag, status);
}

/* The primary: its replica could not be told (it died): it is told
 * nothing more, once the failure is applied (ftp_repl_views). */
static void drop_replica(void)
{
	ftp_repl_views();
	if (ftp_repl_paired() && ft_proc_is_failed(&ftp.procs, (uint32_t)ftp_repl.partner))
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

/* --- counting and logging ------------------------------------------------------ */

/* The world rank of the copy at rank q of e's real communicator. */
static int32_t world_at(const struct ftp_comm *e, int q)
{
	return ftp_peer_world(e->core, q);
}

/* Whether world rank w is a replica (a copy that may be dropped). */
static bool is_replica_world(int32_t w)
{
	return w >= 0 && ft_replica_plan_is_replica(&ftp_repl.plan, w);
}

/* A message from program rank source with tag was matched here. */
static void count_received(const struct ftp_comm *e, int source, int tag)
{
	struct ft_msg_counts *n = source >= 0 ? ft_msg_counts_get(&msg_counts, e->core->id, source, tag)
					      : NULL;

	if (n)
		n->received++;
}

/* A send to program rank dest, which has a replica: its number among the
 * sends to (dest, tag), and, from a primary, its bytes in the log. Returns
 * the number (0: not counted, out of memory) and sets *skip_replica when
 * dest's replica has it already (from this rank's dead replica). */
static uint64_t note_send(const struct ftp_comm *e, int dest, int tag, const void *buf, int count,
			  MPI_Datatype type, bool *skip_replica)
{
	struct ft_msg_counts *n = ft_msg_counts_get(&msg_counts, e->core->id, dest, tag);

	*skip_replica = false;
	if (!n)
		return 0;
	uint64_t seq = ++n->sent;
	*skip_replica = seq <= n->skip[FT_SLOT_REPLICA];
	if (ftp_repl.copy != FTP_COPY_PRIMARY)
		return seq;
	int size = 0, pos = 0;
	if (ftp_mpi.PMPI_Pack_size(count, type, e->real, &size) != MPI_SUCCESS || size < 0)
		return seq;
	struct ft_logged *m = ft_send_log_append(&send_log, e->core->id, dest, tag, seq, (size_t)size);
	if (m && ftp_mpi.PMPI_Pack(buf, count, type, m->data, size, &pos, e->real) == MPI_SUCCESS)
		m->len = (size_t)pos;
	return seq;
}

/* --- receives from one copy -------------------------------------------------------- */

/* A replica's receive from a named program rank, posted to the copy
 * that serves it here (a replica receives from replicas): when that copy
 * dies the receive moves to the survivor (ftp_repl_views), which resends
 * what this process has not matched. Pending ones are listed in posting
 * order, which a move keeps. */
struct peer_recv {
	struct ftp_comm *e;
	void *buf;
	int count, source, tag; /* the program's */
	MPI_Datatype type;
	MPI_Request req; /* the real receive; MPI_REQUEST_NULL while moved */
	int32_t from;	 /* world rank of the copy it is posted to */
	bool done, linked;
	int rc;
	MPI_Status status; /* once done: MPI_SOURCE is the program's */
	struct peer_recv *prev, *next;
};

static struct peer_recv *recvs_head, *recvs_tail;

static void recv_unlink(struct peer_recv *p)
{
	if (!p->linked)
		return;
	*(p->prev ? &p->prev->next : &recvs_head) = p->next;
	*(p->next ? &p->next->prev : &recvs_tail) = p->prev;
	p->linked = false;
}

static void recv_finish(struct peer_recv *p, int rc, const MPI_Status *st)
{
	recv_unlink(p);
	p->done = true;
	p->rc = rc;
	if (st)
		p->status = *st;
	p->status.MPI_SOURCE = p->source;
	if (rc == MPI_SUCCESS && st)
		count_received(p->e, p->source, st->MPI_TAG);
}

/* Post p to the copy its source is addressed at now. */
static void recv_post(struct peer_recv *p)
{
	int q = ftp_rank_in(p->e, p->source);
	int rc = ftp_mpi.PMPI_Irecv(p->buf, p->count, p->type, q, p->tag, p->e->real, &p->req);

	p->from = world_at(p->e, q);
	if (rc != MPI_SUCCESS)
		recv_finish(p, rc, NULL);
}

static void recv_start(struct peer_recv *p)
{
	p->req = MPI_REQUEST_NULL;
	p->done = false;
	p->prev = recvs_tail;
	p->next = NULL;
	*(recvs_tail ? &recvs_tail->next : &recvs_head) = p;
	recvs_tail = p;
	p->linked = true;
	recv_post(p);
}

static void recv_poll(struct peer_recv *p)
{
	MPI_Status st;
	int flag = 0;

	if (p->done || p->req == MPI_REQUEST_NULL)
		return;
	int rc = ftp_mpi.PMPI_Test(&p->req, &flag, &st);
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
 * not a replica, which the view drops (perhaps not yet: the process table
 * can show a death before ftp_repl_views has applied it), moving p to
 * the copy that serves its rank then. */
static bool recv_stranded(const struct peer_recv *p)
{
	return !p->done && p->from >= 0 && ft_proc_is_failed(&ftp.procs, (uint32_t)p->from) &&
	       !is_replica_world(p->from);
}

/* Block until p is done (c: the call, whose watch follows p's copy). */
static int recv_wait(struct ftp_call *c, struct peer_recv *p, MPI_Status *status)
{
	uint64_t seen = 0, polls = 0;

	for (;;) {
		recv_poll(p);
		if (p->done)
			break;
		c->watch = (struct ftp_watch){.kind = FTP_WATCH_PEER,
					      .rank = ftp_rank_in(p->e, p->source),
					      .recv = true};
		int err = ftp_poll_step(c, false, &seen, &polls);
		if (err != MPI_SUCCESS && !p->done && (err == FTP_ERR_REVOKED || recv_stranded(p)))
			recv_give_up(p, err);
	}
	if (status != MPI_STATUS_IGNORE)
		*status = p->status;
	return p->rc;
}

/* A replica's blocking receive from program rank source. */
static int recv_from(struct ftp_call *c, void *buf, int count, MPI_Datatype type, int source,
		     int tag, MPI_Status *status)
{
	struct peer_recv p = {
	    .e = c->comm, .buf = buf, .count = count, .source = source, .tag = tag, .type = type};

	recv_start(&p);
	return recv_wait(c, &p, status);
}

/* A replica's nonblocking receive from a named rank, as an ftshim
 * operation: the application holds a generalized request. */
struct recv_op {
	struct ftp_op op;
	struct peer_recv p; /* p.type is a duplicate: the program may free its own */
};

static bool recv_op_progress(struct ftp_op *op)
{
	struct peer_recv *p = &((struct recv_op *)op)->p;

	ftp_repl_views();
	recv_poll(p);
	if (!p->done && recv_stranded(p))
		recv_give_up(p, FTP_ERR_PROC_FAILED);
	if (!p->done)
		return false;
	op->status = p->status;
	op->has_status = true;
	op->rc = p->rc;
	return true;
}

static void recv_op_destroy(struct ftp_op *op)
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

/* --- views: dropping a dead replica ------------------------------------------------- */

/* Failures of ftp.procs.order[0 .. views_applied) are applied here; set
 * while one is. Application thread. */
static uint32_t views_applied;
static bool in_views;

/* Sends that hand a replica what its dead source's copy would have sent
 * (copies of logged bytes), until done. */
struct resend {
	MPI_Request req;
	int32_t to; /* world rank */
	struct resend *next;
	unsigned char data[];
};
static struct resend *resends;

static void resends_progress(bool wait)
{
	for (struct resend **link = &resends; *link;) {
		struct resend *m = *link;
		int flag = 0;
		uint64_t polls = 0;
		do {
			ftp_mpi.PMPI_Test(&m->req, &flag, MPI_STATUS_IGNORE);
			if (!flag && (ft_proc_is_failed(&ftp.procs, (uint32_t)m->to))) {
				ftp_mpi.PMPI_Cancel(&m->req);
				ftp_mpi.PMPI_Request_free(&m->req);
				flag = 1;
			}
			if (!flag && wait)
				ftp_poll_pause(&polls);
		} while (!flag && wait);
		if (flag) {
			*link = m->next;
			free(m);
		} else {
			link = &m->next;
		}
	}
}

/* The program rank of logical rank l in e, or -1. */
static int prog_rank_of(const struct ftp_comm *e, int32_t l)
{
	const struct ftp_repl_comm *x = e->repl;

	for (uint32_t k = 0; k < x->size; k++)
		if (world_at(e, x->primary[k]) == l)
			return (int)k;
	return -1;
}

/* What a replica tells the primary of a logical rank whose replica died:
 * for each communicator and tag, how many messages from it it matched. */
struct counts_msg {
	uint64_t *v; /* (comm, tag, received) triples */
	size_t n, cap;
	uint64_t comm;
};

static void counts_add(struct ft_msg_counts *n, void *arg)
{
	struct counts_msg *m = arg;

	if (n->comm != m->comm || n->received == 0)
		return;
	if (m->n + 3 > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 48;
		uint64_t *v = realloc(m->v, cap * sizeof *v);
		if (!v)
			return;
		m->v = v;
		m->cap = cap;
	}
	m->v[m->n++] = n->comm;
	m->v[m->n++] = (uint64_t)(uint32_t)n->tag;
	m->v[m->n++] = n->received;
}

/* A replica, after the replica of logical rank l died: tell l's primary
 * what it has of l's messages (every pending receive from the dead copy
 * has been settled). */
static void tell_counts(int32_t l)
{
	struct counts_msg m = {0};

	for (size_t i = 0; i < nrepl_comms; i++) {
		int k = prog_rank_of(repl_comms[i], l);
		m.comm = repl_comms[i]->core->id;
		if (k >= 0)
			ft_msg_table_each_peer(&msg_counts, k, counts_add, &m);
	}
	for (size_t i = 0; i + 2 < m.n; i += 3)
		ft_debug("replica: rank %d's messages of tag %d on communicator %llx: %llu matched here",
			 l, (int)(uint32_t)m.v[i + 1], (unsigned long long)m.v[i],
			 (unsigned long long)m.v[i + 2]);
	stream_with(l, true, m.v ? (void *)m.v : (void *)&m.n, (int)m.n, MPI_UINT64_T, TAG_COUNTS,
		    MPI_STATUS_IGNORE);
	free(m.v);
}

/* The primary: hear world rank w's counts (NULL: none are coming: it died or
 * finished); *n entries. */
static uint64_t *hear_counts(int32_t w, size_t *n)
{
	MPI_Status st;
	uint64_t polls = 0;
	int flag = 0, count = 0;

	*n = 0;
	/* Probe first: the size is the replica's. */
	for (;;) {
		if (ftp_mpi.PMPI_Iprobe(w, TAG_COUNTS, ftp_repl.stream, &flag, &st) != MPI_SUCCESS)
			return NULL;
		if (flag)
			break;
		if (ft_proc_is_failed(&ftp.procs, (uint32_t)w) || ftp_departed((uint32_t)w))
			return NULL;
		ftp_poll_pause(&polls);
	}
	ftp_mpi.PMPI_Get_count(&st, MPI_UINT64_T, &count);
	uint64_t *v = malloc(((size_t)count + 1) * sizeof *v);
	if (!v || ftp_mpi.PMPI_Recv(v, count, MPI_UINT64_T, w, TAG_COUNTS, ftp_repl.stream,
				    MPI_STATUS_IGNORE) != MPI_SUCCESS) {
		free(v);
		return NULL;
	}
	*n = (size_t)count / 3;
	return v;
}

/* A replica's report (v: n triples), read for one communicator e, where
 * the replica is real rank `to`, while resending to it. */
struct reported {
	const uint64_t *v;
	size_t n;
	uint64_t comm;
	struct ftp_comm *e;
	int32_t to; /* the replica's real rank in e */
	size_t resent;
	bool failed;
};

static uint64_t reported_of(int32_t tag, void *arg)
{
	const struct reported *r = arg;

	for (size_t i = 0; i < r->n; i++)
		if (r->v[3 * i] == r->comm && (int32_t)(uint32_t)r->v[3 * i + 1] == tag)
			return r->v[3 * i + 2];
	return 0;
}

static void resend_one(const struct ft_logged *m, void *arg)
{
	struct reported *r = arg;
	struct resend *x = malloc(sizeof *x + m->len);

	if (!x || m->len > INT_MAX) {
		free(x);
		r->failed = true;
		return;
	}
	memcpy(x->data, m->data, m->len);
	x->to = world_at(r->e, r->to);
	if (ftp_mpi.PMPI_Isend(x->data, (int)m->len, MPI_PACKED, r->to, m->tag, r->e->real,
			       &x->req) != MPI_SUCCESS) {
		free(x);
		r->failed = true;
		return;
	}
	x->next = resends;
	resends = x;
	r->resent++;
}

/* How many sends to (comm, peer) the replica lacks, per its report. */
struct lack {
	struct reported *r;
	uint64_t missing;
};

static void lack_add(struct ft_msg_counts *n, void *arg)
{
	struct lack *k = arg;

	if (n->comm != k->r->comm)
		return;
	uint64_t have = reported_of(n->tag, k->r);
	ft_debug("replica of rank %d: %llu of tag %d matched there, %llu sent here", n->peer,
		 (unsigned long long)have, n->tag, (unsigned long long)n->sent);
	if (n->sent > have)
		k->missing += n->sent - have;
	/* What it has beyond what was sent, it need not get again. */
	n->skip[FT_SLOT_REPLICA] = have;
}

/* The primary of a logical rank whose replica died: give every other
 * replica what it lacks of this rank's messages, from the log, and skip
 * later what it has. */
static void serve_counts(int32_t dead)
{
	uint32_t total = ftp_repl.plan.n + ftp_repl.plan.r;

	for (uint32_t w = ftp_repl.plan.n; w < total; w++) {
		if ((int32_t)w == dead || ftp_repl.dropped[w] || ft_proc_is_failed(&ftp.procs, w))
			continue;
		size_t n = 0;
		uint64_t *v = hear_counts((int32_t)w, &n);
		int32_t j = ftp_repl.plan.logical_of[w];
		for (size_t i = 0; v && i < nrepl_comms; i++) {
			struct ftp_comm *e = repl_comms[i];
			int k = prog_rank_of(e, j);
			if (k < 0 || e->repl->replica[k] < 0)
				continue;
			struct reported r = {.v = v, .n = n, .comm = e->core->id, .e = e,
					     .to = e->repl->replica[k]};
			struct lack lk = {.r = &r};
			ft_msg_table_each_peer(&msg_counts, k, lack_add, &lk);
			/* A tag this rank has not sent with yet, which the dead
			 * replica had: skip as many of those sends too. */
			for (size_t t = 0; t < n; t++) {
				if (v[3 * t] != r.comm)
					continue;
				int32_t tag = (int32_t)(uint32_t)v[3 * t + 1];
				if (ft_msg_counts_find(&msg_counts, r.comm, k, tag))
					continue;
				struct ft_msg_counts *c = ft_msg_counts_get(&msg_counts, r.comm, k, tag);
				if (c)
					c->skip[FT_SLOT_REPLICA] = v[3 * t + 2];
			}
			ft_send_log_each_after(&send_log, r.comm, k, reported_of, resend_one, &r);
			if (r.failed || r.resent != lk.missing) {
				ft_error("rank %d cannot give the replica of rank %d the %llu message(s) it "
					 "lacks: %zu are still in its log (FTSHIM_REPLICA_LOG_MIB=%llu); the job "
					 "ends",
					 ftp.rank, j, (unsigned long long)lk.missing, r.resent,
					 (unsigned long long)ftp.cfg.replica_log_mib);
				ftp_mpi.PMPI_Abort(ftp.world, 1);
			}
		}
		free(v);
	}
	/* Nobody can need this rank's log again: it has no copy left. */
	ft_send_log_fini(&send_log);
}

/* Replica `dead` (of logical rank l) died: nobody addresses it any more.
 * A replica settles its receives from it and tells l's primary what it
 * has; the primary goes on alone and serves those counts. */
static void drop_copy(int32_t dead)
{
	int32_t l = ftp_repl.plan.logical_of[dead];
	struct peer_recv *p, *next;

	if (ftp_repl.copy == FTP_COPY_REPLICA)
		for (p = recvs_head; p; p = next) {
			next = p->next;
			if (p->from != dead || p->req == MPI_REQUEST_NULL)
				continue;
			/* A last look: what it sent before it died may be here. */
			MPI_Status st;
			int rc = ftp_cancel_p2p(&p->req, dead, FTP_P2P_RECV, FTP_ERR_PROC_FAILED, &st);
			ft_debug("replica: a receive from rank %d (tag %d) posted to process %d: %s",
				 p->source, p->tag, dead, rc == MPI_SUCCESS ? "matched" : "cancelled");
			if (rc == MPI_SUCCESS)
				recv_finish(p, rc, &st);
		}
	ftp_repl.dropped[dead] = 1;
	ftp_repl.plan.replica_of[l] = -1;
	for (size_t i = 0; i < nrepl_comms; i++) {
		struct ftp_comm *e = repl_comms[i];
		struct ftp_repl_comm *x = e->repl;
		for (uint32_t k = 0; k < x->size; k++)
			if (x->replica[k] >= 0 && world_at(e, x->replica[k]) == dead) {
				x->replica[k] = -1;
				if (ftp_repl.copy == FTP_COPY_REPLICA)
					ft_rank_map_retarget(e->map, (int32_t)k, x->primary[k]);
			}
	}
	if (ftp_repl.copy == FTP_COPY_REPLICA) {
		tell_counts(l);
		for (p = recvs_head; p; p = p->next)
			if (p->from == dead && p->req == MPI_REQUEST_NULL)
				recv_post(p);
	} else if (ftp.rank == l) {
		ftp_repl.partner = -1;
		ftp_repl.copy = FTP_COPY_SINGLE;
		serve_counts(dead);
		ft_info("the replica of rank %d (process %d) is gone: rank %d goes on alone", l, dead,
			l);
	}
}

void ftp_repl_views(void)
{
	if (ftp_repl.r == 0 || in_views || !ftp_active())
		return;
	if (resends)
		resends_progress(false);
	uint32_t n = ft_proc_nfailed(&ftp.procs);
	if (views_applied >= n)
		return;
	in_views = true;
	while (views_applied < (n = ft_proc_nfailed(&ftp.procs))) {
		int32_t dead = (int32_t)ftp.procs.order[views_applied++];
		if (is_replica_world(dead) && !ftp_repl.dropped[dead] &&
		    ftp_repl.plan.replica_of[ftp_repl.plan.logical_of[dead]] == dead)
			drop_copy(dead);
	}
	in_views = false;
	/* Answers cached under the old value counted the dropped copies. */
	atomic_fetch_add_explicit(&ftp.events, 1, memory_order_release);
}

/* The tag of the MPI_Comm_create_group that makes a creation base. */
#define BASE_TAG 0x5f7d

/* Wait until this process knows every member of e not in alive[0..n)
 * failed (the agreement may have heard of it first), apply the view, and
 * say whether each was a replica, dropped now. */
static int settle_dead(const struct ftp_comm *e, const int32_t *alive, uint32_t n)
{
	int rc = MPI_SUCCESS;

	for (uint32_t q = 0, i = 0; q < e->core->local_size; q++) {
		int32_t w = e->core->members[q];
		if (i < n && alive[i] == w) {
			i++;
			continue;
		}
		uint64_t polls = 0;
		while (!ft_proc_ever_failed(&ftp.procs, (uint32_t)w))
			ftp_poll_pause(&polls);
	}
	ftp_repl_views();
	for (uint32_t q = 0, i = 0; q < e->core->local_size; q++) {
		int32_t w = e->core->members[q];
		if (i < n && alive[i] == w)
			i++;
		else if (!ftp_repl_dropped(w))
			rc = FTP_ERR_PROC_FAILED;
	}
	return rc;
}

int ftp_repl_creation(struct ftp_call *c)
{
	struct ftp_comm *e = c->comm;
	struct ftp_repl_comm *x = e->repl;
	int32_t *alive = malloc(((size_t)e->core->local_size + 1) * sizeof *alive);
	uint32_t n = 0;
	int size = 0;

	if (!alive)
		return MPI_ERR_NO_MEM;
	int rc = ftp_agree_alive(c, alive, &n);
	if (rc == MPI_SUCCESS)
		rc = settle_dead(e, alive, n);
	MPI_Comm base = x->base != MPI_COMM_NULL ? x->base : e->real;
	if (rc == MPI_SUCCESS)
		rc = ftp_mpi.PMPI_Comm_size(base, &size);
	if (rc == MPI_SUCCESS && (uint32_t)size != n) {
		MPI_Comm smaller = MPI_COMM_NULL;
		rc = ftp_create_group_of(base, alive, n, BASE_TAG, c->fn, &smaller);
		if (rc == MPI_SUCCESS) {
			if (x->base != MPI_COMM_NULL)
				ftp_mpi.PMPI_Comm_free(&x->base);
			x->base = base = smaller;
		}
	}
	if (rc == MPI_SUCCESS) {
		c->real = base;
		c->direct = true;
		ftp_hang_watch_begin(c->fn, alive, n);
	}
	free(alive);
	return rc;
}

FT_EXPORT int ftshim_rank_copies(int rank)
{
	uint32_t n = ftp_repl.r ? ftp_repl.plan.n : atomic_load(&ftp.nprocs);

	if (!ftp_active() || rank < 0 || (uint32_t)rank >= n)
		return -1;
	int copies = ft_proc_is_failed(&ftp.procs, (uint32_t)rank) ? 0 : FTSHIM_COPY_PRIMARY;
	int32_t replica = ftp_repl.r ? ftp_repl.plan.replica_of[rank] : -1; /* -1 once dropped */
	if (replica >= 0 && !ft_proc_is_failed(&ftp.procs, (uint32_t)replica))
		copies |= FTSHIM_COPY_REPLICA;
	return copies;
}

void ftp_repl_await_drop(int32_t w)
{
	uint64_t polls = 0;

	if (in_views || !is_replica_world(w))
		return;
	for (ftp_repl_views(); !ftp_repl_dropped(w); ftp_repl_views())
		ftp_poll_pause(&polls);
}

void ftp_repl_finish(void)
{
	uint64_t polls = 0;

	if (ftp_repl.r == 0)
		return;
	/* A primary stays until its replica has entered MPI_Finalize too: if
	 * the replica dies first, the other replicas still need from this
	 * rank what it would have sent them (drop_copy serves them, and makes
	 * this rank a single). */
	for (;;) {
		ftp_repl_views();
		if (ftp_repl.copy != FTP_COPY_PRIMARY || ftp_departed((uint32_t)ftp_repl.partner))
			break;
		ftp_poll_pause(&polls);
	}
	resends_progress(true);
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
	int rc = recv_from(&c, a->buf, a->count, a->type, source, a->tag, &st);
	a->op.status = st;
	a->op.has_status = true;
	a->op.rc = rc;
	a->ready = true;
	ftp_ops_progress();
}

/* --- point to point ---------------------------------------------------------- */

/* The real ranks a send to program rank dest goes to (V-B): a replica
 * sends to replicas only (to a single, MPI_PROC_NULL: its primary sends);
 * a primary to primaries and singles; a single to both copies, less a
 * replica that has the message already (after its dead replica sent it:
 * note_send). */
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
	const struct ftp_repl_comm *x = e->repl;
	struct targets t = {.n = 1, .rank = {ftp_rank_in(e, dest), MPI_PROC_NULL}};
	bool skip = false;

	if (dest < 0 || (uint32_t)dest >= x->size)
		return t;
	if (x->replica[dest] >= 0)
		note_send(e, dest, a.tag, a.buf, a.count, a.type, &skip);
	switch (ftp_repl.copy) {
	case FTP_COPY_REPLICA:
		t.rank[0] = x->replica[dest] >= 0 ? x->replica[dest] : MPI_PROC_NULL;
		break;
	case FTP_COPY_PRIMARY:
		t.rank[0] = x->primary[dest];
		break;
	case FTP_COPY_SINGLE:
		t.rank[0] = x->primary[dest];
		if (x->replica[dest] >= 0 && !skip)
			t.rank[t.n++] = x->replica[dest];
		break;
	}
	return t;
}

typedef int (*isend_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);

/* Wait for a send to real rank `to` that c started into c->req. A send to
 * a replica that has died is dropped: its copies' logs and the view
 * change give the survivors what it would have passed on. */
static int send_wait(struct ftp_call *c, int rc, int to)
{
	c->watch = (struct ftp_watch){.kind = FTP_WATCH_PEER, .rank = to};
	rc = ftp_block(c, rc, MPI_STATUS_IGNORE);
	return rc == FTP_ERR_PROC_FAILED && is_replica_world(world_at(c->comm, to)) ? MPI_SUCCESS
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

/* A nonblocking send to a replica, or a single's to both copies of a
 * replicated rank: one request for the program, done when the sends are
 * (a send to a replica that died is dropped, as in send_wait). */
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
			if (!is_replica_world(p->peer[i]))
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
	if (t.n == 1 && !is_replica_world(world_at(c->comm, t.rank[0])))
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
		p->peer[i] = i < t.n ? world_at(c->comm, t.rank[i]) : -1;
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
	}
	if (ftp_repl.copy == FTP_COPY_REPLICA && source >= 0)
		return recv_from(c, buf, count, type, source, tag, status);
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
	if (ftp_repl.copy != FTP_COPY_REPLICA || source == MPI_PROC_NULL)
		return ftp_post_ireq(c,
				     ftp_mpi.PMPI_Irecv(buf, count, datatype,
							ftp_rank_in(c->comm, source), tag, c->real,
							request),
				     request, false);
	if (source != MPI_ANY_SOURCE) {
		struct recv_op *o = calloc(1, sizeof *o);
		if (!o)
			return ftp_post_plain(c, MPI_ERR_NO_MEM);
		o->op.progress = recv_op_progress;
		o->op.destroy = recv_op_destroy;
		o->p = (struct peer_recv){.e = c->comm, .buf = buf, .count = count,
					  .source = source, .tag = tag, .type = MPI_DATATYPE_NULL};
		int rc = ftp_mpi.PMPI_Type_dup(datatype, &o->p.type);
		if (rc != MPI_SUCCESS) {
			free(o);
			return ftp_post_plain(c, rc);
		}
		recv_start(&o->p);
		return ftp_post_plain(c, ftp_op_start(c, &o->op, request));
	}
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

/* A probe of program rank source (not MPI_ANY_SOURCE) from a replica:
 * when the copy it probes dies, again on the copy that took over. The
 * status names source: a message the dead copy sent before it died may
 * be what the probe saw, after the view stopped mapping that copy. */
static int probe_copy(struct ftp_call *c, int source, int tag, MPI_Status *status)
{
	int rc;

	for (;;) {
		int32_t from = world_at(c->comm, ftp_rank_in(c->comm, source));
		c->watch = ftp_watch_on(c->comm, FTP_WATCH_PEER, source, true);
		rc = ftp_probe_on(c, source, tag, status);
		if (rc == MPI_SUCCESS && status != MPI_STATUS_IGNORE)
			status->MPI_SOURCE = source;
		if (rc != FTP_ERR_PROC_FAILED || !is_replica_world(from))
			return rc;
		ftp_repl_await_drop(from);
	}
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
			rc = probe_copy(c, source, tag, status);
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
	rc = ftp_repl.copy == FTP_COPY_REPLICA && source >= 0 ? probe_copy(c, source, tag, status)
							      : ftp_probe_on(c, source, tag, status);
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
