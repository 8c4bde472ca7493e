/* ftp.h: the state of the MPI side of ftshim (one per process), shared by
 * the hand-written wrappers and the policy functions. Everything here may
 * include mpi.h; nothing in src/ may.
 *
 * Sharing: ftp.phase is written by the application thread in MPI_Init and
 * MPI_Finalize and read by every wrapper (relaxed: a thread that calls MPI
 * concurrently with MPI_Init or MPI_Finalize is erroneous anyway). The
 * other fields are set in MPI_Init before phase becomes FTP_PHASE_ON and are
 * read-only while it is. */
#ifndef FTSHIM_PMPI_FTP_H
#define FTSHIM_PMPI_FTP_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "pmpi/fn_table.h"
#include "pmpi/mpi_entry.h"

#include "src/clock.h"
#include "src/comm_table.h"
#include "src/mailbox.h"
#include "src/config.h"
#include "src/events.h"
#include "src/frame.h"
#include "src/inject.h"
#include "src/overlay.h"
#include "src/proc_table.h"
#include "src/report.h"

/* Also define PMPI_X, the profiling name of the wrapper MPI_X just defined,
 * as the same function: a tool preloaded above ftshim, a library calling
 * PMPI_X, and the MPI's own Fortran bindings (Open MPI's call PMPI_X)
 * then reach ftshim too. ftshim itself reaches the MPI only through
 * ftp_mpi (pmpi/mpi_entry.h). docs/DESIGN.md, "One way in", says why. */
#define FTP_ALSO_PMPI(name) \
	extern __typeof__(name) P##name __attribute__((alias(#name), visibility("default")))

enum ftp_phase {
	FTP_PHASE_OFF = 0, /* MPI_Init not called (yet): every wrapper passes through */
	FTP_PHASE_PASS,    /* FTSHIM_DISABLE=1: every wrapper passes through */
	FTP_PHASE_ON,      /* between MPI_Init and the end of MPI_Finalize */
	FTP_PHASE_DONE,    /* after MPI_Finalize */
};

/* What every rank told the others at MPI_Init (pmpi/job.c). Plain bytes,
 * the same layout in every rank of a job. */
struct ftp_peer {
	struct ft_endpoint ep;        /* its control plane; port 0: it has none */
	int32_t pid;
	uint32_t reserved;
	uint64_t start_ticks;         /* with pid, names the process (/proc/PID/stat) */
	uint64_t init_unix_ns;        /* its MPI_Init, by its wall clock */
	char host[64];                /* its host name */
	uint8_t nonce[FT_SECRET_LEN]; /* rank 0's is the job's secret */
};

