/* spawn.c: processes that MPI_Comm_spawn starts join the job that spawned
 * them, as members like any other: each gets the next job rank, joins the
 * control plane (detected and detecting), and the intercommunicator
 * between parents and children is tracked, so that what is made from it
 * (merge, split) is too. docs/DESIGN.md, "Process identity", says why
 * job ranks and not world ranks.
 *
 * The handshake, on the new intercommunicator, right after the MPI's
 * spawn (parents, in MPI_Comm_spawn) and MPI_Init (children):
 *   1. the children open their control-plane sockets and allgather what
 *      each tells about itself (struct ftp_peer) in their world; child 0
 *      sends it all to the parents' rank 0 (HELLO);
 *   2. the parents' rank 0 (the leader) gives them the next job ranks
 *      and answers with the job: its secret, start, the peers and the
 *      failures it knows, the parents' job ranks and the new
 *      intercommunicator's id (WELCOME); child 0 broadcasts it to the
 *      children, the leader the children's part to the other parents;
 *   3. every parent and child enters the children in its tables and tells
 *      its detector, whose flood (news FT_EV_JOINED) reaches the processes
 *      of the job that did not take part in the spawn.
 * Each side waits for the other with a deadline: children whose parents
 * do not run ftshim (or that do not run it themselves) start on their
 * own, as a job of their own, and the intercommunicator stays untracked.
 *
 * Job ranks are given out by the leader from the highest it knows, so
 * two spawns at once by processes that do not share the spawning
 * communicator may give one rank twice; ftshim supports one spawning
 * communicator at a time (README, known gaps).
 *
 * Sharing: application threads. The tables it fills are published by
 * ftp.nprocs (release) and the job group's lock (pmpi/comms.c). */
#include "ftshim_config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmpi/spawn.h"
#include "pmpi/comms.h"
#include "pmpi/create.h"
#include "pmpi/hangwatch.h"
#include "pmpi/call.h"
#include "pmpi/detect.h"
#include "pmpi/job.h"
#include "src/clock.h"
#include "src/log.h"

#define SPAWN_MAGIC UINT32_C(0x4e575053) /* "SPWN" */
#define SPAWN_VERSION 1u
/* On the spawn's intercommunicator, before either side's program sees it. */
enum { TAG_HELLO = 32731, TAG_HELLO_PEERS, TAG_WELCOME, TAG_WELCOME_BODY };

enum join_status {
	JOIN_OK = 0,
	JOIN_NO_ANSWER = 1, /* the other side said nothing in time: no ftshim there */
	JOIN_FULL = 2,      /* FTSHIM_SPAWN_MAX reached */
	JOIN_BAD = 3,       /* a message that is not ftshim's */
};

struct hello {
	uint32_t magic, version;
	uint32_t n; /* children; their struct ftp_peer follow (TAG_HELLO_PEERS) */
	uint32_t reserved;
};

/* The leader's answer. The body (TAG_WELCOME_BODY) follows if status is
 * JOIN_OK: struct ftp_peer[base], struct ft_entry[nfailed], int32_t[nparents]. */
struct welcome {
	uint32_t magic, version;
	uint32_t status;   /* enum join_status */
	uint32_t base;     /* the first child's job rank */
	uint32_t capacity; /* the tables' size, job-wide */
	uint32_t nfailed;  /* failures known to the leader */
	uint32_t nparents; /* the spawning communicator's size */
	uint32_t nfirst;   /* the ranks the job started with */
	uint64_t job_start_unix_ns;
	uint64_t comm_id;  /* the spawn intercommunicator's job-wide id */
	uint8_t secret[FT_SECRET_LEN];
};

/* The leader's word to the other parents. */
struct joined {
	uint32_t status, base, n, reserved;
	uint64_t comm_id;
};

/* Complete req by deadline (ft_clock_now), else cancel it: MPI_SUCCESS
 * or MPI_ERR_PENDING. */
