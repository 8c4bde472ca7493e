/* lock_progress: a process that waits inside ftshim still grants the
 * passive-target locks others ask of it (issue 39, item 1). MPICH grants
 * a lock only in the target's own progress, so a target that sits in
 * ftshim's wait for the other ranks at MPI_Finalize, or in a blocking
 * probe ftshim polls, must drive that progress.
 *
 *   lock_progress finalize|probe
 *
 * 4 ranks, one window over MPI_COMM_WORLD. Rank 2 dies once the window
 * exists. Rank 1 waits until ftshim knows, then (finalize) goes to
 * MPI_Finalize at once, or (probe) waits in MPI_Probe for a message rank
 * 0 sends after its loop. Rank 0 loops MPI_Win_lock(EXCLUSIVE, 1),
 * MPI_Put, MPI_Win_unlock; rank 3 does the same towards rank 0. Each
 * survivor prints "rank R: done N" with the iterations it completed (or
 * the error it got), then finalizes. */
#include <mpi.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "mpi-ext.h"
#include "testutil.h"

#define VICTIM 2
#define ITERATIONS 200

static int lock_loop(MPI_Win win, int rank, int target)
{
	int one = 1;

	for (int i = 0; i < ITERATIONS; i++) {
		int rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
		if (rc == MPI_SUCCESS)
			rc = MPI_Put(&one, 1, MPI_INT, target, i % 4, 1, MPI_INT, win);
		int rc2 = MPI_Win_unlock(target, win);
		if (rc != MPI_SUCCESS || rc2 != MPI_SUCCESS) {
			printf("rank %d: error at %d: %d %d\n", rank, i, rc, rc2);
			return i;
		}
	}
	return ITERATIONS;
}

int main(int argc, char **argv)
{
	int buf[4] = { 0 };
	MPI_Win win;

	if (argc != 2 || (strcmp(argv[1], "finalize") != 0 && strcmp(argv[1], "probe") != 0)) {
		fprintf(stderr, "usage: lock_progress finalize|probe\n");
		return 2;
	}
	bool probe = strcmp(argv[1], "probe") == 0;
	int rank = tu_init(&argc, &argv, 4, 1, "4 ranks and the shim");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Win_create(buf, sizeof buf, sizeof buf[0], MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == VICTIM)
		raise(SIGKILL);
	tu_await_failure(MPI_COMM_WORLD);
	int done = 0;
	if (rank == 1 && probe) {
		MPI_Status st;
		int rc = MPI_Probe(0, 7, MPI_COMM_WORLD, &st);
		if (rc == MPI_SUCCESS)
			rc = MPI_Recv(&done, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		TU_CHECK(rc == MPI_SUCCESS, "probe/recv from rank 0: %d", rc);
	} else if (rank == 0) {
		done = lock_loop(win, rank, 1);
		if (probe)
			MPI_Send(&done, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
	} else if (rank == 3) {
		done = lock_loop(win, rank, 0);
	}
	printf("rank %d: done %d\n", rank, done);
	fflush(stdout);
	MPI_Finalize();
	return tu_failures ? 1 : 0;
}