struct ftp_state {
	_Atomic int phase;         /* enum ftp_phase */
	/* Bumped (release) after a failure is recorded in procs or a
	 * communicator is revoked, by whichever thread does it; 0 until
	 * something has happened. The one load of every wrapper's fast path. */
	_Atomic uint64_t events;
	/* This process's job rank: its index in every table of ftshim's
	 * (process table, peers, detector ring, communicator members). The
	 * processes the job started with have their MPI_COMM_WORLD rank;
	 * processes spawned later come after them, in the order they joined
	 * (docs/DESIGN.md, "Process identity"). */
	int rank;
	/* This process's world, as ftshim starts over it: MPI_COMM_WORLD,
	 * or, when ftshim starts in MPI_Session_init, a communicator made
	 * from that session's mpi://WORLD process set (the program has no
	 * MPI_COMM_WORLD then). Its size, and the job rank of its rank 0:
	 * 0 for the job's first processes, where job rank = world rank. */
	MPI_Comm world;
	int world_size, world_base;
	uint64_t world_id; /* its job-wide id: FT_COMM_WORLD_ID unless spawned */
	uint32_t nfirst;   /* the ranks the job started with (job ranks 0 to nfirst - 1) */
	/* The job ranks that exist: one past the highest known to have
	 * joined (release, by the thread that learns of a join, after its
	 * peers entry; acquire by readers). At most ftp.procs.size. */
	_Atomic uint32_t nprocs;
	uint64_t init_ns;          /* ft_clock_now() on entry to MPI_Init */
	/* ft_clock_now() once the whole job is up (ftp_job_up): the origin
	 * of time triggers and of the log's times; 0 before. Written once
	 * by the application thread in MPI_Init, before the injection timer
	 * starts. */
	uint64_t up_ns;
	int64_t wall_offset_ns;    /* ft_clock_wall_offset() then: clock + this = wall clock */
	uint64_t job_start_unix_ns; /* the earliest rank's MPI_Init, by the wall clock */
	/* Every process this one can name in an MPI group, and the job rank
	 * of each of its members (ftp_group_jobs): ftp.world's group, plus
	 * the processes spawned with this one or by it (pmpi/spawn.c).
	 * job_of is NULL while the group is ftp.world's of a job's first
	 * processes (member i is job rank i). Application threads, under
	 * job_group_lock (pmpi/ranks.c, which alone touches them). */
	MPI_Group job_group;
	int32_t *job_of;
	struct ft_config cfg;
	struct ft_proc_table procs;
	struct ft_comm_registry comms;
	/* procs.size entries, from MPI_Init on; those of job ranks that have
	 * not joined are zero. A spawned process's entry is written before
	 * ftp.nprocs covers it; one learned only from the control plane has
	 * its endpoint and nothing else (no host name, no pid). */
	struct ftp_peer *peers;
	uint8_t secret[FT_SECRET_LEN]; /* the job's */
	char job_id[13];               /* 12 hex digits, the same on every rank */
	struct ft_inject_spec inject;  /* FTSHIM_INJECT, parsed before PMPI_Init */
	/* Polls a waiting call spins before it yields the CPU at every poll:
	 * few when this host runs more ranks than it gives us cores (a rank
	 * that spins then only delays the one it waits for). Set at MPI_Init. */
	uint32_t spin_polls;
	/* A private duplicate of MPI_COMM_WORLD, made at MPI_Init while every
	 * rank is there (made later, a creation abandoned because a member
	 * died can leave Open MPI unable to make any other), for collectives
	 * run as point-to-point exchanges (pmpi/coll_p2p.c, Open MPI) and for
	 * shrinking intercommunicators (pmpi/agree.c); MPI_COMM_NULL if it
	 * could not be made; on MPICH, MPI_COMM_WORLD itself (see
	 * ftp_coll_p2p_start). coll_p2p's tags name the communicator, up to
	 * coll_tag_ub. Immutable after init. */
	MPI_Comm private_world;
	int coll_tag_ub;
	/* Open MPI: the request its nonblocking calls hand back for an
	 * operation done at once (&ompi_request_empty), or NULL if this Open
	 * MPI has none (ftp_done_at_once). Immutable after init. */
	MPI_Request done_request;
};

extern struct ftp_state ftp;

/* Now by the wall clock (ns since the epoch), for the job report. */
static inline uint64_t ftp_wall_now(void)
{
	return ft_clock_now() + (uint64_t)ftp.wall_offset_ns;
}

static inline bool ftp_active(void)
{
	return atomic_load_explicit(&ftp.phase, memory_order_relaxed) == FTP_PHASE_ON;
}

/* Register the predefined communicators (MPI_Init); unregister
 * everything (after PMPI_Finalize). */
int ftp_comms_init(void);
/* MPI_Finalize, first: delete MPI_COMM_SELF's attributes (pmpi/self_attrs.c). */
void ftp_self_attrs_delete(void);
void ftp_comms_fini(void);

/* The job-wide exchange at MPI_Init (pmpi/job.c): collective over
 * ftp.world (one PMPI_Allgather); then ftp_job_go. usable: false if this
 * rank has no tables (it still takes part, and detection is then off for
 * the whole job). */
int ftp_job_start(bool usable);
/* What this process tells the others about itself, and its listening
 * socket (-1: none); ftp.peers with room for every job rank. */
int ftp_job_self(bool usable, struct ftp_peer *mine);
struct ftp_peer *ftp_job_peers_alloc(void);
/* Once ftp.peers, the secret and the job's start are known: start
 * detection (known: the news the process starts with), the run
 * directory and injection. */
int ftp_job_go(bool usable, int listen_fd, const struct ft_entry *known, uint32_t nknown);
/* The last step of MPI_Init, once ftshim's own start is done here: wait
 * until every process of ftp.world is that far (an agreement over the
 * control plane, which a failure does not stop; a spawned process does
 * not wait for its siblings), then start the clock of the time triggers
 * and of the log (ftp.up_ns). */
void ftp_job_up(void);

/* Spawned processes (pmpi/spawn.c). In a process that MPI_Comm_spawn
 * started, from MPI_Init, before the tables: join the parents' job and
 * set ftp.world_base (false: it has no parent running ftshim, and starts a job of its own).
 * Then, once the tables exist, ftp_spawn_child_go. */
