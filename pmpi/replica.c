/* replica.c: transparent partial replication (pmpi/replica.h says what
 * and why; docs/DESIGN.md, "Replication", how it was chosen). At MPI_Init
 * the job is split into logical ranks and replicas, and MPI_COMM_WORLD
 * gets its map; every communicator made from a replicated one gets its
 * own (ftp_repl_derive). The calls ftp_repl_calls lists
 * (pmpi/mode/replication/calls.c) come here from their wrappers, after
 * the seam has found the communicator and checked for failures; each
 * returns through its call's post.
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
#include "src/events.h"
#include "src/log.h"
#include "src/repl_log.h"

struct ftp_replication ftp_repl = {.partner = -1, .stream = MPI_COMM_NULL};

static struct ft_replica_spec spec;

/* Tags on the stream: records, the counts a copy gives the survivor of
 * a logical rank that lost a copy, the agreement on a rebuilt team
 * (team_agree), and from TAG_DATA on, the forwarded
 * results of each communicator (struct ftp_repl_comm.stream_tag). */
enum { TAG_DECIDE = 1, TAG_COUNTS = 3, TAG_TEAM = 4, TAG_DATA = 16, TAG_DATA_SLOTS = 32000 };

/* The next communicator's slot among the data tags. */
static uint32_t next_data_slot;

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

