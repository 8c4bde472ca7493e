/* shrink_view.c: the timing program of bench/shrink_view.py. The last
 * rank kills itself; the others learn of it, revoke and shrink a
 * duplicate of MPI_COMM_WORLD, then time operations on the shrunk
 * communicator, and rank 0 prints one line per operation with the mean
 * time of one call in microseconds at the slowest survivor:
 *
 *   barrier US        MPI_Barrier
 *   allreduce8 US     MPI_Allreduce(MPI_SUM) of one double
 *   allreduce64k US   MPI_Allreduce(MPI_SUM) of 8192 doubles
 *   bcast64k US       MPI_Bcast of 64 KiB from rank 1
 *   alltoall1k US     MPI_Alltoall of 1 KiB to each rank
 *   pingpong8 US      half a round trip of 8 bytes between ranks 0 and 1
 *
 * Whether the shrunk communicator is a view on a spare context or the
 * MPI's own is FTSHIM_RECOVERY_CONTEXTS's to say (2 or 0). With `rts`,
 * the survivors do not shrink: MPI_Comm_validate_all (ftshim-rts.h)
 * recognizes the failure on the duplicate itself, and the operations run
 * on it among the live ranks.
 *
 * Usage: shrink_view REPS [rts] */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ftshim-rts.h"
#include "mpi-ext.h"

/* The mean seconds per call of reps calls of op at the slowest rank. */
static double timed(MPI_Comm s, int reps, void (*op)(MPI_Comm, void *), void *arg)
{
	double t, worst;

	op(s, arg);
	MPI_Barrier(s);
	t = MPI_Wtime();
	for (int i = 0; i < reps; i++)
		op(s, arg);
	t = (MPI_Wtime() - t) / reps;
	MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, s);
	return worst;
}

static double *buf, *out;

static void barrier(MPI_Comm s, void *arg)
{
	(void)arg;
	MPI_Barrier(s);
}

static void allreduce(MPI_Comm s, void *arg)
{
	MPI_Allreduce(buf, out, *(int *)arg, MPI_DOUBLE, MPI_SUM, s);
}

static void bcast(MPI_Comm s, void *arg)
{
	(void)arg;
	MPI_Bcast(buf, 8192, MPI_DOUBLE, 1, s);
}

static void alltoall(MPI_Comm s, void *arg)
{
	(void)arg;
	MPI_Alltoall(buf, 128, MPI_DOUBLE, out, 128, MPI_DOUBLE, s);
}

static void pingpong(MPI_Comm s, void *arg)
{
	int rank;
	double x = 0;

	(void)arg;
	MPI_Comm_rank(s, &rank);
	if (rank == 0) {
		MPI_Send(&x, 1, MPI_DOUBLE, 1, 0, s);
		MPI_Recv(&x, 1, MPI_DOUBLE, 1, 0, s, MPI_STATUS_IGNORE);
	} else if (rank == 1) {
		MPI_Recv(&x, 1, MPI_DOUBLE, 0, 0, s, MPI_STATUS_IGNORE);
		MPI_Send(&x, 1, MPI_DOUBLE, 0, 0, s);
	}
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 1000, rank, size, one = 1, big = 8192;
	MPI_Comm work, s;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	buf = calloc(8192 * 4, sizeof *buf);
	out = calloc(8192 * 4, sizeof *out);
	MPI_Comm_dup(MPI_COMM_WORLD, &work);
	MPI_Comm_set_errhandler(work, MPI_ERRORS_RETURN);
	MPI_Barrier(work);
	if (rank == size - 1)
		raise(SIGKILL);
	while (MPI_Barrier(work) == MPI_SUCCESS)
		usleep(1000);
	int failed = 0;
	if (argc > 2 && strcmp(argv[2], "rts") == 0) {
		if (MPI_Comm_validate_all(work, &failed) != MPI_SUCCESS || failed != 1)
			MPI_Abort(MPI_COMM_WORLD, 1);
		s = work;
	} else {
		MPIX_Comm_revoke(work);
		if (MPIX_Comm_shrink(work, &s) != MPI_SUCCESS)
			MPI_Abort(MPI_COMM_WORLD, 1);
		MPI_Comm_free(&work);
	}
	struct {
		const char *name;
		void (*op)(MPI_Comm, void *);
		void *arg;
		int div, half;
	} ops[] = {
		{ "barrier", barrier, NULL, 1, 0 },	   { "allreduce8", allreduce, &one, 1, 0 },
		{ "allreduce64k", allreduce, &big, 10, 0 }, { "bcast64k", bcast, NULL, 10, 0 },
		{ "alltoall1k", alltoall, NULL, 10, 0 },   { "pingpong8", pingpong, NULL, 1, 1 },
	};
	for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
		int n = reps / ops[k].div > 0 ? reps / ops[k].div : 1;
		double t = timed(s, n, ops[k].op, ops[k].arg);
		if (rank == 0)
			printf("%s %.2f\n", ops[k].name, t * 1e6 / (ops[k].half ? 2 : 1));
	}
	MPI_Comm_free(&s);
	MPI_Finalize();
	free(buf);
	free(out);
	return 0;
}