static int wait_by(MPI_Request *req, uint64_t deadline)
{
	int done = 0;
	uint64_t polls = 0;

	while (ftp_mpi.PMPI_Test(req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) {
		if (ft_clock_now() > deadline) {
			ftp_mpi.PMPI_Cancel(req);
			ftp_mpi.PMPI_Request_free(req);
			return MPI_ERR_PENDING;
		}
		ftp_poll_pause(&polls);
	}
	return done ? MPI_SUCCESS : MPI_ERR_OTHER;
}

static int send_by(const void *buf, size_t len, int tag, MPI_Comm inter, uint64_t deadline)
{
	MPI_Request req;
	int rc = ftp_mpi.PMPI_Isend(buf, (int)len, MPI_BYTE, 0, tag, inter, &req);

	return rc == MPI_SUCCESS ? wait_by(&req, deadline) : rc;
}

static int recv_by(void *buf, size_t len, int tag, MPI_Comm inter, uint64_t deadline)
{
	MPI_Request req;
	int rc = ftp_mpi.PMPI_Irecv(buf, (int)len, MPI_BYTE, 0, tag, inter, &req);

	return rc == MPI_SUCCESS ? wait_by(&req, deadline) : rc;
}

/* --- the children's side ------------------------------------------------ */

/* What a child learned from its parents, kept from ftp_spawn_child_join to
 * ftp_spawn_child_go (MPI_Init, application thread). */
static struct {
	bool joined;
	MPI_Comm parent;
	struct welcome w;
	uint8_t *body;           /* the welcome's body */
	struct ftp_peer *kids;   /* every child's, in world order */
	int listen_fd;
} child = { .listen_fd = -1 };

uint32_t ftp_spawn_capacity(void)
{
	uint64_t n = (uint64_t)ftp.world_size + ftp.cfg.spawn_max;

	if (child.joined)
		return child.w.capacity;
	return n > UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t)n;
}

static size_t body_len(const struct welcome *w)
{
	return (size_t)w->base * sizeof(struct ftp_peer) + (size_t)w->nfailed * sizeof(struct ft_entry) +
	       (size_t)w->nparents * sizeof(int32_t);
}

/* Child 0: HELLO, then the WELCOME (*w, and its body in *body). */
static void child_ask(struct welcome *w, uint8_t **body)
{
	uint64_t deadline = ft_clock_now() + ftp_spawn_handshake_ns();
	struct hello h = { .magic = SPAWN_MAGIC, .version = SPAWN_VERSION, .n = (uint32_t)ftp.world_size };

	memset(w, 0, sizeof *w);
	w->status = JOIN_NO_ANSWER;
	if (send_by(&h, sizeof h, TAG_HELLO, child.parent, deadline) != MPI_SUCCESS ||
	    send_by(child.kids, (size_t)ftp.world_size * sizeof *child.kids, TAG_HELLO_PEERS, child.parent,
		    deadline) != MPI_SUCCESS ||
	    recv_by(w, sizeof *w, TAG_WELCOME, child.parent, deadline) != MPI_SUCCESS) {
		w->status = JOIN_NO_ANSWER;
		return;
	}
	if (w->magic != SPAWN_MAGIC || w->version != SPAWN_VERSION) {
		w->status = JOIN_BAD;
		return;
	}
	if (w->status != JOIN_OK)
		return;
	*body = malloc(body_len(w) + 1);
	if (!*body || recv_by(*body, body_len(w), TAG_WELCOME_BODY, child.parent, deadline) != MPI_SUCCESS)
		w->status = JOIN_NO_ANSWER;
}

bool ftp_spawn_child_join(int world_rank)
{
	struct ftp_peer mine;

	if (ftp_mpi.PMPI_Comm_get_parent(&child.parent) != MPI_SUCCESS || child.parent == MPI_COMM_NULL)
		return false;
	child.listen_fd = ftp_job_self(true, &mine);
	child.kids = calloc((size_t)ftp.world_size, sizeof *child.kids);
	if (!child.kids) {
		ft_error("out of memory at MPI_Init");
		ftp_mpi.PMPI_Abort(ftp.world, 1);
	}
	ftp_mpi.PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, child.kids, sizeof mine, MPI_BYTE, ftp.world);
	if (world_rank == 0)
		child_ask(&child.w, &child.body);
	ftp_mpi.PMPI_Bcast(&child.w, sizeof child.w, MPI_BYTE, 0, ftp.world);
	if (child.w.status == JOIN_OK) {
		if (world_rank != 0 && !(child.body = malloc(body_len(&child.w) + 1))) {
			ft_error("out of memory at MPI_Init");
			ftp_mpi.PMPI_Abort(ftp.world, 1);
		}
		ftp_mpi.PMPI_Bcast(child.body, (int)body_len(&child.w), MPI_BYTE, 0, ftp.world);
		child.joined = true;
		ftp.world_base = (int)child.w.base;
		/* The children's world: one id for all of them, from the spawn's. */
		ftp.world_id = ft_comm_child_id(child.w.comm_id, FT_COMM_KIND_GROUP, 0, 0, 0);
		return true;
	}
	if (world_rank == 0) {
		static const char *const why[] = {
			[JOIN_NO_ANSWER] = "its parents did not answer (they do not run ftshim?)",
			[JOIN_FULL] = "the job has spawned FTSHIM_SPAWN_MAX processes already",
			[JOIN_BAD] = "its parents answered with something that is not ftshim's",
		};
		ft_warn("this process was spawned but cannot join its parents' job: %s; its world runs as a "
			"job of its own, and its communicators with them are not tracked",
			child.w.status < sizeof why / sizeof *why && why[child.w.status] ? why[child.w.status]
											  : "unknown");
	}
	if (child.listen_fd >= 0)
		close(child.listen_fd);
	child.listen_fd = -1;
	free(child.kids);
	child.kids = NULL;
	return false;
}

