/* ucx_yield.c: MPICH's own blocking waits yield the CPU on a crowded host.
 * The calls ftshim cannot make nonblocking (those of the hang watch:
 * communicator creation, the creation inside MPIX_Comm_shrink, one-sided
 * synchronisation, MPI_Finalize) wait in the MPI's own loop. MPICH 4.0's
 * ch4 loop makes no system call and never yields: on a host running more
 * ranks than it has cores, a rank spinning there keeps its core until the
 * scheduler's tick, and every step of a creation pays for one. MPICH's
 * ch4:ucx device polls through UCX's ucp_worker_progress, called through
 * libmpich's procedure linkage table, so this library, preloaded, defines
 * it: while the calling thread is inside such a call (ftp_mpi_wait, set
 * by pmpi/hangwatch.c), each empty poll after ftp.spin_polls of them
 * yields, as ftshim's own waits do (ftp_poll_pause); everywhere else the
 * call goes straight on to UCX's. Built for MPICH only: Open MPI yields by
 * itself when its launcher finds the host oversubscribed
 * (mpi_yield_when_idle), and an MPICH over another device never calls
 * this. */
#include "ftshim_config.h"

#include <dlfcn.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "pmpi/ucx_yield.h"
#include "pmpi/hangwatch.h"
#include "pmpi/shm_repair.h"

/* How many times this process yielded there (any thread; only counted
 * beside a system call). */
static _Atomic uint64_t yields;

uint64_t ftp_ucx_yields(void)
{
	return atomic_load_explicit(&yields, memory_order_relaxed);
}

#ifdef MPICH_VERSION

typedef unsigned (*ucx_progress_fn)(void *worker);

static _Atomic(ucx_progress_fn) ucx_progress;

/* UCX's own function: the next definition after this library's, or, if
 * libucp was loaded privately (RTLD_LOCAL, under a plugin), its own.
 * Only a caller linked with libucp gets here, so one exists. */
static ucx_progress_fn resolve(void)
{
	void *fn = dlsym(RTLD_NEXT, "ucp_worker_progress");

	if (!fn) {
		void *ucp = dlopen("libucp.so.0", RTLD_LAZY | RTLD_NOLOAD);
		if (ucp)
			fn = dlsym(ucp, "ucp_worker_progress");
	}
	if (!fn) {
		fprintf(stderr, "ftshim: error: ucp_worker_progress was called but UCX's own could not be found "
				"(dlsym: %s); is libucp.so.0 loaded?\n", dlerror());
		abort();
	}
	ucx_progress_fn real = (ucx_progress_fn)fn;
	atomic_store_explicit(&ucx_progress, real, memory_order_relaxed);
	return real;
}

__attribute__((visibility("default"))) unsigned ucp_worker_progress(void *worker);
unsigned ucp_worker_progress(void *worker)
{
	ucx_progress_fn real = atomic_load_explicit(&ucx_progress, memory_order_relaxed);

	if (!real)
		real = resolve();
	unsigned progressed = real(worker);
	if (ftp_mpi_wait.inside) {
		if (progressed)
			ftp_mpi_wait.empty_polls = 0;
		else if (++ftp_mpi_wait.empty_polls > ftp.spin_polls) {
			atomic_fetch_add_explicit(&yields, 1, memory_order_relaxed);
			ftp_shm_repair_poll();
			sched_yield();
		}
	}
	return progressed;
}

#endif
