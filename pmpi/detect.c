/* detect.c: the MPI side of failure detection. At MPI_Init it starts the
 * detector thread on the socket pmpi/job.c opened; what the thread learns
 * lands in the process table, in the log, in the listeners of the
 * modules above (pmpi/listen.h: failures, and control-plane messages by
 * kind), and in the callbacks programs registered with
 * ftshim_on_failure. At MPI_Finalize it leaves the overlay once every
 * other rank has departed or failed. */
#include "ftshim_config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ftshim.h"
#include "pmpi/detect.h"
#include "pmpi/mode/mode.h"
#include "pmpi/leave.h"
#include "pmpi/listen.h"
#include "pmpi/mpi_lib.h"
#include "pmpi/outcome.h"
#include "pmpi/ranks.h"
#include "src/clock.h"
#include "src/engine.h"
#include "src/hash.h"
#include "src/log.h"
#include "src/report.h"

#define MAX_CALLBACKS 16

/* Registered by the application thread(s) under callbacks_lock; called on
 * the detector thread, a copy taken under the same lock. One list for
 * failures (ftshim_on_failure), one for re-admissions (ftshim_on_readmit). */
static pthread_mutex_t callbacks_lock = PTHREAD_MUTEX_INITIALIZER;
struct callback_list {
	struct {
		ftshim_failure_fn fn;
		void *arg;
	} v[MAX_CALLBACKS];
	int n;
};
static struct callback_list on_failure_list, on_readmit_list;

static int add_callback(struct callback_list *l, ftshim_failure_fn fn, void *arg)
{
	int rc = -1;

	if (!fn)
		return -1;
	pthread_mutex_lock(&callbacks_lock);
	if (l->n < MAX_CALLBACKS) {
		l->v[l->n].fn = fn;
		l->v[l->n].arg = arg;
		l->n++;
		rc = 0;
	}
	pthread_mutex_unlock(&callbacks_lock);
	return rc;
}

/* Call a copy, outside the lock, so that a callback may register another. */
static void call_callbacks(const struct callback_list *l, uint32_t rank)
{
	struct callback_list now_registered;

	pthread_mutex_lock(&callbacks_lock);
	now_registered = *l;
	pthread_mutex_unlock(&callbacks_lock);
	for (int i = 0; i < now_registered.n; i++)
		now_registered.v[i].fn((int)rank, now_registered.v[i].arg);
}

/* Written by the application thread in MPI_Init / MPI_Finalize only. */
static struct ft_engine *engine;

/* When each rank failed, by the wall clock, as its detector estimated (0:
 * not known to have failed). Written by the detector thread as it learns
 * a failure; read by the application thread in MPI_Finalize, after the
 * detector thread has ended. */
static uint64_t *failed_at;

/* Which ranks have entered MPI_Finalize: set by the detector thread as it
 * learns so, read by any thread (ftp_departed). */
static _Atomic uint8_t *departed;

bool ftp_departed(uint32_t rank)
{
	return departed && rank < ftp.procs.size &&
	       atomic_load_explicit(&departed[rank], memory_order_relaxed);
}

const char *ftp_detection_word(uint32_t how)
{
	if (ft_how_is_crash(how))
		return "crash";
	switch (how) {
	case FT_HOW_HB_TIMEOUT:
		return "heartbeat timeout";
	default:
		return "unknown";
	}
}

uint64_t ftp_failed_at(uint32_t rank)
{
	return failed_at && rank < ftp.procs.size ? failed_at[rank] : 0;
}