int ftp_spawn_child_go(bool usable)
{
	const struct welcome *w = &child.w;
	const struct ftp_peer *before = (const struct ftp_peer *)child.body;
	const struct ft_entry *failed = (const struct ft_entry *)(before + w->base);
	const int32_t *parents = (const int32_t *)(failed + w->nfailed);
	int32_t *kids = malloc(((size_t)ftp.world_size + 1) * sizeof *kids);
	MPI_Group group = MPI_GROUP_NULL;
	int rc;

	ftp.peers = ftp_job_peers_alloc();
	memcpy(ftp.peers, before, (size_t)w->base * sizeof *before);
	memcpy(ftp.peers + w->base, child.kids, (size_t)ftp.world_size * sizeof *child.kids);
	memcpy(ftp.secret, w->secret, sizeof ftp.secret);
	ftp.job_start_unix_ns = w->job_start_unix_ns;
	ftp.nfirst = w->nfirst;
	for (uint32_t i = 0; i < w->nfailed; i++)
		ft_proc_mark_failed(&ftp.procs, failed[i].rank, (enum ft_fail_how)failed[i].how,
				    (int32_t)failed[i].detector, (int32_t)parents[0], ft_clock_now());
	if (w->nfailed)
		atomic_fetch_add_explicit(&ftp.events, 1, memory_order_release);
	/* The parents can be named from now on, and the parent
	 * intercommunicator is tracked under the id they gave it. */
	if (kids && ftp_mpi.PMPI_Comm_remote_group(child.parent, &group) == MPI_SUCCESS) {
		for (int i = 0; i < ftp.world_size; i++)
			kids[i] = ftp_job_of_world(i);
		if (ftp_job_group_add(group, parents) == MPI_SUCCESS)
			ftp_track(child.parent, w->comm_id, kids, (uint32_t)ftp.world_size, parents, w->nparents);
		ftp_mpi.PMPI_Group_free(&group);
	}
	free(kids);
	ft_info("spawned: this process is rank %d of the job (rank %d of %d in its MPI_COMM_WORLD), "
		"with %u ranks before it%s",
		ftp.rank, ftp_world_of_job(ftp.rank), ftp.world_size, w->base,
		w->nfailed ? ", some of them failed" : "");
	rc = ftp_job_go(usable && child.listen_fd >= 0, child.listen_fd, failed, w->nfailed);
	child.listen_fd = -1;
	free(child.kids);
	child.kids = NULL;
	/* The body stays until here: failed[] was the detector's start. */
	free(child.body);
	child.body = NULL;
	return rc;
}

/* --- the parents' side -------------------------------------------------- */

/* The leader's part: HELLO in, the children's job ranks decided, WELCOME
 * out. Fills *j and kids. */
static void leader_welcome(const struct ftp_call *c, MPI_Comm inter, uint32_t n, struct ftp_peer *kids,
			   struct joined *j, uint64_t seq)
{
	uint64_t deadline = ft_clock_now() + ftp_spawn_handshake_ns();
	const struct ft_comm *core = c->comm->core;
	struct hello h;
	struct welcome w = { .magic = SPAWN_MAGIC, .version = SPAWN_VERSION };

