/* detect.c: some ranks die, the others must all learn it, agree, and go
 * on. Usage:
 *
 *   detect --kill R@MS[,R@MS...] --how sigkill|sigsegv|exit|stop
 *          [--wait-ms 10000] [--linger-ms 0] [--finalize-skew-ms 0]
 *          [--spin] [--times-dir DIR]
 *
 * Every rank splits off a communicator of the survivors first (so the
 * survivors never need the dead). After a warm-up barrier each victim R
 * waits MS milliseconds and dies as told ("stop" stops itself with SIGSTOP after
 * writing its pid to stopped.RANK.pid; the test resumes it later, and it
 * must then be told it was excluded and exit). Each survivor polls
 * ftshim_failed_ranks until it has seen every victim, and prints how long
 * that took after the last death. With no victims, the ranks enter
 * MPI_Finalize up to --finalize-skew-ms apart (rank-dependent), which must
 * raise no false alarm. --linger-ms keeps the survivors running (sleeping,
 * or computing with --spin) after the detection, for false alarms to show.
 * --times-dir makes each victim write DIR/death.RANK and each survivor
 * DIR/seen.RANK: CLOCK_MONOTONIC in ns at its death and at the moment it
 * knew of all deaths (for benchmarks on one host, where the clock is
 * shared). The survivors then check that they all hold
 * exactly the victims as failed (no more, no fewer), that their failure
 * callbacks ran once per victim, and that a collective among them works;
 * rank 0 of the survivors writes "survivors.done" and prints the summary.
 * Exit status 1 if a check failed. */
#include <signal.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

typedef int (*failed_ranks_fn)(int *, int);
typedef int (*on_failure_fn)(void (*)(int, void *), void *);

static atomic_int callbacks_seen;
/* When the shim (its detector thread, which runs the callbacks) learned
 * the latest failure, CLOCK_MONOTONIC ns. */
static _Atomic long long last_learned_ns;

static long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void on_failure(int rank, void *arg)
{
	(void)rank;
	(void)arg;
	atomic_store(&last_learned_ns, mono_ns());
	atomic_fetch_add(&callbacks_seen, 1);
}

