/* hangwatch.c: the last resort for the one wait ftshim cannot interrupt.
 * MPI has no nonblocking form of communicator creation other than dup
 * (split, create, create_group, and the creation inside MPIX_Comm_shrink);
 * ftshim fences before them, but a member that dies while the others are
 * inside the MPI's own creation leaves them waiting there for ever, where
 * no wrapper runs. So while an application thread is inside such a call,
 * its members are watched: if one of them fails and the call has still
 * not returned after a grace period, this process says so in one line and
 * exits (fail-stop, status FT_EXIT_STUCK), instead of hanging until the
 * allocation ends. The others learn of its exit as of any crash. The same
 * timer bounds the MPI library's MPI_Finalize, which waits for every rank
 * and so for ever for one that died as the job ended, unseen; a rank
 * stuck there has done its work, so it ends with status 0.
 *
 * Sharing: the application thread sets and clears the watch; the detector
 * thread (the listener's on_failure) reads it and starts the timer thread,
 * which reads it again when the grace period ends; all under lock. One
 * watch at a time: a second thread creating concurrently is not watched.
 *
 * The one-peer watch of the per-call one-sided waits (MPI_Win_flush,
 * lock, unlock: one call per put, in loops) takes no lock while nothing
 * fails: the application thread publishes the call and its peer in the
 * atomic peer_slot and takes it back with one compare-and-swap. The
 * detector, on a failure of that peer, converts it under lock into the
 * full watch above (swapping in PEER_CONVERTED) and arms the timer; the
 * application thread that finds its slot converted ends the full watch
 * under lock. Whichever of the two sees the other's write second does
 * the work: the application thread checks the peer after publishing, the
 * detector the slot after recording the failure (both sequentially
 * consistent). One such call at a time too: another thread's finds the
 * slot taken and is not watched. */
#include "ftshim_config.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pmpi/hangwatch.h"
#include "pmpi/leave.h"
#include "pmpi/rundir.h"
#include "src/log.h"

static const char *const fn_names[] = FTP_FN_NAMES;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	bool active;
	bool armed;        /* a timer runs for this watch */
	uint64_t seq;      /* which watch (so a late timer leaves a newer one be) */
	enum ftp_fn fn;
	int32_t *members;  /* job ranks */
	uint32_t n, cap;
	int32_t failed;    /* the member whose failure armed the timer; -1: a deadline */
	uint64_t grace;    /* how long the armed timer waits */
	pthread_t owner;   /* the application thread inside the call */
	/* A deadline's file of deaths by signal on this host (the run
	 * directory's, appended to by supervisors), and its size at the
	 * caller's mark; "": none. */
	char deaths[PATH_MAX];
	off_t deaths_base;
} watch;

/* The grace period: a creation that was not held up by the death returns
 * in far less; at least a second, and at least two heartbeat timeouts. */
static uint64_t grace_ns(void)
{
	uint64_t g = 2 * ftp.cfg.hb_timeout;

	return g < FT_NSEC_PER_SEC ? FT_NSEC_PER_SEC : g;
}

/* The size of path, 0 if it does not exist. */
static off_t file_size(const char *path)
{
	struct stat st;

	return path[0] && stat(path, &st) == 0 ? st.st_size : 0;
}

/* Whether watch seq is still the current, active one. */
static bool still_watched(uint64_t seq)
{
	pthread_mutex_lock(&lock);
	bool on = watch.active && watch.seq == seq;
	pthread_mutex_unlock(&lock);
	return on;
}

/* How long after a death on this host a deadline's call, still not
 * returned, is taken as held by it. */
#define DEATH_GRACE_NS FT_NSEC_PER_SEC

