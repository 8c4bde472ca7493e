/* injected.c: a program for FTSHIM_INJECT to kill. Usage:
 *
 *   injected (--expect R,R,... | --expect-count K) [--iterations N]
 *            [--iter-ms M] [--wait-ms W] [--linger-ms L]
 *            [--late-rank R --late-ms D]
 *
 * Rank R (as the launcher numbers it) sleeps D ms before MPI_Init: a
 * slow start, which time triggers must not count.
 * Every rank runs N iterations; each marks ftshim_inject_point("iteration",
 * i), makes one MPI_Allreduce, one blocking MPI_Send and one blocking
 * MPI_Recv (all on MPI_COMM_SELF, so that a dead rank blocks nobody;
 * the sends and receives take the wrappers' fast path when nothing
 * counts calls) and sleeps M ms. Then the ranks that the injection should
 * kill wait to be killed (exit 3 if they are not within W ms), and the
 * others wait until they know of the failures: with --expect, exactly the
 * listed ranks (they then check that they agree, and rank 0 of them prints
 * ALL CHECKS PASSED); with --expect-count, any K ranks (each survivor then
 * prints the ranks it knows failed, for the test to compare). The
 * survivors then wait L ms before MPI_Finalize (for a paused rank to come
 * back while the job still runs). */
#include <time.h>
#include <unistd.h>

#include "testutil.h"

typedef int (*failed_ranks_fn)(int *, int);
typedef void (*point_fn)(const char *, long);

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long long ms)
{
	for (long long end = mono_ms() + ms, left; (left = end - mono_ms()) > 0;) {
		struct timespec ts = { left / 1000, (left % 1000) * 1000000 };
		nanosleep(&ts, NULL);
	}
}

static const char *arg_value(int argc, char **argv, const char *name, const char *def)
{
	for (int i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return argv[i + 1];
	return def;
}

int main(int argc, char **argv)
{
	int rank, size;
	int iterations = atoi(arg_value(argc, argv, "--iterations", "20"));
	int iter_ms = atoi(arg_value(argc, argv, "--iter-ms", "20"));
	int wait_ms = atoi(arg_value(argc, argv, "--wait-ms", "15000"));
	int expect_count = atoi(arg_value(argc, argv, "--expect-count", "0"));
	int linger_ms = atoi(arg_value(argc, argv, "--linger-ms", "0"));
	failed_ranks_fn failed_ranks = (failed_ranks_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_failed_ranks");
	point_fn point = (point_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_inject_point");

	int late_rank = atoi(arg_value(argc, argv, "--late-rank", "-1"));
	if (late_rank >= 0 && tu_launch_rank() == late_rank)
		sleep_ms(atoi(arg_value(argc, argv, "--late-ms", "0")));
	if (!failed_ranks || !point) {
		fprintf(stderr, "injected needs the shim preloaded\n");
		return 2;
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int *victim = calloc(size, sizeof *victim), nvictims = 0;
	char *list = strdup(arg_value(argc, argv, "--expect", ""));
	for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		int v = atoi(tok);
		if (v >= 0 && v < size && !victim[v]) {
			victim[v] = 1;
			nvictims++;
		}
	}
	if (expect_count == 0)
		expect_count = nvictims;
	MPI_Comm survivors = MPI_COMM_NULL;
	if (nvictims)
		MPI_Comm_split(MPI_COMM_WORLD, victim[rank] ? MPI_UNDEFINED : 0, rank, &survivors);
	MPI_Barrier(MPI_COMM_WORLD);

	for (int i = 1; i <= iterations; i++) {
		int x = i, y = 0;
		point("iteration", i);
		MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF);
		MPI_Request r;
		MPI_Irecv(&y, 1, MPI_INT, 0, i, MPI_COMM_SELF, &r);
		MPI_Send(&x, 1, MPI_INT, 0, i, MPI_COMM_SELF);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
		MPI_Isend(&x, 1, MPI_INT, 0, i, MPI_COMM_SELF, &r);
		MPI_Recv(&y, 1, MPI_INT, 0, i, MPI_COMM_SELF, MPI_STATUS_IGNORE);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
		TU_CHECK(y == x, "iteration %d: received %d from itself", i, y);
		sleep_ms(iter_ms);
	}
	if (victim[rank]) {
		sleep_ms(wait_ms);
		fprintf(stderr, "rank %d was not killed\n", rank);
		_exit(3);
	}

	int *failed = malloc(size * sizeof *failed), nfailed = 0;
	for (long long end = mono_ms() + wait_ms; mono_ms() < end; sleep_ms(2)) {
		nfailed = failed_ranks(failed, size);
		if (nfailed >= expect_count)
			break;
	}
	TU_CHECK(nfailed >= expect_count, "knows %d failures, expected %d", nfailed, expect_count);
	sleep_ms(linger_ms);
	if (survivors == MPI_COMM_NULL) {
		/* One write per line: the launcher must not mix lines. */
		char line[1024];
		size_t used = (size_t)snprintf(line, sizeof line, "rank %d knows failed:", rank);
		for (int i = 0; i < nfailed && used + 16 < sizeof line; i++)
			used += (size_t)snprintf(line + used, sizeof line - used, "%s%d", i ? "," : " ", failed[i]);
		line[used++] = '\n';
		fflush(stdout);
		ssize_t w = write(1, line, used);
		(void)w;
		MPI_Finalize();
		return tu_failures ? 1 : 0;
	}
	int *mine = calloc(size, sizeof *mine), *sum = calloc(size, sizeof *sum), nsurv, srank, bad;
	for (int i = 0; i < nfailed; i++)
		mine[failed[i]] = 1;
	for (int r = 0; r < size; r++)
		TU_CHECK(mine[r] == victim[r], "rank %d is %s here", r, mine[r] ? "failed" : "alive");
	MPI_Allreduce(mine, sum, size, MPI_INT, MPI_SUM, survivors);
	MPI_Comm_size(survivors, &nsurv);
	MPI_Comm_rank(survivors, &srank);
	for (int r = 0; r < size; r++)
		TU_CHECK(sum[r] == 0 || sum[r] == nsurv, "survivors disagree about rank %d", r);
	MPI_Allreduce(&tu_failures, &bad, 1, MPI_INT, MPI_SUM, survivors);
	if (srank == 0)
		printf("%s\n", bad ? "CHECKS FAILED" : "ALL CHECKS PASSED");
	MPI_Comm_free(&survivors);
	MPI_Finalize();
	return tu_failures ? 1 : 0;
}
