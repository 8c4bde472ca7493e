/* victim.c: a job whose ranks someone outside kills or stops (the test,
 * through ftshim-inject); the others must all learn it and agree. Usage:
 *
 *   victim --expect R[,R...] | --expect any:K  [--wait-ms 20000] [--linger-ms 300]
 *
 * With a list, the listed ranks are the victims: the others split off a
 * communicator of survivors first (so they never need the dead). After a
 * barrier every rank writes ready.RANK in the current directory, for the
 * test to know the job is under way. A victim then sleeps until it is
 * killed (or, if nobody does, says so after --wait-ms and exits 3). Each
 * survivor polls ftshim_failed_ranks until every victim is known failed
 * (at most --wait-ms), waits --linger-ms for a false alarm to show, and
 * checks that it holds exactly the victims as failed; the survivors then
 * check they agree, and survivor rank 0 prints "ALL CHECKS PASSED".
 *
 * With any:K the victims are not known in advance (ftshim-inject kill
 * --random chooses them): every rank polls until K ranks are known
 * failed; those still alive check there are exactly K, make their
 * communicator from the ranks they hold alive (MPI_Comm_create_group,
 * which only its members call) and go on as above; each survivor also
 * prints "rank R holds failed: A,B" so that the test can compare the ranks
 * with the ones it was told were killed. Exit status 1 if a check failed. */
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

typedef int (*failed_ranks_fn)(int *, int);

static long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Sleep ms milliseconds even if signals (Hydra's SIGUSR1) interrupt. */
static void sleep_ms(double ms)
{
	long long end = mono_ns() + (long long)(ms * 1e6);

	for (long long left; (left = end - mono_ns()) > 0;) {
		struct timespec ts = { left / 1000000000LL, left % 1000000000LL };
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
	}
}

static const char *arg_value(int argc, char **argv, const char *name, const char *def)
{
	for (int i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return argv[i + 1];
	return def;
}

static void write_ready(int rank)
{
	char path[64], tmp[80];

	snprintf(path, sizeof path, "ready.%d", rank);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (f) {
		fprintf(f, "%ld\n", (long)getpid());
		fclose(f);
		rename(tmp, path);
	}
}

int main(int argc, char **argv)
{
	int rank, size;
	const char *expect = arg_value(argc, argv, "--expect", NULL);
	int wait_ms = atoi(arg_value(argc, argv, "--wait-ms", "20000"));
	int linger_ms = atoi(arg_value(argc, argv, "--linger-ms", "300"));
	failed_ranks_fn failed_ranks =
		(failed_ranks_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_failed_ranks");

	if (!failed_ranks || !expect) {
		fprintf(stderr,
			"usage: victim --expect R[,R...]|any:K (with the shim preloaded)\n");
		return 2;
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	int *victim = calloc(size, sizeof *victim), nvictims = 0, any = 0;
	if (strncmp(expect, "any:", 4) == 0) {
		any = 1;
		nvictims = atoi(expect + 4);
	} else {
		char *list = strdup(expect);
		for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
			int v = atoi(tok);
			if (v >= 0 && v < size && !victim[v]) {
				victim[v] = 1;
				nvictims++;
			}
		}
		free(list);
	}
	MPI_Comm survivors = MPI_COMM_NULL;
	if (!any)
		MPI_Comm_split(MPI_COMM_WORLD, victim[rank] ? MPI_UNDEFINED : 0, rank, &survivors);
	MPI_Barrier(MPI_COMM_WORLD);
	write_ready(rank);

	if (victim[rank]) {
		/* Until someone outside kills this process (or stops it: then
		 * ftshim makes it exit when it is resumed). */
		sleep_ms(wait_ms + linger_ms + 2000);
		fprintf(stderr, "victim: rank %d was not killed within %d ms\n", rank, wait_ms);
		_exit(3);
	}

	/* Wait until every victim (or any nvictims ranks) is known failed. */
	int *failed = malloc(size * sizeof *failed), nfailed = 0, seen_all = 0;
	long long deadline = mono_ns() + (long long)wait_ms * 1000000LL;
	while (mono_ns() < deadline) {
		nfailed = failed_ranks(failed, size);
		int all = any ? nfailed >= nvictims : 1;
		for (int v = 0; !any && v < size; v++) {
			if (!victim[v])
				continue;
			int found = 0;
			for (int i = 0; i < nfailed && i < size; i++)
				found |= failed[i] == v;
			all &= found;
		}
		if (all) {
			seen_all = 1;
			break;
		}
		usleep(2000);
	}
	TU_CHECK(seen_all, "did not see the victims fail within %d ms (saw %d)", wait_ms, nfailed);
	sleep_ms(linger_ms);
	nfailed = failed_ranks(failed, size);

	int *mine = calloc(size, sizeof *mine), *agree = calloc(size, sizeof *agree);
	char list[256] = "";
	size_t used = 0;
	for (int i = 0; i < nfailed && i < size; i++) {
		mine[failed[i]] = 1;
		used += (size_t)snprintf(list + used, sizeof list - used, "%s%d", i ? "," : "",
					 failed[i]);
		if (used >= sizeof list)
			used = sizeof list - 1;
	}
	if (any) {
		TU_CHECK(nfailed == nvictims, "%d ranks failed, expected %d", nfailed, nvictims);
		TU_CHECK(!mine[rank], "this rank holds itself failed");
		printf("rank %d holds failed: %s\n", rank, list);
		fflush(stdout);
		/* The survivors as this rank sees them; the others see the
		 * same if they agree (if not, the job times out). */
		MPI_Group world, alive;
		int *members = malloc(size * sizeof *members), n = 0;
		for (int r = 0; r < size; r++)
			if (!mine[r])
				members[n++] = r;
		MPI_Comm_group(MPI_COMM_WORLD, &world);
		MPI_Group_incl(world, n, members, &alive);
		MPI_Comm_create_group(MPI_COMM_WORLD, alive, 7, &survivors);
		MPI_Group_free(&alive);
		MPI_Group_free(&world);
		free(members);
	} else {
		for (int r = 0; r < size; r++)
			TU_CHECK(mine[r] == victim[r], "rank %d is %s here but %s a victim", r,
				 mine[r] ? "failed" : "alive", victim[r] ? "is" : "is not");
	}

	/* The survivors agree, and a collective among them works. */
	int nsurv, srank, bad, anybad = 0;
	MPI_Allreduce(mine, agree, size, MPI_INT, MPI_SUM, survivors);
	MPI_Comm_size(survivors, &nsurv);
	MPI_Comm_rank(survivors, &srank);
	for (int r = 0; r < size; r++)
		TU_CHECK(agree[r] == 0 || agree[r] == nsurv, "survivors disagree about rank %d", r);
	bad = tu_failures;
	MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_SUM, survivors);
	if (srank == 0) {
		printf("victims %d (%s), survivors %d agree\n", nfailed, list, nsurv);
		printf("%s\n", anybad ? "CHECKS FAILED" : "ALL CHECKS PASSED");
		fflush(stdout);
	}
	MPI_Comm_free(&survivors);
	MPI_Finalize();
	return tu_failures ? 1 : 0;
}