/* One line per failure learned, and its event for the report. */
static void report_failure(const struct ft_entry *e, uint32_t told_by)
{
	const char *how = e->how < FT_HOW_COUNT ? ft_fail_how_names[e->how] : "unknown";
	const struct ftp_peer *p = &ftp.peers[e->rank];
	uint64_t now = ftp_wall_now();
	char seen[64], delay[32], since[96] = "";

	if (failed_at)
		failed_at[e->rank] = e->at_ns;
	if (e->detector == (uint32_t)ftp.rank)
		snprintf(seen, sizeof seen, "seen by this rank");
	else if (told_by == e->detector)
		snprintf(seen, sizeof seen, "seen by rank %u", e->detector);
	else
		snprintf(seen, sizeof seen, "seen by rank %u, told by rank %u", e->detector, told_by);
	/* The detector's estimate of the failure: for a heartbeat timeout,
	 * when the rank was last heard. Across hosts, as good as the clocks. */
	/* (A crash this rank saw: it saw it as it happened.) */
	bool saw_crash = e->detector == (uint32_t)ftp.rank && ft_how_is_crash(e->how);
	if (e->at_ns && e->at_ns <= now && !saw_crash) {
		ft_format_duration((double)(now - e->at_ns) / 1e9, delay, sizeof delay);
		snprintf(since, sizeof since, "; known here %s after it %s", delay,
			 e->how == FT_HOW_HB_TIMEOUT ? "was last heard" : "failed");
	}
	/* A process the mode names otherwise (a spare) is named so. */
	struct ftp_mode_rank m;
	char name[48];
	if (ftp_mode_report_rank((int32_t)e->rank, &m) && m.spare >= 0)
		snprintf(name, sizeof name, "spare %d (process %u)", m.spare, e->rank);
	else
		snprintf(name, sizeof name, "rank %u", e->rank);
	ft_info("%s failed: %s, %s; it ran on %s, pid %d%s", name, how, seen, p->host, (int)p->pid,
		since);
	double failed_s = e->at_ns > ftp.job_start_unix_ns ? (double)(e->at_ns - ftp.job_start_unix_ns) / 1e9 : 0.0;
	if (e->detector == (uint32_t)ftp.rank)
		ft_events_add(now, "detection", ",\"failed\":%u,\"how\":\"%s\",\"detected_by\":%u,\"failed_s\":%.6f",
			      e->rank, ftp_detection_word(e->how), e->detector, failed_s);
	else
		ft_events_add(now, "notification",
			      ",\"failed\":%u,\"how\":\"%s\",\"detected_by\":%u,\"told_by\":%u,\"failed_s\":%.6f",
			      e->rank, ftp_detection_word(e->how), e->detector, told_by, failed_s);
}

/* FTSHIM_READMIT: a rank declared failed by heartbeat timeout was heard
 * again, and everyone takes it back; or this very rank is back. */
static void on_readmitted(const struct ft_entry *e, uint32_t told_by)
{
	uint64_t now = ftp_wall_now();

	if (e->rank == (uint32_t)ftp.rank) {
		/* Its table says what the others' say: failed once, back now.
		 * So every communicator it was in stays failed here too, as
		 * there, and it skips MPI_Finalize as they do. */
		ft_proc_mark_failed(&ftp.procs, e->rank, FT_HOW_HB_TIMEOUT, -1, (int32_t)e->detector,
				    ft_clock_now());
		ft_proc_readmit(&ftp.procs, e->rank);
		atomic_fetch_add_explicit(&ftp.events, 1, memory_order_release);
		ft_warn("this rank is back in the job: re-admitted by rank %u (FTSHIM_READMIT=1); "
			"point-to-point works again, but every communicator it was in stays failed "
			"(collectives, agreement and shrink on them return MPI_ERR_PROC_FAILED)",
			e->detector);
		ft_events_add(now, "readmission", ",\"readmitted\":%u,\"readmitted_by\":%u", e->rank, e->detector);
		return;
	}
	if (!ft_proc_readmit(&ftp.procs, e->rank))
		return;
	atomic_fetch_add_explicit(&ftp.events, 1, memory_order_release);
	ft_info("rank %u is back: it was declared failed by heartbeat timeout and then heard again "
		"by rank %u%s, so it is re-admitted (FTSHIM_READMIT=1): point-to-point with it works "
		"again; communicators that had it stay failed",
		e->rank, e->detector, told_by == e->detector ? "" : " (told by another rank)");
	ft_events_add(now, "readmission", ",\"readmitted\":%u,\"readmitted_by\":%u", e->rank, e->detector);
	call_callbacks(&on_readmit_list, e->rank);
}

static void on_learned(void *ctx, const struct ft_entry *e, uint32_t told_by)
{
	(void)ctx;
	if (e->event == FT_EV_DEPARTED) {
		ft_debug("rank %u entered MPI_Finalize", e->rank);
		if (departed && e->rank < ftp.procs.size)
			atomic_store_explicit(&departed[e->rank], 1, memory_order_relaxed);
		return;
	}
	if (e->event == FT_EV_ABORT) {
		if (e->rank == (uint32_t)ftp.rank)
			return;
		/* MPI_Abort ends every process, whatever the launcher does; this
		 * one passes the news on first. */
		ft_error("rank %u ended the job (MPI_Abort, or a fatal error; status %u): this rank exits too",
			 e->rank, e->how);
		ft_engine_exit_soon(engine, e->how & 0xff ? e->how & 0xff : 1);
		return;
	}
	if (e->event == FT_EV_READMITTED) {
		on_readmitted(e, told_by);
		return;
	}
	if (e->event == FT_EV_JOINED) {
		/* A spawned process: its parents added it already
		 * (pmpi/spawn.c); any other process learns it here. */
		ftp_nprocs_raise(e->rank + 1);
		ft_debug("rank %u joined the job (spawned)", e->rank);
		return;
	}
	bool changed = e->event == FT_EV_FAILED_AGAIN
			       ? ft_proc_mark_failed_again(&ftp.procs, e->rank)
			       : ft_proc_mark_failed(&ftp.procs, e->rank, (enum ft_fail_how)e->how,
						     (int32_t)e->detector, (int32_t)told_by, ft_clock_now());
	if (!changed)
		return;
	/* release: a wrapper that sees the new value sees the table entry. */
	atomic_fetch_add_explicit(&ftp.events, 1, memory_order_release);
	ftp_listen_failure(e->rank);
	report_failure(e, told_by);
	call_callbacks(&on_failure_list, e->rank);
}

