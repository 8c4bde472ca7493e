/* replica_copies.c: ftshim_rank_copies under FTSHIM_REPLICAS (the
 * replicas_fail case). Every rank checks that each of the program's
 * ranks has the copies the plan gives it, runs allreduces until it sees
 * rank 1's replica gone (FTSHIM_INJECT kills it), bounded by 20 s, and
 * checks that rank 1 then has its primary only and the others are as
 * before. Rank 0 prints the copies before and after. */
#include "testutil.h"

#include <unistd.h>

#define COPY_PRIMARY 1
#define COPY_REPLICA 2

int main(int argc, char **argv)
{
	int rank, size, x = 1, sum = 0;
	char before[64] = "", after[64] = "";

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int (*copies)(int) = (int (*)(int))(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_rank_copies");
	TU_CHECK(copies != NULL, "ftshim_rank_copies is not exported");
	if (!copies) {
		MPI_Finalize();
		return 1;
	}
	/* argv[1]: how many of the first ranks have a replica. */
	int replicated = argc > 1 ? atoi(argv[1]) : 0;
	for (int r = 0; r < size; r++) {
		int want = COPY_PRIMARY | (r < replicated ? COPY_REPLICA : 0);
		TU_CHECK(copies(r) == want, "rank %d: copies %d, expected %d", r, copies(r), want);
		snprintf(before + strlen(before), sizeof before - strlen(before), "%d", copies(r));
	}
	TU_CHECK(copies(size) == -1 && copies(-1) == -1, "out of range: %d %d", copies(size),
		 copies(-1));
	double t0 = MPI_Wtime();
	int gone = 0;
	while (!gone && MPI_Wtime() - t0 < 20) {
		MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		/* Every rank leaves the loop at the same iteration. */
		int mine = copies(1) == COPY_PRIMARY;
		MPI_Allreduce(&mine, &gone, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
		usleep(1000);
	}
	TU_CHECK(gone, "rank 1's replica was not seen gone within 20 s");
	for (int r = 0; r < size; r++) {
		int want = COPY_PRIMARY | (r < replicated && r != 1 ? COPY_REPLICA : 0);
		TU_CHECK(copies(r) == want, "rank %d after: copies %d, expected %d", r, copies(r), want);
		snprintf(after + strlen(after), sizeof after - strlen(after), "%d", copies(r));
	}
	if (rank == 0)
		printf("copies before %s after %s\n", before, after);
	MPI_Finalize();
	if (rank == 0 && tu_failures == 0)
		printf("ALL CHECKS PASSED\n");
	return tu_failures ? 1 : 0;
}
