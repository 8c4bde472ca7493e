/* call.h: the call policy. Every generated wrapper (wrappers.c) has the
 * same shape,
 *
 *     struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_X);
 *     int rc = ftp_pre_CLASS(&c, comm, ...);
 *     if (rc == MPI_SUCCESS)
 *             rc = ftp_mpi.PMPI_X(..., c.real, ...);           (or, for a blocking call,
 *                                                       its nonblocking twin
 *                                                       and ftp_block)
 *     return ftp_post_CLASS(&c, rc, ...);
 *
 * and all that differs between classes of functions lives here, reviewed
 * once. The classes are those of pmpi/ftshim-api.tsv.
 *
 * The failure-free fast path of a wrapper is the communicator lookup and
 * one acquire load of ftp.events; everything about failures happens only
 * once that is non-zero. A blocking operation that could wait on another
 * process runs as its nonblocking twin, polled by ftp_block, which gives
 * up with a ULFM error as soon as the process it waits on fails or the
 * communicator is revoked. */
#ifndef FTSHIM_PMPI_CALL_H
#define FTSHIM_PMPI_CALL_H

#include <mpi.h>
#include <sched.h>

#include "pmpi/seam.h"
#include "pmpi/errors.h"
#include "pmpi/fn_table.h"
#include "pmpi/ftp.h"
#include "pmpi/mode/mode.h"
#include "pmpi/ranks.h"
#include "src/common.h"

/* The generated file wraps deprecated functions too (MPI_Attr_get, ...). */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* What a call waits on, so that it can stop when that fails. */
enum ftp_watch_kind {
	FTP_WATCH_NONE,
	FTP_WATCH_PEER, /* one process: rank (the MPI's, in the remote group of an intercommunicator) */
	FTP_WATCH_ANY,  /* a receive from MPI_ANY_SOURCE */
	FTP_WATCH_ALL,  /* every member (collectives) */
};

struct ftp_watch {
	enum ftp_watch_kind kind;
	int rank;  /* FTP_WATCH_PEER: its rank in the MPI's communicator (real) */
	bool recv; /* a receive: cancel it when giving up */
	/* Cannot be cancelled (partitioned, request-based RMA): left to the
	 * MPI when given up. */
	bool keep;
};

struct ftp_call {
	enum ftp_fn fn;          /* which function this call is */
	struct ftp_comm *comm;   /* the call's communicator, if ftshim tracks it */
	MPI_Comm real;           /* the communicator to hand to PMPI */
	bool direct;             /* nothing to watch: call the blocking PMPI function */
	struct ftp_watch watch;
	MPI_Request req;         /* the nonblocking twin of a blocking call */
	/* A call on a window or file (pmpi/objects.h): its kind and handle
	 * bits; its errors are raised on that object's error handler, and comm
	 * is the object's communicator. FTP_OBJ_COMM (zero): no object. */
	enum ftp_obj_kind obj;
	uint64_t obj_bits;
	/* A window or file creation: the reference on comm it will hold. */
	struct ftp_comm *held;
	/* A wait on one window peer: its ftp_hang_watch_peer_begin token. */
	uint64_t peer_watch;
};

#define FTP_CALL_INIT(f) { .fn = (f), .comm = NULL, .direct = true }

/* A NULL status (or array of statuses) means "ignore", as Open MPI takes
 * it and MPICH does not ("Null pointer in parameter status"): programs
 * written on Open MPI pass it (Fenix does). Every wrapper with a status
 * parameter applies these first, so both MPIs take it alike. */
#define FTP_STATUS(s) ((s) ? (s) : MPI_STATUS_IGNORE)
#define FTP_STATUSES(s) ((s) ? (s) : MPI_STATUSES_IGNORE)

/* What a receive from source watches. */
static inline enum ftp_watch_kind ftp_source_kind(int source)
{
	return source == MPI_ANY_SOURCE ? FTP_WATCH_ANY : FTP_WATCH_PEER;
}

