/* hello.c: the smallest MPI program: a barrier, an allreduce, and whether
 * the shim is active (--expect-shim / --expect-no-shim check it). */
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
	return tu_finish();
}
