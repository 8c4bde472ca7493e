/* shm_freeze: a sender that dies between reserving a slot of a neighbour's
 * on-host receive queue and filling it must not freeze that neighbour
 * (issue 39, item 2). The kill cannot be timed into that window from
 * outside, so the victim makes the window itself: it finds the queue of
 * rank 1 that UCX mapped into its own memory (a shared mapping whose
 * control block names rank 1's pid; src/shm_fifo.h has the layout),
 * reserves the next slot as a sender does (ucx_reserve.h), and SIGKILLs
 * itself.
 *
 * 4 ranks on one host. Every pair exchanges a few messages first (so
 * that UCX connects them), then rank 2 reserves and dies; once the
 * survivors know, rank 0 and rank 1 play ping-pong ROUNDS times and
 * rank 3 sends rank 1 ROUNDS messages. Each survivor prints
 * "rank R: done ROUNDS". Rank 2 prints "rank 2: reserved K" with how
 * many queues of rank 1's it reserved a slot in (0 where the MPI does
 * not use UCX's shared memory, as Open MPI's ob1 does not). */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "mpi-ext.h"
#include "testutil.h"
#include "ucx_reserve.h"

#define VICTIM 2
#define ROUNDS 100

int main(int argc, char **argv)
{
	int rank = tu_init(&argc, &argv, 4, 1, "4 ranks on one host and the shim");
	int pids[4], me = (int)getpid(), x = 0;

	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Allgather(&me, 1, MPI_INT, pids, 1, MPI_INT, MPI_COMM_WORLD);
	for (int step = 1; step < 4; step++) {
		int to = (rank + step) % 4, from = (rank + 4 - step) % 4;
		for (int i = 0; i < 10; i++)
			MPI_Sendrecv(&me, 1, MPI_INT, to, 1, &x, 1, MPI_INT, from, 1, MPI_COMM_WORLD,
				     MPI_STATUS_IGNORE);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == VICTIM) {
		printf("rank %d: reserved %d\n", rank, ucx_reserve_slots(pids[1]));
		fflush(stdout);
		raise(SIGKILL);
	}
	tu_await_failure(MPI_COMM_WORLD);
	int done = 0, rc = MPI_SUCCESS;
	for (int i = 0; i < ROUNDS && rc == MPI_SUCCESS; i++) {
		if (rank == 0) {
			rc = MPI_Send(&i, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
			if (rc == MPI_SUCCESS)
				rc = MPI_Recv(&x, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			rc = MPI_Recv(&x, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			if (rc == MPI_SUCCESS)
				rc = MPI_Send(&x, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
			if (rc == MPI_SUCCESS)
				rc = MPI_Recv(&x, 1, MPI_INT, 3, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			rc = MPI_Send(&i, 1, MPI_INT, 1, 4, MPI_COMM_WORLD);
		}
		TU_CHECK(rc == MPI_SUCCESS, "round %d: %d", i, rc);
		done += rc == MPI_SUCCESS;
	}
	printf("rank %d: done %d\n", rank, done);
	fflush(stdout);
	MPI_Finalize();
	return tu_failures ? 1 : 0;
}