static void on_app(void *ctx, const struct ft_msg *m)
{
	(void)ctx;
	ftp_listen_msg(m);
}

static void on_bell(void *ctx)
{
	(void)ctx;
	ftp_listen_bell();
}

/* Fail-stop: the others have declared this process failed and carry on
 * without it; it must not come back. */
static void on_excluded(void *ctx, uint32_t by, uint32_t how)
{
	(void)ctx;
	ft_error("this rank was declared failed by the others (rank %u, %s) while it was "
		 "unreachable or stopped; the job goes on without it, and it exits now (status %d)",
		 by, how < FT_HOW_COUNT ? ft_fail_how_names[how] : "unknown", FT_EXIT_EXCLUDED);
	ftp_leave(FT_EXIT_EXCLUDED);
}

/* FTSHIM_READMIT: the others declared this rank failed while it was
 * stopped or unreachable; it goes on, and its next heartbeat makes them
 * take it back. */
static void on_declared_self(void *ctx, uint32_t by, uint32_t how)
{
	(void)ctx;
	ft_warn("this rank was declared failed by the others (rank %u, %s) while it was "
		"unreachable or stopped; FTSHIM_READMIT=1: it goes on and waits to be re-admitted",
		by, how < FT_HOW_COUNT ? ft_fail_how_names[how] : "unknown");
}

/* Fail-stop on the losing side of a partition: the ranks this one can
 * reach are no majority, so the others (if they are alive) go on. */
static void on_lost_quorum(void *ctx, uint32_t reached, uint32_t members, uint32_t lowest)
{
	(void)ctx;
	if ((uint64_t)2 * reached == members)
		ft_error("network partition: this rank reaches %u of the %u ranks still in the job, "
			 "exactly half, and the other half holds rank %u, the lowest, which wins a tie; "
			 "the job goes on there without this side, and this rank exits now (status %d)",
			 reached, members, lowest, FT_EXIT_PARTITIONED);
	else
		ft_error("network partition: this rank reaches only %u of the %u ranks still in the "
			 "job, no majority; the job goes on without this side if the rest reach each "
			 "other, and this rank exits now (status %d)",
			 reached, members, FT_EXIT_PARTITIONED);
	ftp_leave(FT_EXIT_PARTITIONED);
}

/* Ending with the job (another rank's MPI_Abort or fatal error): see
 * ftp_end_with_job. */
static void on_leave(void *ctx, int status)
{
	(void)ctx;
	ftp_end_with_job(status);
}

/* Start the detector thread on the listening socket that ftp_job_start
 * opened (and published). Every rank of this world takes the same
 * decision: detection is off for it if any of its ranks has no socket.
 * (An endpoint a spawned process did not get from its parents comes with
 * that rank's JOINED news.) */
