/* shm_repair.c: a survivor whose on-host receive queue a dead sender froze
 * fills the sender's slot and goes on. UCX's shared-memory transports
 * (MPICH's ch4:ucx; Open MPI's pml ucx) give each process one receive
 * queue that every sender of its host reserves slots in and then fills; a
 * sender killed between the two leaves a slot that stops the queue for
 * good (src/shm_fifo.h). Once a process of this host has failed, the
 * waiting loops of this one (their slow path: ftp_poll_pause, MPICH's own
 * waits in pmpi/ucx_yield.c, ftshim's own waits through ftp_mpi_progress)
 * call ftp_shm_repair_scan, which at most every SCAN_NS looks at this
 * process's queues, found once in /proc/self/maps (shared mappings whose
 * control block names this pid), and fills a slot that has stayed
 * unwritten for GRACE_NS, once every failed process of this host has
 * ended and no live one is stopped (a stopped process may hold a slot it
 * will still fill). UCX warns of the filled slot as it drops it (with a
 * backtrace, on the program's standard output), so UCX's log level is
 * held at "error" for QUIET_NS after a fill, through UCX's own
 * ucs_global_opts_set_value. Possible only under UCX 1.13, whose layout
 * src/shm_fifo.c knows, with the queues at their default size; elsewhere
 * ftshim leaves the queues alone.
 *
 * Threads: the listener (detector or application thread) sets the armed
 * flag; scans run on application threads, one at a time (a try-lock:
 * another thread's scan is as good), and own everything below the lock. */
#include "ftshim_config.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "pmpi/shm_repair.h"
#include "pmpi/ranks.h"
#include "pmpi/state.h"
#include "src/clock.h"
#include "src/events.h"
#include "src/log.h"
#include "src/prune.h"
#include "src/shm_fifo.h"

/* How often a waiting process looks, and how long a slot must stay
 * unwritten: a live sender fills its slot a few instructions after it
 * reserves it, so only a sender that lost its CPU for that long is
 * mistaken for a dead one (see docs/DESIGN.md). */
#define SCAN_NS (50 * UINT64_C(1000000))
#define GRACE_NS (1000 * UINT64_C(1000000))
#define QUIET_NS (200 * UINT64_C(1000000))
#define MAX_QUEUES 8

_Atomic bool ftp_shm_repair_armed;
static bool possible;                /* set once at MPI_Init */

static pthread_mutex_t scan_lock = PTHREAD_MUTEX_INITIALIZER;
static struct queue {
	uint8_t *fifo;
	struct ft_fifo_stall stall;
} queues[MAX_QUEUES];
static int nqueues = -1; /* -1: not looked for since the last arming */
static uint64_t next_scan_ns;

/* UCX's own access to its options (libucs; ucs_status_t is one byte). */
typedef signed char (*ucs_get_fn)(const char *name, char *value, size_t max);
typedef signed char (*ucs_set_fn)(const char *name, const char *value);
static ucs_get_fn ucs_get; /* set once at MPI_Init */
static ucs_set_fn ucs_set;
static char saved_level[32]; /* UCX's log level before a fill held it */
static uint64_t quiet_until; /* 0: not held */

static bool on_this_host(uint32_t r)
{
	return ftp.peers[r].pid > 0 && ftp_same_host(r, (uint32_t)ftp.rank);
}

static void on_failure(uint32_t rank)
{
	if (!possible || rank >= atomic_load_explicit(&ftp.nprocs, memory_order_acquire) || !on_this_host(rank))
		return;
	pthread_mutex_lock(&scan_lock);
	nqueues = -1; /* look again: a queue made since the last look */
	pthread_mutex_unlock(&scan_lock);
	atomic_store_explicit(&ftp_shm_repair_armed, true, memory_order_relaxed);
}

const struct ftp_listener ftp_shm_repair_listener = {
	.on_failure = on_failure,
};

/* A variable that changes the queue's layout from the one known. */
static const char *layout_changed(void)
{
	static const char *const names[] = {
		"UCX_MM_FIFO_SIZE",   "UCX_POSIX_FIFO_SIZE",   "UCX_SYSV_FIFO_SIZE",
		"UCX_MM_FIFO_ELEM_SIZE", "UCX_POSIX_FIFO_ELEM_SIZE", "UCX_SYSV_FIFO_ELEM_SIZE",
	};

	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (getenv(names[i]))
			return names[i];
	return NULL;
}

void ftp_shm_repair_init(void)
{
	typedef void (*version_fn)(unsigned *, unsigned *, unsigned *);
	void *lib = dlopen("libucp.so.0", RTLD_LAZY | RTLD_NOLOAD);
	version_fn version = lib ? (version_fn)dlsym(lib, "ucp_get_version") : NULL;
	unsigned major = 0, minor = 0, release = 0;

	if (!version) {
		if (lib)
			dlclose(lib);
		return; /* no UCX in this process: nothing of this kind to repair */
	}
	version(&major, &minor, &release);
	dlclose(lib);
	const char *changed = layout_changed();
	if (major != 1 || minor != 13)
		ft_debug("UCX %u.%u.%u: a dead sender's slot in the on-host queue will not be repaired (the layout is known "
			 "for UCX 1.13 only)", major, minor, release);
	else if (changed)
		ft_debug("%s is set: a dead sender's slot in the on-host queue will not be repaired (the layout is known "
			 "for the default size only)", changed);
	else
		possible = true;
	void *ucs = possible ? dlopen("libucs.so.0", RTLD_LAZY | RTLD_NOLOAD) : NULL;
	if (ucs) {
		ucs_get = (ucs_get_fn)dlsym(ucs, "ucs_global_opts_get_value");
		ucs_set = (ucs_set_fn)dlsym(ucs, "ucs_global_opts_set_value");
		dlclose(ucs); /* still loaded: libucp needs it */
	}
}

