/* demo.c: the ftshim demo. An ordinary MPI program: it splits the world
 * into two halves, passes a token around each half, and sums the result.
 * Built with plain mpicc; under the shim it also prints what ftshim knows
 * (found with dlsym, so that it runs without the shim too). */
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, hrank, hsize, token, total;
	MPI_Comm half;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, rank, &half);
	MPI_Comm_rank(half, &hrank);
	MPI_Comm_size(half, &hsize);

	/* A token goes once around each half, each rank adding its world rank. */
	if (hrank == 0) {
		token = rank;
		MPI_Send(&token, 1, MPI_INT, (hrank + 1) % hsize, 0, half);
		MPI_Recv(&token, 1, MPI_INT, hsize - 1, 0, half, MPI_STATUS_IGNORE);
	} else {
		MPI_Recv(&token, 1, MPI_INT, hrank - 1, 0, half, MPI_STATUS_IGNORE);
		token += rank;
		MPI_Send(&token, 1, MPI_INT, (hrank + 1) % hsize, 0, half);
	}
	MPI_Allreduce(hrank == 0 ? &token : &(int){ 0 }, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

	int (*active)(void) = (int (*)(void))(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_active");
	int (*comm_id)(MPI_Comm, uint64_t *) =
		(int (*)(MPI_Comm, uint64_t *))(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_comm_id");
	uint64_t id = 0;
	if (active && active() && comm_id)
		comm_id(half, &id);
	printf("rank %d of %d: half %d (%d ranks), ftshim %s, half's job-wide id %016llx\n", rank,
	       size, rank < size / 2, hsize, active && active() ? "active" : "absent",
	       (unsigned long long)id);
	fflush(stdout);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("demo: the two token rings summed to %d (expected %d)\n", total,
		       size * (size - 1) / 2);
	MPI_Comm_free(&half);
	MPI_Finalize();
	return total == size * (size - 1) / 2 ? 0 : 1;
}
