/* exchange_kill.c: the traffic under which a killed sender can freeze a
 * live neighbour's on-host receives (issue 39, item 2), for
 * bench/exchange_kill.py. A ULFM program: every rank exchanges DEPTH
 * messages of BYTES bytes with every other, nonblocking and as fast as
 * it can, round after round; when a rank dies (killed from outside, at a
 * random time), the survivors revoke, shrink, and exchange ROUNDS more
 * rounds on the shrunk communicator, then print "survived N" (N: the
 * ranks left) and finalize. Usage: exchange_kill ROUNDS [BYTES [DEPTH
 * [VICTIM MS]]] (defaults 8 and 1). With VICTIM and MS, rank VICTIM
 * kills itself MS milliseconds after the first round, in the middle of a
 * send to every other rank of its host: it first reserves the next slot
 * of each of their UCX queues and never fills it
 * (tests/mpi/progs/ucx_reserve.h), which freezes each of them unless
 * ftshim repairs the queue. */
#include <mpi.h>
#include <mpi-ext.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "../tests/mpi/progs/ucx_reserve.h"

static int bytes = 8, depth = 1;

/* One round: depth messages of `bytes` to and from every other rank
 * (in and out: room for depth of them per rank). */
static int round_on(MPI_Comm comm, char *in, char *out, MPI_Request *reqs, MPI_Status *sts)
{
	int me, n, k = 0;

	MPI_Comm_rank(comm, &me);
	MPI_Comm_size(comm, &n);
	for (int p = 0; p < n; p++) {
		if (p == me)
			continue;
		for (int d = 0; d < depth; d++) {
			size_t at = ((size_t)p * (size_t)depth + (size_t)d) * (size_t)bytes;
			out[at]++;
			MPI_Irecv(in + at, bytes, MPI_BYTE, p, 7, comm, &reqs[k++]);
			MPI_Isend(out + at, bytes, MPI_BYTE, p, 7, comm, &reqs[k++]);
		}
	}
	return MPI_Waitall(k, reqs, sts);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	long after = argc > 1 ? atol(argv[1]) : 2000;
	if (argc > 2)
		bytes = atoi(argv[2]);
	if (argc > 3)
		depth = atoi(argv[3]);
	int victim = argc > 5 ? atoi(argv[4]) : -1;
	double die_at = argc > 5 ? atof(argv[5]) / 1e3 : 0;
	int size, me;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	if (bytes < 1 || depth < 1)
		MPI_Abort(MPI_COMM_WORLD, 2);
	size_t room = (size_t)size * (size_t)depth * (size_t)bytes;
	char *in = calloc(room, 1), *out = calloc(room, 1);
	MPI_Request *reqs = malloc(2 * (size_t)size * (size_t)depth * sizeof *reqs);
	MPI_Status *sts = malloc(2 * (size_t)size * (size_t)depth * sizeof *sts);
	if (!in || !out || !reqs || !sts)
		MPI_Abort(MPI_COMM_WORLD, 1);

	MPI_Comm comm;
	MPI_Comm_dup(MPI_COMM_WORLD, &comm);
	MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
	/* Until a failure: rounds without end (the kill comes from outside);
	 * after one, `after` rounds on the shrunk communicator. */
	long left = -1;
	double start = MPI_Wtime();
	while (left != 0) {
		if (me == victim && MPI_Wtime() - start >= die_at) {
			ucx_reserve_slots(0);
			raise(SIGKILL);
		}
		if (round_on(comm, in, out, reqs, sts) == MPI_SUCCESS) {
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
	free(sts);
	MPI_Finalize();
	return 0;
}
