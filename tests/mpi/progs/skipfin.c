/* skipfin.c: a library preloaded after libftshim.so by one test
 * (cases/finalize_stuck.sh). The rank named by SKIPFIN_RANK leaves at the
 * MPI library's MPI_Finalize without calling it, as a rank that died just
 * after it left ftshim's control plane would; the others' MPI_Finalize
 * then waits for it (MPICH's always does). With SKIPFIN_HOW=kill it dies
 * there by SIGKILL instead. Not an MPI program: built with -shared, it
 * finds the MPI's PMPI_Finalize with dlsym. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launch_rank.h"

int PMPI_Finalize(void);

int PMPI_Finalize(void)
{
	if (tu_launch_rank_is("SKIPFIN_RANK")) {
		const char *how = getenv("SKIPFIN_HOW");
		if (how && strcmp(how, "kill") == 0)
			raise(SIGKILL);
		_exit(0);
	}
	int (*real)(void) = (int (*)(void))dlsym(RTLD_NEXT, "PMPI_Finalize");
	return real ? real() : 0;
}
