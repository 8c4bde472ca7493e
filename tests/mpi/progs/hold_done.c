/* hold_done.c: preloaded after the shim (LD_PRELOAD=libftshim.so
 * hold_done.so), it makes one rank slow to see that a collective is done:
 * the rank HOLD_RANK names (as the launcher numbers it) starts its first
 * MPI_Comm_idup or MPI_Iallgather (the nonblocking twins ftshim runs
 * MPI_Comm_dup and MPI_Allgather as) as usual, but tests of that request
 * report it pending, while still driving the MPI's progress, until 20 ms
 * or 8 tests after ftshim knows that some rank failed (enough for
 * ftshim's polling loop to see the failure before the completion), or
 * for 2 s at most. That is the race of
 * issue 39, item 5, forced: a victim that dies right after its own call
 * returned, while another member has not yet seen its own call finish.
 * Calls into ftshim's public API go through dlsym, as in testutil.h. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "launch_rank.h"

typedef int (*failed_ranks_fn)(int *, int);

static MPI_Request held = MPI_REQUEST_NULL;
static int armed = -1; /* 1 on the held rank until its first request */
static struct timespec since, known; /* held; a failure known (0: not yet) */
static int tests_since_known;

static int holding_rank(void)
{
	if (armed < 0)
		armed = tu_launch_rank_is("HOLD_RANK");
	return armed;
}

static void hold(MPI_Request req)
{
	if (holding_rank() == 1) {
		held = req;
		armed = 0;
		clock_gettime(CLOCK_MONOTONIC, &since);
	}
}

/* Whether tests of req must still say "pending". */
static double seconds(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static int still_held(MPI_Request req)
{
	static failed_ranks_fn failed_ranks;
	struct timespec now;
	int failed[1];

	if (req == MPI_REQUEST_NULL || req != held)
		return 0;
	if (!failed_ranks)
		failed_ranks = (failed_ranks_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_failed_ranks");
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (known.tv_sec == 0 && failed_ranks && failed_ranks(failed, 1) > 0)
		known = now;
	/* Released 20 ms after the failure was known, or after 8 tests
	 * since (a slow machine's tests may be far apart: ftshim tests at
	 * least 16 times before it gives up), or after 2 s anyway. */
	if ((known.tv_sec && (seconds(&known, &now) >= 0.02 || ++tests_since_known > 8)) ||
	    seconds(&since, &now) >= 2) {
		held = MPI_REQUEST_NULL;
		return 0;
	}
	return 1;
}

#define NEXT(name) ((name##_fn)(uintptr_t)dlsym(RTLD_NEXT, #name))

typedef int (*PMPI_Comm_idup_fn)(MPI_Comm, MPI_Comm *, MPI_Request *);
typedef int (*PMPI_Iallgather_fn)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm,
				  MPI_Request *);
typedef int (*PMPI_Test_fn)(MPI_Request *, int *, MPI_Status *);
typedef int (*PMPI_Request_get_status_fn)(MPI_Request, int *, MPI_Status *);

int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *req)
{
	int rc = NEXT(PMPI_Comm_idup)(comm, newcomm, req);

	hold(*req);
	return rc;
}

int PMPI_Iallgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
		    MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
	int rc = NEXT(PMPI_Iallgather)(sbuf, scount, stype, rbuf, rcount, rtype, comm, req);

	hold(*req);
	return rc;
}

int PMPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *status)
{
	int rc = NEXT(PMPI_Request_get_status)(req, flag, status);

	if (still_held(req))
		*flag = 0;
	return rc;
}

int PMPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
	if (still_held(*req))
		return PMPI_Request_get_status(*req, flag, status);
	return NEXT(PMPI_Test)(req, flag, status);
}
