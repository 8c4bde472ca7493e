/* testutil.h: helpers shared by the MPI test programs. The programs are
 * ordinary MPI programs built with the flavour's mpicc; they reach the
 * shim's public API through dlsym, so that the same binary also runs
 * without the shim (the tests compare both runs). */
#ifndef FTSHIM_TESTUTIL_H
#define FTSHIM_TESTUTIL_H

#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "launch_rank.h"

static int tu_failures;

#define TU_CHECK(cond, ...) \
	do { \
		if (!(cond)) { \
			int tu_rank_; \
			MPI_Comm_rank(MPI_COMM_WORLD, &tu_rank_); \
			fprintf(stderr, "CHECK FAILED rank %d %s:%d: %s: ", tu_rank_, __FILE__, \
				__LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
			tu_failures++; \
		} \
	} while (0)

typedef int (*tu_comm_id_fn)(MPI_Comm, uint64_t *);
typedef int (*tu_active_fn)(void);

static inline tu_comm_id_fn tu_comm_id(void)
{
	return (tu_comm_id_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_comm_id");
}

static inline int tu_shim_active(void)
{
	tu_active_fn f = (tu_active_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_active");

	return f ? f() : 0;
}

static inline int tu_has_arg(int argc, char **argv, const char *arg)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], arg) == 0)
			return 1;
	return 0;
}

/* MPI_Init for a program that needs exactly nranks ranks and, if
 * need_shim, the shim: otherwise rank 0 says so ("NAME: needs") and the
 * program ends with status 2. Returns this rank. */
static inline int tu_init(int *argc, char ***argv, int nranks, int need_shim, const char *needs)
{
	int rank, size;

	MPI_Init(argc, argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != nranks || (need_shim && !tu_shim_active())) {
		if (rank == 0)
			fprintf(stderr, "%s: needs %s\n", (*argv)[0], needs);
		MPI_Finalize();
		exit(2);
	}
	return rank;
}

static inline void tu_nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* CLOCK_MONOTONIC, in seconds. */
static inline double tu_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#ifdef FTSHIM_MPI_EXT_H
/* (For programs that include ftshim's mpi-ext.h first.) Until this rank's shim
 * knows that a member of comm failed, at most 5 s; a check fails if it
 * never does. */
static inline void tu_await_failure(MPI_Comm comm)
{
	for (int i = 0; i < 5000; i++) {
		MPI_Group g;
		int n = 0;
		MPIX_Comm_get_failed(comm, &g);
		MPI_Group_size(g, &n);
		MPI_Group_free(&g);
		if (n > 0)
			return;
		tu_nap_ms(1);
	}
	TU_CHECK(0, "no failure learned in 5 s");
}
#endif

/* After failures: the survivors, shrunk to s (shrink returned rc), must
 * be expect_size; they sum their failed checks over s, whose rank 0
 * prints ALL CHECKS PASSED or CHECKS FAILED; s is freed, MPI finalized.
 * Returns the exit status: 1 if a check failed here. */
static inline int tu_survivors_finish(int rc, MPI_Comm s, int expect_size)
{
	int ssize = 0, srank = -1, any = -1;

	TU_CHECK(rc == MPI_SUCCESS, "shrink: %d", rc);
	if (rc == MPI_SUCCESS) {
		MPI_Comm_size(s, &ssize);
		MPI_Comm_rank(s, &srank);
		TU_CHECK(ssize == expect_size, "shrunk to %d, not %d", ssize, expect_size);
		MPI_Allreduce(&tu_failures, &any, 1, MPI_INT, MPI_SUM, s);
		if (srank == 0)
			printf("%s\n", any == 0 ? "ALL CHECKS PASSED" : "CHECKS FAILED");
		MPI_Comm_free(&s);
	}
	MPI_Finalize();
	return tu_failures ? 1 : 0;
}

/* Finalize and exit 1 if any check failed anywhere. */
static inline int tu_finish(void)
{
	int any = 0;

	MPI_Allreduce(&tu_failures, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Finalize();
	return any ? 1 : 0;
}

#endif