/* Make c a watched call on e (a communicator ftshim tracks); watch.rank
 * is already the MPI's (ftp_watch_on translates it). */
FTP_HOT void ftp_call_on(struct ftp_call *c, struct ftp_comm *e, struct ftp_watch watch)
{
	c->comm = e;
	c->real = e->real;
	c->direct = false;
	c->watch = watch;
}

/* What a call on e waits on, from the program's rank (or MPI_ANY_SOURCE). */
FTP_HOT struct ftp_watch ftp_watch_on(const struct ftp_comm *e, enum ftp_watch_kind kind, int rank,
				      bool recv)
{
	return (struct ftp_watch){ .kind = kind, .rank = kind == FTP_WATCH_PEER ? ftp_rank_in(e, rank) : rank,
				   .recv = recv };
}

/* Resolve the application's handle once per call, through the seam. */
FTP_HOT void ftp_resolve(struct ftp_call *c, MPI_Comm comm)
{
	c->comm = ftp_seam_comm(comm);
	c->real = c->comm ? c->comm->real : comm;
	c->direct = c->comm == NULL;
}

/* Track handle under id with these members (job ranks); 0, or -1 if it
 * stays untracked. */
int ftp_track(MPI_Comm handle, uint64_t id, const int32_t *local, uint32_t nlocal, const int32_t *remote,
	      uint32_t nremote);

/* Whether what c watches has failed or its communicator was revoked
 * (pmpi/block.c): MPI_SUCCESS, or the error to return. Called only once
 * ftp.events is non-zero. pending: a nonblocking receive from
 * MPI_ANY_SOURCE gets MPI_ERR_PROC_FAILED_PENDING rather than
 * MPI_ERR_PROC_FAILED. */
int ftp_check(struct ftp_call *c, bool pending);

/* Complete c->req, which the caller has just started (rc is what starting
 * it returned), watching c->watch; status may be MPI_STATUS_IGNORE. */
int ftp_block_wait(struct ftp_call *c, MPI_Status *status);

/* Stop waiting for *req because err happened to what c watches: a
 * receive gets a last look and is cancelled (MPI_SUCCESS, and its status,
 * if it matched meanwhile), a send cancelled and freed, a collective or
 * partitioned request left to the library (MPI lets no one cancel it). *req becomes
 * MPI_REQUEST_NULL, except an inactive persistent request. */
int ftp_give_up(struct ftp_call *c, MPI_Request *req, bool persistent, int err,
		MPI_Status *status);
/* What a point-to-point request is, for ftp_cancel_p2p. */
enum ftp_p2p_role {
	FTP_P2P_SEND = 0,
	FTP_P2P_RECV = 1,
	FTP_P2P_PERSISTENT = 2, /* or'ed in: the handle stays the caller's */
};
/* Its point-to-point part: cancel *req, with peer (a job rank; -1 for
 * a receive from MPI_ANY_SOURCE), given up on because of err; wait, while
 * the peer lives, for a transfer the MPI already matched (so that no
 * buffer is touched after this returns while the peer lives); as
 * ftp_give_up. A null *req: err. */
int ftp_cancel_p2p(MPI_Request *req, int32_t peer, enum ftp_p2p_role role, int err,
		   MPI_Status *status);
/* What a dead peer sent before it died is in shared memory or the MPI's
 * queues already, but found only by passes of the MPI's progress, and on
 * a crowded host a few passes may not reach it: whether to make another
 * after `pass` of them, begun at start (ft_clock_now). */
bool ftp_dead_peer_pass(uint32_t pass, uint64_t start);
/* A collective (its n requests) given up on because a member failed may
 * still complete: ULFM fails only what cannot, and the dead member may
 * have sent its part before it died, so that a survivor slow to look
 * would fail what the others finished. Tests them for a bounded time (at
 * least the passes above, and 50 ms): true if they completed (statuses,
 * or MPI_STATUS(ES)_IGNORE, filled in). */