static void *timer_main(void *arg)
{
	uint64_t seq = (uint64_t)(uintptr_t)arg;
	char deaths[PATH_MAX];
	pthread_mutex_lock(&lock);
	uint64_t g = watch.grace;
	off_t base = watch.deaths_base;
	memcpy(deaths, watch.deaths, sizeof deaths);
	pthread_mutex_unlock(&lock);

	/* The whole grace period, in steps: a deadline with a file of deaths
	 * ends sooner once a death is recorded there. */
	uint64_t slept = 0, died_at = 0;
	bool died = false;
	while (slept < g) {
		uint64_t step = g - slept < 100 * FT_NSEC_PER_MSEC ? g - slept : 100 * FT_NSEC_PER_MSEC;
		struct timespec ts = { (time_t)(step / FT_NSEC_PER_SEC), (long)(step % FT_NSEC_PER_SEC) };
		while (nanosleep(&ts, &ts) != 0)
			;
		slept += step;
		if (!still_watched(seq))
			break;
		if (!died && deaths[0] && file_size(deaths) > base) {
			died = true;
			died_at = slept;
		}
		if (died && slept - died_at >= DEATH_GRACE_NS)
			break;
	}
	pthread_mutex_lock(&lock);
	bool stuck = watch.active && watch.seq == seq;
	if (!stuck) {
		if (watch.seq == seq)
			watch.armed = false;
		pthread_mutex_unlock(&lock);
		return NULL;
	}
	const char *fn = watch.fn < FTP_FN_COUNT ? fn_names[watch.fn] : "communicator creation";
	if (watch.failed >= 0)
		ft_error("stuck in the MPI library's %s for %.1f s after rank %d, a member, failed: MPI "
			 "cannot be interrupted there, so this rank leaves (fail-stop, exit status %d) rather "
			 "than hang; see BUGS in MPIX_Comm_shrink(3)",
			 fn, (double)g / 1e9, watch.failed, FT_EXIT_STUCK);
	else if (watch.fn == FTP_FN_MPI_Comm_spawn || watch.fn == FTP_FN_MPI_Comm_spawn_multiple)
		ft_error("stuck in the MPI library's %s for %.1f s: the processes it starts never finished "
			 "their MPI_Init (they give up after %.1f s), so this rank exits (status %d) rather "
			 "than hang",
			 fn, (double)g / 1e9, (double)ftp_spawn_handshake_ns() / 1e9, FT_EXIT_STUCK);
	/* MPI_Init's watches: ftshim's start (the world is known by then), or
	 * a spawned process waiting in the MPI's start (it is not yet). */
	else if ((watch.fn == FTP_FN_MPI_Init || watch.fn == FTP_FN_MPI_Init_thread) && ftp.world_size > 0)
		ft_error("stuck in ftshim's start in %s for %.1f s: a rank must have died while the job was "
			 "starting, before ftshim could watch it, so this rank exits (status %d) rather than hang",
			 fn, (double)g / 1e9, FT_EXIT_STUCK);
	else if (watch.fn == FTP_FN_MPI_Init || watch.fn == FTP_FN_MPI_Init_thread)
		ft_error("this spawned process is stuck in the MPI library's %s for %.1f s: its parents must "
			 "have failed while they spawned it, so it exits (status %d) rather than hang",
			 fn, (double)g / 1e9, FT_EXIT_STUCK);
	else if (watch.fn == FTP_FN_MPI_Finalize) {
		/* The program is done here: its output is what counts. */
		if (died)
			ft_warn("stuck in the MPI library's %s: a rank of this host died after every rank had "
				"left ftshim's watch (its supervisor recorded the death); this rank's work is "
				"done, so it ends with status 0 rather than hang", fn);
		else
			ft_warn("stuck in the MPI library's %s for %.1f s: a rank must have left without it "
				"(one that died as the job ended); this rank's work is done, so it ends with "
				"status 0 rather than hang", fn, (double)g / 1e9);
		fflush(NULL);
		ftp_leave(0);
	} else
		ft_error("stuck in the MPI library's %s for %.1f s: a rank must have left without it (one "
			 "that died as the job ended), so this rank exits (status %d) rather than hang",
			 fn, (double)g / 1e9, FT_EXIT_STUCK);
	ftp_leave(FT_EXIT_STUCK);
}