int ftp_detect_start(int listen_fd, int bell_fd, const struct ft_entry *known, uint32_t nknown)
{
	uint32_t n = ftp.procs.size, njoined = atomic_load(&ftp.nprocs);
	char where[64];
	int rc;

	for (int w = 0; w < ftp.world_size; w++) {
		uint32_t r = (uint32_t)ftp_job_of_world(w);
		if (ftp.peers[r].ep.port == 0) {
			if (ftp.rank == ftp_job_of_world(0))
				ft_error("rank %u has no control-plane socket: failure detection is off for this job", r);
			if (listen_fd >= 0)
				close(listen_fd);
			return -1;
		}
	}
	failed_at = calloc(n, sizeof *failed_at);
	departed = calloc(n, sizeof *departed);
	struct ft_endpoint *eps = calloc(n, sizeof *eps);
	if (!eps || !failed_at || !departed) {
		close(listen_fd);
		return -ENOMEM;
	}
	struct ft_local_proc *local = calloc(n, sizeof *local);
	for (uint32_t r = 0; r < njoined; r++) {
		eps[r] = ftp.peers[r].ep;
		if (local && ftp_same_host(r, (uint32_t)ftp.rank))
			local[r] = (struct ft_local_proc){ ftp.peers[r].pid, ftp.peers[r].start_ticks };
	}
	struct ft_engine_config cfg = {
		.det = {
			.nprocs = n,
			.njoined = njoined,
			.known = known,
			.nknown = nknown,
			.self = (uint32_t)ftp.rank,
			.period_ns = ftp.cfg.hb_period,
			.timeout_ns = ftp.cfg.hb_timeout,
			.grace_ns = ftp.cfg.hb_grace,
			.bcast = (enum ft_bcast_kind)ftp.cfg.bcast,
			.shuffle = ftp.cfg.ring_shuffle,
			.quorum = ftp.cfg.partition == FT_PARTITION_MAJORITY,
			.readmit = ftp.cfg.readmit,
		},
		.endpoints = eps,
		.listen_fd = listen_fd,
		.local_procs = local,
		.bell_fd = bell_fd,
	};
	memcpy(cfg.secret, ftp.secret, FT_SECRET_LEN);
	uint64_t seed = 0;
	for (int i = 0; i < FT_SECRET_LEN; i++)
		seed = ft_mix64(seed ^ cfg.secret[i]);
	cfg.det.seed = seed;
	cfg.det.wall_offset_ns = ftp.wall_offset_ns;
	struct ft_engine_hooks hooks = { .learned = on_learned, .excluded = on_excluded,
					 .lost_quorum = on_lost_quorum, .declared_self = on_declared_self,
					 .app = on_app, .bell = on_bell, .leave = on_leave };
	ft_overlay_format(&eps[ftp.rank], where, sizeof where);
	rc = ft_engine_start(&engine, &cfg, &hooks);
	free(eps);
	free(local);
	if (rc != 0)
		ft_error("cannot start the detector thread: %s", strerror(-rc));
	else
		ft_debug("detector on: control plane at %s", where);
	return rc;
}

/* While this process waits for the others to leave: the MPI's progress,
 * and the job report's files from host to host (true while they keep it
 * on the control plane). A peer may still wait for a message of this one
 * that the MPI delivers only as the sender progresses (UCX, and any
 * transport whose queue was full), or for a lock on this one's window
 * (MPICH), and MPI_Finalize, which would serve both, is skipped after a
 * failure. */
static bool leave_step(void *arg)
{
	(void)arg;
	ftp_mpi_progress();
	return ftp_listen_leave_step(ft_engine_everyone_left(engine));
}

bool ftp_detect_on(void)
{
	return engine != NULL;
}

void ftp_detect_finish(void)
{
	if (!engine)
		return;
	/* MPI_Finalize waits for every rank anyway; so does this. */
	int rc = ft_engine_finish(engine, UINT64_MAX / 4, leave_step, NULL);
	engine = NULL;
	if (rc != 0)
		ft_warn("left the control plane before every rank had finished");
}

void ftp_detect_abort(int status)
{
	ftp_outcome_ended(status & 0xff ? status & 0xff : 1);
	if (!engine)
		return;
	ft_engine_abort(engine, status, 500 * FT_NSEC_PER_MSEC);
	/* Not PMPI_Abort: under Hydra with -disable-auto-cleanup it can wait
	 * for ever in the launcher; the others are on their way out already. */
	ftp_end_with_job(status & 0xff ? status & 0xff : 1);
}

void ftp_detect_join(uint32_t rank, const struct ft_endpoint *ep)
{
	if (engine)
		ft_engine_join(engine, rank, ep);
}

void ftp_detect_post(uint32_t to, const struct ft_msg *m)
{
	if (engine)
		ft_engine_post(engine, to, m);
}

/* --- the public API ---------------------------------------------------- */

FT_EXPORT int ftshim_rank_state(int world_rank)
{
	if (!ftp_active() || world_rank < 0 || (uint32_t)world_rank >= atomic_load(&ftp.nprocs))
		return -1;
	return ft_proc_is_failed(&ftp.procs, (uint32_t)world_rank) ? FTSHIM_FAILED : FTSHIM_ALIVE;
}

FT_EXPORT int ftshim_failed_ranks(int *ranks, int max)
{
	if (!ftp_active() || max < 0)
		return -1;
	return (int)ft_proc_failed_list(&ftp.procs, ranks, (uint32_t)max);
}

FT_EXPORT int ftshim_on_failure(ftshim_failure_fn fn, void *arg)
{
	return add_callback(&on_failure_list, fn, arg);
}

FT_EXPORT int ftshim_on_readmit(ftshim_failure_fn fn, void *arg)
{
	return add_callback(&on_readmit_list, fn, arg);
}