	j->status = JOIN_NO_ANSWER;
	if (recv_by(&h, sizeof h, TAG_HELLO, inter, deadline) != MPI_SUCCESS) {
		ft_warn("the processes spawned did not join this job (they do not run ftshim?): their "
			"communicators with this job are not tracked");
		return;
	}
	if (h.magic != SPAWN_MAGIC || h.version != SPAWN_VERSION || h.n != n ||
	    recv_by(kids, n * sizeof *kids, TAG_HELLO_PEERS, inter, deadline) != MPI_SUCCESS) {
		j->status = w.status = JOIN_BAD;
		send_by(&w, sizeof w, TAG_WELCOME, inter, deadline);
		return;
	}
	w.base = atomic_load(&ftp.nprocs);
	w.capacity = ftp.procs.size;
	if ((uint64_t)w.base + n > w.capacity) {
		ft_warn("spawning %u processes would take the job past FTSHIM_SPAWN_MAX (%u ranks in all): "
			"they run as a job of their own, outside ftshim's",
			n, w.capacity);
		j->status = w.status = JOIN_FULL;
		send_by(&w, sizeof w, TAG_WELCOME, inter, deadline);
		return;
	}
	int32_t *failed = malloc(((size_t)w.base + 1) * sizeof *failed);
	int32_t *members = malloc(((size_t)n + 1) * sizeof *members);
	w.nfailed = failed ? ft_proc_failed_list(&ftp.procs, failed, w.base) : 0;
	if (w.nfailed > w.base)
		w.nfailed = w.base;
	w.nparents = core->local_size;
	w.nfirst = ftp.nfirst;
	w.job_start_unix_ns = ftp.job_start_unix_ns;
	memcpy(w.secret, ftp.secret, sizeof w.secret);
	for (uint32_t i = 0; members && i < n; i++)
		members[i] = (int32_t)(w.base + i);
	w.comm_id = ft_comm_child_id(core->id, FT_COMM_KIND_CHILD, 0, seq,
				     members ? ft_comm_result_hash(ftp_member_jobs(core), core->local_size, members, n) : 0);
	uint8_t *body = failed && members ? malloc(body_len(&w) + 1) : NULL;
	if (!body) {
		free(failed);
		free(members);
		ft_warn("out of memory to welcome the processes spawned: they run as a job of their own");
		j->status = w.status = JOIN_BAD;
		send_by(&w, sizeof w, TAG_WELCOME, inter, deadline);
		return;
	}
	struct ftp_peer *before = (struct ftp_peer *)body;
	struct ft_entry *entries = (struct ft_entry *)(before + w.base);
	memcpy(before, ftp.peers, (size_t)w.base * sizeof *before);
	for (uint32_t i = 0; i < w.nfailed; i++) {
		const struct ft_proc *p = &ftp.procs.procs[failed[i]];
		entries[i] = (struct ft_entry){ .rank = (uint32_t)failed[i], .event = FT_EV_FAILED,
						.how = (uint16_t)p->how,
						.detector = p->detector >= 0 ? (uint32_t)p->detector : 0,
						.at_ns = ftp_failed_at((uint32_t)failed[i]) };
	}
	memcpy(entries + w.nfailed, ftp_member_jobs(core), (size_t)w.nparents * sizeof(int32_t));
	if (send_by(&w, sizeof w, TAG_WELCOME, inter, deadline) == MPI_SUCCESS &&
	    send_by(body, body_len(&w), TAG_WELCOME_BODY, inter, deadline) == MPI_SUCCESS)
		j->status = JOIN_OK;
	j->base = w.base;
	j->n = n;
	j->comm_id = w.comm_id;
	free(body);
	free(failed);
	free(members);
}

/* Every parent: the children into the tables, the detector told, the
 * intercommunicator tracked. */
static void add_children(const struct ftp_call *c, MPI_Comm inter, const struct joined *j,
			 const struct ftp_peer *kids)
{
	const struct ft_comm *core = c->comm->core;
	int32_t *ranks = malloc(((size_t)j->n + 1) * sizeof *ranks);
	MPI_Group group = MPI_GROUP_NULL;

	if (!ranks)
		return;
	for (uint32_t i = 0; i < j->n; i++) {
		ranks[i] = (int32_t)(j->base + i);
		ftp.peers[j->base + i] = kids[i];
	}
	ftp_nprocs_raise(j->base + j->n);
	for (uint32_t i = 0; i < j->n; i++)
		ftp_detect_join(j->base + i, &kids[i].ep);
	if (ftp_mpi.PMPI_Comm_remote_group(inter, &group) == MPI_SUCCESS) {
		if (ftp_job_group_add(group, ranks) == MPI_SUCCESS)
			ftp_track(inter, j->comm_id, ftp_member_jobs(core), core->local_size, ranks, j->n);
		ftp_mpi.PMPI_Group_free(&group);
	}
	ft_info("spawned %u process(es): ranks %u to %u of the job", j->n, j->base, j->base + j->n - 1);
	free(ranks);
}