/* Sleep ms milliseconds even if signals (Hydra's SIGUSR1) interrupt. */
static void sleep_ms(double ms)
{
	long long end = mono_ns() + (long long)(ms * 1e6);

	for (long long left; (left = end - mono_ns()) > 0;) {
		struct timespec ts = { left / 1000000000LL, left % 1000000000LL };
		nanosleep(&ts, NULL);
	}
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static const char *arg_value(int argc, char **argv, const char *name, const char *def)
{
	for (int i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return argv[i + 1];
	return def;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static const char *times_dir;

static void write_time(const char *what, int rank, long long ns)
{
	char path[512], tmp[520];

	if (!times_dir)
		return;
	snprintf(path, sizeof path, "%s/%s.%d", times_dir, what, rank);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (f) {
		fprintf(f, "%lld\n", ns);
		fclose(f);
		rename(tmp, path);
	}
}

static _Noreturn void die(const char *how, int rank)
{
	write_time("death", rank, mono_ns());
	if (strcmp(how, "sigkill") == 0)
		raise(SIGKILL);
	if (strcmp(how, "sigsegv") == 0)
		raise(SIGSEGV);
	if (strcmp(how, "exit") == 0)
		exit(1);
	if (strcmp(how, "stop") == 0) {
		char path[64];
		snprintf(path, sizeof path, "stopped.%d.pid", rank);
		FILE *f = fopen(path, "w");
		fprintf(f, "%ld\n", (long)getpid());
		fclose(f);
		raise(SIGSTOP);
		/* Resumed: ftshim must make this process exit; give it time. */
		sleep(20);
		fprintf(stderr, "rank %d resumed and was not stopped by ftshim\n", rank);
		_exit(3);
	}
	fprintf(stderr, "unknown --how %s\n", how);
	_exit(2);
}

int main(int argc, char **argv)
{
	int rank, size;
	const char *how = arg_value(argc, argv, "--how", "sigkill");
	int skew_ms = atoi(arg_value(argc, argv, "--finalize-skew-ms", "0"));
	int spin = tu_has_arg(argc, argv, "--spin");
	times_dir = arg_value(argc, argv, "--times-dir", NULL);
	int wait_ms = atoi(arg_value(argc, argv, "--wait-ms", "10000"));
	int linger_ms = atoi(arg_value(argc, argv, "--linger-ms", "0"));
	on_failure_fn on_fail = (on_failure_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_on_failure");
	failed_ranks_fn failed_ranks = (failed_ranks_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_failed_ranks");

	if (!on_fail || !failed_ranks) {
		fprintf(stderr, "detect needs the shim preloaded\n");
		return 2;
	}
	on_fail(on_failure, NULL);
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	char *kill_arg = strdup(arg_value(argc, argv, "--kill", ""));
	int *victim = calloc(size, sizeof *victim), *die_ms = calloc(size, sizeof *die_ms);
	int nvictims = 0, last_ms = 0;
	for (char *tok = strtok(kill_arg, ","); tok; tok = strtok(NULL, ",")) {
		int v = atoi(tok);
		char *at = strchr(tok, '@');
		if (v >= 0 && v < size && !victim[v]) {
			victim[v] = 1;
			die_ms[v] = at ? atoi(at + 1) : 300;
			last_ms = die_ms[v] > last_ms ? die_ms[v] : last_ms;
			nvictims++;
		}
	}
	MPI_Comm survivors;
	MPI_Comm_split(MPI_COMM_WORLD, victim[rank] ? MPI_UNDEFINED : 0, rank, &survivors);
	MPI_Barrier(MPI_COMM_WORLD);
	double t_death = now_ms() + last_ms;

	if (victim[rank]) {
		sleep_ms(die_ms[rank]);
		die(how, rank);
	}

	/* Wait until every victim is known failed. */
	int *failed = malloc(size * sizeof *failed);
	int nfailed = 0, seen_all = 0;
	double t_seen = 0;
	while (now_ms() < t_death + wait_ms) {
		nfailed = failed_ranks(failed, size);
		int all = 1;
		for (int v = 0; v < size; v++) {
			if (!victim[v])
				continue;
			int found = 0;
			for (int i = 0; i < nfailed && i < size; i++)
				found |= failed[i] == v;
			all &= found;
		}
		if (all) {
			seen_all = 1;
			t_seen = now_ms();
			/* The shim knew when its callback ran; this loop only
			 * noticed up to a poll later. */
			write_time("seen", rank, atomic_load(&last_learned_ns));
			break;
		}
		usleep(1000);
	}
	TU_CHECK(seen_all, "did not see every victim fail within %d ms (saw %d)", wait_ms, nfailed);
	/* Time for a false alarm to show. */
	if (linger_ms && spin) {
		volatile double x = 1;
		for (double end = now_ms() + linger_ms; now_ms() < end;)
			for (int i = 0; i < 100000; i++)
				x = x * 1.0000001 + 1e-9;
	} else if (linger_ms) {
		sleep_ms(linger_ms);
	}
	nfailed = failed_ranks(failed, size);

	/* Everyone holds exactly the victims. */
	int *mine = calloc(size, sizeof *mine), *agree = calloc(size, sizeof *agree);
	for (int i = 0; i < nfailed && i < size; i++)
		mine[failed[i]] = 1;
	for (int r = 0; r < size; r++)
		TU_CHECK(mine[r] == victim[r], "rank %d is %s here but %s a victim", r,
			 mine[r] ? "failed" : "alive", victim[r] ? "is" : "is not");
	MPI_Allreduce(mine, agree, size, MPI_INT, MPI_SUM, survivors);
	int nsurv;
	MPI_Comm_size(survivors, &nsurv);
	for (int r = 0; r < size; r++)
		TU_CHECK(agree[r] == 0 || agree[r] == nsurv, "survivors disagree about rank %d", r);
	/* A failure is in the shim's table before its callback runs (on the
	 * detector thread, just after): give the callback a moment. */
	for (int i = 0; i < 2000 && atomic_load(&callbacks_seen) < nvictims; i++)
		sleep_ms(1);
	TU_CHECK(atomic_load(&callbacks_seen) == nvictims, "%d failure callbacks for %d victims",
		 atomic_load(&callbacks_seen), nvictims);

	double latency = t_seen - t_death, *all_lat = malloc(nsurv * sizeof *all_lat);
	MPI_Gather(&latency, 1, MPI_DOUBLE, all_lat, 1, MPI_DOUBLE, 0, survivors);
	int srank, bad = 0, anybad = 0;
	MPI_Comm_rank(survivors, &srank);
	bad = tu_failures;
	MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_SUM, survivors);
	if (srank == 0) {
		qsort(all_lat, nsurv, sizeof *all_lat, cmp_double);
		printf("victims %d (%s), survivors %d agree; detection after the deaths: median %.1f ms, max %.1f ms\n",
		       nvictims, how, nsurv, all_lat[nsurv / 2], all_lat[nsurv - 1]);
		printf("%s\n", anybad ? "CHECKS FAILED" : "ALL CHECKS PASSED");
		fflush(stdout);
		FILE *f = fopen("survivors.done", "w");
		if (f)
			fclose(f);
	}
	MPI_Comm_free(&survivors);
	if (skew_ms)
		sleep_ms(skew_ms * (double)srank / (nsurv > 1 ? nsurv - 1 : 1));
	MPI_Finalize();
	return tu_failures ? 1 : 0;
}