bool ftp_completes_anyway(MPI_Request *reqs, int n, MPI_Status *statuses);

/* The end of each poll of a waiting call: spin a while, then yield, and
 * from then on take the host's mail (a revoke on its way through this
 * rank) before each yield, where its loads cost nothing beside the
 * system call; the failure-free completion path never looks. */
static inline void ftp_poll_pause(uint64_t *polls)
{
	if (++*polls > ftp.spin_polls) {
		ftp_hostmail_poll();
		sched_yield();
	}
}

/* One pass of the MPI's whole progress engine, for a wait of ftshim's
 * own that holds no request of the MPI's (the agreement, the wait for the
 * other ranks at MPI_Finalize, a polled probe): MPICH grants a window's
 * passive-target lock only in the target's progress, and MPI_Iprobe skips
 * that part, so a process waiting there would hold up every rank that
 * locks its window. A completion call runs it all: this is a test of a
 * receive on MPI_COMM_SELF that nothing sends, cancelled. Application
 * thread. */
void ftp_mpi_progress(void);

/* One step of a polling loop: before the first call polls == 0 and seen
 * == 0. Returns an error if what c watches failed since the last step
 * (pending as for ftp_check), else MPI_SUCCESS after spinning or, as
 * polls go on, yielding the CPU. */
int ftp_poll_step(struct ftp_call *c, bool pending, uint64_t *seen, uint64_t *polls);

/* Whether req is the request an MPI hands back for an operation it
 * completed as it started it (most small sends): such a request needs no
 * completion call and no watching. MPICH 4 gives one of its built-in
 * requests (handle kind bits 01), all complete by construction, and
 * MPI_Wait on one only resets the handle; Open MPI gives the address of
 * its ompi_request_empty, found at MPI_Init. The completion call this
 * saves is a third of a small MPI_Send through the wrapper: some 300
 * instructions on MPICH (MPI_Request_get_status and MPI_Wait), 110 on
 * Open MPI (MPI_Test). */
FTP_HOT bool ftp_done_at_once(MPI_Request req)
{
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 40000000
	return ((uint32_t)req >> 30) == 1u;
#elif defined(OPEN_MPI)
	return req == ftp.done_request;
#else
	(void)req;
	return false;
#endif
}

/* Whether *req is complete, and if so complete it, as cheaply as the
 * blocking call would: MPICH's MPI_Test always runs a pass of its
 * progress engine first (some 650 instructions), which its MPI_Send does
 * not do after a send that went out at once; MPI_Request_get_status
 * skips it for a complete request, and MPI_Wait then returns at once.
 * Open MPI's MPI_Test looks before it progresses. */
FTP_HOT int ftp_test_done(MPI_Request *req, int *flag, MPI_Status *status)
{
	if (status == MPI_STATUS_IGNORE && ftp_done_at_once(*req)) {
		*flag = 1;
		*req = MPI_REQUEST_NULL;
		return MPI_SUCCESS;
	}
#ifdef MPICH_VERSION
	int rc = ftp_mpi.PMPI_Request_get_status(*req, flag, MPI_STATUS_IGNORE);

	if (rc != MPI_SUCCESS || !*flag)
		return rc;
	return ftp_mpi.PMPI_Wait(req, status);
#else
	return ftp_mpi.PMPI_Test(req, flag, status);
#endif
}

FTP_HOT int ftp_block(struct ftp_call *c, int rc, MPI_Status *status)
{
	int flag = 0;

	if (rc != MPI_SUCCESS)
		return rc;
	/* Most sends and many receives are done at once. */
	rc = ftp_test_done(&c->req, &flag, status);
	if (rc != MPI_SUCCESS || flag)
		return rc;
	return ftp_block_wait(c, status);
}

