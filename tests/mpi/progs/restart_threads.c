/* restart_threads.c: a program that restart in place must refuse or may
 * restart, by what its threads do when a rank dies. A ring of STEPS
 * MPI_Sendrecv steps (1 ms apart) whose answer rank 0 checks; each entry
 * into main says "in main: rank R (run N)"; rank 0 ends with "result: X
 * (expected X)".
 *
 * Usage: restart_threads STEPS MODE, MODE one of:
 *   thread    every rank starts a thread of its own that runs to the end
 *             (refused: main cannot run again beside it)
 *   joined    every rank starts a thread and joins it before the ring
 *             (restarts)
 *   omp       the ring's MPI_Sendrecv runs on the master thread inside an
 *             OpenMP parallel region of 2 threads (MPI_THREAD_FUNNELED;
 *             refused: the team would wait for the master for ever)
 *   omp-idle  each step computes in a parallel region of 2 threads and
 *             calls MPI outside it (restarts: the pool's threads idle) */
#include <mpi.h>
#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static atomic_int stop;
static int runs;

static void *spin(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		tu_nap_ms(5);
	return NULL;
}

static void *quick(void *arg)
{
	return arg;
}

static unsigned long long exchange(int rank, int size, long step, unsigned long long acc)
{
	unsigned long long out = acc + (unsigned long long)(rank + 1) * (unsigned long long)step, in = 0;

	MPI_Sendrecv(&out, 1, MPI_UNSIGNED_LONG_LONG, (rank + 1) % size, 7, &in, 1, MPI_UNSIGNED_LONG_LONG,
		     (rank + size - 1) % size, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	return (acc * 3 + in) % 1000000007ull;
}

int main(int argc, char **argv)
{
	long steps = argc > 2 ? atol(argv[1]) : 0;
	const char *mode = argc > 2 ? argv[2] : "";
	int rank, size, provided;
	pthread_t t;

	if (steps <= 0 || (strcmp(mode, "thread") && strcmp(mode, "joined") && strcmp(mode, "omp") &&
			   strcmp(mode, "omp-idle"))) {
		fprintf(stderr, "usage: restart_threads STEPS thread|joined|omp|omp-idle\n");
		return 2;
	}
	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	printf("in main: rank %d (run %d)\n", rank, ++runs);
	fflush(stdout);
	if (strcmp(mode, "thread") == 0 || strcmp(mode, "joined") == 0) {
		atomic_store(&stop, 0);
		if (pthread_create(&t, NULL, strcmp(mode, "thread") == 0 ? spin : quick, NULL) != 0)
			MPI_Abort(MPI_COMM_WORLD, 3);
		if (strcmp(mode, "joined") == 0)
			pthread_join(t, NULL);
	}
	unsigned long long acc = 0;
	for (long s = 0; s < steps; s++) {
		if (strcmp(mode, "omp") == 0) {
#pragma omp parallel num_threads(2)
			{
#pragma omp master
				acc = exchange(rank, size, s, acc);
#pragma omp barrier
			}
		} else {
			if (strcmp(mode, "omp-idle") == 0) {
				volatile unsigned long long sum = 0;
#pragma omp parallel for num_threads(2) reduction(+ : sum)
				for (int i = 0; i < 1000; i++)
					sum += (unsigned long long)i;
				(void)sum;
			}
			acc = exchange(rank, size, s, acc);
		}
		tu_nap_ms(1);
	}
	if (strcmp(mode, "thread") == 0) {
		atomic_store(&stop, 1);
		pthread_join(t, NULL);
	}
	/* The same ring serially, on rank 0. */
	unsigned long long all[64] = { 0 }, want[64] = { 0 };
	MPI_Gather(&acc, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
	if (rank == 0 && size <= 64) {
		for (long s = 0; s < steps; s++) {
			unsigned long long out[64];
			for (int r = 0; r < size; r++)
				out[r] = want[r] + (unsigned long long)(r + 1) * (unsigned long long)s;
			for (int r = 0; r < size; r++)
				want[r] = (want[r] * 3 + out[(r + size - 1) % size]) % 1000000007ull;
		}
		int same = 1;
		for (int r = 0; r < size; r++)
			same = same && all[r] == want[r];
		printf("result: %s\n", same ? "right" : "wrong");
	}
	fflush(stdout);
	MPI_Finalize();
	return 0;
}
