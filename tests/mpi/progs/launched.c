/* launched.c: a job for the launcher cases (srun, sbatch, a Python-free
 * twin of the mpi4py case): some ranks die while the others wait on them,
 * and the survivors must go on working for a while. Usage:
 *
 *   launched [--victims R[,R...]] [--external] [--iters N] [--gap-ms G]
 *            [--until PATH]
 *
 * Defaults: victim rank 2, 2000 iterations 1 ms apart. After a barrier
 * every rank writes ready.RANK in the current directory. A victim then
 * kills itself (SIGKILL) 200 ms later, or with --external sleeps until
 * the test kills it. Each survivor waits for a message from the first
 * victim in MPI_Recv, which must fail with MPIX_ERR_PROC_FAILED; the
 * survivors acknowledge, shrink MPI_COMM_WORLD and run the iterations, an
 * allreduce each, checking its sum; with --until, instead, they go on
 * until one of them sees PATH exist, and stop together.
 * Survivor rank 0 prints "survivors
 * finished N iterations" and ALL CHECKS PASSED. Exit status 1 if a check
 * failed here. Keeping the survivors at work for seconds matters: a
 * launcher that ends the job after a death does so tens of milliseconds
 * later, and a job that finishes sooner escapes it. */
#include <signal.h>
#include <unistd.h>

#include "mpi-ext.h"
#include "testutil.h"

static int parse_victims(const char *list, int *victims, int max)
{
	int n = 0;
	char *end;

	while (n < max && *list) {
		victims[n++] = (int)strtol(list, &end, 10);
		if (*end != ',')
			break;
		list = end + 1;
	}
	return n;
}

int main(int argc, char **argv)
{
	int rank, size, victims[64] = { 2 }, nvictims = 1;
	long iters = 2000, gap_ms = 1;
	const char *until = NULL;
	int external = tu_has_arg(argc, argv, "--external");

	for (int i = 1; i + 1 < argc; i++) {
		if (strcmp(argv[i], "--victims") == 0)
			nvictims = parse_victims(argv[i + 1], victims, 64);
		else if (strcmp(argv[i], "--iters") == 0)
			iters = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--gap-ms") == 0)
			gap_ms = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--until") == 0)
			until = argv[i + 1];
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int victim = 0, alive_sum = 0;
	for (int r = 0; r < size; r++) {
		int v = 0;
		for (int i = 0; i < nvictims; i++)
			v |= victims[i] == r;
		if (v && r == rank)
			victim = 1;
		if (!v)
			alive_sum += r;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	char ready[32];
	snprintf(ready, sizeof ready, "ready.%d", rank);
	FILE *f = fopen(ready, "w");
	if (f)
		fclose(f);
	if (victim) {
		usleep(200000);
		if (!external)
			raise(SIGKILL);
		pause();
	}
	int value = 0, rc = MPI_Recv(&value, 1, MPI_INT, victims[0], 5, MPI_COMM_WORLD,
				     MPI_STATUS_IGNORE);
	int cls = rc;
	MPI_Error_class(rc, &cls);
	TU_CHECK(cls == MPIX_ERR_PROC_FAILED, "the receive from the victim returned %d", rc);
	/* The other victims may not be known yet: shrink leaves out only the
	 * failed ranks it agrees on, so wait until all are known. */
	for (int known = 0, i = 0; known < nvictims && i < 20000; i++) {
		MPI_Group g;
		MPIX_Comm_failure_ack(MPI_COMM_WORLD);
		MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &g);
		MPI_Group_size(g, &known);
		MPI_Group_free(&g);
		if (known < nvictims)
			usleep(1000);
	}
	MPI_Comm live;
	rc = MPIX_Comm_shrink(MPI_COMM_WORLD, &live);
	TU_CHECK(rc == MPI_SUCCESS, "shrink: %d", rc);
	if (rc != MPI_SUCCESS)
		return 1;
	int lsize = 0, lrank = 0;
	MPI_Comm_size(live, &lsize);
	MPI_Comm_rank(live, &lrank);
	TU_CHECK(lsize == size - nvictims, "%d survivors, expected %d", lsize, size - nvictims);
	long done = 0;
	for (;; done++) {
		/* The sum of the survivors' ranks, and how many see PATH. */
		int mine[2] = { rank, until && access(until, F_OK) == 0 }, sums[2] = { 0, 0 };
		if (!until && done >= iters)
			break;
		rc = MPI_Allreduce(mine, sums, 2, MPI_INT, MPI_SUM, live);
		if (rc != MPI_SUCCESS || sums[0] != alive_sum) {
			TU_CHECK(0, "allreduce %ld: rc %d, sum %d, expected %d", done, rc, sums[0], alive_sum);
			break;
		}
		if (until && sums[1] > 0)
			break;
		if (gap_ms > 0)
			tu_nap_ms(gap_ms);
	}
	if (lrank == 0)
		printf("survivors finished %ld iterations\n", done);
	return tu_survivors_finish(MPI_SUCCESS, live, size - nvictims);
}