/* Resolve comm, set what the call watches, and (unless check is false)
 * refuse to start what waits on a failure already known. A nonblocking
 * receive from MPI_ANY_SOURCE starts anyway: it reports
 * MPI_ERR_PROC_FAILED_PENDING when completed. So does a receive from a
 * failed peer: what the peer sent before it died may be here, and the
 * receive gives up only after a last look (ftp_cancel_p2p). */
FTP_HOT int ftp_pre_watch_as(struct ftp_call *c, MPI_Comm comm, enum ftp_watch_kind kind,
			     int rank, bool recv, bool check, bool nonblocking)
{
	ftp_resolve(c, comm);
	if (c->direct)
		return MPI_SUCCESS;
	ftp_call_on(c, c->comm, ftp_watch_on(c->comm, kind, rank, recv));
	if (check && __builtin_expect(ftp_events() != 0, 0)) {
		int err = ftp_check(c, nonblocking);
		/* A covered program rank may have moved to another process as
		 * ftp_check applied a failure (pmpi/mode/mode.h): look at that
		 * one. */
		if (err != MPI_SUCCESS && ftp_seam_covered(c->comm)) {
			if (kind == FTP_WATCH_PEER)
				ftp_mode_await_peer(ftp_job_at(c->comm->core, c->watch.rank));
			c->watch = ftp_watch_on(c->comm, kind, rank, recv);
			err = ftp_check(c, nonblocking);
		}
		if (err == FTP_ERR_PROC_FAILED_PENDING ||
		    (err == FTP_ERR_PROC_FAILED && recv && kind == FTP_WATCH_PEER))
			return MPI_SUCCESS;
		return err;
	}
	return MPI_SUCCESS;
}

FTP_HOT int ftp_pre_watch(struct ftp_call *c, MPI_Comm comm, enum ftp_watch_kind kind,
			  int rank, bool recv)
{
	return ftp_pre_watch_as(c, comm, kind, rank, recv, true, false);
}

/* Point-to-point with a named peer (a send), or from a source that may be
 * MPI_ANY_SOURCE (a receive or probe). */
FTP_HOT int ftp_pre_send(struct ftp_call *c, MPI_Comm comm, int dest)
{
	return ftp_pre_watch(c, comm, FTP_WATCH_PEER, dest, false);
}

FTP_HOT int ftp_pre_recv(struct ftp_call *c, MPI_Comm comm, int source)
{
	return ftp_pre_watch(c, comm, ftp_source_kind(source),
			     source, true);
}

/* MPI_Iprobe and MPI_Improbe have no wait to give up in: a failed peer
 * fails them at once. */
FTP_HOT int ftp_pre_iprobe(struct ftp_call *c, MPI_Comm comm, int source)
{
	int rc = ftp_pre_recv(c, comm, source);

	if (rc == MPI_SUCCESS && !c->direct && __builtin_expect(ftp_events() != 0, 0))
		rc = ftp_check(c, false);
	return rc;
}

/* Nonblocking point-to-point: checked like the blocking forms; persistent
 * requests (MPI_Send_init, ...) are checked when started instead. */
FTP_HOT int ftp_pre_isend(struct ftp_call *c, MPI_Comm comm, int dest)
{
	return ftp_pre_watch_as(c, comm, FTP_WATCH_PEER, dest, false, true, true);
}

FTP_HOT int ftp_pre_irecv(struct ftp_call *c, MPI_Comm comm, int source)
{
	return ftp_pre_watch_as(c, comm, ftp_source_kind(source),
				source, true, true, true);
}

static inline int ftp_pre_init_send(struct ftp_call *c, MPI_Comm comm, int dest)
{
	return ftp_pre_watch_as(c, comm, FTP_WATCH_PEER, dest, false, false, true);
}

static inline int ftp_pre_init_recv(struct ftp_call *c, MPI_Comm comm, int source)
{
	return ftp_pre_watch_as(c, comm, ftp_source_kind(source),
				source, true, false, true);
}

