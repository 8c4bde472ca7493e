/* ulfm.c: the timing program of bench/ulfm.py. It times the ULFM recovery
 * calls under ftshim, and the MPI operation each stands beside, on every
 * rank of one job, and rank 0 prints one line per repetition with the
 * slowest rank's time in microseconds:
 *
 *   agree R US          MPIX_Comm_agree on a communicator without failures
 *   allreduce R US      MPI_Allreduce(MPI_BAND) of one int, the same job
 *   create R US         MPI_Comm_create_group of every rank: what shrink's
 *                       own MPI call costs
 *   shrink R US         MPIX_Comm_shrink without failures
 *   shrink_failed R US  MPIX_Comm_shrink of MPI_COMM_WORLD after its last
 *                       rank was killed (every survivor knew before)
 *   agree_failed R US   MPIX_Comm_agree on MPI_COMM_WORLD after that
 *   revoke R US         from MPIX_Comm_revoke at rank 0 to the last other
 *                       rank's pending MPI_Recv returning MPIX_ERR_REVOKED
 *                       (CLOCK_MONOTONIC, shared by the ranks of one host)
 *
 * Usage: ulfm REPS. Each repetition starts after an agreement, so that
 * ranks start together. The program dies with the MPI's own error if a
 * call fails.
 *
 * Usage: ulfm detect FILE. Once: every rank but the last waits in
 * MPI_Recv from the last, which writes the time (CLOCK_MONOTONIC) to
 * FILE and kills itself; each survivor times its receive's return with
 * MPIX_ERR_PROC_FAILED from that moment, and rank 0 prints
 *
 *   detect 0 US         the slowest survivor's time
 *
 * Runs under ftshim or on a ULFM MPI (Open MPI 5 --with-ft ulfm). */
#include <dlfcn.h>
#include <mpi.h>
#include <mpi-ext.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rank, size;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Line up the ranks of comm: an agreement works with failures too. */
static void line_up(MPI_Comm comm)
{
	int flag = 1;

	MPIX_Comm_agree(comm, &flag);
	MPIX_Comm_agree(comm, &flag);
}

