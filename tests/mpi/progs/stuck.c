/* stuck.c: a member dies while the others are inside the MPI's own
 * communicator (or window) creation, which no wrapper can interrupt.
 * Usage: stuck create_group|split|win_create|intercomm. Rank size-1 is
 * the victim: for split and win_create it passes the shim's fence (its
 * MPI_Ibarrier matches the fence's; a blocking MPI_Barrier may not match
 * a nonblocking one, and on Open MPI the shim runs it otherwise) and then
 * dies instead of
 * creating; for create_group it never enters. For intercomm the ranks
 * split in two halves and rank size/2, the leader of the second, dies
 * after its half's fence: the first half waits for it as the remote
 * leader, the rest of its half for it as their local leader.
 * The others must not hang: after the hang watch's grace period each
 * prints its line and exits with status 76. Prints "returned" if a
 * creation returned after all (it must not).
 * Usage: stuck late: nobody dies; rank size-1 enters MPI_Comm_create_group
 * 300 ms after the others, who wait for it inside the MPI. */
#include <signal.h>
#include <time.h>

#include "testutil.h"

/* Pass the shim's fence before a creation on comm, as the others do. */
static void fence(MPI_Comm comm)
{
	MPI_Request r;

	MPI_Ibarrier(comm, &r);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
	int rank, size;
	const char *what = argc > 1 ? argv[1] : "split";
	MPI_Comm c = MPI_COMM_NULL;
	MPI_Group g;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Barrier(MPI_COMM_WORLD);
	if (!strcmp(what, "intercomm")) {
		MPI_Comm half, inter;
		int second = rank >= size / 2;
		MPI_Comm_split(MPI_COMM_WORLD, second, rank, &half);
		if (rank == size / 2) {
			struct timespec ts = { 0, 300 * 1000 * 1000 };
			fence(half); /* its half's fence */
			nanosleep(&ts, NULL);
			raise(SIGKILL);
		}
		MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, second ? 0 : size / 2, 9, &inter);
		printf("returned\n");
		MPI_Finalize();
		return 0;
	}
	if (!strcmp(what, "late")) {
		struct timespec ts = { 0, 300 * 1000 * 1000 };
		if (rank == size - 1)
			nanosleep(&ts, NULL);
		MPI_Comm_group(MPI_COMM_WORLD, &g);
		MPI_Comm_create_group(MPI_COMM_WORLD, g, 9, &c);
		printf("returned\n");
		MPI_Comm_free(&c);
		MPI_Group_free(&g);
		MPI_Finalize();
		return 0;
	}
	if (rank == size - 1) {
		struct timespec ts = { 0, 300 * 1000 * 1000 };
		if (!strcmp(what, "split") || !strcmp(what, "win_create"))
			fence(MPI_COMM_WORLD); /* the others' fence */
		nanosleep(&ts, NULL);
		raise(SIGKILL);
	}
	if (!strcmp(what, "split")) {
		MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &c);
	} else if (!strcmp(what, "win_create")) {
		static int base[16];
		MPI_Win win;
		MPI_Win_create(base, sizeof base, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	} else {
		MPI_Comm_group(MPI_COMM_WORLD, &g);
		MPI_Comm_create_group(MPI_COMM_WORLD, g, 9, &c);
	}
	printf("returned\n");
	MPI_Finalize();
	return 0;
}