/* MPI_Psend_init, MPI_Precv_init: the peer (dest, in both) is watched;
 * MPI cannot cancel a partitioned request, so one given up on is left to
 * the MPI, as a collective is. */
static inline int ftp_pre_init_part(struct ftp_call *c, MPI_Comm comm, int dest)
{
	int rc = ftp_pre_watch_as(c, comm, FTP_WATCH_PEER, dest, false, false, true);

	c->watch.keep = true;
	return rc;
}

/* MPI_Isendrecv(_replace): the send's peer is checked now, the receive's
 * watched. */
static inline int ftp_pre_isendrecv(struct ftp_call *c, MPI_Comm comm, int dest, int source)
{
	int rc = ftp_pre_isend(c, comm, dest);

	return rc == MPI_SUCCESS ? ftp_pre_irecv(c, comm, source) : rc;
}

static inline int ftp_pre_init_coll(struct ftp_call *c, MPI_Comm comm)
{
	return ftp_pre_watch_as(c, comm, FTP_WATCH_ALL, 0, false, false, true);
}

/* Collectives (and collective creations): every member matters. */
FTP_HOT int ftp_pre_coll(struct ftp_call *c, MPI_Comm comm)
{
	return ftp_pre_watch(c, comm, FTP_WATCH_ALL, 0, false);
}

/* Classes that name a communicator but wait on nobody. */
FTP_HOT int ftp_pre_comm(struct ftp_call *c, MPI_Comm comm)
{
	ftp_resolve(c, comm);
	return MPI_SUCCESS;
}

#define ftp_pre_local ftp_pre_comm
/* MPI_Comm_dup and its _with_info form: a collective (pmpi/block.c); on
 * a communicator a recovery mode covers, a creation (pmpi/mode/mode.h). */
int ftp_pre_dup(struct ftp_call *c, MPI_Comm comm);
#define ftp_pre_idup ftp_pre_coll
#define ftp_pre_free ftp_pre_comm
/* MPI_Comm_free's (and MPI_Comm_disconnect's) call of the MPI
 * (pmpi/comms.c): the application's handle goes, the rest when the
 * communicator's last pending request is done (ftp_comm_put). */
int ftp_comm_free_real(struct ftp_call *c);
/* Free the MPI's communicator of e, which nothing uses any more
 * (pmpi/retire.c): one that may still have stale messages in flight is
 * retired, not freed at once. */
int ftp_comm_free_mpi(struct ftp_comm *e);
/* Revoked, or a member failed (pmpi/block.c). */
bool ftp_comm_tainted(struct ftp_comm *e);

/* A creation collective over the parent with no nonblocking twin (split,
 * create, ...): fence first, so that a member that has already failed
 * makes it fail instead of hang (pmpi/block.c). */
int ftp_pre_create(struct ftp_call *c, MPI_Comm comm);

/* MPI_Intercomm_create: fenced on the local communicator; watched over
 * its members and the remote leader (a job rank, through peer_comm). */
int ftp_pre_create_inter(struct ftp_call *c, MPI_Comm local_comm, MPI_Comm peer_comm, int remote_leader);

/* MPI_Comm_create_group is collective over the group only: a failed
 * member of the parent outside the group does not matter. */
int ftp_pre_create_group(struct ftp_call *c, MPI_Comm comm, MPI_Group group);

/* While an application thread is inside a call of the MPI that a member's
 * death could block for ever (communicator creation), watch the members
 * (job ranks): if one fails and the call does not return within a grace
 * period, the process exits with one line instead of hanging
 * (pmpi/hangwatch.c). end is harmless without a begin. */
void ftp_hang_watch_begin(enum ftp_fn fn, const int32_t *members, uint32_t n);
void ftp_hang_watch_end(void);
/* Watch the current call with a plain deadline: if it has not returned
 * after ns, the process exits as above. */