bool ftp_repl_requested(void)
{
	return spec.value > 0;
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

static void coll_log_trim(struct ftp_repl_comm *x, uint64_t seq);
static void fwd_drop(struct ftp_repl_comm *x);
static void fwd_receive(int32_t dead);

void ftp_repl_release(struct ftp_comm *e)
{
	struct ftp_repl_comm *x = e->cover;

	if (!x)
		return;
	for (size_t i = 0; i < nrepl_comms; i++)
		if (repl_comms[i] == e) {
			repl_comms[i] = repl_comms[--nrepl_comms];
			break;
		}
	ft_msg_table_drop_comm(&msg_counts, e->core->id);
	ft_send_log_drop_comm(&send_log, e->core->id);
	coll_log_trim(x, UINT64_MAX);
	fwd_drop(x);
	if (x->team != MPI_COMM_NULL && ftp_active())
		ftp_mpi.PMPI_Comm_free(&x->team);
	if (x->base != MPI_COMM_NULL && ftp_active())
		ftp_mpi.PMPI_Comm_free(&x->base);
	free(x->primary);
	free(x->replica);
	free(x->cart);
	free(x);
	e->cover = NULL;
}

/* Whether world rank w is a replica (a copy that may be dropped). */
static bool is_replica_world(int32_t w)
{
	return w >= 0 && ft_replica_plan_is_replica(&ftp_repl.plan, w);
}

/* This process receives as a replica does: from replicas, and from the
 * only copy of a rank that has no replica (pmpi/replica.h). */
static bool replica_class(void)
{
	return ftp_repl.copy == FTP_COPY_REPLICA || ftp_repl.copy == FTP_COPY_PROMOTED;
}

/* This process reads what its primary tells it (a promoted replica, until
 * the stream from its dead primary runs dry). */
static bool following(void)
{
	return ftp_repl.partner >= 0 && replica_class();
}

/* The world rank of the copy at rank q of e's real communicator. */
static int32_t world_at(const struct ftp_comm *e, int q)
{
	return ftp_job_at(e->core, q);
}

/* The real rank in e of the copy that stands for program rank k before
 * the others: its primary or single, or its replica once that carries
 * on alone. */
static int lead_of(const struct ftp_repl_comm *x, int k)
{
	return x->primary[k] >= 0 ? x->primary[k] : x->replica[k];
}

bool ftp_repl_covered(int32_t w)
{
	if (ftp_repl.r == 0 || !ftp_repl.copy_of || w < 0 ||
	    (uint32_t)w >= ftp_repl.plan.n + ftp_repl.plan.r)
		return false;
	int32_t other = ftp_repl.copy_of[w];
	return other >= 0 && !ft_proc_ever_failed(&ftp.procs, (uint32_t)other);
}

static int prog_rank_of(const struct ftp_comm *e, int32_t l);
static int my_rank_in(const struct ftp_comm *e);
static uint64_t team_hash(const int32_t *w, uint32_t n);

/* The key of the MPI_Comm_split under way on a replicated communicator
 * (ftp_repl_MPI_Comm_split), for ftp_repl_derive; and the topology the
 * communicator it makes takes (MPI_Cart_create, MPI_Cart_sub), which
 * ftp_repl_derive takes over. */
static int split_key;
static bool split_keyed;
static struct ftp_repl_cart *split_cart;

/* A Cartesian topology: dims then periods, ndims each. */
struct ftp_repl_cart {
	int ndims;
	int v[];
};

static struct ftp_repl_cart *cart_new(int ndims, const int *dims, const int *periods)
{
	struct ftp_repl_cart *t = malloc(sizeof *t + 2 * (size_t)ndims * sizeof t->v[0]);

	if (!t)
		return NULL;
	t->ndims = ndims;
	for (int i = 0; i < ndims; i++) {
		t->v[i] = dims[i];
		t->v[ndims + i] = periods[i] != 0;
	}
	return t;
}

/* The replication of e, whose members (e->core, in e->real's rank order)
 * are world ranks: primaries and singles give the program ranks in their
 * order, each replica goes with its primary; a replica whose primary is
 * not among them (it died) stands for its logical rank, and the program
 * ranks then follow their order in parent. Collective over e->real (the
 * team is split from it). */
void ftp_repl_derive(struct ftp_comm *e, const struct ftp_comm *parent)
{
	const struct ft_comm *core = e->core;
	uint32_t nreal = core->local_size;
	struct ftp_repl_comm *x = calloc(1, sizeof *x);
	int32_t *pos = malloc(((size_t)ftp_repl.plan.n + ftp_repl.plan.r + 1) * sizeof *pos);
	int32_t *real_of = NULL;
	struct ft_rank_map *map = calloc(1, sizeof *map);
	bool ok = x && pos && map && core->remote_size == 0, lone = false;

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
	/* Program rank order: the primaries and singles in real order, and
	 * a replica alone where its primary would be. */
	for (uint32_t q = 0; ok && q < nreal; q++) {
		int32_t w = core->members[q], l = ftp_repl.plan.logical_of[w];
		if (is_replica_world(w) && pos[l] >= 0)
			continue;
		int32_t rw = is_replica_world(w) ? w : ftp_repl.plan.replica_of[w]; /* -1 once dropped */
		x->primary[x->size] = is_replica_world(w) ? -1 : (int32_t)q;
		x->replica[x->size] = rw >= 0 ? pos[rw] : -1;
		lone |= is_replica_world(w);
		x->size++;
	}
	if (ok && lone && parent && parent->cover) {
		/* The MPI ordered the new communicator by the program's key, then
		 * by rank in what it was made from, where a replica that stands
		 * alone comes after the primaries: order the program ranks by
		 * the key, then by rank in the parent, as among the N. */
		int mine[2] = {split_keyed ? split_key : 0, my_rank_in(parent)};
		int *all = malloc(((size_t)nreal + 1) * 2 * sizeof *all);
		ok = all && ftp_mpi.PMPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, e->real) ==
				MPI_SUCCESS;
		for (uint32_t i = 1; ok && i < x->size; i++)
			for (uint32_t j = i; j > 0; j--) {
				const int *a = &all[2 * lead_of(x, (int)j - 1)], *b = &all[2 * lead_of(x, (int)j)];
				if (a[0] < b[0] || (a[0] == b[0] && a[1] <= b[1]))
					break;
				int32_t t = x->primary[j];
				x->primary[j] = x->primary[j - 1];
				x->primary[j - 1] = t;
				t = x->replica[j];
				x->replica[j] = x->replica[j - 1];
				x->replica[j - 1] = t;
			}
		free(all);
	}
	bool replica = ftp_repl.copy == FTP_COPY_REPLICA, rclass = replica_class();
	int me = 0;
	/* The team's members first (world ranks, for its hash), then the map. */
	for (uint32_t l = 0; ok && l < x->size; l++) {
		real_of[l] = world_at(e, lead_of(x, (int)l));
		if (real_of[l] == ftp.rank)
			me = (int)l;
	}
	if (ok)
		x->team_hash = team_hash(real_of, x->size);
	for (uint32_t l = 0; ok && l < x->size; l++)
		real_of[l] = (rclass && x->replica[l] >= 0) || x->primary[l] < 0 ? x->replica[l]
										 : x->primary[l];
	int rc = MPI_SUCCESS;
	/* Every member splits, whatever went wrong here, or the others hang;
	 * the key puts the team in program rank order. */
	if (core->remote_size == 0)
		rc = ftp_mpi.PMPI_Comm_split(e->real, replica ? MPI_UNDEFINED : 0, me,
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
	/* A collective abandoned on a team whose member died may fail later
	 * in the MPI's progress: never fatal (the call's own error reaches the
	 * program through the seam). */
	if (x && x->team != MPI_COMM_NULL)
		ftp_mpi.PMPI_Comm_set_errhandler(x->team, MPI_ERRORS_RETURN);
	if (ok && rc == MPI_SUCCESS && ft_rank_map_init(map, real_of, x->size, nreal) == 0) {
		x->stream_tag = TAG_DATA + (int)(next_data_slot++ % TAG_DATA_SLOTS);
		/* A split takes the topology it was made for; a dup keeps its
		 * parent's. */
		const struct ftp_repl_cart *pc = parent && parent->cover ? ftp_repl_of(parent)->cart : NULL;
		if (split_cart) {
			x->cart = split_cart;
			split_cart = NULL;
		} else if (!split_keyed && pc) {
			x->cart = cart_new(pc->ndims, pc->v, pc->v + pc->ndims);
		}
		repl_comms[nrepl_comms++] = e;
		e->cover = x;
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
	ftp_repl.copy_of = malloc(((size_t)n + r) * sizeof *ftp_repl.copy_of);
	for (uint32_t k = 0; ftp_repl.copy_of && k < n + r; k++)
		ftp_repl.copy_of[k] = ft_replica_plan_partner(&ftp_repl.plan, (int32_t)k);
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
		ftp_repl_derive(world, NULL);
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

/* An error of the program's call on replicated c->comm that the MPI
 * would have raised there: the communicator's error handler, and the
 * code. */
static int program_error(struct ftp_call *c, int code)
{
	ftp_mpi.PMPI_Comm_call_errhandler(c->comm->handle, code);
	return code;
}

int ftp_repl_refuse(struct ftp_call *c)
{
	static const char *const names[] = FTP_FN_NAMES;

	ft_error("%s on a replicated communicator is not supported yet (FTSHIM_REPLICAS=%s); "
		 "run without FTSHIM_REPLICAS, or see 'man 7 ftshim' (REPLICATION) for what is",
		 names[c->fn], ftp.cfg.replicas);
	return program_error(c, MPI_ERR_UNSUPPORTED_OPERATION);
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

static void await_view(int32_t w);
static void carry_on(void);
static void discard_one(const struct ftp_comm *e, const MPI_Status *st);
static bool records_left(int32_t from);
static bool teams_rebuild(void);
static bool has_copy(int32_t w);

/* What a follower's read of the stream gives once its primary is dead
 * and nothing it sent is left: the follower decides for itself from then
 * on (carry_on), and the call goes on as a single's. Never reaches the
 * program. */
#define STREAM_ENDED (-0x5e1d)

/* rc of a read from the stream of primary `from`: STREAM_ENDED if it
 * failed because the primary died (the view may have been applied while
 * the read waited). */
static int stream_end(int rc, int32_t from)
{
	if (rc == MPI_SUCCESS || from < 0 || !ft_proc_is_failed(&ftp.procs, (uint32_t)from))
		return rc;
	if (following())
		carry_on();
	return STREAM_ENDED;
}

/* The replica: hear the next record (at most max ints); its length. */
static int hear(int *rec, int max, int *n)
{
	MPI_Status st;
	int32_t from = ftp_repl.partner;
	int rc = stream_end(stream_io(false, rec, max, MPI_INT, TAG_DECIDE, &st), from);

	if (rc == MPI_SUCCESS)
		ftp_mpi.PMPI_Get_count(&st, MPI_INT, n);
	/* The last thing a dead primary told: carry on from here. */
	if (rc == MPI_SUCCESS && ftp_repl.copy == FTP_COPY_PROMOTED && !records_left(from))
		carry_on();
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

/* A message from program rank source with tag was matched here. */
static void count_received(const struct ftp_comm *e, int source, int tag)
{
	struct ft_msg_counts *n = source >= 0 ? ft_msg_counts_get(&msg_counts, e->core->id, source, tag)
					      : NULL;

	if (n)
		n->received++;
}

/* Program rank k of e has two copies: a receive from it moves when the
 * one it is posted to dies. */
static bool paired_rank(const struct ftp_comm *e, int k)
{
	const struct ftp_repl_comm *x = e->cover;

	return k >= 0 && (uint32_t)k < x->size && x->primary[k] >= 0 && x->replica[k] >= 0;
}

/* World rank w has another copy (living or not): a send to it that fails
 * may be one its other copy makes good. */
static bool has_copy(int32_t w)
{
	return w >= 0 && ftp_repl.copy_of && ftp_repl.copy_of[w] >= 0;
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
	struct ft_msg_counts *n = ft_msg_counts_get(&msg_counts, e->core->id, dest, tag);

	skip[FT_SLOT_PRIMARY] = skip[FT_SLOT_REPLICA] = false;
	if (!n)
		return 0;
	uint64_t seq = ++n->sent;
	skip[FT_SLOT_PRIMARY] = seq <= n->skip[FT_SLOT_PRIMARY];
	skip[FT_SLOT_REPLICA] = seq <= n->skip[FT_SLOT_REPLICA];
	bool logged = ftp_repl.copy == FTP_COPY_REPLICA ||
		      (ftp_repl.copy == FTP_COPY_PRIMARY && ftp_repl_paired() && ftp_repl_of(e)->replica[dest] >= 0);
	if (!logged)
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

/* A receive on a replicated communicator that a death may move: from a
 * named program rank, posted to the copy that serves it here (a replica
 * receives from replicas, a primary from primaries); when that copy dies
 * the receive moves to the survivor (ftp_repl_views), which resends what
 * this process has not matched. From MPI_ANY_SOURCE (source < 0): posted
 * as it is, never moved, listed so that a view change sees it matched
 * before this process counts what it has. Pending ones are listed in
 * posting order, which a move keeps. */
struct peer_recv {
	struct ftp_comm *e;
	void *buf;
	int count, source, tag; /* the program's */
	MPI_Datatype type;
	MPI_Request req; /* the real receive; MPI_REQUEST_NULL while moved */
	int32_t from;	 /* world rank of the copy it is posted to; -1: any */
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

	p->from = q == MPI_ANY_SOURCE ? -1 : world_at(p->e, q);
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

/* A message from MPI_ANY_SOURCE that came from a dead primary after it
 * was dropped from the view (discard_from saw the others): its replica
 * sends it again, so this one is passed over. */
static bool from_dropped(const struct ftp_comm *e, const MPI_Status *st)
{
	int r = st->MPI_SOURCE;

	ftp_rank_out(e, &r);
	return r < 0 && st->MPI_SOURCE >= 0;
}

static void recv_poll(struct peer_recv *p)
{
	MPI_Status st;
	int flag = 0;

	if (p->done || p->req == MPI_REQUEST_NULL)
		return;
	int rc = ftp_mpi.PMPI_Test(&p->req, &flag, &st);
	if (rc == MPI_SUCCESS && flag && p->source == MPI_ANY_SOURCE && from_dropped(p->e, &st)) {
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
		recv_poll(p);
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
static int recv_from(struct ftp_call *c, void *buf, int count, MPI_Datatype type, int source,
		     int tag, MPI_Status *status)
{
	struct peer_recv p = {
	    .e = c->comm, .buf = buf, .count = count, .source = source, .tag = tag, .type = type};

	recv_start(&p);
	return recv_wait(c, &p, status);
}

/* A nonblocking receive that a death may move, as an ftshim operation:
 * the application holds a generalized request. */
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
	const struct ftp_repl_comm *x = e->cover;

	for (uint32_t k = 0; k < x->size; k++)
		if (ftp_repl.plan.logical_of[world_at(e, lead_of(x, (int)k))] == l)
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

/* After a copy of logical rank l died: tell world rank `to`, the copy of
 * l this process receives from now, what it has of l's messages (every
 * pending receive from the dead copy has been settled). */
static void tell_counts(int32_t l, int32_t to)
{
	struct counts_msg m = {0};

	for (size_t i = 0; i < nrepl_comms; i++) {
		int k = prog_rank_of(repl_comms[i], l);
		m.comm = repl_comms[i]->core->id;
		if (k >= 0)
			ft_msg_table_each_peer(&msg_counts, k, counts_add, &m);
	}
	for (size_t i = 0; i + 2 < m.n; i += 3)
		ft_debug("rank %d's messages of tag %d on communicator %llx: %llu matched here", l,
			 (int)(uint32_t)m.v[i + 1], (unsigned long long)m.v[i],
			 (unsigned long long)m.v[i + 2]);
	int rc = stream_with(to, true, m.v ? (void *)m.v : (void *)&m.n, (int)m.n, MPI_UINT64_T,
			     TAG_COUNTS, MPI_STATUS_IGNORE);
	ft_debug("replication: told process %d what rank %d's messages matched here (%zu tags): %s",
		 to, l, m.n / 3, rc == MPI_SUCCESS ? "sent" : "not sent");
	free(m.v);
}

/* The surviving copy of this logical rank: hear world rank w's counts
 * (NULL: none are coming: it died or finished); *n entries. */
static uint64_t *hear_counts(int32_t w, size_t *n)
{
	MPI_Status st;
	uint64_t polls = 0;
	int flag = 0, count = 0;

	*n = 0;
	/* Probe first: the size is the sender's. A process that is alive
	 * and on its way tells within moments; one never heard from leaves
	 * this one unable to carry the rank on without a duplicate. */
	uint64_t start = ft_clock_now(), patience = 10 * FT_NSEC_PER_SEC + 4 * ftp.cfg.hb_timeout;
	for (;;) {
		if (ftp_mpi.PMPI_Iprobe(w, TAG_COUNTS, ftp_repl.stream, &flag, &st) != MPI_SUCCESS)
			return NULL;
		if (flag)
			break;
		if (ft_proc_is_failed(&ftp.procs, (uint32_t)w) || ftp_departed((uint32_t)w))
			return NULL;
		if (ft_clock_now() - start > patience) {
			ft_error("rank %d's copy (process %d) heard nothing from process %d about the "
				 "messages it received from rank %d in %.0f s: the job ends",
				 ftp_repl.plan.logical_of[ftp.rank], ftp.rank, w,
				 ftp_repl.plan.logical_of[ftp.rank], (double)patience / 1e9);
			ftp_mpi.PMPI_Abort(ftp.world, 1);
		}
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
	ft_debug("replication: process %d matched rank %d's messages of %zu tags", w,
		 ftp_repl.plan.logical_of[ftp.rank], *n);
	return v;
}

/* A copy's report (v: n triples), read for one communicator e, where the
 * copy is real rank `to`, while resending to it. */
struct reported {
	const uint64_t *v;
	size_t n;
	uint64_t comm;
	struct ftp_comm *e;
	int32_t to; /* the copy's real rank in e */
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

/* How many sends to (comm, peer) the copy lacks, per its report; the
 * copy's slot has what it reported, and is skipped for those later. */
struct lack {
	struct reported *r;
	enum ft_copy_slot slot;
	uint64_t missing;
};

static void lack_add(struct ft_msg_counts *n, void *arg)
{
	struct lack *k = arg;

	if (n->comm != k->r->comm)
		return;
	uint64_t have = reported_of(n->tag, k->r);
	ft_debug("rank %d's copy: %llu of tag %d matched there, %llu sent here", n->peer,
		 (unsigned long long)have, n->tag, (unsigned long long)n->sent);
	if (n->sent > have)
		k->missing += n->sent - have;
	/* What it has beyond what was sent, it need not get again. */
	n->skip[k->slot] = have;
}

/* This process's copy of its logical rank died: world rank w, which
 * received from that copy and now receives from this one (in the copy's
 * slot), says what it has; give it from the log what it lacks, and skip
 * later what it has. */
static void serve_one(int32_t w, enum ft_copy_slot slot)
{
	size_t n = 0;
	uint64_t *v = hear_counts(w, &n);
	int32_t j = ftp_repl.plan.logical_of[w];

	for (size_t i = 0; v && i < nrepl_comms; i++) {
		struct ftp_comm *e = repl_comms[i];
		int k = prog_rank_of(e, j);
		int32_t to = k < 0 ? -1 : slot == FT_SLOT_REPLICA ? ftp_repl_of(e)->replica[k] : ftp_repl_of(e)->primary[k];
		if (to < 0)
			continue;
		struct reported r = {.v = v, .n = n, .comm = e->core->id, .e = e, .to = to};
		struct lack lk = {.r = &r, .slot = slot};
		ft_msg_table_each_peer(&msg_counts, k, lack_add, &lk);
		/* A tag this rank has not sent with yet, which the dead copy
		 * had: skip as many of those sends too. */
		for (size_t t = 0; t < n; t++) {
			if (v[3 * t] != r.comm)
				continue;
			int32_t tag = (int32_t)(uint32_t)v[3 * t + 1];
			if (ft_msg_counts_find(&msg_counts, r.comm, k, tag))
				continue;
			struct ft_msg_counts *c = ft_msg_counts_get(&msg_counts, r.comm, k, tag);
			if (c)
				c->skip[slot] = v[3 * t + 2];
		}
		ft_send_log_each_after(&send_log, r.comm, k, reported_of, resend_one, &r);
		if (r.failed || r.resent != lk.missing) {
			ft_error("rank %d cannot give rank %d's copy (process %d) the %llu message(s) it "
				 "lacks: %zu are still in its log (FTSHIM_REPLICA_LOG_MIB=%llu); the job ends",
				 ftp_repl.plan.logical_of[ftp.rank], j, w, (unsigned long long)lk.missing,
				 r.resent, (unsigned long long)ftp.cfg.replica_log_mib);
			ftp_mpi.PMPI_Abort(ftp.world, 1);
		}
	}
	free(v);
}

/* The primary of a logical rank whose replica died: give every other
 * replica what it lacks of this rank's messages, from the log, and skip
 * later what it has. */
static void serve_counts(int32_t dead)
{
	uint32_t total = ftp_repl.plan.n + ftp_repl.plan.r;

	for (uint32_t w = ftp_repl.plan.n; w < total; w++)
		if ((int32_t)w != dead && !ftp_repl.dropped[w] && !ft_proc_is_failed(&ftp.procs, w))
			serve_one((int32_t)w, FT_SLOT_REPLICA);
	/* Nobody can need this rank's log again: it has no copy left. */
	ft_send_log_fini(&send_log);
}

/* Settle every pending receive posted to world rank dead: a last look
 * (what it sent before it died may be here), else it waits, unposted,
 * to move. */
static void settle_recvs_from(int32_t dead)
{
	struct peer_recv *p, *next;

	for (p = recvs_head; p; p = next) {
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

/* Post again the receives settle_recvs_from left waiting (the view now
 * sends them to the copy that took over). */
static void repost_recvs_from(int32_t dead)
{
	for (struct peer_recv *p = recvs_head; p; p = p->next)
		if (p->from == dead && p->req == MPI_REQUEST_NULL)
			recv_post(p);
}

/* Copy `dead` leaves every replicated communicator's view: its slot
 * empties, and where this process addressed it, the program rank now
 * addresses the other copy. */
static void view_forget(int32_t dead)
{
	for (size_t i = 0; i < nrepl_comms; i++) {
		struct ftp_comm *e = repl_comms[i];
		struct ftp_repl_comm *x = e->cover;
		for (uint32_t k = 0; k < x->size; k++) {
			int32_t *slot = x->primary[k] >= 0 && world_at(e, x->primary[k]) == dead
					    ? &x->primary[k]
				      : x->replica[k] >= 0 && world_at(e, x->replica[k]) == dead
					    ? &x->replica[k]
					    : NULL;
			if (!slot)
				continue;
			int32_t q = *slot;
			*slot = -1;
			int other = lead_of(x, (int)k);
			if (e->map->real_of[k] == q && other >= 0)
				ft_rank_map_retarget(e->map, (int32_t)k, other);
		}
	}
}

/* Replica `dead` (of logical rank l) died: nobody addresses it any more.
 * A replica settles its receives from it and tells l's primary what it
 * has; the primary goes on alone and serves those counts. */
static void drop_copy(int32_t dead)
{
	int32_t l = ftp_repl.plan.logical_of[dead];

	if (replica_class())
		settle_recvs_from(dead);
	ftp_repl.dropped[dead] = 1;
	ftp_repl.plan.replica_of[l] = -1;
	view_forget(dead);
	if (replica_class()) {
		tell_counts(l, l);
		repost_recvs_from(dead);
	} else if (ftp.rank == l) {
		ftp_repl.partner = -1;
		ftp_repl.copy = FTP_COPY_SINGLE;
		serve_counts(dead);
		ft_info("the replica of rank %d (process %d) is gone: rank %d goes on alone", l, dead,
			l);
		ft_events_add(ftp_wall_now(), "replica_lost", ",\"program_rank\":%d,\"replica\":%d", l,
			      dead);
	}
}

/* Receive and drop the message a probe of e found (status st). */
static void discard_one(const struct ftp_comm *e, const MPI_Status *st)
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

/* Messages the dead primary `dead` sent that no receive here matched:
 * never to be matched now (its replica gives them again), so that no
 * later receive from MPI_ANY_SOURCE takes one. */
static void discard_from(int32_t dead)
{
	for (size_t i = 0; i < nrepl_comms; i++) {
		struct ftp_comm *e = repl_comms[i];
		int q = -1;
		for (uint32_t j = 0; j < e->core->local_size; j++)
			if (e->core->members[j] == dead)
				q = (int)j;
		/* A few passes of the MPI's progress: what it sent is here. */
		for (int empty = 0; q >= 0 && empty < 4;) {
			MPI_Status st;
			int flag = 0;
			if (ftp_mpi.PMPI_Iprobe(q, MPI_ANY_TAG, e->real, &flag, &st) != MPI_SUCCESS)
				break;
			if (!flag) {
				empty++;
				continue;
			}
			discard_one(e, &st);
		}
	}
}

/* A promotion was applied here: the teams are to be rebuilt once every
 * death known is (ftp_repl_views). */
static bool rebuild_pending;

/* Whether the dead primary `from` told this process something it has
 * not read yet (it is all here: ftp_dead_peer_pass). */
static bool records_left(int32_t from)
{
	uint64_t start = ft_clock_now();
	int flag = 0;

	for (uint32_t pass = 0; !flag && ftp_dead_peer_pass(pass, start); pass++)
		ftp_mpi.PMPI_Iprobe(from, TAG_DECIDE, ftp_repl.stream, &flag, MPI_STATUS_IGNORE);
	return flag;
}

/* Primary `dead` (of logical rank l) died and its replica lives: the
 * replica carries l on. Processes that received from the primary
 * settle what they had from it, tell the replica, and receive from it
 * from now on; the replica gives them from its log what they lack and
 * sends as a single does; every process of the teams rebuilds them. */
static void promote(int32_t dead)
{
	int32_t l = dead, rw = ftp_repl.plan.replica_of[l];
	bool receiver = !replica_class(); /* received from the dead primary */

	ft_debug("replication: rank %d's primary died; process %d carries it on", l, rw);

	if (receiver) {
		settle_recvs_from(dead);
		discard_from(dead);
		for (struct peer_recv *p = recvs_head; p; p = p->next)
			recv_poll(p);
	}
	ftp_repl.plan.replica_of[l] = -1;
	view_forget(dead);
	if (receiver) {
		tell_counts(l, rw);
		repost_recvs_from(dead);
	} else if (ftp.rank == rw) {
		ftp_repl.copy = FTP_COPY_PROMOTED;
		fwd_receive(dead);
		for (uint32_t w = 0; w < ftp_repl.plan.n; w++)
			if ((int32_t)w != dead && !ft_proc_is_failed(&ftp.procs, w))
				serve_one((int32_t)w, FT_SLOT_PRIMARY);
		ft_send_log_fini(&send_log);
	}
	rebuild_pending = true;
}

/* Failures of ftp.procs.order[0 .. views_applied) are applied. */
static bool death_applied(int32_t w)
{
	for (uint32_t i = 0; i < views_applied; i++)
		if (ftp.procs.order[i] == w)
			return true;
	return false;
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
	for (;;) {
		while (views_applied < (n = ft_proc_nfailed(&ftp.procs))) {
			int32_t dead = (int32_t)ftp.procs.order[views_applied++];
			int32_t l = dead >= 0 ? ftp_repl.plan.logical_of[dead] : -1;
			if (l < 0)
				continue;
			int32_t rw = ftp_repl.plan.replica_of[l];
			if (is_replica_world(dead) && !ftp_repl.dropped[dead] && rw == dead)
				drop_copy(dead);
			else if (!is_replica_world(dead) && rw >= 0 &&
				 !ft_proc_is_failed(&ftp.procs, (uint32_t)rw))
				promote(dead);
		}
		/* Rebuilt once every death known here is applied; a member that
		 * dies meanwhile is applied, and the teams rebuilt again. */
		if (!rebuild_pending || ftp_repl.copy == FTP_COPY_REPLICA || teams_rebuild())
			break;
	}
	rebuild_pending = false;
	if (ftp_repl.copy == FTP_COPY_PROMOTED && following() && !records_left(ftp_repl.partner))
		carry_on();
	in_views = false;
	/* Answers cached under the old value counted the dropped copies. */
	atomic_fetch_add_explicit(&ftp.events, 1, memory_order_release);
}

/* Wait until the death of w has been applied to the view here. */
static void await_view(int32_t w)
{
	uint64_t polls = 0;

	if (in_views || w < 0)
		return;
	for (ftp_repl_views(); !death_applied(w); ftp_repl_views())
		ftp_poll_pause(&polls);
}

void ftp_repl_await_view(int32_t w)
{
	if (has_copy(w))
		await_view(w);
}

/* A promoted replica has read all its dead primary told it: it decides
 * for itself from now on, and its output reaches the terminal. */
static void carry_on(void)
{
	int32_t dead = ftp_repl.partner;

	if (dead < 0)
		return; /* carried on already */
	await_view(dead);
	ftp_repl.partner = -1;
	for (int i = 0; i < 2; i++)
		if (terminal_fd[i] >= 0) {
			fflush(i == 0 ? stdout : stderr);
			dup2(terminal_fd[i], i + 1);
			close(terminal_fd[i]);
			terminal_fd[i] = -1;
		}
	if (!ftp.cfg.log_file[0])
		ft_log_set_fd(2);
	int l = ftp_repl.plan.logical_of[ftp.rank];
	double after_ms = (double)(ft_clock_now() - ftp.procs.procs[dead].learned_ns) / 1e6;
	ft_info("rank %d: primary (process %d) lost, replica (process %d) promoted, %.1f ms after "
		"the loss was known here",
		l, dead, ftp.rank, after_ms);
	ft_events_add(ftp_wall_now(), "promotion",
		      ",\"program_rank\":%d,\"primary\":%d,\"after_ms\":%.3f", l, dead, after_ms);
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
		else if (!ftp_repl_covered(w))
			rc = FTP_ERR_PROC_FAILED;
	}
	return rc;
}

int ftp_repl_creation(struct ftp_call *c)
{
	struct ftp_comm *e = c->comm;
	struct ftp_repl_comm *x = e->cover;
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
		rc = ftp_create_group_of(ftp_repl.stream, alive, n, BASE_TAG, c->fn, &smaller);
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

/* MPI_Comm_split of c's program ranks, the new communicator with
 * topology cart (NULL: none; taken over either way). */
static int split_as(struct ftp_call *c, int color, int key, struct ftp_repl_cart *cart,
		    MPI_Comm *newcomm)
{
	split_key = key;
	split_keyed = true;
	split_cart = cart;
	int rc = ftp_post_create(c, ftp_mpi.PMPI_Comm_split(c->real, color, key, newcomm), newcomm);
	split_keyed = false;
	free(split_cart); /* not taken: this process is not in a new communicator */
	split_cart = NULL;
	return rc;
}

int ftp_repl_MPI_Comm_split(struct ftp_call *c, int color, int key, MPI_Comm *newcomm)
{
	return split_as(c, color, key, NULL, newcomm);
}

/* The lowest program rank of e whose leading copy (primary, single, or
 * replica carrying on) is in kind, a communicator of some of e's real
 * processes; MPI_UNDEFINED if none. */
static int lowest_lead_in(const struct ftp_comm *e, MPI_Comm kind)
{
	const struct ftp_repl_comm *x = e->cover;
	MPI_Group in = MPI_GROUP_NULL, real = MPI_GROUP_NULL;
	int n = 0, color = MPI_UNDEFINED;

	ftp_mpi.PMPI_Comm_group(kind, &in);
	ftp_mpi.PMPI_Comm_group(e->real, &real);
	ftp_mpi.PMPI_Group_size(in, &n);
	int *idx = malloc(((size_t)n + 1) * sizeof *idx), *q = malloc(((size_t)n + 1) * sizeof *q);
	for (int i = 0; idx && i < n; i++)
		idx[i] = i;
	if (idx && q && ftp_mpi.PMPI_Group_translate_ranks(in, n, idx, real, q) == MPI_SUCCESS)
		for (int i = 0; i < n; i++)
			for (uint32_t k = 0; k < x->size && (color == MPI_UNDEFINED || (int)k < color); k++)
				if (q[i] != MPI_UNDEFINED && lead_of(x, (int)k) == q[i])
					color = (int)k;
	free(idx);
	free(q);
	ftp_mpi.PMPI_Group_free(&in);
	ftp_mpi.PMPI_Group_free(&real);
	return color;
}

/* MPI_Comm_split_type on a replicated communicator: what the MPI groups
 * depends on where each copy runs (a replica is on another host than its
 * primary), so the leading copies decide. Every live copy takes part in
 * the MPI's split; each leading copy's group is named by its lowest
 * program rank, which a primary tells its replica; then the program's
 * ranks are split by those names. */
int ftp_repl_MPI_Comm_split_type(struct ftp_call *c, int split_type, int key, MPI_Info info,
				 MPI_Comm *newcomm)
{
	MPI_Comm kind = MPI_COMM_NULL;
	int color = MPI_UNDEFINED;
	int rc = ftp_mpi.PMPI_Comm_split_type(c->real, split_type, key, info, &kind);

	if (rc == MPI_SUCCESS && kind != MPI_COMM_NULL) {
		color = lowest_lead_in(c->comm, kind);
		ftp_mpi.PMPI_Comm_free(&kind);
	}
	int v[REC_HEAD + 1] = {rc, 0, color}, n = 0;
	if (following()) {
		if (hear(v, REC_HEAD + 1, &n) == MPI_SUCCESS && n == REC_HEAD + 1)
			color = v[REC_HEAD];
	} else {
		tell(v, REC_HEAD + 1);
	}
	/* Every member splits, whatever went wrong here, or the others hang. */
	return split_as(c, color, key, NULL, newcomm);
}

/* --- Cartesian topologies (replica.h) ----------------------------------------- */

/* The same, returned through the call's post (the replicated forms
 * return to the program themselves). */
static int comm_error(struct ftp_call *c, int code)
{
	return ftp_post_plain(c, program_error(c, code));
}

/* The same, in a creation (ftp_repl_creation began the hang watch). */
static int creation_error(struct ftp_call *c, int code)
{
	ftp_hang_watch_end();
	return comm_error(c, code);
}

/* The processes a grid of ndims dims spans, if they are valid for a
 * communicator of size ranks: MPI_SUCCESS, or MPI_ERR_DIMS. */
static int grid_span(int ndims, const int dims[], uint32_t size, int64_t *n)
{
	*n = 1;
	if (ndims < 0 || (ndims > 0 && !dims))
		return MPI_ERR_DIMS;
	for (int i = 0; i < ndims; i++) {
		if (dims[i] <= 0)
			return MPI_ERR_DIMS;
		*n *= dims[i];
		if (*n > size)
			return MPI_ERR_DIMS;
	}
	return MPI_SUCCESS;
}

static void cart_coords_of(const struct ftp_repl_cart *t, int rank, int maxdims, int coords[])
{
	for (int i = t->ndims - 1; i >= 0; i--) {
		if (i < maxdims)
			coords[i] = rank % t->v[i];
		rank /= t->v[i];
	}
}

/* The rank at coords, periodic dimensions wrapped; -1 if a coordinate is
 * out of range in a dimension that is not periodic. */
static int cart_rank_at(const struct ftp_repl_cart *t, const int coords[])
{
	int rank = 0;

	for (int i = 0; i < t->ndims; i++) {
		int d = t->v[i], k = coords[i];
		if (t->v[t->ndims + i])
			k = ((k % d) + d) % d;
		else if (k < 0 || k >= d)
			return -1;
		rank = rank * d + k;
	}
	return rank;
}

int ftp_repl_MPI_Cart_create(struct ftp_call *c, int ndims, const int dims[], const int periods[],
			     int reorder, MPI_Comm *comm_cart)
{
	(void)reorder;
	int64_t n;
	int rc = grid_span(ndims, dims, ftp_repl_of(c->comm)->size, &n);

	if (rc == MPI_SUCCESS && ndims > 0 && !periods)
		rc = MPI_ERR_DIMS;
	if (rc != MPI_SUCCESS)
		return creation_error(c, rc);
	int me = my_rank_in(c->comm);
	struct ftp_repl_cart *t = me < n ? cart_new(ndims, dims, periods) : NULL;
	if (me < n && !t)
		return creation_error(c, MPI_ERR_NO_MEM);
	return split_as(c, me < n ? 0 : MPI_UNDEFINED, me, t, comm_cart);
}

int ftp_repl_MPI_Cart_sub(struct ftp_call *c, const int remain_dims[], MPI_Comm *newcomm)
{
	const struct ftp_repl_cart *t = ftp_repl_of(c->comm)->cart;

	if (!t)
		return creation_error(c, MPI_ERR_TOPOLOGY);
	int nd = t->ndims, kept = 0, coords[nd + 1], dims[nd + 1], periods[nd + 1];
	int color = 0, key = 0;
	cart_coords_of(t, my_rank_in(c->comm), nd, coords);
	for (int i = 0; i < nd; i++) {
		if (remain_dims[i]) {
			key = key * t->v[i] + coords[i];
			dims[kept] = t->v[i];
			periods[kept++] = t->v[nd + i];
		} else {
			color = color * t->v[i] + coords[i];
		}
	}
	struct ftp_repl_cart *sub = cart_new(kept, dims, periods);
	if (!sub)
		return creation_error(c, MPI_ERR_NO_MEM);
	return split_as(c, color, key, sub, newcomm);
}

int ftp_repl_MPI_Cart_get(struct ftp_call *c, int maxdims, int dims[], int periods[], int coords[])
{
	const struct ftp_repl_cart *t = ftp_repl_of(c->comm)->cart;

	if (!t)
		return comm_error(c, MPI_ERR_TOPOLOGY);
	for (int i = 0; i < t->ndims && i < maxdims; i++) {
		dims[i] = t->v[i];
		periods[i] = t->v[t->ndims + i];
	}
	cart_coords_of(t, my_rank_in(c->comm), maxdims, coords);
	return ftp_post_plain(c, MPI_SUCCESS);
}

int ftp_repl_MPI_Cart_rank(struct ftp_call *c, const int coords[], int *rank)
{
	const struct ftp_repl_cart *t = ftp_repl_of(c->comm)->cart;

	if (!t)
		return comm_error(c, MPI_ERR_TOPOLOGY);
	int r = cart_rank_at(t, coords);
	if (r < 0)
		return comm_error(c, MPI_ERR_ARG);
	*rank = r;
	return ftp_post_plain(c, MPI_SUCCESS);
}

int ftp_repl_MPI_Cart_coords(struct ftp_call *c, int rank, int maxdims, int coords[])
{
	const struct ftp_repl_cart *t = ftp_repl_of(c->comm)->cart;

	if (!t)
		return comm_error(c, MPI_ERR_TOPOLOGY);
	int64_t n;
	grid_span(t->ndims, t->v, UINT32_MAX, &n);
	if (rank < 0 || rank >= n)
		return comm_error(c, MPI_ERR_RANK);
	cart_coords_of(t, rank, maxdims, coords);
	return ftp_post_plain(c, MPI_SUCCESS);
}

int ftp_repl_MPI_Cart_shift(struct ftp_call *c, int direction, int disp, int *rank_source,
			    int *rank_dest)
{
	const struct ftp_repl_cart *t = ftp_repl_of(c->comm)->cart;

	if (!t)
		return comm_error(c, MPI_ERR_TOPOLOGY);
	if (direction < 0 || direction >= t->ndims)
		return comm_error(c, MPI_ERR_ARG);
	int coords[t->ndims + 1];
	cart_coords_of(t, my_rank_in(c->comm), t->ndims, coords);
	int here = coords[direction], r;
	coords[direction] = here - disp;
	r = cart_rank_at(t, coords);
	*rank_source = r < 0 ? MPI_PROC_NULL : r;
	coords[direction] = here + disp;
	r = cart_rank_at(t, coords);
	*rank_dest = r < 0 ? MPI_PROC_NULL : r;
	return ftp_post_plain(c, MPI_SUCCESS);
}

int ftp_repl_MPI_Cart_map(struct ftp_call *c, int ndims, const int dims[], const int periods[],
			  int *newrank)
{
	(void)periods;
	int64_t n;
	int rc = grid_span(ndims, dims, ftp_repl_of(c->comm)->size, &n);

	if (rc != MPI_SUCCESS)
		return comm_error(c, rc);
	int me = my_rank_in(c->comm);
	*newrank = me < n ? me : MPI_UNDEFINED;
	return ftp_post_plain(c, MPI_SUCCESS);
}

int ftp_repl_MPI_Cartdim_get(struct ftp_call *c, int *ndims)
{
	const struct ftp_repl_cart *t = ftp_repl_of(c->comm)->cart;

	if (!t)
		return comm_error(c, MPI_ERR_TOPOLOGY);
	*ndims = t->ndims;
	return ftp_post_plain(c, MPI_SUCCESS);
}

int ftp_repl_MPI_Topo_test(struct ftp_call *c, int *status)
{
	*status = ftp_repl_of(c->comm)->cart ? MPI_CART : MPI_UNDEFINED;
	return ftp_post_plain(c, MPI_SUCCESS);
}

FT_EXPORT int ftshim_rank_copies(int rank)
{
	uint32_t n = ftp_repl.r ? ftp_repl.plan.n : atomic_load(&ftp.nprocs);

	if (!ftp_active() || rank < 0 || (uint32_t)rank >= n)
		return -1;
	int copies = ft_proc_is_failed(&ftp.procs, (uint32_t)rank) ? 0 : FTSHIM_COPY_PRIMARY;
	int32_t replica = ftp_repl.r && ftp_repl.copy_of ? ftp_repl.copy_of[rank] : -1;
	if (replica >= 0 && !ft_proc_is_failed(&ftp.procs, (uint32_t)replica))
		copies |= FTSHIM_COPY_REPLICA;
	return copies;
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

/* A follower's nonblocking receive from MPI_ANY_SOURCE: the application
 * holds a generalized request; the receive itself starts when a
 * completion call hears which message its primary matched, or, once the
 * follower carries on alone, from MPI_ANY_SOURCE as it is. */
struct any_recv {
	struct ftp_op op;
	struct peer_recv p; /* p.type is a duplicate: the program may free its own */
	bool ready, posted;
};

static bool any_progress(struct ftp_op *op)
{
	struct any_recv *a = (struct any_recv *)op;

	if (a->ready)
		return true;
	if (following())
		return false;
	if (!a->posted) {
		a->posted = true;
		recv_start(&a->p);
	}
	recv_poll(&a->p);
	if (!a->p.done)
		return false;
	a->op.status = a->p.status;
	a->op.has_status = true;
	a->op.rc = a->p.rc;
	a->ready = true;
	return true;
}

static void any_destroy(struct ftp_op *op)
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
static bool is_any(MPI_Request request, struct any_recv **a)
{
	struct ftp_req r;

	*a = NULL;
	if (request == MPI_REQUEST_NULL || !ftp_req_find(request, &r) || !r.op)
		return false;
	if (r.op->progress == any_progress) {
		*a = (struct any_recv *)r.op;
		return !(*a)->ready && !(*a)->posted;
	}
	return r.op->progress == recv_op_progress &&
	       ((struct recv_op *)r.op)->p.source == MPI_ANY_SOURCE;
}

/* The follower: receive from the source the primary matched (as the
 * program numbers it), now, and let the request complete with its
 * status. With the program's own tag: messages from one sender do not
 * overtake each other, so the first that matches is the primary's. */
static void any_resolve(struct any_recv *a, int source)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Recv);
	struct ftp_comm *e = a->op.comm;
	MPI_Status st;

	ftp_call_on(&c, e, ftp_watch_on(e, FTP_WATCH_PEER, source, true));
	int rc = recv_from(&c, a->p.buf, a->p.count, a->p.type, source, a->p.tag, &st);
	a->op.status = st;
	a->op.has_status = true;
	a->op.rc = rc;
	a->ready = true;
	ftp_ops_progress();
}

/* --- point to point ---------------------------------------------------------- */

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
	const struct ftp_repl_comm *x = e->cover;
	struct targets t = {.n = 1, .rank = {ftp_rank_in(e, dest), MPI_PROC_NULL}};
	bool skip[2] = {false, false};

	if (dest < 0 || (uint32_t)dest >= x->size)
		return t;
	if (x->replica[dest] >= 0 || replica_class())
		note_send(e, dest, a.tag, a.buf, a.count, a.type, skip);
	switch (ftp_repl.copy) {
	case FTP_COPY_REPLICA:
		t.rank[0] = x->replica[dest] >= 0 ? x->replica[dest] : MPI_PROC_NULL;
		break;
	case FTP_COPY_PRIMARY:
		t.rank[0] = x->primary[dest] >= 0 ? x->primary[dest] : MPI_PROC_NULL;
		break;
	case FTP_COPY_SINGLE:
	case FTP_COPY_PROMOTED:
		t.n = 0;
		if (x->primary[dest] >= 0 && !skip[FT_SLOT_PRIMARY])
			t.rank[t.n++] = x->primary[dest];
		if (x->replica[dest] >= 0 && !skip[FT_SLOT_REPLICA])
			t.rank[t.n++] = x->replica[dest];
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
	return rc == FTP_ERR_PROC_FAILED && ftp_repl_covered(world_at(c->comm, to)) ? MPI_SUCCESS
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
	if (t.n == 1 && !has_copy(world_at(c->comm, t.rank[0])))
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

/* Whether a receive from program rank source goes through struct
 * peer_recv: a replica's from a named rank; a primary's or single's
 * from a rank with two copies, or from MPI_ANY_SOURCE (its messages are
 * counted). */
static bool moved_recv(const struct ftp_comm *e, int source)
{
	if (source == MPI_ANY_SOURCE)
		return !replica_class() || !following();
	return source >= 0 && (replica_class() || paired_rank(e, source));
}

/* A receive (c's watch set), blocking. From MPI_ANY_SOURCE the primary
 * tells what it matched and the follower receives just that. */
static int recv_blocking(struct ftp_call *c, void *buf, int count, MPI_Datatype type, int source,
			 int tag, MPI_Status *status)
{
	MPI_Status mine;
	bool any = source == MPI_ANY_SOURCE, found = false;
	int rc;

	if (status == MPI_STATUS_IGNORE)
		status = &mine;
	if (any && following()) {
		rc = hear_match(&found, &source);
		if (rc != STREAM_ENDED && (rc != MPI_SUCCESS || !found))
			return rc != MPI_SUCCESS ? rc : MPI_ERR_INTERN;
	}
	if (moved_recv(c->comm, source)) {
		rc = recv_from(c, buf, count, type, source, tag, status);
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
	bool any = source == MPI_ANY_SOURCE && following();

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
		a->op.progress = any_progress;
		a->op.destroy = any_destroy;
		a->p = p;
		return ftp_post_plain(c, ftp_op_start(c, &a->op, request));
	}
	struct recv_op *o = calloc(1, sizeof *o);
	if (!o) {
		ftp_mpi.PMPI_Type_free(&p.type);
		return ftp_post_plain(c, MPI_ERR_NO_MEM);
	}
	o->op.progress = recv_op_progress;
	o->op.destroy = recv_op_destroy;
	o->p = p;
	recv_start(&o->p);
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
		int32_t from = world_at(c->comm, ftp_rank_in(c->comm, source));
		c->watch = ftp_watch_on(c->comm, FTP_WATCH_PEER, source, true);
		rc = ftp_probe_on(c, source, tag, status);
		if (rc == MPI_SUCCESS && status != MPI_STATUS_IGNORE)
			status->MPI_SOURCE = source;
		if (rc != FTP_ERR_PROC_FAILED || !ftp_repl_covered(from))
			return rc;
		await_view(from);
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
	if (following()) {
		rc = hear_match(&found, &source);
		if (rc != STREAM_ENDED) {
			*flag = rc == MPI_SUCCESS && found;
			if (*flag)
				rc = probe_copy(c, source, tag, status);
			return ftp_post_iprobe(c, rc);
		}
	}
	for (;;) {
		rc = ftp_mpi.PMPI_Iprobe(ftp_rank_in(c->comm, source), tag, c->real, flag, status);
		if (rc != MPI_SUCCESS || !*flag || source != MPI_ANY_SOURCE ||
		    !from_dropped(c->comm, status))
			break;
		discard_one(c->comm, status);
	}
	if (rc == MPI_SUCCESS && *flag)
		ftp_status_out(c->comm, status);
	tell_match(rc, rc == MPI_SUCCESS && *flag, status);
	return ftp_post_iprobe(c, rc);
}

/* MPI_Wtime: a replica gets its primary's time, as a program may decide
 * by it (NetPIPE's repetition counts, a loop that runs for a second);
 * everyone else reads its own clock, as does a replica once it carries
 * its rank on. The time travels as its 64 bits in two ints. */
FT_EXPORT double MPI_Wtime(void)
{
	if (__builtin_expect(!ftp_repl.r || !ftp_repl_paired() || !ftp_active(), 1))
		return ftp_mpi.PMPI_Wtime();
	int v[REC_HEAD + 2] = {MPI_SUCCESS, 0};
	double t;
	if (following()) {
		int n = 0;
		if (hear(v, REC_HEAD + 2, &n) == MPI_SUCCESS && n == REC_HEAD + 2) {
			memcpy(&t, &v[REC_HEAD], sizeof t);
			return t;
		}
		return ftp_mpi.PMPI_Wtime();
	}
	t = ftp_mpi.PMPI_Wtime();
	memcpy(&v[REC_HEAD], &t, sizeof t);
	tell(v, REC_HEAD + 2);
	return t;
}
FTP_ALSO_PMPI(MPI_Wtime);

int ftp_repl_MPI_Probe(struct ftp_call *c, int source, int tag, MPI_Status *status)
{
	MPI_Status mine;
	bool any = source == MPI_ANY_SOURCE, found = false;
	int rc;

	if (status == MPI_STATUS_IGNORE)
		status = &mine;
	if (any && following()) {
		rc = hear_match(&found, &source);
		if (rc != STREAM_ENDED && (rc != MPI_SUCCESS || !found))
			return rc != MPI_SUCCESS ? rc : MPI_ERR_INTERN;
	}
	rc = source >= 0 && (replica_class() || paired_rank(c->comm, source))
		 ? probe_copy(c, source, tag, status)
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
	if (following()) {
		rc = hear_rec(&r, count);
		if (rc == MPI_SUCCESS)
			resolve_all(&r, count, requests);
		rec_close(&r);
		if (rc != MPI_SUCCESS && rc != STREAM_ENDED)
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

	if (following()) {
		rc = hear_rec(&r, count);
		int told = rc == MPI_SUCCESS ? r.v[0] : rc, done = rc == MPI_SUCCESS && r.v[1];
		if (done)
			resolve_all(&r, count, requests);
		rec_close(&r);
		if (rc != STREAM_ENDED) {
			*flag = done;
			if (!done)
				return told;
			return wait_plain_n(count, requests, statuses);
		}
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

	if (following()) {
		rc = hear_rec(&r, 1);
		int told = rc == MPI_SUCCESS ? r.v[0] : rc, done = rc == MPI_SUCCESS && r.v[1];
		int i = done && r.n >= REC_HEAD + 3 ? r.v[REC_HEAD] : MPI_UNDEFINED;
		if (done)
			resolve_all(&r, count, requests);
		rec_close(&r);
		if (rc != STREAM_ENDED) {
			if (flag)
				*flag = done;
			*index = i;
			if (!done || i == MPI_UNDEFINED || i < 0 || i >= count)
				return told;
			return ftp_wait_plain(&requests[i], status);
		}
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

	bool heard = following();
	rc = heard ? hear_rec(&r, incount) : STREAM_ENDED;
	if (rc == STREAM_ENDED && heard)
		rec_close(&r);
	if (rc != STREAM_ENDED) {
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

/* A collective call's arguments, as the program gave them. */
struct coll_args {
	enum ftp_fn fn;
	const void *sbuf;
	void *rbuf;
	int scount, rcount, root;
	const int *scounts, *sdispls, *rcounts, *rdispls;
	MPI_Datatype stype, rtype; /* the one type of a reduction or Bcast: rtype */
	MPI_Op op;
};

/* Where the MPI reads this process's input, and writes its output: count
 * elements of type at buf (count 0: none). */
struct coll_span {
	const void *buf;
	int64_t count;
	MPI_Datatype type;
};

/* A logged collective: its arguments with copies of the input and of the
 * arrays, and its own types (the program may free its own). */
struct coll_rec {
	struct coll_rec *next;
	uint64_t seq; /* its number among the team's collectives on the communicator */
	struct coll_args a;
	int *arrays;	  /* scounts, sdispls, rcounts, rdispls as present, size each */
	unsigned char *in; /* the input region's bytes */
	size_t in_bytes;
	MPI_Aint in_lb;
	bool in_rbuf; /* the input is in rbuf (MPI_IN_PLACE, Bcast's root) */
	bool own_stype, own_rtype;
};

static int coll_size(const struct ftp_comm *e)
{
	return (int)ftp_repl_of(e)->size;
}

/* The logical rank of this process in e's communicator: a replica's is
 * its primary's. */
static int my_rank_in(const struct ftp_comm *e)
{
	int me = -1;

	ftp_mpi.PMPI_Comm_rank(e->real, &me);
	ftp_rank_out(e, &me);
	return me;
}

/* The elements a v-collective's buffer spans. */
static int64_t v_span(const int *counts, const int *displs, int n)
{
	int64_t end = 0;

	for (int i = 0; counts && displs && i < n; i++)
		if (counts[i] > 0 && (int64_t)displs[i] + counts[i] > end)
			end = (int64_t)displs[i] + counts[i];
	return end;
}

static int64_t sum_of(const int *counts, int n)
{
	int64_t sum = 0;

	for (int i = 0; counts && i < n; i++)
		sum += counts[i];
	return sum;
}

/* The bytes count elements of type span from buf, from *lb on. */
static size_t bytes_of(MPI_Datatype type, int64_t count, MPI_Aint *lb)
{
	MPI_Aint tlb = 0, text = 0, elb = 0, ext = 0;

	*lb = 0;
	if (count <= 0 || type == MPI_DATATYPE_NULL ||
	    ftp_mpi.PMPI_Type_get_true_extent(type, &tlb, &text) != MPI_SUCCESS ||
	    ftp_mpi.PMPI_Type_get_extent(type, &elb, &ext) != MPI_SUCCESS)
		return 0;
	*lb = tlb;
	return (size_t)((count - 1) * ext + text);
}

/* What this process gives a collective (in) and where its result lands
 * (out). */
static void coll_spans(const struct ftp_comm *e, const struct coll_args *a, struct coll_span *in,
		       struct coll_span *out)
{
	int n = coll_size(e), me = my_rank_in(e);
	bool root = me == a->root, in_place = a->sbuf == MPI_IN_PLACE;
	struct coll_span none = {.buf = NULL, .count = 0, .type = MPI_DATATYPE_NULL};

	*in = *out = none;
	switch (a->fn) {
	case FTP_FN_MPI_Bcast:
		*out = (struct coll_span){a->rbuf, a->rcount, a->rtype};
		if (root)
			*in = *out;
		break;
	case FTP_FN_MPI_Reduce:
	case FTP_FN_MPI_Allreduce:
	case FTP_FN_MPI_Scan:
	case FTP_FN_MPI_Exscan:
		*out = (struct coll_span){a->rbuf, a->rcount, a->rtype};
		*in = (struct coll_span){in_place ? a->rbuf : a->sbuf, a->rcount, a->rtype};
		break;
	case FTP_FN_MPI_Reduce_scatter_block:
		*out = (struct coll_span){a->rbuf, a->rcount, a->rtype};
		*in = (struct coll_span){in_place ? a->rbuf : a->sbuf, (int64_t)a->rcount * n, a->rtype};
		break;
	case FTP_FN_MPI_Reduce_scatter:
		*out = (struct coll_span){a->rbuf, a->rcounts[me], a->rtype};
		*in = (struct coll_span){in_place ? a->rbuf : a->sbuf, sum_of(a->rcounts, n), a->rtype};
		break;
	case FTP_FN_MPI_Gather:
	case FTP_FN_MPI_Allgather:
		if (root || a->fn == FTP_FN_MPI_Allgather)
			*out = (struct coll_span){a->rbuf, (int64_t)a->rcount * n, a->rtype};
		*in = in_place ? *out : (struct coll_span){a->sbuf, a->scount, a->stype};
		break;
	case FTP_FN_MPI_Gatherv:
	case FTP_FN_MPI_Allgatherv:
		if (root || a->fn == FTP_FN_MPI_Allgatherv)
			*out = (struct coll_span){a->rbuf, v_span(a->rcounts, a->rdispls, n), a->rtype};
		*in = in_place ? *out : (struct coll_span){a->sbuf, a->scount, a->stype};
		break;
	case FTP_FN_MPI_Scatter:
		if (a->rbuf != MPI_IN_PLACE)
			*out = (struct coll_span){a->rbuf, a->rcount, a->rtype};
		if (root)
			*in = (struct coll_span){a->sbuf, (int64_t)a->scount * n, a->stype};
		break;
	case FTP_FN_MPI_Scatterv:
		if (a->rbuf != MPI_IN_PLACE)
			*out = (struct coll_span){a->rbuf, a->rcount, a->rtype};
		if (root)
			*in = (struct coll_span){a->sbuf, v_span(a->scounts, a->sdispls, n), a->stype};
		break;
	case FTP_FN_MPI_Alltoall:
		*out = (struct coll_span){a->rbuf, (int64_t)a->rcount * n, a->rtype};
		*in = in_place ? *out : (struct coll_span){a->sbuf, (int64_t)a->scount * n, a->stype};
		break;
	case FTP_FN_MPI_Alltoallv:
		*out = (struct coll_span){a->rbuf, v_span(a->rcounts, a->rdispls, n), a->rtype};
		*in = in_place ? *out
			       : (struct coll_span){a->sbuf, v_span(a->scounts, a->sdispls, n), a->stype};
		break;
	default:
		break;
	}
}

/* Start a's collective on comm into *req (a's buffers). */
static int coll_start(const struct coll_args *a, MPI_Comm comm, MPI_Request *req)
{
	switch (a->fn) {
	case FTP_FN_MPI_Barrier:
		return ftp_mpi.PMPI_Ibarrier(comm, req);
	case FTP_FN_MPI_Bcast:
		return ftp_mpi.PMPI_Ibcast(a->rbuf, a->rcount, a->rtype, a->root, comm, req);
	case FTP_FN_MPI_Reduce:
		return ftp_mpi.PMPI_Ireduce(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->root, comm,
					    req);
	case FTP_FN_MPI_Allreduce:
		return ftp_mpi.PMPI_Iallreduce(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, comm, req);
	case FTP_FN_MPI_Scan:
		return ftp_mpi.PMPI_Iscan(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, comm, req);
	case FTP_FN_MPI_Exscan:
		return ftp_mpi.PMPI_Iexscan(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, comm, req);
	case FTP_FN_MPI_Reduce_scatter_block:
		return ftp_mpi.PMPI_Ireduce_scatter_block(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op,
							  comm, req);
	case FTP_FN_MPI_Reduce_scatter:
		return ftp_mpi.PMPI_Ireduce_scatter(a->sbuf, a->rbuf, a->rcounts, a->rtype, a->op, comm,
						    req);
	case FTP_FN_MPI_Gather:
		return ftp_mpi.PMPI_Igather(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype,
					    a->root, comm, req);
	case FTP_FN_MPI_Gatherv:
		return ftp_mpi.PMPI_Igatherv(a->sbuf, a->scount, a->stype, a->rbuf, a->rcounts,
					     a->rdispls, a->rtype, a->root, comm, req);
	case FTP_FN_MPI_Scatter:
		return ftp_mpi.PMPI_Iscatter(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype,
					     a->root, comm, req);
	case FTP_FN_MPI_Scatterv:
		return ftp_mpi.PMPI_Iscatterv(a->sbuf, a->scounts, a->sdispls, a->stype, a->rbuf,
					      a->rcount, a->rtype, a->root, comm, req);
	case FTP_FN_MPI_Allgather:
		return ftp_mpi.PMPI_Iallgather(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount,
					       a->rtype, comm, req);
	case FTP_FN_MPI_Allgatherv:
		return ftp_mpi.PMPI_Iallgatherv(a->sbuf, a->scount, a->stype, a->rbuf, a->rcounts,
						a->rdispls, a->rtype, comm, req);
	case FTP_FN_MPI_Alltoall:
		return ftp_mpi.PMPI_Ialltoall(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount,
					      a->rtype, comm, req);
	case FTP_FN_MPI_Alltoallv:
		return ftp_mpi.PMPI_Ialltoallv(a->sbuf, a->scounts, a->sdispls, a->stype, a->rbuf,
					       a->rcounts, a->rdispls, a->rtype, comm, req);
	default:
		return MPI_ERR_INTERN;
	}
}

/* Every member's output depends on every member's input: once this
 * process has completed one, every member has entered it, so none will
 * need an older one run again. */
static bool coll_syncs(enum ftp_fn fn)
{
	return fn == FTP_FN_MPI_Barrier || fn == FTP_FN_MPI_Allreduce ||
	       fn == FTP_FN_MPI_Allgather || fn == FTP_FN_MPI_Allgatherv ||
	       fn == FTP_FN_MPI_Alltoall || fn == FTP_FN_MPI_Alltoallv ||
	       fn == FTP_FN_MPI_Reduce_scatter || fn == FTP_FN_MPI_Reduce_scatter_block;
}

static size_t coll_log_bytes;

static void coll_rec_free(struct coll_rec *r)
{
	if (ftp_active()) {
		if (r->own_stype)
			ftp_mpi.PMPI_Type_free(&r->a.stype);
		if (r->own_rtype)
			ftp_mpi.PMPI_Type_free(&r->a.rtype);
	}
	coll_log_bytes -= r->in_bytes;
	free(r->arrays);
	free(r->in);
	free(r);
}

/* Forget the logged collectives of x numbered below seq. */
static void coll_log_trim(struct ftp_repl_comm *x, uint64_t seq)
{
	while (x->coll_log && x->coll_log->seq < seq) {
		struct coll_rec *r = x->coll_log;
		x->coll_log = r->next;
		coll_rec_free(r);
	}
	if (!x->coll_log)
		x->coll_log_tail = NULL;
}

/* A type of the program's that a log entry keeps: named ones as they are,
 * others duplicated. */
static bool keep_type(MPI_Datatype *t)
{
	int ni = 0, na = 0, nt = 0, combiner = MPI_COMBINER_NAMED;

	if (*t == MPI_DATATYPE_NULL ||
	    ftp_mpi.PMPI_Type_get_envelope(*t, &ni, &na, &nt, &combiner) != MPI_SUCCESS ||
	    combiner == MPI_COMBINER_NAMED)
		return false;
	return ftp_mpi.PMPI_Type_dup(*t, t) == MPI_SUCCESS;
}

static int *copy_array(int **to, const int *from, int n)
{
	if (!from)
		return NULL;
	memcpy(*to, from, (size_t)n * sizeof **to);
	int *at = *to;
	*to += n;
	return at;
}

/* Log collective seq of e, about to run with args a (NULL: out of
 * memory; it cannot be run again). */
static struct coll_rec *coll_log_add(struct ftp_comm *e, const struct coll_args *a, uint64_t seq)
{
	struct ftp_repl_comm *x = e->cover;
	struct coll_rec *r = calloc(1, sizeof *r);
	struct coll_span in, out;
	int n = coll_size(e), me = my_rank_in(e);

	if (!r)
		return NULL;
	r->seq = seq;
	r->a = *a;
	coll_spans(e, a, &in, &out);
	r->in_rbuf = in.count > 0 && in.buf == a->rbuf;
	r->in_bytes = bytes_of(in.type, in.count, &r->in_lb);
	r->in = r->in_bytes ? malloc(r->in_bytes) : NULL;
	/* Arrays significant here: a rooted v-collective's at its root only. */
	bool rooted = a->fn == FTP_FN_MPI_Gatherv || a->fn == FTP_FN_MPI_Scatterv;
	bool arrays_here = !rooted || me == a->root || a->fn == FTP_FN_MPI_Reduce_scatter;
	int narrays = arrays_here ? !!a->scounts + !!a->sdispls + !!a->rcounts + !!a->rdispls : 0;
	r->arrays = narrays ? malloc((size_t)narrays * n * sizeof *r->arrays) : NULL;
	if ((r->in_bytes && !r->in) || (narrays && !r->arrays)) {
		free(r->in);
		free(r->arrays);
		free(r);
		return NULL;
	}
	if (r->in_bytes)
		memcpy(r->in, (const char *)in.buf + r->in_lb, r->in_bytes);
	int *at = r->arrays;
	if (arrays_here) {
		r->a.scounts = copy_array(&at, a->scounts, n);
		r->a.sdispls = copy_array(&at, a->sdispls, n);
		r->a.rcounts = copy_array(&at, a->rcounts, n);
		r->a.rdispls = copy_array(&at, a->rdispls, n);
	} else {
		r->a.scounts = r->a.sdispls = r->a.rcounts = r->a.rdispls = NULL;
	}
	r->own_stype = keep_type(&r->a.stype);
	r->own_rtype = keep_type(&r->a.rtype);
	coll_log_bytes += r->in_bytes;
	/* Within FTSHIM_REPLICA_LOG_MIB, the oldest of this communicator go
	 * first (running one again then ends the job, saying so). */
	while (x->coll_log && coll_log_bytes > ((size_t)ftp.cfg.replica_log_mib << 20)) {
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
static void coll_completed(struct ftp_repl_comm *x, const struct coll_rec *r, enum ftp_fn fn,
			   uint64_t seq)
{
	x->coll_done = seq;
	if (coll_syncs(fn))
		coll_log_trim(x, seq);
	else if (!r)
		coll_log_trim(x, seq + 1); /* what was before it cannot be run again either */
}

/* The world ranks of e's team now, in program rank order (n of them). */
static int32_t *team_members(const struct ftp_comm *e)
{
	const struct ftp_repl_comm *x = e->cover;
	int32_t *w = malloc(((size_t)x->size + 1) * sizeof *w);

	for (uint32_t k = 0; w && k < x->size; k++)
		w[k] = world_at(e, lead_of(x, (int)k));
	return w;
}

/* What waiting on the team gives when the team was rebuilt meanwhile:
 * the call runs again on the new one. Never reaches the program. */
#define TEAM_REBUILT (-0x7ea3)

/* Wait for the collective c started on e's team (rc, c->req) while the
 * team is the one of epoch. A member's death that a promotion covers
 * rebuilds the team (ftp_repl_views): TEAM_REBUILT. Other failures are
 * the call's, as for any collective. */
static int team_wait(struct ftp_call *c, int rc, uint32_t epoch)
{
	struct ftp_repl_comm *x = c->comm->cover;
	uint64_t seen = 0, polls = 0, events = ftp_events();
	int flag = 0;

	if (rc != MPI_SUCCESS)
		return rc;
	c->watch = (struct ftp_watch){.kind = FTP_WATCH_ALL};
	for (;;) {
		rc = ftp_mpi.PMPI_Test(&c->req, &flag, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS || flag)
			return rc;
		int err = ftp_poll_step(c, false, &seen, &polls);
		if (x->team_epoch != epoch) {
			c->req = MPI_REQUEST_NULL; /* left to the MPI, as a failed collective is */
			return TEAM_REBUILT;
		}
		if (err != MPI_SUCCESS) {
			c->req = MPI_REQUEST_NULL;
			return err;
		}
		if (ftp_events() != events && in_views) {
			/* Inside a view change, no other applies: a member's
			 * death ends this call, and the next view rebuilds. */
			events = ftp_events();
			int32_t *w = team_members(c->comm);
			bool dead = false;
			for (uint32_t k = 0; w && k < x->size && !dead; k++)
				dead = ft_proc_ever_failed(&ftp.procs, (uint32_t)w[k]);
			free(w);
			if (dead) {
				c->req = MPI_REQUEST_NULL;
				return FTP_ERR_PROC_FAILED;
			}
		}
	}
}

/* The result of a collective, out, over the stream: sent by a primary,
 * received by its replica. */
static int stream_out(bool send, const struct coll_span *out, int tag)
{
	int count = out->count > INT_MAX ? -1 : (int)out->count;

	if (count < 0)
		return MPI_ERR_COUNT;
	return stream_io(send, count ? (void *)out->buf : NULL, count,
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
	int n = coll_size(e), me = my_rank_in(e);

	*built = MPI_DATATYPE_NULL;
	coll_spans(e, a, &in, &out);
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

/* A result the dead primary forwarded, as received (its bytes). */
struct fwd {
	struct fwd *next;
	int len;
	unsigned char data[];
};

static void fwd_drop(struct ftp_repl_comm *x)
{
	while (x->fwd_head) {
		struct fwd *f = x->fwd_head;
		x->fwd_head = f->next;
		free(f);
	}
	x->fwd_tail = NULL;
	x->fwd_count = 0;
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

/* A promoted replica: receive every result its dead primary forwarded
 * that it has not read (they are all here: ftp_dead_peer_pass), as
 * bytes, to read in program order. */
static void fwd_receive(int32_t dead)
{
	for (size_t i = 0; i < nrepl_comms; i++) {
		struct ftp_repl_comm *x = repl_comms[i]->cover;
		uint64_t start = ft_clock_now();
		for (uint32_t pass = 0; ftp_dead_peer_pass(pass, start);) {
			MPI_Status st;
			int flag = 0, len = 0;
			ftp_mpi.PMPI_Iprobe(dead, x->stream_tag, ftp_repl.stream, &flag, &st);
			if (!flag) {
				pass++;
				continue;
			}
			ftp_mpi.PMPI_Get_count(&st, MPI_BYTE, &len);
			struct fwd *f = malloc(sizeof *f + (size_t)(len > 0 ? len : 1));
			if (!f) {
				ft_error("out of memory receiving what a dead primary forwarded: the job ends");
				ftp_mpi.PMPI_Abort(ftp.world, 1);
			}
			f->next = NULL;
			f->len = len;
			ftp_mpi.PMPI_Recv(f->data, len, MPI_BYTE, dead, x->stream_tag, ftp_repl.stream,
					  MPI_STATUS_IGNORE);
			*(x->fwd_tail ? &x->fwd_tail->next : &x->fwd_head) = f;
			x->fwd_tail = f;
			x->fwd_count++;
		}
	}
}

/* Run a collective on e's team (c->comm's): a follower takes what its
 * primary forwards; a primary, single or promoted replica runs it on the
 * team, again on the new team if the team is rebuilt meanwhile, and a
 * primary forwards the result. Every copy logs its input first. Returns
 * through the call's post. */
static int coll_run(struct ftp_call *c, const struct coll_args *a)
{
	struct ftp_comm *e = c->comm;
	struct ftp_repl_comm *x = e->cover;
	uint64_t seq = x->coll_done + 1;
	struct coll_rec *r = coll_log_add(e, a, seq);
	MPI_Datatype built = MPI_DATATYPE_NULL;
	struct coll_span out = forwarded_span(e, a, &built);
	int rc = STREAM_ENDED;

	/* A promoted replica runs the collectives on the team from its
	 * promotion on, forwarded or not (teams_rebuild counted so). */
	if (following() && ftp_repl.copy == FTP_COPY_REPLICA) {
		rc = stream_end(stream_out(false, &out, x->stream_tag), ftp_repl.partner);
		/* Promoted while it waited: the rebuilt team counted this one
		 * as not received, and runs it with this process. */
		if (rc == MPI_SUCCESS && ftp_repl.copy == FTP_COPY_PROMOTED && seq > x->replay_lo)
			rc = STREAM_ENDED;
	} else if (x->fwd_head && seq <= x->replay_lo)
		rc = fwd_take(x, &out);
	else if (x->fwd_head)
		fwd_drop(x);
	while (rc == STREAM_ENDED || rc == TEAM_REBUILT) {
		if (rc == TEAM_REBUILT && r && r->in_rbuf && r->in_bytes)
			memcpy((char *)a->rbuf + r->in_lb, r->in, r->in_bytes);
		uint32_t epoch = x->team_epoch;
		c->real = x->team;
		rc = x->team == MPI_COMM_NULL ? FTP_ERR_PROC_FAILED
					      : team_wait(c, coll_start(a, x->team, &c->req), epoch);
		if (rc == MPI_SUCCESS && ftp_repl.copy == FTP_COPY_PRIMARY && ftp_repl_paired() &&
		    stream_out(true, &out, x->stream_tag) != MPI_SUCCESS)
			drop_replica();
	}
	if (rc == MPI_SUCCESS)
		coll_completed(x, r, a->fn, seq);
	if (built != MPI_DATATYPE_NULL)
		ftp_mpi.PMPI_Type_free(&built);
	return ftp_post_coll(c, rc);
}

/* Run logged collective r again on e's team, with a copy of its input
 * and its output thrown away, for members that had not completed it.
 * MPI_SUCCESS, or the failure that ended it. */
static int coll_replay(struct ftp_comm *e, const struct coll_rec *r)
{
	struct ftp_call c = FTP_CALL_INIT(r->a.fn);
	struct coll_args a = r->a;
	struct coll_span in, out;
	MPI_Aint out_lb = 0;

	ftp_call_on(&c, e, (struct ftp_watch){.kind = FTP_WATCH_ALL});
	coll_spans(e, &r->a, &in, &out);
	size_t out_bytes = bytes_of(out.type, out.count, &out_lb);
	if (r->in_rbuf) {
		out_lb = r->in_lb;
		if (out_bytes < r->in_bytes)
			out_bytes = r->in_bytes;
	}
	unsigned char *scratch = malloc(out_bytes + 1);
	if (!scratch)
		return MPI_ERR_NO_MEM;
	if (r->in_rbuf)
		memcpy(scratch, r->in, r->in_bytes);
	if (a.rbuf != MPI_IN_PLACE)
		a.rbuf = scratch - out_lb;
	if (a.sbuf != MPI_IN_PLACE && !r->in_rbuf && r->in)
		a.sbuf = r->in - r->in_lb;
	c.real = ftp_repl_of(e)->team;
	int rc = team_wait(&c, coll_start(&a, c.real, &c.req), ftp_repl_of(e)->team_epoch);
	free(scratch);
	return rc;
}

/* Team rebuilds: the tag of the MPI_Comm_create_group that makes one
 * (a function of its members, so that processes that see different
 * members never take part in one another's). */
static uint64_t team_hash(const int32_t *w, uint32_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (uint32_t i = 0; i < n; i++)
		h = (h ^ (uint32_t)w[i]) * 1099511628211ull;
	return h;
}

static int team_tag(const int32_t *w, uint32_t n)
{
	return 0x1000 + (int)(team_hash(w, n) % 0x6000);
}

/* What team_rebuild gives when a member of the team to be is found dead
 * meanwhile: apply the view again, and rebuild then. */
#define TEAM_VIEW_CHANGED (-0x7ea4)
/* ... and when the team is the one it has, or will run no collective
 * again (a member is in MPI_Finalize). */
#define TEAM_UNCHANGED (-0x7ea5)

/* The latest team agreement message heard from each process for each
 * communicator (team_agree): one may come before this process needs it
 * (its sender learned a death first). Application thread. */
struct team_hello {
	int32_t from;
	uint64_t comm, hash;
	struct team_hello *next;
};
static struct team_hello *hellos;

static struct team_hello *hello_of(int32_t from, uint64_t comm)
{
	for (struct team_hello *h = hellos; h; h = h->next)
		if (h->from == from && h->comm == comm)
			return h;
	return NULL;
}

static void hello_heard(int32_t from, const uint64_t v[2])
{
	struct team_hello *h = hello_of(from, v[0]);

	if (!h && (h = calloc(1, sizeof *h)) != NULL) {
		h->from = from;
		h->comm = v[0];
		h->next = hellos;
		hellos = h;
	}
	if (h)
		h->hash = v[1];
}

/* The members of a team to be (w[0..n), this process among them, of
 * communicator comm) agree that it is the team before the MPI makes it:
 * each tells every other the team's hash and hears the same from each,
 * on the stream (the latest heard from each counts: from one sender they
 * arrive in order, and views only grow). A process that has not learned a death
 * yet would name a dead member, whose MPI_Comm_create_group would never
 * return: it waits here until it learns it (TEAM_VIEW_CHANGED). */
static int team_agree(uint64_t comm, const int32_t *w, uint32_t n)
{
	uint64_t mine[2] = {comm, team_hash(w, n)};
	MPI_Request *sent = malloc(((size_t)n + 1) * sizeof *sent);
	int rc = sent ? MPI_SUCCESS : MPI_ERR_NO_MEM;

	ft_debug("replication: team agreement on communicator %llx, hash %016llx, %u members",
		 (unsigned long long)comm, (unsigned long long)mine[1], n);
	for (uint32_t k = 0; rc == MPI_SUCCESS && k < n; k++) {
		sent[k] = MPI_REQUEST_NULL;
		if (w[k] != ftp.rank)
			ftp_mpi.PMPI_Isend(mine, 2, MPI_UINT64_T, w[k], TAG_TEAM, ftp_repl.stream,
					   &sent[k]);
	}
	for (uint32_t k = 0; rc == MPI_SUCCESS && k < n; k++) {
		uint64_t polls = 0;
		const struct team_hello *h;
		while (rc == MPI_SUCCESS && w[k] != ftp.rank &&
		       (!(h = hello_of(w[k], comm)) || h->hash != mine[1])) {
			uint64_t got[2] = {0, 0};
			MPI_Request r = MPI_REQUEST_NULL;
			MPI_Status st;
			int flag = 0, cancelled = 0;
			ftp_mpi.PMPI_Irecv(got, 2, MPI_UINT64_T, w[k], TAG_TEAM, ftp_repl.stream, &r);
			while (rc == MPI_SUCCESS && !flag) {
				ftp_mpi.PMPI_Test(&r, &flag, MPI_STATUS_IGNORE);
				for (uint32_t j = 0; !flag && j < n; j++)
					if (ft_proc_ever_failed(&ftp.procs, (uint32_t)w[j]))
						rc = TEAM_VIEW_CHANGED;
					else if (ftp_departed((uint32_t)w[j]))
						rc = TEAM_UNCHANGED; /* in MPI_Finalize: no collective is left */
				if (!flag)
					ftp_poll_pause(&polls);
			}
			if (!flag) {
				ftp_mpi.PMPI_Cancel(&r);
				ftp_mpi.PMPI_Wait(&r, &st);
				ftp_mpi.PMPI_Test_cancelled(&st, &cancelled);
				flag = !cancelled;
			}
			if (flag)
				hello_heard(w[k], got);
		}
	}
	for (uint32_t k = 0; sent && k < n; k++)
		if (sent[k] != MPI_REQUEST_NULL)
			ftp_mpi.PMPI_Request_free(&sent[k]); /* delivered, or its peer is dead */
	free(sent);
	return rc;
}

/* Make e's team again from the copies that stand for its program ranks
 * now (collective over them), and learn how far the furthest of them
 * got in e's collectives: *hi, and the least: *lo. */
static int team_rebuild(struct ftp_comm *e, uint64_t *lo, uint64_t *hi)
{
	struct ftp_repl_comm *x = e->cover;
	int32_t *w = team_members(e);
	MPI_Comm team = MPI_COMM_NULL;
	int rc = w ? MPI_SUCCESS : MPI_ERR_NO_MEM;

	for (uint32_t k = 0; rc == MPI_SUCCESS && k < x->size; k++)
		if (ft_proc_ever_failed(&ftp.procs, (uint32_t)w[k]))
			rc = ftp_repl_covered(w[k]) ? TEAM_VIEW_CHANGED
						    : FTP_ERR_PROC_FAILED; /* a rank with no copy left */
	if (rc == MPI_SUCCESS && team_hash(w, x->size) == x->team_hash) {
		free(w);
		return TEAM_UNCHANGED;
	}
	if (rc == MPI_SUCCESS)
		rc = team_agree(e->core->id, w, x->size);
	if (rc == TEAM_VIEW_CHANGED || rc == TEAM_UNCHANGED) {
		free(w);
		return rc;
	}
	if (rc == MPI_SUCCESS)
		x->team_hash = team_hash(w, x->size);
	/* From the stream, which nothing receives from with MPI_ANY_TAG: Open
	 * MPI's MPI_Comm_create_group sends with its tag on the parent, and a
	 * program's receive from MPI_ANY_SOURCE and MPI_ANY_TAG on e would
	 * take those messages. */
	if (rc == MPI_SUCCESS)
		rc = ftp_create_group_of(ftp_repl.stream, w, x->size, team_tag(w, x->size),
					 FTP_FN_MPI_Comm_create_group, &team);
	free(w);
	/* The old team is never freed: a collective abandoned on it may
	 * still have receives posted, which would take the messages of a
	 * communicator that reused its context. */
	x->team = rc == MPI_SUCCESS ? team : MPI_COMM_NULL;
	if (rc == MPI_SUCCESS)
		ftp_mpi.PMPI_Comm_set_errhandler(team, MPI_ERRORS_RETURN);
	x->team_epoch++;
	if (rc != MPI_SUCCESS)
		return rc;
	/* A promoted replica has the results of fwd_count more. */
	int64_t done = (int64_t)(x->coll_done + x->fwd_count);
	int64_t mine[2] = {done, -done}, all[2] = {0, 0};
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Allreduce);
	ftp_call_on(&c, e, (struct ftp_watch){.kind = FTP_WATCH_ALL});
	rc = team_wait(&c,
		       ftp_mpi.PMPI_Iallreduce(mine, all, 2, MPI_INT64_T, MPI_MAX, team, &c.req),
		       x->team_epoch);
	*hi = (uint64_t)all[0];
	*lo = (uint64_t)-all[1];
	x->replay_lo = *lo;
	ft_debug("replication: team of communicator %llx rebuilt (%d): collectives %llu done here, "
		 "%llu to %llu by its members",
		 (unsigned long long)e->core->id, rc, (unsigned long long)x->coll_done,
		 (unsigned long long)*lo, (unsigned long long)*hi);
	return rc;
}

/* The replicated communicators in the order of their ids, the same on
 * every process that holds them. */
static int by_id(const void *a, const void *b)
{
	uint64_t x = (*(struct ftp_comm *const *)a)->core->id, y = (*(struct ftp_comm *const *)b)->core->id;

	return x < y ? -1 : x > y;
}

/* After a promotion, on a process of the teams: rebuild the team of
 * every replicated communicator, then run again, with the members that
 * had not, the collectives this process completed that some member had
 * not (it waits here until they reach them). */
static bool teams_rebuild(void)
{
	size_t n = nrepl_comms;
	struct ftp_comm **comms = malloc((n + 1) * sizeof *comms);
	uint64_t *lo = malloc((n + 1) * sizeof *lo), *hi = malloc((n + 1) * sizeof *hi);
	int *rc = malloc((n + 1) * sizeof *rc);

	if (!comms || !lo || !hi || !rc) {
		ft_error("out of memory rebuilding the teams after a promotion: the job ends");
		ftp_mpi.PMPI_Abort(ftp.world, 1);
	}
	memcpy(comms, repl_comms, n * sizeof *comms);
	qsort(comms, n, sizeof *comms, by_id);
	bool changed = false;
	for (size_t i = 0; i < n && !changed; i++) {
		rc[i] = team_rebuild(comms[i], &lo[i], &hi[i]);
		changed = rc[i] == TEAM_VIEW_CHANGED;
	}
	for (size_t i = 0; i < n && !changed; i++) {
		struct ftp_repl_comm *x = comms[i]->cover;
		for (uint64_t s = lo[i] + 1; rc[i] == MPI_SUCCESS && s <= hi[i] && s <= x->coll_done; s++) {
			const struct coll_rec *r = x->coll_log;
			while (r && r->seq != s)
				r = r->next;
			if (!r) {
				ft_error("rank %d cannot run collective %llu on a communicator again for the "
					 "ranks that lack it: it is no longer in its log "
					 "(FTSHIM_REPLICA_LOG_MIB=%llu); the job ends",
					 ftp_repl.plan.logical_of[ftp.rank], (unsigned long long)s,
					 (unsigned long long)ftp.cfg.replica_log_mib);
				ftp_mpi.PMPI_Abort(ftp.world, 1);
			}
			ft_debug("replication: collective %llu run again for the ranks that lack it",
				 (unsigned long long)s);
			rc[i] = coll_replay(comms[i], r);
		}
	}
	free(comms);
	free(lo);
	free(hi);
	free(rc);
	return !changed;
}

int ftp_repl_MPI_Barrier(struct ftp_call *c)
{
	return coll_run(c, &(struct coll_args){.fn = FTP_FN_MPI_Barrier, .stype = MPI_DATATYPE_NULL,
					       .rtype = MPI_DATATYPE_NULL});
}

int ftp_repl_MPI_Bcast(struct ftp_call *c, void *buffer, int count, MPI_Datatype datatype, int root)
{
	return coll_run(c, &(struct coll_args){.fn = FTP_FN_MPI_Bcast, .rbuf = buffer,
					       .rcount = count, .rtype = datatype, .root = root,
					       .stype = MPI_DATATYPE_NULL});
}

/* A reduction's arguments. */
static int reduction(struct ftp_call *c, enum ftp_fn fn, const void *sendbuf, void *recvbuf,
		     int count, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, int root)
{
	return coll_run(c, &(struct coll_args){.fn = fn, .sbuf = sendbuf, .rbuf = recvbuf,
					       .rcount = count, .rcounts = recvcounts,
					       .rtype = datatype, .stype = MPI_DATATYPE_NULL,
					       .op = op, .root = root});
}

int ftp_repl_MPI_Reduce(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
			MPI_Datatype datatype, MPI_Op op, int root)
{
	return reduction(c, FTP_FN_MPI_Reduce, sendbuf, recvbuf, count, NULL, datatype, op, root);
}

int ftp_repl_MPI_Allreduce(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
			   MPI_Datatype datatype, MPI_Op op)
{
	return reduction(c, FTP_FN_MPI_Allreduce, sendbuf, recvbuf, count, NULL, datatype, op, -1);
}

int ftp_repl_MPI_Scan(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
		      MPI_Datatype datatype, MPI_Op op)
{
	return reduction(c, FTP_FN_MPI_Scan, sendbuf, recvbuf, count, NULL, datatype, op, -1);
}

int ftp_repl_MPI_Exscan(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
			MPI_Datatype datatype, MPI_Op op)
{
	return reduction(c, FTP_FN_MPI_Exscan, sendbuf, recvbuf, count, NULL, datatype, op, -1);
}

int ftp_repl_MPI_Reduce_scatter_block(struct ftp_call *c, const void *sendbuf, void *recvbuf,
				      int recvcount, MPI_Datatype datatype, MPI_Op op)
{
	return reduction(c, FTP_FN_MPI_Reduce_scatter_block, sendbuf, recvbuf, recvcount, NULL,
			 datatype, op, -1);
}

int ftp_repl_MPI_Reduce_scatter(struct ftp_call *c, const void *sendbuf, void *recvbuf,
				const int recvcounts[], MPI_Datatype datatype, MPI_Op op)
{
	return reduction(c, FTP_FN_MPI_Reduce_scatter, sendbuf, recvbuf, 0, recvcounts, datatype,
			 op, -1);
}

int ftp_repl_MPI_Gather(struct ftp_call *c, const void *sendbuf, int sendcount,
			MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
			int root)
{
	return coll_run(c, &(struct coll_args){.fn = FTP_FN_MPI_Gather, .sbuf = sendbuf,
					       .scount = sendcount, .stype = sendtype,
					       .rbuf = recvbuf, .rcount = recvcount,
					       .rtype = recvtype, .root = root});
}

int ftp_repl_MPI_Gatherv(struct ftp_call *c, const void *sendbuf, int sendcount,
			 MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
			 const int displs[], MPI_Datatype recvtype, int root)
{
	return coll_run(c, &(struct coll_args){.fn = FTP_FN_MPI_Gatherv, .sbuf = sendbuf,
					       .scount = sendcount, .stype = sendtype,
					       .rbuf = recvbuf, .rcounts = recvcounts,
					       .rdispls = displs, .rtype = recvtype, .root = root});
}

int ftp_repl_MPI_Scatter(struct ftp_call *c, const void *sendbuf, int sendcount,
			 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
			 int root)
{
	return coll_run(c, &(struct coll_args){.fn = FTP_FN_MPI_Scatter, .sbuf = sendbuf,
					       .scount = sendcount, .stype = sendtype,
					       .rbuf = recvbuf, .rcount = recvcount,
					       .rtype = recvtype, .root = root});
}

int ftp_repl_MPI_Scatterv(struct ftp_call *c, const void *sendbuf, const int sendcounts[],
			  const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount,
			  MPI_Datatype recvtype, int root)
{
	return coll_run(c, &(struct coll_args){.fn = FTP_FN_MPI_Scatterv, .sbuf = sendbuf,
					       .scounts = sendcounts, .sdispls = displs,
					       .stype = sendtype, .rbuf = recvbuf,
					       .rcount = recvcount, .rtype = recvtype,
					       .root = root});
}

int ftp_repl_MPI_Allgather(struct ftp_call *c, const void *sendbuf, int sendcount,
			   MPI_Datatype sendtype, void *recvbuf, int recvcount,
			   MPI_Datatype recvtype)
{
	return coll_run(c, &(struct coll_args){.fn = FTP_FN_MPI_Allgather, .sbuf = sendbuf,
					       .scount = sendcount, .stype = sendtype,
					       .rbuf = recvbuf, .rcount = recvcount,
					       .rtype = recvtype, .root = -1});
}

int ftp_repl_MPI_Allgatherv(struct ftp_call *c, const void *sendbuf, int sendcount,
			    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
			    const int displs[], MPI_Datatype recvtype)
{
	return coll_run(c, &(struct coll_args){.fn = FTP_FN_MPI_Allgatherv, .sbuf = sendbuf,
					       .scount = sendcount, .stype = sendtype,
					       .rbuf = recvbuf, .rcounts = recvcounts,
					       .rdispls = displs, .rtype = recvtype, .root = -1});
}

int ftp_repl_MPI_Alltoall(struct ftp_call *c, const void *sendbuf, int sendcount,
			  MPI_Datatype sendtype, void *recvbuf, int recvcount,
			  MPI_Datatype recvtype)
{
	return coll_run(c, &(struct coll_args){.fn = FTP_FN_MPI_Alltoall, .sbuf = sendbuf,
					       .scount = sendcount, .stype = sendtype,
					       .rbuf = recvbuf, .rcount = recvcount,
					       .rtype = recvtype, .root = -1});
}

int ftp_repl_MPI_Alltoallv(struct ftp_call *c, const void *sendbuf, const int sendcounts[],
			   const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
			   const int recvcounts[], const int rdispls[], MPI_Datatype recvtype)
{
	return coll_run(c, &(struct coll_args){.fn = FTP_FN_MPI_Alltoallv, .sbuf = sendbuf,
					       .scounts = sendcounts, .sdispls = sdispls,
					       .stype = sendtype, .rbuf = recvbuf,
					       .rcounts = recvcounts, .rdispls = rdispls,
					       .rtype = recvtype, .root = -1});
}
