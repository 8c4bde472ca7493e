/* launch_rank.h: the rank the launcher gave this process, known before
 * MPI_Init (Hydra's PMI_RANK, Open MPI's OMPI_COMM_WORLD_RANK), for the
 * test programs (through testutil.h) and the libraries preloaded beside
 * the shim. No MPI here: skipfin.c is built without mpi.h. */
#ifndef FTSHIM_LAUNCH_RANK_H
#define FTSHIM_LAUNCH_RANK_H

#include <stdlib.h>

/* This process's rank, or -1 if no launcher said. */
static inline int tu_launch_rank(void)
{
	const char *r = getenv("PMI_RANK");

	if (!r)
		r = getenv("OMPI_COMM_WORLD_RANK");
	return r ? atoi(r) : -1;
}

/* Whether the environment variable var names this process's rank. */
static inline int tu_launch_rank_is(const char *var)
{
	const char *want = getenv(var);
	int me = tu_launch_rank();

	return want && me >= 0 && atoi(want) == me;
}

#endif