void ftp_hang_watch_deadline(enum ftp_fn fn, uint64_t ns);
/* The deadline of a call that every rank makes at about the same moment
 * but that a death nobody can see would hold for ever (the MPI's
 * MPI_Finalize; ftshim's collectives at MPI_Init, before its detector
 * runs): 10 heartbeat timeouts, at least 5 s. */
uint64_t ftp_hang_watch_long(void);
/* Give this thread's member watch a deadline too (ns), which a member's
 * failure still shortens to the grace period. */
void ftp_hang_watch_limit(uint64_t ns);
/* The same for a call that waits on one peer (job rank), without a
 * lock while nothing fails: begin returns a token for end, 0 if not
 * watched (another such call is). */
uint64_t ftp_hang_watch_peer_begin(enum ftp_fn fn, int32_t peer);
void ftp_hang_watch_peer_end(uint64_t token);
/* The detector learned that rank failed (detector thread). */
void ftp_hang_watch_on_failure(uint32_t rank);
/* Whether this thread is inside one of the watched calls above (all of
 * them blocking calls of the MPI's own, whose wait loop ftshim does not
 * run), set by their begin and cleared by their end, and how many empty
 * polls of the MPI's progress it has made there since it last progressed
 * (pmpi/ucx_yield.c). Only its own thread touches it. */
struct ftp_mpi_wait {
	bool inside;
	uint32_t empty_polls;
};
extern _Thread_local struct ftp_mpi_wait ftp_mpi_wait __attribute__((tls_model("initial-exec")));
/* How many times the MPI's own waits yielded the CPU so far (0 where
 * ftshim cannot make them: pmpi/ucx_yield.c). */
uint64_t ftp_ucx_yields(void);

/* Classes without a communicator. */
static inline int ftp_pre_nocomm(struct ftp_call *c)
{
	(void)c;
	return MPI_SUCCESS;
}

#define ftp_pre_msg ftp_pre_nocomm
#define ftp_pre_req ftp_pre_nocomm

/* Whether a call returns to the MPI library's own code (return_address
 * is the caller's, __builtin_return_address(0) in the wrapper): the MPI
 * calling itself through its profiling names, as ROMIO does (MPICH).
 * Their test calls get the MPI's answer (pmpi/complete.c). */
bool ftp_called_by_mpi(const void *return_address);

/* After every wrapped call: count it if a call trigger of FTSHIM_INJECT
 * is armed in this rank (one relaxed load otherwise). */
FTP_HOT void ftp_post_common(struct ftp_call *c)
{
	if (atomic_load_explicit(&ftp_inject_counting, memory_order_relaxed))
		ftp_inject_after_call(c->fn);
}

/* After the call: ftshim's own errors go through the error handler. */
FTP_HOT int ftp_post_plain(struct ftp_call *c, int rc)
{
	ftp_post_common(c);
	if (__builtin_expect(rc != MPI_SUCCESS, 0) && ftp_is_ft_error(rc))
		return ftp_raise(c, rc);
	return rc;
}

#define ftp_post_local ftp_post_plain
#define ftp_post_send ftp_post_plain
#define ftp_post_recv ftp_post_plain
#define ftp_post_coll ftp_post_plain
#define ftp_post_msg ftp_post_plain
#define ftp_post_iprobe ftp_post_plain
#define ftp_post_req ftp_post_plain

/* A nonblocking or persistent call made *request: remember what it
 * waits on (pmpi/requests.c). */
int ftp_post_ireq(struct ftp_call *c, int rc, MPI_Request *request, bool persistent);

/* Communicator creation and release (pmpi/comms.c): register the new
 * communicator under its job-wide id, or forget the freed one. */
