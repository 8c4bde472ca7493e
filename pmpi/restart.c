/* restart.c: restart in place, the core's part. Once a recovery mode
 * (pmpi/mode/spares/) has agreed on a repair and made the program's
 * repaired MPI_COMM_WORLD, this process leaves the call it was in (from
 * ftshim's own code: the entry of a wrapper or one of its waits, never a
 * signal handler) and runs main again from the restart point
 * (preload/restart_point.h). What the abandoned run made is left
 * unreachable: its communicators, requests, windows and files keep their
 * entries but no handle of the new run names them. Application thread. */
#include "ftshim_config.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "pmpi/restart.h"
#include "pmpi/hangwatch.h"
#include "pmpi/state.h"
#include "src/log.h"
#include "preload/restart_point.h"

static _Atomic bool restarted;

bool ftp_restart_possible(void)
{
	return ft_restart_point_armed();
}

bool ftp_restarted(void)
{
	return atomic_load(&restarted);
}

unsigned ftp_restart_run(void)
{
	return ft_restart_count();
}

bool ftp_restart_blocked(char *why, size_t len)
{
	unsigned threads = ft_program_threads();

	if (threads > 0) {
		snprintf(why, len, "%u thread%s the program started (pthread_create) still run%s", threads,
			 threads == 1 ? "" : "s", threads == 1 ? "s" : "");
		return true;
	}
	/* Looked up, not linked: present only in a program that uses an
	 * OpenMP runtime. */
	int (*level)(void) = (int (*)(void))(uintptr_t)dlsym(RTLD_DEFAULT, "omp_get_level");
	int at = level ? level() : 0;
	if (at > 0) {
		snprintf(why, len, "it is inside an OpenMP parallel region (nesting level %d)", at);
		return true;
	}
	return false;
}

_Noreturn void ftp_restart_program(void)
{
	/* The call left behind was perhaps being watched. */
	ftp_hang_watch_end();
	atomic_store(&restarted, true);
	fflush(stdout);
	ft_debug("restart: main runs again (restart %u)", ft_restart_count() + 1);
	ft_restart_main();
}