/* Hold UCX's warnings back while the queue takes the filled slot, unless
 * it is quieter already. */
static void hold_ucx_warnings(uint64_t now)
{
	if (!ucs_get || !ucs_set)
		return;
	if (!quiet_until) {
		if (ucs_get("LOG_LEVEL", saved_level, sizeof saved_level) != 0 ||
		    strcasecmp(saved_level, "fatal") == 0 || strcasecmp(saved_level, "error") == 0 ||
		    ucs_set("LOG_LEVEL", "error") != 0)
			return;
	}
	quiet_until = now + QUIET_NS;
}

static void release_ucx_warnings(uint64_t now)
{
	if (quiet_until && now >= quiet_until) {
		ucs_set("LOG_LEVEL", saved_level);
		quiet_until = 0;
	}
}

/* This process's queues: shared, writable mappings large enough whose
 * control block names this pid. Read through /proc/self/mem, which
 * fails where a plain load would fault (a file shorter than its
 * mapping). */
static void find_queues(void)
{
	const struct ft_fifo_layout *l = &ft_fifo_ucx_default;
	FILE *maps = fopen("/proc/self/maps", "re");
	int mem = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	char line[512];
	int32_t self = getpid();

	nqueues = 0;
	while (maps && mem >= 0 && fgets(line, sizeof line, maps) && nqueues < MAX_QUEUES) {
		unsigned long lo, hi;
		char perms[5];
		uint8_t ctl[FT_FIFO_CTL_BYTES];
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3 || strcmp(perms, "rw-s") != 0 ||
		    hi - lo < ft_fifo_bytes(l))
			continue;
		if (pread(mem, ctl, sizeof ctl, (off_t)lo) == (ssize_t)sizeof ctl && ft_fifo_owned_by(ctl, self, l))
			queues[nqueues++] = (struct queue){ .fifo = (uint8_t *)lo, .stall = FT_FIFO_STALL_INIT };
	}
	if (maps)
		fclose(maps);
	if (mem >= 0)
		close(mem);
	ft_debug("after a death on this host: %d on-host receive queue(s) of UCX's to watch", nqueues);
}

/* Every failed process of this host has ended, and no live one is
 * stopped. */
static bool host_settled(void)
{
	uint32_t n = atomic_load_explicit(&ftp.nprocs, memory_order_acquire);

	for (uint32_t r = 0; r < n; r++) {
		if (r == (uint32_t)ftp.rank || !on_this_host(r))
			continue;
		char state = ft_process_state(ftp.peers[r].pid, ftp.peers[r].start_ticks);
		bool failed = ft_proc_is_failed(&ftp.procs, r);
		if (failed && state && state != 'Z' && state != 'X')
			return false;
		if (!failed && (state == 'T' || state == 't'))
			return false;
	}
	return true;
}

/* Fill q's slot index; returns for how long it was unwritten. */
static double fill(struct queue *q, uint64_t index, uint64_t now)
{
	double stalled_s = (double)(now - q->stall.since_ns) / 1e9;

	hold_ucx_warnings(now);
	ft_fifo_fill(q->fifo, &ft_fifo_ucx_default, index);
	q->stall = (struct ft_fifo_stall)FT_FIFO_STALL_INIT;
	ft_events_add(ftp_wall_now(), "queue_repair", ",\"slot\":%" PRIu64 ",\"stalled_ms\":%.0f", index,
		      stalled_s * 1e3);
	return stalled_s;
}

void ftp_shm_repair_scan(void)
{
	if (pthread_mutex_trylock(&scan_lock) != 0)
		return;
	uint64_t now = ft_clock_now();
	if (now >= next_scan_ns) {
		next_scan_ns = now + SCAN_NS;
		release_ucx_warnings(now);
		if (nqueues < 0)
			find_queues();
		if (nqueues == 0)
			atomic_store_explicit(&ftp_shm_repair_armed, false, memory_order_relaxed);
		bool settled = false, asked = false;
		int filled = 0;
		double stalled_s = 0;
		for (int i = 0; i < nqueues; i++) {
			struct queue *q = &queues[i];
			uint64_t index = ft_fifo_unwritten(q->fifo, &ft_fifo_ucx_default);
			if (!ft_fifo_stalled(&q->stall, index, now, GRACE_NS))
				continue;
			if (!asked) {
				settled = host_settled();
				asked = true;
			}
			if (settled) {
				stalled_s = fill(q, index, now);
				filled++;
			}
		}
		if (filled)
			ft_warn("a process of this host died in the middle of a send to this one, leaving %d of its "
				"on-host receive queues stopped at a slot it never wrote, for %.1f s; ftshim filled the "
				"slot with a message that UCX drops (active message id %u)", filled, stalled_s,
				FT_FIFO_DROP_ID);
	}
	pthread_mutex_unlock(&scan_lock);
}