int ftp_post_create(struct ftp_call *c, int rc, MPI_Comm *newcomm);
int ftp_post_dup(struct ftp_call *c, int rc, MPI_Comm *newcomm);
int ftp_post_idup(struct ftp_call *c, int rc, MPI_Comm *newcomm, MPI_Request *request);
int ftp_post_create_group(struct ftp_call *c, int rc, MPI_Group group, int tag, MPI_Comm *newcomm);
int ftp_post_create_inter(struct ftp_call *c, int rc, int tag, MPI_Comm *newintercomm);
int ftp_post_free(struct ftp_call *c, int rc, MPI_Comm *comm);
/* Register *newcomm, made by MPI_Comm_create_group(c's communicator,
 * group, tag) (MPIX_Comm_shrink makes one so). */
void ftp_register_group_child(struct ftp_call *c, MPI_Group group, int tag, MPI_Comm *newcomm);
/* Register *newintercomm, made by MPI_Intercomm_create(..., tag, ...)
 * from survivors of c's intercommunicator (MPIX_Comm_shrink of one). */
void ftp_register_inter_child(struct ftp_call *c, int tag, MPI_Comm *newintercomm);

/* Agreement and creation over survivors (pmpi/agree.c), which shrink is
 * made of. ftp_agree_alive: agree, as MPIX_Comm_shrink does, on which
 * members of c's intracommunicator live; their job ranks, in rank order,
 * go to alive (room for its size), *n of them. ftp_create_group_of:
 * MPI_Comm_create_group(comm, the n processes of job ranks world, tag),
 * under the hang watch. Both return an MPI error code. */
int ftp_agree_alive(struct ftp_call *c, int32_t *alive, uint32_t *n);
/* An agreement of ftshim's own on e (the bitwise AND of every live
 * member's *value into *value), not in the job report: MPI_SUCCESS, or
 * an error if a member failed. */
int ftp_agree_quiet(struct ftp_comm *e, uint32_t *value);
int ftp_create_group_of(MPI_Comm comm, const int32_t *world, uint32_t n, int tag, enum ftp_fn fn,
			MPI_Comm *out);

/* The fast path of the blocking point-to-point wrappers (classes send and
 * recv). In a small-message ping-pong every instruction between a
 * message's arrival and the reply's departure shows: the general path
 * (the call record, the watch, the checks before and after) cost as much
 * again as running the call as its twin, some 60 instructions a call. So
 * while nothing has happened and the communicator is the one this thread
 * used last (ftp_seam_cached), the wrapper starts the twin on the cached
 * entry and returns at once if the MPI completed it then; everything else
 * goes to ftp_fast_block, out of line, which is exactly the general path
 * from the start of the twin on. A failure that arrives meanwhile is seen
 * there: its polling loop checks ftp.events before it waits. */

/* The rest of a call the fast path started (rc, *req): a send (rank is
 * dest) or a receive (rank is the source, maybe MPI_ANY_SOURCE) on e;
 * tested: *req was found not complete yet. */
int ftp_fast_block(enum ftp_fn fn, struct ftp_comm *e, int rank, bool recv, int rc, bool tested,
		   MPI_Request *req, MPI_Status *status);

FTP_HOT int ftp_fast_send(enum ftp_fn fn, struct ftp_comm *e, int dest, int rc, MPI_Request *req)
{
	if (__builtin_expect(rc == MPI_SUCCESS && ftp_done_at_once(*req), 1))
		return MPI_SUCCESS;
	return ftp_fast_block(fn, e, dest, false, rc, false, req, MPI_STATUS_IGNORE);
}

FTP_HOT int ftp_fast_recv(enum ftp_fn fn, struct ftp_comm *e, int source, int rc, MPI_Request *req,
			  MPI_Status *status)
{
	int flag = 0;

	if (rc == MPI_SUCCESS) {
		rc = ftp_test_done(req, &flag, status);
		if (rc == MPI_SUCCESS && flag)
			return MPI_SUCCESS;
	}
	return ftp_fast_block(fn, e, source, true, rc, true, req, status);
}

#endif
