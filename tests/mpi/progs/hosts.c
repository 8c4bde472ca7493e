/* hosts.c: where the ranks of a job run. Every rank prints one line
 * "rank R of N on HOST" (its host name), then the ranks check an
 * MPI_Allreduce and an MPI_Alltoall across all of them (real traffic
 * between the hosts), and rank 0 prints ALL CHECKS PASSED. */
#include <unistd.h>

#include "testutil.h"

int main(int argc, char **argv)
{
	int rank, size, sum = 0;
	char host[256] = "?";

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	gethostname(host, sizeof host - 1);
	/* One write per line: the launcher must not mix lines. */
	char line[512];
	int len = snprintf(line, sizeof line, "rank %d of %d on %s\n", rank, size, host);
	fflush(stdout);
	ssize_t w = write(1, line, (size_t)len);
	(void)w;

	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	TU_CHECK(sum == size * (size - 1) / 2, "allreduce gave %d", sum);
	int *out = malloc(size * sizeof *out), *in = malloc(size * sizeof *in);
	for (int r = 0; r < size; r++)
		out[r] = rank * 1000 + r;
	MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, MPI_COMM_WORLD);
	for (int r = 0; r < size; r++)
		TU_CHECK(in[r] == r * 1000 + rank, "alltoall from %d gave %d", r, in[r]);
	int bad = 0;
	MPI_Allreduce(&tu_failures, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0) {
		len = snprintf(line, sizeof line, "%s\n", bad ? "CHECKS FAILED" : "ALL CHECKS PASSED");
		w = write(1, line, (size_t)len);
	}
	free(out);
	free(in);
	MPI_Finalize();
	return bad ? 1 : 0;
}