/* Under lock: start the timer for the current watch: once, except that a
 * member's failure starts its shorter one beside a running deadline. */
static void arm(int32_t failed)
{
	pthread_t t;
	pthread_attr_t attr;

	if (watch.armed && !(failed >= 0 && watch.failed < 0))
		return;
	watch.armed = true;
	watch.failed = failed;
	if (failed >= 0)
		watch.grace = grace_ns();
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, timer_main, (void *)(uintptr_t)watch.seq) != 0)
		watch.armed = false;
	pthread_attr_destroy(&attr);
}

/* Under lock: make the current watch this call's, on these members. */
static bool watch_set(enum ftp_fn fn, const int32_t *members, uint32_t n, pthread_t owner)
{
	if (watch.active)
		return false;
	/* The array only grows: a call that watches one rank at every
	 * RMA flush must not pay for an allocation each time. */
	int32_t *copy = watch.members;
	if (n > watch.cap || !copy) {
		copy = realloc(watch.members, (n ? n : 1) * sizeof *copy);
		if (copy) {
			watch.members = copy;
			watch.cap = n ? n : 1;
		}
	}
	if (copy) {
		memcpy(copy, members, n * sizeof *copy);
		watch.n = n;
		watch.fn = fn;
		watch.seq++;
		watch.active = true;
		watch.owner = owner;
		watch.armed = false;
		/* A member may have died since the fence, before this watch. */
		for (uint32_t i = 0; i < n; i++)
			if (members[i] >= 0 && ft_proc_is_failed(&ftp.procs, (uint32_t)members[i])) {
				arm(members[i]);
				break;
			}
	}
	return copy != NULL;
}

_Thread_local struct ftp_mpi_wait ftp_mpi_wait __attribute__((tls_model("initial-exec")));

/* This thread enters or leaves a blocking call of the MPI's own. */
static void mpi_wait_enter(void)
{
	ftp_mpi_wait.inside = true;
	ftp_mpi_wait.empty_polls = 0;
}

void ftp_hang_watch_begin(enum ftp_fn fn, const int32_t *members, uint32_t n)
{
	mpi_wait_enter();
	pthread_mutex_lock(&lock);
	watch_set(fn, members, n, pthread_self());
	pthread_mutex_unlock(&lock);
}

/* The one-peer watch: 0 free, PEER_CONVERTED handed to the full watch,
 * else a call's token: its function above bit 32, its peer below. Once
 * converted, peer_seq (under lock) is the full watch's seq, 0 if another
 * call held the full watch. */
#define PEER_CONVERTED UINT64_MAX
static _Atomic uint64_t peer_slot;
static uint64_t peer_seq;

static uint64_t peer_token(enum ftp_fn fn, int32_t peer)
{
	return ((uint64_t)fn + 1) << 32 | (uint32_t)peer;
}

/* Under lock: if the slot still holds token, which names a failed peer,
 * move it to the full watch, which arms itself on that peer. */
static void peer_convert(uint64_t token)
{
	int32_t peer = (int32_t)(uint32_t)token;
	enum ftp_fn fn = (enum ftp_fn)((token >> 32) - 1);

	if (!atomic_compare_exchange_strong(&peer_slot, &token, PEER_CONVERTED))
		return;
	/* Owned by the converting thread; the slot's end goes by peer_seq.
	 * If another call holds the full watch, this one goes unwatched, as
	 * any second concurrent call does, and its end frees the slot. */
	peer_seq = watch_set(fn, &peer, 1, pthread_self()) ? watch.seq : 0;
}

