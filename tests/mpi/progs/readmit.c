/* readmit.c: re-admission (FTSHIM_READMIT=1), with 4 or more ranks.
 * Rank 2 stops itself with SIGSTOP (its pid in stopped.2.pid); once rank
 * 0 has seen it declared failed it writes declared.done, and the test
 * resumes rank 2. Then:
 *  - every other rank sees rank 2 failed once, then re-admitted once
 *    (ftshim_on_failure, ftshim_on_readmit, ftshim_rank_state);
 *  - rank 2 is not excluded: its blocked MPI_Barrier on MPI_COMM_WORLD
 *    returns MPI_ERR_PROC_FAILED once it is back, as every communicator
 *    it was in stays failed;
 *  - point-to-point between rank 0 and rank 2 works again;
 *  - a collective on MPI_COMM_WORLD fails at every rank, and the others
 *    shrink it to a communicator without rank 2, which works.
 * Rank 0 alone prints, ALL CHECKS PASSED if every rank's checks passed
 * (rank 2 tells rank 0 its own count of failed checks): lines printed by
 * several ranks at once can be interleaved by the launcher. */
#include <signal.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "mpi-ext.h"
#include "testutil.h"

#define VICTIM 2

static atomic_int failures_seen, readmissions_seen;

static void on_failure(int world_rank, void *arg)
{
	(void)arg;
	if (world_rank == VICTIM)
		atomic_fetch_add(&failures_seen, 1);
}

static void on_readmit(int world_rank, void *arg)
{
	(void)arg;
	if (world_rank == VICTIM)
		atomic_fetch_add(&readmissions_seen, 1);
}

typedef int (*register_fn)(void (*)(int, void *), void *);
typedef int (*state_fn)(int);

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Wait up to 20 s for cond() to hold. */
static int wait_for(int (*cond)(void))
{
	for (int i = 0; i < 2000; i++) {
		if (cond())
			return 1;
		nap_ms(10);
	}
	return 0;
}

static state_fn rank_state;

static int victim_failed(void)
{
	return atomic_load(&failures_seen) > 0 && rank_state(VICTIM) == 1;
}

static int victim_back(void)
{
	return atomic_load(&readmissions_seen) > 0 && rank_state(VICTIM) == 0;
}

static int class_of(int rc)
{
	int cls = rc;

	MPI_Error_class(rc, &cls);
	return cls;
}

int main(int argc, char **argv)
{
	int rank, size, rc;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	register_fn on_fail = (register_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_on_failure");
	register_fn on_back = (register_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_on_readmit");
	rank_state = (state_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_rank_state");
	TU_CHECK(on_fail && on_back && rank_state, "the shim's API is not there");
	if (!on_fail || !on_back || !rank_state || size < 4) {
		MPI_Finalize();
		return 1;
	}
	on_fail(on_failure, NULL);
	on_back(on_readmit, NULL);
	MPI_Barrier(MPI_COMM_WORLD);

	if (rank == VICTIM) {
		FILE *f = fopen("stopped.2.pid", "w");
		if (f) {
			fprintf(f, "%d\n", (int)getpid());
			fclose(f);
		}
		raise(SIGSTOP);
		/* Resumed. Declared failed meanwhile: the barrier (which no one
		 * else enters) waits until this rank is back, then fails. */
		rc = MPI_Barrier(MPI_COMM_WORLD);
		TU_CHECK(class_of(rc) == MPIX_ERR_PROC_FAILED, "barrier on the world after re-admission: %d", rc);
		int value = 0;
		rc = MPI_Recv(&value, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		TU_CHECK(rc == MPI_SUCCESS && value == 42, "receive from rank 0: rc %d value %d", rc, value);
		value++;
		rc = MPI_Send(&value, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
		TU_CHECK(rc == MPI_SUCCESS, "send to rank 0: %d", rc);
		int sum = 0;
		rc = MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		TU_CHECK(class_of(rc) == MPIX_ERR_PROC_FAILED, "allreduce on the world: %d", rc);
		MPI_Send(&tu_failures, 1, MPI_INT, 0, 9, MPI_COMM_WORLD);
		MPI_Finalize();
		return tu_failures ? 1 : 0;
	}

	TU_CHECK(wait_for(victim_failed), "rank %d never saw rank %d fail", rank, VICTIM);
	if (rank == 0) {
		nap_ms(200); /* let the news reach everyone */
		FILE *f = fopen("declared.done", "w");
		if (f)
			fclose(f);
	}
	TU_CHECK(wait_for(victim_back), "rank %d never saw rank %d come back", rank, VICTIM);
	TU_CHECK(atomic_load(&failures_seen) == 1 && atomic_load(&readmissions_seen) == 1,
		 "rank %d: %d failures and %d re-admissions of rank %d, expected one each", rank,
		 atomic_load(&failures_seen), atomic_load(&readmissions_seen), VICTIM);
	int victim_bad = 0;
	if (rank == 0) {
		int value = 42, back = 0;
		rc = MPI_Send(&value, 1, MPI_INT, VICTIM, 7, MPI_COMM_WORLD);
		TU_CHECK(rc == MPI_SUCCESS, "send to the re-admitted rank: %d", rc);
		rc = MPI_Recv(&back, 1, MPI_INT, VICTIM, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		TU_CHECK(rc == MPI_SUCCESS && back == 43, "receive from the re-admitted rank: rc %d value %d", rc, back);
	}
	/* The world lost a member once: it stays failed for collectives. */
	int one = 1, sum = 0;
	rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	TU_CHECK(class_of(rc) == MPIX_ERR_PROC_FAILED, "allreduce on the world: %d", rc);
	MPI_Comm live;
	rc = MPIX_Comm_shrink(MPI_COMM_WORLD, &live);
	TU_CHECK(rc == MPI_SUCCESS, "shrink: %d", rc);
	if (rc == MPI_SUCCESS) {
		int lsize = 0;
		MPI_Comm_size(live, &lsize);
		TU_CHECK(lsize == size - 1, "shrunk to %d ranks, expected %d", lsize, size - 1);
		MPI_Comm_set_errhandler(live, MPI_ERRORS_RETURN);
		rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, live);
		TU_CHECK(rc == MPI_SUCCESS && sum == size - 1, "allreduce on the shrunk world: rc %d sum %d", rc, sum);
		int bad = tu_failures, allbad = 0;
		MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, live);
		if (rank == 0) {
			MPI_Recv(&victim_bad, 1, MPI_INT, VICTIM, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			printf("%s\n", allbad || victim_bad ? "CHECKS FAILED" : "ALL CHECKS PASSED");
		}
		MPI_Comm_free(&live);
	}
	MPI_Finalize();
	return tu_failures ? 1 : 0;
}
