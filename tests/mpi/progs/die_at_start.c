/* die_at_start.c: preloaded after the shim (LD_PRELOAD=libftshim.so
 * die_at_start.so), it kills the rank DIE_RANK names (as the launcher
 * numbers it) with SIGKILL in its first PMPI_Allgather: ftshim's own
 * exchange at MPI_Init, after the MPI's MPI_Init has returned and before
 * ftshim's detector runs. Nothing can see that death yet; the others
 * must not wait for it for ever. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>

#include "launch_rank.h"

typedef int (*allgather_fn)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm);

int PMPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
		   MPI_Datatype rtype, MPI_Comm comm)
{
	static int calls;

	if (calls++ == 0 && tu_launch_rank_is("DIE_RANK"))
		raise(SIGKILL);
	return ((allgather_fn)(uintptr_t)dlsym(RTLD_NEXT, "PMPI_Allgather"))(sbuf, scount, stype, rbuf,
									      rcount, rtype, comm);
}
