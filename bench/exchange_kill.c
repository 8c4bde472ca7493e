/* exchange_kill.c: the traffic under which a killed sender can freeze a
 * live neighbour's on-host receives (issue 39, item 2), for
 * bench/exchange_kill.py. A ULFM program: every rank exchanges small
 * messages with every other, nonblocking and as fast as it can, round
 * after round; when a rank dies (killed from outside, at a random time),
 * the survivors revoke, shrink, and exchange ROUNDS more rounds on the
 * shrunk communicator, then print "survived N" (N: the ranks left) and
 * finalize. Usage: exchange_kill ROUNDS */
#include <mpi.h>
#include <mpi-ext.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* One round: an 8-byte message to and from every other rank. */
static int round_on(MPI_Comm comm, uint64_t *in, uint64_t *out, MPI_Request *reqs)
{
	int me, n, k = 0;

	MPI_Comm_rank(comm, &me);
	MPI_Comm_size(comm, &n);
	for (int p = 0; p < n; p++) {
		if (p == me)
			continue;
		out[p]++;
		MPI_Irecv(&in[p], 1, MPI_UINT64_T, p, 7, comm, &reqs[k++]);
		MPI_Isend(&out[p], 1, MPI_UINT64_T, p, 7, comm, &reqs[k++]);
	}
	return MPI_Waitall(k, reqs, MPI_STATUSES_IGNORE);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	long after = argc > 1 ? atol(argv[1]) : 2000;
	int size;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	uint64_t *in = calloc((size_t)size, sizeof *in), *out = calloc((size_t)size, sizeof *out);
	MPI_Request *reqs = malloc(2 * (size_t)size * sizeof *reqs);
	if (!in || !out || !reqs)
		MPI_Abort(MPI_COMM_WORLD, 1);

	MPI_Comm comm;
	MPI_Comm_dup(MPI_COMM_WORLD, &comm);
	MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
	/* Until a failure: rounds without end (the kill comes from outside);
	 * after one, `after` rounds on the shrunk communicator. */
	long left = -1;
	while (left != 0) {
		if (round_on(comm, in, out, reqs) == MPI_SUCCESS) {
			if (left > 0)
				left--;
			continue;
		}
		MPIX_Comm_revoke(comm);
		MPI_Comm shrunk;
		if (MPIX_Comm_shrink(comm, &shrunk) != MPI_SUCCESS) {
			fprintf(stderr, "exchange_kill: shrink failed\n");
			MPI_Abort(MPI_COMM_WORLD, 3);
		}
		MPI_Comm_free(&comm);
		comm = shrunk;
		left = after;
	}
	int n;
	MPI_Comm_size(comm, &n);
	MPI_Barrier(comm);
	printf("survived %d\n", n);
	fflush(stdout);
	MPI_Comm_free(&comm);
	free(in);
	free(out);
	free(reqs);
	MPI_Finalize();
	return 0;
}