bool ftp_spawn_child_join(int world_rank);
int ftp_spawn_child_go(bool usable);
/* The capacity of the tables: every job rank there can be. */
uint32_t ftp_spawn_capacity(void);
/* How long parents and children wait for each other's part of the
 * handshake, and a spawned process for the MPI's start. */
uint64_t ftp_spawn_handshake_ns(void);

/* Failure detection (pmpi/detect.c): start the detector thread on the
 * published listening socket, leave the overlay at MPI_Finalize once every
 * rank has departed or failed, or stop at once. */
int ftp_detect_start(int listen_fd, const struct ft_entry *known, uint32_t nknown);
void ftp_detect_finish(void);
/* Whether this process's detector runs (application thread). */
bool ftp_detect_on(void);
/* Tell every rank that this one ends the job (MPI_Abort, a fatal error),
 * and exit with status; they exit with it too. (The launcher may not kill
 * them itself: Hydra with -disable-auto-cleanup does not.) Returns only if
 * detection is off; the caller then calls PMPI_Abort. */
void ftp_detect_abort(int status);
/* Leave on purpose, after MPI_Init: exit with status (an FT_EXIT_*) from
 * any thread, once its line is logged. A decision, not a crash: the rank
 * says PMI finalize first (unless the MPI's own MPI_Finalize is talking
 * there), or Hydra takes it for crashed: it signals every other proxy,
 * which at the end of a job can kill mpiexec with SIGPIPE (exit 141), and
 * may pass on a provisional raw status 1 ("Hangup") for this one. */
_Noreturn void ftp_leave(int status);
/* End this process with the job (its MPI_Abort or fatal error, or
 * another rank's), from any thread: the launcher is told as by
 * ftp_leave, so that Hydra passes on status rather than take the exit
 * for a crash ("Hangup", status 1). */
_Noreturn void ftp_end_with_job(int status);
/* Tell Hydra's proxy that this rank is done (see src/pmi.h), waiting at
 * most timeout_ms for its answer. */
void ftp_pmi_done(int timeout_ms);
/* The MPI's own MPI_Finalize starts: it talks on the PMI connection (a
 * barrier), and leaving must not any more (application thread). */
void ftp_leave_mpi_finalizing(void);
void ftp_detect_kill(void);
/* A spawned process joins: tell the detector where it listens, and so
 * every process of the job (any thread). */
void ftp_detect_join(uint32_t rank, const struct ft_endpoint *ep);
/* Send a control-plane message to job rank to (this rank itself too),
 * from any thread. */
void ftp_detect_post(uint32_t to, const struct ft_msg *m);

/* The MPI side's control-plane messages (FT_MSG_APP kinds). */
enum ftp_app_kind {
	FTP_APP_REVOKE = 1,        /* key: the revoked communicator */
	FTP_APP_AGREE_CONTRIB = 2, /* a member's contribution to an agreement */
	FTP_APP_AGREE_DECIDE = 3,  /* the decision */
	FTP_APP_AGREE_ASK = 4,     /* a new coordinator asks for decisions */
	FTP_APP_REPORT_FILE = 5,   /* a host's file for the job report; value: what */
	FTP_APP_REPORT_DONE = 6,   /* the host's files are sent; value: how many */
	FTP_APP_REPORT_ACK = 7,    /* the reporting rank has them all */
	FTP_APP_HOSTMAIL = 8,      /* mail waits in the host's mailbox */
};

/* Deliver a control-plane message of the MPI side to its module, from
 * whichever thread took it (pmpi/detect.c). */
void ftp_app_dispatch(const struct ft_msg *m);

/* The host's shared-memory short cut for agreements (pmpi/hostmail.c).
 * start: from MPI_Init, after the addresses are known, before the
 * detector starts; stop: after the detector thread ended. post: send m
 * to job rank to through the mailbox, if to is on this host and it
 * fits (else false: send it by ftp_detect_post). drain: deliver what
 * waits (any thread). A thread that waits for mail listens meanwhile;
 * it reads the doorbell before it looks for work, and sleeps while the
 * doorbell has not moved (true: it moved). wake_self moves it, for news
 * from another thread of this process. */
void ftp_hostmail_start(void);
void ftp_hostmail_stop(void);
/* The bell socket for the detector thread to watch (its hook: drain),
 * handed over once; -1 if none. */
