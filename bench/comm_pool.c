/* comm_pool.c: what a pool of spare duplicates of MPI_COMM_WORLD costs,
 * made at start-up (docs/DESIGN.md, "Recovery without the MPI's
 * constructors"), with bench/comm_pool.py.
 *
 *   comm_pool idup K     K MPI_Comm_idup of MPI_COMM_WORLD started at once
 *                        and completed with one MPI_Waitall, after a
 *                        barrier: prints the slowest rank's time in us
 *   comm_pool dup K      the same with K blocking MPI_Comm_dup
 *   comm_pool contexts M how many duplicates the MPI gives before it
 *                        refuses one (at most M): prints the count */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argc != 3) {
		if (rank == 0)
			fprintf(stderr, "usage: comm_pool idup|dup|contexts N\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int k = atoi(argv[2]);
	MPI_Comm *pool = calloc((size_t)k + 1, sizeof *pool);
	MPI_Request *reqs = calloc((size_t)k + 1, sizeof *reqs);
	MPI_Status *sts = calloc((size_t)k + 1, sizeof *sts);
	if (!pool || !reqs || !sts)
		MPI_Abort(MPI_COMM_WORLD, 1);
	if (strcmp(argv[1], "contexts") == 0) {
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
		int made = 0;
		while (made < k && MPI_Comm_dup(MPI_COMM_WORLD, &pool[made]) == MPI_SUCCESS)
			made++;
		int fewest;
		MPI_Allreduce(&made, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
		if (rank == 0)
			printf("%d\n", fewest);
		for (int i = 0; i < made; i++)
			MPI_Comm_free(&pool[i]);
		MPI_Finalize();
		return 0;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	if (strcmp(argv[1], "idup") == 0) {
		for (int i = 0; i < k; i++)
			MPI_Comm_idup(MPI_COMM_WORLD, &pool[i], &reqs[i]);
		MPI_Waitall(k, reqs, sts);
	} else {
		for (int i = 0; i < k; i++)
			MPI_Comm_dup(MPI_COMM_WORLD, &pool[i]);
	}
	double us = (MPI_Wtime() - t0) * 1e6, slowest;
	MPI_Reduce(&us, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%.1f\n", slowest);
	for (int i = 0; i < k; i++)
		MPI_Comm_free(&pool[i]);
	free(pool);
	free(reqs);
	free(sts);
	MPI_Finalize();
	return 0;
}
