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

/* MPI_Alltoallw on c, blocking, nonblocking and in place, checked
 * element by element: block i of 16 ints at byte 64 i; a sender of odd
 * rank sends a strided type (3 ints, every other one), so the holes of
 * its blocks must stay as they were. In place, each pair's count and
 * type are symmetric, as MPI requires. */
static inline void tu_check_alltoallw(MPI_Comm c)
{
	int me, n;
	MPI_Datatype strided;

	MPI_Comm_rank(c, &me);
	MPI_Comm_size(c, &n);
	MPI_Type_vector(3, 1, 2, MPI_INT, &strided);
	MPI_Type_commit(&strided);
	int *sb = malloc((size_t)16 * n * sizeof *sb), *rb = malloc((size_t)16 * n * sizeof *rb);
	int *sc = malloc((size_t)4 * n * sizeof *sc), *rc = sc + n, *sd = rc + n, *rd = sd + n;
	MPI_Datatype *st = malloc((size_t)2 * n * sizeof *st), *rt = st + n;
	/* Whether position k of a block of count elements of type t holds
	 * data. */
#define COVERED(t, count, k) ((t) == MPI_INT ? (k) < (count) : (k) < 5 * (count) && (k) % 5 % 2 == 0)
	for (int form = 0; form < 3; form++) {
		int in_place = form == 2;
		for (int j = 0; j < n; j++) {
			st[j] = in_place ? ((me + j) % 2 ? strided : MPI_INT) : me % 2 ? strided : MPI_INT;
			rt[j] = in_place ? st[j] : j % 2 ? strided : MPI_INT;
			sc[j] = in_place ? 1 + (me + j) % 3 : 1 + (me + 2 * j) % 2;
			rc[j] = in_place ? sc[j] : 1 + (j + 2 * me) % 2;
			sd[j] = rd[j] = 64 * j;
			for (int k = 0; k < 16; k++) {
				sb[16 * j + k] = me * 1000 + j * 10 + k;
				rb[16 * j + k] = in_place ? sb[16 * j + k] : -1;
			}
		}
		int rc_ = MPI_SUCCESS;
		MPI_Request q;
		if (form == 0)
			rc_ = MPI_Alltoallw(sb, sc, sd, st, rb, rc, rd, rt, c);
		else if (form == 1) {
			rc_ = MPI_Ialltoallw(sb, sc, sd, st, rb, rc, rd, rt, c, &q);
			if (rc_ == MPI_SUCCESS)
				rc_ = MPI_Wait(&q, MPI_STATUS_IGNORE);
		} else
			rc_ = MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, rb, rc, rd, rt, c);
		TU_CHECK(rc_ == MPI_SUCCESS, "alltoallw form %d: %d", form, rc_);
		int bad = 0;
		for (int i = 0; i < n; i++)
			for (int k = 0; k < 16; k++) {
				int was = in_place ? me * 1000 + i * 10 + k : -1;
				int want = COVERED(rt[i], rc[i], k) ? i * 1000 + me * 10 + k : was;
				bad += rb[16 * i + k] != want;
			}
		TU_CHECK(bad == 0, "alltoallw form %d: %d of %d ints wrong", form, bad, 16 * n);
	}
#undef COVERED
	MPI_Type_free(&strided);
	free(sb);
	free(rb);
	free(sc);
	free(st);
}

/* Matched probes on c: each member sends its right neighbour 3 ints
 * (tag 5) and 2 (tag 6), takes the first by MPI_Mprobe from
 * MPI_ANY_SOURCE and MPI_Mrecv, the second by MPI_Improbe polled and
 * MPI_Imrecv; the statuses name the left neighbour in c's ranks. */
static inline void tu_check_mprobe(MPI_Comm c)
{
	int me, n, got[3] = {-1, -1, -1}, got2[2] = {-1, -1}, count = -1, flag = 0;
	MPI_Comm_rank(c, &me);
	MPI_Comm_size(c, &n);
	int right = (me + 1) % n, left = (me + n - 1) % n;
	int out[3] = {me, me * 10, me * 100}, out2[2] = {me + 7, me + 8};
	MPI_Request q[2], r;
	MPI_Message m;
	MPI_Status st;

	MPI_Isend(out, 3, MPI_INT, right, 5, c, &q[0]);
	MPI_Isend(out2, 2, MPI_INT, right, 6, c, &q[1]);
	int rc = MPI_Mprobe(MPI_ANY_SOURCE, 5, c, &m, &st);
	TU_CHECK(rc == MPI_SUCCESS && st.MPI_SOURCE == left, "mprobe: %d from %d, not %d", rc, st.MPI_SOURCE, left);
	rc = MPI_Mrecv(got, 3, MPI_INT, &m, &st);
	MPI_Get_count(&st, MPI_INT, &count);
	TU_CHECK(rc == MPI_SUCCESS && st.MPI_SOURCE == left && st.MPI_TAG == 5 && count == 3 &&
		 got[0] == left && got[1] == left * 10 && got[2] == left * 100 && m == MPI_MESSAGE_NULL,
		 "mrecv: %d, from %d tag %d count %d: %d %d %d", rc, st.MPI_SOURCE, st.MPI_TAG, count,
		 got[0], got[1], got[2]);
	while (!flag && rc == MPI_SUCCESS)
		rc = MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &flag, &m, &st);
	TU_CHECK(rc == MPI_SUCCESS && st.MPI_SOURCE == left && st.MPI_TAG == 6, "improbe: %d, from %d tag %d", rc, st.MPI_SOURCE, st.MPI_TAG);
	rc = MPI_Imrecv(got2, 2, MPI_INT, &m, &r);
	if (rc == MPI_SUCCESS)
		rc = MPI_Wait(&r, &st);
	TU_CHECK(rc == MPI_SUCCESS && st.MPI_SOURCE == left && got2[0] == left + 7 && got2[1] == left + 8,
		 "imrecv: %d, from %d: %d %d", rc, st.MPI_SOURCE, got2[0], got2[1]);
	MPI_Status sent[2];
	MPI_Waitall(2, q, sent);
}

#endif
