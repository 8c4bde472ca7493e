/* hello.c: the smallest MPI program: a barrier, an allreduce, and whether
 * the shim is active (--expect-shim / --expect-no-shim check it). With
 * --rank1-exits N, rank 1 returns N from main after MPI_Finalize: the
 * program's own status, which the launcher must pass on. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

int main(int argc, char **argv)
{
	int rank, size, sum = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	TU_CHECK(sum == size * (size - 1) / 2, "sum %d", sum);
	if (tu_has_arg(argc, argv, "--expect-shim"))
		TU_CHECK(tu_shim_active(), "the shim is not active");
	if (tu_has_arg(argc, argv, "--expect-no-shim"))
		TU_CHECK(!tu_shim_active(), "the shim is active");
	if (rank == 0)
		printf("hello from %d ranks, sum %d\n", size, sum);
	int code = 0;
	for (int i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], "--rank1-exits") == 0 && rank == 1)
			code = atoi(argv[i + 1]);
	int rc = tu_finish();
	return rc ? rc : code;
}