uint64_t ftp_hang_watch_peer_begin(enum ftp_fn fn, int32_t peer)
{
	uint64_t token = peer_token(fn, peer), free_slot = 0;

	mpi_wait_enter();
	if (atomic_load_explicit(&peer_slot, memory_order_relaxed) != 0)
		return 0;
	if (!atomic_compare_exchange_strong(&peer_slot, &free_slot, token))
		return 0;
	/* The swap above and this load are sequentially consistent, and
	 * on_failure reads the slot after a fence that
	 * follows the failure's record: one of the two sees the other's
	 * write. */
	if (ft_proc_is_failed_sc(&ftp.procs, (uint32_t)peer)) {
		pthread_mutex_lock(&lock);
		peer_convert(token);
		pthread_mutex_unlock(&lock);
	}
	return token;
}

void ftp_hang_watch_peer_end(uint64_t token)
{
	ftp_mpi_wait.inside = false;
	if (token == 0)
		return;
	uint64_t expect = token;
	if (atomic_compare_exchange_strong(&peer_slot, &expect, 0))
		return;
	/* Converted: the full watch is this call's, if another did not
	 * hold it. */
	if (expect == PEER_CONVERTED) {
		pthread_mutex_lock(&lock);
		if (watch.active && peer_seq != 0 && watch.seq == peer_seq)
			watch.active = false;
		atomic_store(&peer_slot, 0);
		pthread_mutex_unlock(&lock);
	}
}

uint64_t ftp_hang_watch_long(void)
{
	uint64_t t = 10 * ftp.cfg.hb_timeout;

	return t < 5 * FT_NSEC_PER_SEC ? 5 * FT_NSEC_PER_SEC : t;
}

uint64_t ftp_spawn_handshake_ns(void)
{
	uint64_t t = 10 * ftp.cfg.hb_timeout;

	return t < 10 * FT_NSEC_PER_SEC ? 10 * FT_NSEC_PER_SEC : t;
}

void ftp_deaths_mark(struct ftp_deaths_mark *m)
{
	if (ftp_rundir_path("deaths", m->path, sizeof m->path) != 0)
		m->path[0] = '\0';
	m->size = file_size(m->path);
}

void ftp_hang_watch_deadline(enum ftp_fn fn, uint64_t ns, const struct ftp_deaths_mark *deaths)
{
	mpi_wait_enter();
	pthread_mutex_lock(&lock);
	if (!watch.active) {
		watch.n = 0;
		watch.fn = fn;
		watch.seq++;
		watch.active = true;
		watch.owner = pthread_self();
		watch.armed = false;
		watch.grace = ns;
		snprintf(watch.deaths, sizeof watch.deaths, "%s", deaths ? deaths->path : "");
		watch.deaths_base = deaths ? deaths->size : 0;
		arm(-1);
	}
	pthread_mutex_unlock(&lock);
}

void ftp_hang_watch_limit(uint64_t ns)
{
	pthread_mutex_lock(&lock);
	if (watch.active && pthread_equal(watch.owner, pthread_self()) && !watch.armed) {
		watch.grace = ns;
		arm(-1);
	}
	pthread_mutex_unlock(&lock);
}

void ftp_hang_watch_end(void)
{
	ftp_mpi_wait.inside = false;
	pthread_mutex_lock(&lock);
	if (watch.active && pthread_equal(watch.owner, pthread_self()))
		watch.active = false;
	pthread_mutex_unlock(&lock);
}

static void on_failure(uint32_t rank)
{
	pthread_mutex_lock(&lock);
	atomic_thread_fence(memory_order_seq_cst);
	uint64_t token = atomic_load(&peer_slot);
	if (token != 0 && token != PEER_CONVERTED && (uint32_t)token == rank)
		peer_convert(token);
	if (watch.active)
		for (uint32_t i = 0; i < watch.n; i++)
			if (watch.members[i] == (int32_t)rank) {
				arm((int32_t)rank);
				break;
			}
	pthread_mutex_unlock(&lock);
}

const struct ftp_listener ftp_hang_watch_listener = {.on_failure = on_failure};