int ftp_hostmail_bell_fd(void);
bool ftp_hostmail_post(uint32_t to, const struct ft_msg *m);
void ftp_hostmail_drain(void);
void ftp_hostmail_listen(bool on);
uint32_t ftp_hostmail_doorbell(void);
bool ftp_hostmail_sleep(uint32_t seen, uint64_t timeout_ns);
void ftp_hostmail_wake_self(void);

/* The mailbox's doorbell (NULL without a mailbox: set before the
 * detector starts, cleared after it ended) and the value it had when the
 * last drain began. */
extern struct ft_doorbell *ftp_hostmail_bell;
extern _Atomic uint32_t ftp_hostmail_drained;
void ftp_hostmail_drain_polled(void);

/* For waiting loops that yield (ftp_poll_pause): take the mail if the
 * doorbell moved since the last drain (a revoke on its way through this
 * rank). */
static inline void ftp_hostmail_poll(void)
{
	struct ft_doorbell *bell = ftp_hostmail_bell;

	if (bell && __builtin_expect(atomic_load_explicit(&bell->rung, memory_order_relaxed) !=
					     atomic_load_explicit(&ftp_hostmail_drained, memory_order_relaxed),
				     0))
		ftp_hostmail_drain_polled();
}

/* Revoke (pmpi/revoke.c) and agreement (pmpi/agree.c): their messages and
 * failures, on the detector thread; a new communicator checked against
 * the revokes already seen; a communicator's state about to be freed. */
void ftp_revoke_on_msg(const struct ft_msg *m);
void ftp_revoke_on_failure(uint32_t rank);
void ftp_revoke_on_create(struct ft_comm *core);
void ftp_revoke_on_release(const struct ft_comm *core);
void ftp_agree_on_msg(const struct ft_msg *m);
void ftp_agree_on_failure(void);
void ftp_agree_on_create(uint64_t id);

/* The run directory (pmpi/rundir.c): where ranks record where they run
 * and every injection is recorded. */
void ftp_rundir_start(void);
/* Make ftp.private_world (pmpi/coll_p2p.c); collective over
 * MPI_COMM_WORLD, called by every rank from MPI_Init. */
void ftp_coll_p2p_start(void);
/* At MPI_Finalize: write this rank's events (before it departs); then,
 * from the lowest surviving rank once every rank departed or failed, the
 * job report and its summary line. */
void ftp_rundir_write_events(void);
void ftp_rundir_report(void);
/* The detector's estimate of when rank failed (wall clock ns; 0 if not
 * known), and a word for how it was detected. */
uint64_t ftp_failed_at(uint32_t rank);
/* Whether rank is known to have entered MPI_Finalize (any thread). */
bool ftp_departed(uint32_t rank);
const char *ftp_detection_word(uint32_t how);
/* One job report for every host (pmpi/report_merge.c): the files other
 * hosts send, taken on the detector thread; then, while this rank leaves
 * the control plane (application thread, every millisecond or so), send
 * this host's files or keep the others', true while it must stay
 * (everyone_left: the engine saw every other rank leave); the hosts
 * whose files did not come (valid until ftp_merge_end). */
void ftp_merge_on_msg(const struct ft_msg *m);
bool ftp_merge_step(bool everyone_left);
const struct ft_report_host *ftp_merge_missing(uint32_t *n);
void ftp_merge_end(void);
/* The rank that writes the job report: the lowest live rank
 * (UINT32_MAX: none); and whether the job spans several hosts. */
uint32_t ftp_reporting_rank(void);
bool ftp_several_hosts(void);
/* The job's run directory, or NULL if it has none. */
const char *ftp_rundir_dir(void);
/* The path of file name in the job's run directory (0), or -ENOENT if
 * it has none. */
int ftp_rundir_path(const char *name, char *out, size_t len);
/* Append one line to the job's injection record. */
void ftp_rundir_record_injection(const char *line);

/* Injection (pmpi/inject.c): parse FTSHIM_INJECT before PMPI_Init (0, or
 * -EINVAL with one line in err), then carry out this rank's plan: its
 * call and point triggers from ftp_inject_start on, its time triggers
 * from ftp_inject_arm on (once the whole job is up, ftp_job_up). */
int ftp_inject_parse(char *err, size_t errlen);
void ftp_inject_start(void);
void ftp_inject_arm(void);
void ftp_inject_after_call(enum ftp_fn fn);
/* Set while this rank has a call-count trigger (read by every wrapper). */
extern _Atomic bool ftp_inject_counting;

#endif
