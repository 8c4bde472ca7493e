/* partition.c: a job for a test to cut in two. Usage:
 *
 *   partition --expect R,R,... [--seconds S] [--iter-ms M]
 *
 * After MPI_Init and one MPI_Allreduce over MPI_COMM_WORLD (so that every
 * rank has talked to every host), each rank prints "rank R ready". Then,
 * for about S seconds (default 8), it makes an MPI_Allreduce on its working
 * communicator (at first a duplicate of MPI_COMM_WORLD, errors returned)
 * and sleeps M ms (default 50). When the allreduce fails anywhere
 * (MPI_ERR_PROC_FAILED or MPI_ERR_REVOKED, made uniform by
 * MPIX_Comm_agree), the ranks revoke the communicator, shrink it and go on
 * with what is left, as a ULFM program does. The ranks listed in
 * --expect are those the test cuts off: ftshim must end them (fail-stop);
 * one that gets out of the loop prints "rank R still runs" and exits 3. The others check at the end
 * that they know exactly the listed ranks failed, that their communicator
 * holds everyone else and that its last allreduce counted them all, and
 * that they agree; the first of them prints ALL CHECKS PASSED. */
#include <time.h>
#include <unistd.h>

#include "mpi-ext.h"
#include "testutil.h"

typedef int (*failed_ranks_fn)(int *, int);

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *arg_value(int argc, char **argv, const char *name, const char *def)
{
	for (int i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return argv[i + 1];
	return def;
}

/* One write per line: the launcher must not mix lines. */
static void say(const char *fmt, int rank)
{
	char line[128];
	int len = snprintf(line, sizeof line, fmt, rank);

	fflush(stdout);
	ssize_t w = write(1, line, (size_t)len);
	(void)w;
}

int main(int argc, char **argv)
{
	int rank, size, one = 1, total = 0;
	long long seconds = atoll(arg_value(argc, argv, "--seconds", "8"));
	int iter_ms = atoi(arg_value(argc, argv, "--iter-ms", "50"));
	failed_ranks_fn failed_ranks = (failed_ranks_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_failed_ranks");

	if (!failed_ranks) {
		fprintf(stderr, "partition needs the shim preloaded\n");
		return 2;
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int *cut = calloc(size, sizeof *cut), ncut = 0;
	char *list = strdup(arg_value(argc, argv, "--expect", ""));
	for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		int v = atoi(tok);
		if (v >= 0 && v < size && !cut[v]) {
			cut[v] = 1;
			ncut++;
		}
	}
	MPI_Comm comm;
	MPI_Comm_dup(MPI_COMM_WORLD, &comm);
	MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
	MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	TU_CHECK(total == size, "the first allreduce gave %d", total);
	say("rank %d ready\n", rank);

	/* The ranks stop together: each allreduce also sums "my time is
	 * up", and MPIX_Comm_agree makes its success uniform (a collective
	 * may fail at some ranks only), so that all take the same steps. */
	int shrinks = 0, counts[2] = { 0, 0 };
	for (long long end = mono_ms() + seconds * 1000;;) {
		int mine_now[2] = { 1, mono_ms() >= end };
		int rc = MPI_Allreduce(mine_now, counts, 2, MPI_INT, MPI_SUM, comm), ok = rc == MPI_SUCCESS;
		if (!ok) {
			int cls;
			MPI_Error_class(rc, &cls);
			TU_CHECK(cls == MPIX_ERR_PROC_FAILED || cls == MPIX_ERR_REVOKED,
				 "allreduce returned error class %d", cls);
		}
		if (MPIX_Comm_agree(comm, &ok) != MPI_SUCCESS || !ok) {
			MPI_Comm smaller;
			MPIX_Comm_revoke(comm);
			if (MPIX_Comm_shrink(comm, &smaller) != MPI_SUCCESS)
				continue; /* another failure during the shrink: again */
			MPI_Comm_free(&comm);
			comm = smaller;
			MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
			shrinks++;
			continue;
		}
		if (counts[1] > 0)
			break;
		usleep((useconds_t)iter_ms * 1000);
	}
	total = counts[0];
	if (cut[rank]) {
		say("rank %d still runs\n", rank);
		_exit(3);
	}

	int *failed = malloc(size * sizeof *failed), nfailed = failed_ranks(failed, size);
	int *mine = calloc(size, sizeof *mine), *sum = calloc(size, sizeof *sum), n, crank, bad;
	for (int i = 0; i < nfailed; i++)
		mine[failed[i]] = 1;
	for (int r = 0; r < size; r++)
		TU_CHECK(mine[r] == cut[r], "rank %d is %s here", r, mine[r] ? "failed" : "alive");
	MPI_Comm_size(comm, &n);
	MPI_Comm_rank(comm, &crank);
	TU_CHECK(n == size - ncut, "the communicator holds %d ranks after %d shrinks", n, shrinks);
	TU_CHECK(total == n, "the last allreduce counted %d of %d", total, n);
	TU_CHECK(MPI_Allreduce(mine, sum, size, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS, "allreduce");
	for (int r = 0; r < size; r++)
		TU_CHECK(sum[r] == 0 || sum[r] == n, "the survivors disagree about rank %d", r);
	MPI_Allreduce(&tu_failures, &bad, 1, MPI_INT, MPI_SUM, comm);
	if (crank == 0)
		printf("%s\n", bad ? "CHECKS FAILED" : "ALL CHECKS PASSED");
	MPI_Comm_free(&comm);
	MPI_Finalize();
	return tu_failures ? 1 : 0;
}