/* Rank 0 of comm prints the slowest rank's time. */
static void report(MPI_Comm comm, const char *what, int rep, double us)
{
	double worst = 0;
	int r;

	MPI_Reduce(&us, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
	MPI_Comm_rank(comm, &r);
	if (r == 0)
		printf("%s %d %.1f\n", what, rep, worst);
}

static void check(int rc, const char *call)
{
	if (rc != MPI_SUCCESS) {
		fprintf(stderr, "ulfm bench: rank %d: %s failed (%d)\n", rank, call, rc);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
}

/* The detection figure: see the usage above. */
static int detect(const char *file)
{
	int out = 0;

	line_up(MPI_COMM_WORLD);
	line_up(MPI_COMM_WORLD);
	if (rank == size - 1) {
		usleep(100000); /* the receives are posted */
		FILE *f = fopen(file, "w");
		if (!f) {
			perror(file);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
		fprintf(f, "%.3f\n", now_us());
		fclose(f);
		raise(SIGKILL);
	}
	int rc = MPI_Recv(&out, 1, MPI_INT, size - 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	double seen = now_us(), killed = 0;
	int cls = rc;
	MPI_Error_class(rc, &cls);
	if (cls != MPIX_ERR_PROC_FAILED)
		check(rc == MPI_SUCCESS ? MPI_ERR_OTHER : rc, "the receive from the dead rank");
	FILE *f = fopen(file, "r");
	if (!f || fscanf(f, "%lf", &killed) != 1)
		check(MPI_ERR_OTHER, "reading the time of the kill");
	fclose(f);
	MPI_Comm live;
	MPIX_Comm_failure_ack(MPI_COMM_WORLD);
	check(MPIX_Comm_shrink(MPI_COMM_WORLD, &live), "MPIX_Comm_shrink");
	report(live, "detect", 0, seen - killed);
	MPI_Comm_free(&live);
	MPI_Finalize();
	return 0;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 50;
	MPI_Group world_group;
	MPI_Comm c;
	double t;
	int flag, out;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (!MPIX_Comm_agree || size < 3 || (reps < 1 && !(argc > 2 && strcmp(argv[1], "detect") == 0))) {
		if (rank == 0)
			fprintf(stderr, "usage: ulfm REPS | ulfm detect FILE, on 3 or more ranks, under ftshim or ULFM\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (argc > 2 && strcmp(argv[1], "detect") == 0)
		return detect(argv[2]);
	MPI_Comm_group(MPI_COMM_WORLD, &world_group);

	for (int i = 0; i < reps; i++) {
		line_up(MPI_COMM_WORLD);
		flag = 1;
		t = now_us();
		check(MPIX_Comm_agree(MPI_COMM_WORLD, &flag), "MPIX_Comm_agree");
		report(MPI_COMM_WORLD, "agree", i, now_us() - t);

		line_up(MPI_COMM_WORLD);
		flag = 1;
		t = now_us();
		check(MPI_Allreduce(&flag, &out, 1, MPI_INT, MPI_BAND, MPI_COMM_WORLD), "MPI_Allreduce");
		report(MPI_COMM_WORLD, "allreduce", i, now_us() - t);

		line_up(MPI_COMM_WORLD);
		t = now_us();
		check(MPI_Comm_create_group(MPI_COMM_WORLD, world_group, 7, &c), "MPI_Comm_create_group");
		report(MPI_COMM_WORLD, "create", i, now_us() - t);
		MPI_Comm_free(&c);

		line_up(MPI_COMM_WORLD);
		t = now_us();
		check(MPIX_Comm_shrink(MPI_COMM_WORLD, &c), "MPIX_Comm_shrink");
		report(MPI_COMM_WORLD, "shrink", i, now_us() - t);
		MPI_Comm_free(&c);

		/* Revoke: everyone but rank 0 waits in a receive that only
		 * the revocation ends; each sends its time back to rank 0. */
		MPI_Comm_dup(MPI_COMM_WORLD, &c);
		MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
		line_up(MPI_COMM_WORLD);
		double t0 = 0, seen = 0;
		if (rank == 0) {
			usleep(2000); /* let the receives be posted */
			t0 = now_us();
			check(MPIX_Comm_revoke(c), "MPIX_Comm_revoke");
		} else {
			int rc = MPI_Recv(&out, 1, MPI_INT, 0, 1, c, MPI_STATUS_IGNORE);
			seen = now_us();
			int cls = rc;
			MPI_Error_class(rc, &cls);
			if (cls != MPIX_ERR_REVOKED)
				check(rc == MPI_SUCCESS ? MPI_ERR_OTHER : rc, "the receive on the revoked communicator");
		}
		MPI_Bcast(&t0, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
		report(MPI_COMM_WORLD, "revoke", i, rank == 0 ? 0 : seen - t0);
		MPI_Comm_free(&c);
	}

	/* The last rank dies; once every survivor knows, time shrink and
	 * agree on MPI_COMM_WORLD, which still has it. */
	int (*state)(int) = (int (*)(int))(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_rank_state");
	if (rank == size - 1) {
		fflush(stdout);
		raise(SIGKILL);
	}
	while (state && state(size - 1) != 1)
		usleep(1000);
	if (!state)
		usleep(500000); /* a ULFM MPI: time to notice */
	MPIX_Comm_failure_ack(MPI_COMM_WORLD);
	MPI_Comm live;
	check(MPIX_Comm_shrink(MPI_COMM_WORLD, &live), "MPIX_Comm_shrink");
	for (int i = 0; i < reps; i++) {
		line_up(MPI_COMM_WORLD);
		t = now_us();
		check(MPIX_Comm_shrink(MPI_COMM_WORLD, &c), "MPIX_Comm_shrink");
		report(live, "shrink_failed", i, now_us() - t);
		MPI_Comm_free(&c);

		line_up(MPI_COMM_WORLD);
		flag = 1;
		t = now_us();
		/* Open MPI 5's ULFM raises the acknowledged failure here too
		 * (the flag is agreed all the same); ftshim does not. */
		int rc = MPIX_Comm_agree(MPI_COMM_WORLD, &flag), cls = rc;
		MPI_Error_class(rc, &cls);
		check(cls == MPIX_ERR_PROC_FAILED ? MPI_SUCCESS : rc, "MPIX_Comm_agree");
		report(live, "agree_failed", i, now_us() - t);
	}
	MPI_Comm_free(&live);
	MPI_Group_free(&world_group);
	MPI_Finalize();
	return 0;
}