/* After the MPI's spawn: the handshake (see the top of the file). Returns
 * an error only if a parent failed during it. */
static int parents_welcome(const struct ftp_call *c, MPI_Comm inter)
{
	int crank = 0, nkids = 0;
	struct joined j = { .status = JOIN_NO_ANSWER };

	ftp_mpi.PMPI_Comm_rank(c->real, &crank);
	ftp_mpi.PMPI_Comm_remote_size(inter, &nkids);
	/* Every member numbers the creation alike, as for any other. */
	uint64_t seq = ft_seq_next(&c->comm->core->seqs, 0);
	struct ftp_peer *kids = calloc((size_t)nkids + 1, sizeof *kids);
	if (crank == 0 && kids)
		leader_welcome(c, inter, (uint32_t)nkids, kids, &j, seq);
	const struct ft_comm *core = c->comm->core;
	ftp_hang_watch_begin(c->fn, ftp_member_jobs(core), core->local_size);
	int rc = ftp_mpi.PMPI_Bcast(&j, sizeof j, MPI_BYTE, 0, c->real);
	if (rc == MPI_SUCCESS && j.status == JOIN_OK)
		rc = ftp_mpi.PMPI_Bcast(kids, nkids * (int)sizeof *kids, MPI_BYTE, 0, c->real);
	ftp_hang_watch_end();
	if (rc == MPI_SUCCESS && j.status == JOIN_OK && kids)
		add_children(c, inter, &j, kids);
	free(kids);
	return rc;
}

/* The spawning communicator is fenced and watched as for any creation;
 * the children's start is the MPI's, and bounded: children that do not
 * finish their MPI_Init in ftp_spawn_handshake_ns give up (pmpi/init.c),
 * and the MPI's spawn, which would then wait for them for ever, gives up
 * after twice that. */
static int spawn_pre(struct ftp_call *c, MPI_Comm comm)
{
	int rc = ftp_pre_create(c, comm);

	if (rc == MPI_SUCCESS && ftp_seam_covered(c->comm) && !ftp_cover_runs_as_is(c->comm, c->fn, FTP_ROLE_PROCESS))
		rc = ftp_mode_refuse(c);
	if (rc == MPI_SUCCESS && !c->direct)
		ftp_hang_watch_limit(2 * ftp_spawn_handshake_ns());
	return rc;
}

/* The spawn's root on c->real: a covered communicator's creation base
 * (pmpi/cover.h) holds its members in the program's rank order. */
static int root_on_real(const struct ftp_call *c, int root)
{
	return c->comm && c->real != c->comm->real ? root : ftp_rank_in(c->comm, root);
}

/* After the MPI's spawn. */
static int spawn_post(struct ftp_call *c, int rc, MPI_Comm *intercomm)
{
	ftp_hang_watch_end();
	if (rc == MPI_SUCCESS && c->comm && !c->direct && *intercomm != MPI_COMM_NULL) {
		int hrc = parents_welcome(c, *intercomm);
		if (hrc != MPI_SUCCESS) {
			int frc = ftp_check(c, false);
			rc = frc != MPI_SUCCESS ? frc : hrc;
		}
	}
	return ftp_post_plain(c, rc);
}

FT_EXPORT int MPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
			     MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Comm_spawn);
	int rc = ftp_active() ? spawn_pre(&c, comm) : (c.real = comm, MPI_SUCCESS);

	if (rc == MPI_SUCCESS)
		rc = ftp_mpi.PMPI_Comm_spawn(command, argv, maxprocs, info, root_on_real(&c, root),
					     c.real, intercomm, array_of_errcodes);
	return ftp_active() ? spawn_post(&c, rc, intercomm) : rc;
}
FTP_ALSO_PMPI(MPI_Comm_spawn);

FT_EXPORT int MPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
				      const int array_of_maxprocs[], const MPI_Info array_of_info[], int root,
				      MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Comm_spawn_multiple);
	int rc = ftp_active() ? spawn_pre(&c, comm) : (c.real = comm, MPI_SUCCESS);

	if (rc == MPI_SUCCESS)
		rc = ftp_mpi.PMPI_Comm_spawn_multiple(count, array_of_commands, array_of_argv, array_of_maxprocs,
						      array_of_info, root_on_real(&c, root), c.real,
						      intercomm, array_of_errcodes);
	return ftp_active() ? spawn_post(&c, rc, intercomm) : rc;
}
FTP_ALSO_PMPI(MPI_Comm_spawn_multiple);
