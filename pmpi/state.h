/* state.h: the state of the MPI side of ftshim (one per process), shared by
 * the hand-written wrappers and the policy functions. Everything here may
 * include mpi.h; nothing in src/ may.
 *
 * Sharing: ftp.phase is written by the application thread in MPI_Init and
 * MPI_Finalize and read by every wrapper (relaxed: a thread that calls MPI
 * concurrently with MPI_Init or MPI_Finalize is erroneous anyway). The
 * other fields are set in MPI_Init before phase becomes FTP_PHASE_ON and are
 * read-only while it is. */
#ifndef FTSHIM_PMPI_STATE_H
#define FTSHIM_PMPI_STATE_H

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
	 * run as point-to-point exchanges (pmpi/coll_p2p.c, Open MPI), for
	 * the collectives of views on spare contexts (pmpi/spare_view.c) and
	 * for shrinking intercommunicators (pmpi/agree.c); MPI_COMM_NULL if it
	 * could not be made; MPI_COMM_WORLD itself on MPICH when no view
	 * needs it (pmpi/spare_view.c makes it). coll_p2p's tags name the
	 * communicator, up to coll_tag_ub. Immutable after init. */
	MPI_Comm private_world;
	int coll_tag_ub;
	/* Open MPI: the request its nonblocking calls hand back for an
	 * operation done at once (&ompi_request_empty), or NULL if this Open
	 * MPI has none (ftp_done_at_once). Immutable after init. */
	MPI_Request done_request;
};

extern struct ftp_state ftp;

/* How many entries have a rank map: while none has, the completion calls
 * look no request up just to translate its status. Written by whoever
 * gives an entry a map or frees one (pmpi/comms.c); read by any thread
 * (pmpi/seam.h). */
extern _Atomic uint32_t ftp_seam_maps;

/* Now by the wall clock (ns since the epoch), for the job report. */
static inline uint64_t ftp_wall_now(void)
{
	return ft_clock_now() + (uint64_t)ftp.wall_offset_ns;
}

static inline bool ftp_active(void)
{
	return atomic_load_explicit(&ftp.phase, memory_order_relaxed) == FTP_PHASE_ON;
}

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
	FTP_APP_REPORT_WRITTEN = 9, /* the reporting rank wrote the report */
	FTP_APP_CKPT = 10,         /* key: the world's repair; value: the checkpoint the sender entered */
};

#endif
