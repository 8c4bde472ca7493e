/* rts_ring.c: the fault-tolerant ring of Hursey and Graham ("Building a
 * Fault Tolerant MPI Application: A Ring Communication Example", 2011),
 * as the paper writes it (its figures 2 to 13), against the run-through
 * stabilization interface of ftshim-rts.h: no revoke and no shrink. The
 * root (rank 0, which the paper assumes never fails) sends a message
 * around the ring once per iteration; every other process receives it
 * from its left neighbour, adds one and passes it to its right. A process
 * skips failed neighbours (MPI_Comm_validate_rank, figure 4), resends
 * when its right neighbour fails (a receive posted to it is the failure
 * detector, figure 9), drops the duplicates this makes (the iteration
 * marker, figure 9's lines 24-28), and the ring ends with the
 * nonblocking MPI_Icomm_validate_all that runs while the ring still
 * repairs itself (figure 13), or with the root's termination message
 * (figure 11, argument `fig11`). The root prints one line, e.g.
 *
 *     rts_ring: 50 iterations completed, each once; survivors 4 of 5; lost ranks 2; validate_all agreed 1 failed
 *
 * and every survivor exits 0. Usage: rts_ring [ITERATIONS] [fig11|fig13]
 * (default 50, fig13). Each process marks each iteration it handles with
 * ftshim_inject_point("iteration", i), so that a test can kill a rank at
 * a chosen iteration (FTSHIM_INJECT="rank=2 at=point:iteration:20"), and
 * holds the message a millisecond, so that failures land mid-run.
 *
 * Where the paper's pseudocode is loose, this program does what it
 * means: a resend sends a copy of the last message sent (the receive
 * buffer may be in use); the failure-detecting receive from the right
 * neighbour uses a tag of its own, so that it cannot match a ring
 * message once only two processes are left; it stays posted from one
 * iteration to the next and is cancelled at the end. A failed root ends
 * the job with MPI_Abort, as the paper's figure 11 does. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ftshim-rts.h"

enum { T_N = 1, T_D = 2, T_F = 3 }; /* ring, done (figure 11), failure detector */
enum { IDX_N = 0, IDX_F = 1 };

struct ring_msg {
	int value;
	int marker;
};

static MPI_Comm MCW;
static int me, size, P_L, P_R, P_Root;
static int cur_marker;
static struct ring_msg last_sent;   /* what a resend sends */
static MPI_Request detect = MPI_REQUEST_NULL; /* the receive from P_R (figure 9's req[Idx_F]) */
static int detect_buf;
static void (*inject_point)(const char *, long);

static void die(const char *why)
{
	fprintf(stderr, "rts_ring[%d]: %s\n", me, why);
	MPI_Abort(MCW, 1);
}

static bool rank_ok(int n)
{
	MPI_Rank_info info;

	if (MPI_Comm_validate_rank(MCW, n, &info) != MPI_SUCCESS)
		die("MPI_Comm_validate_rank failed");
	return info.state == MPI_RANK_OK;
}

/* Figure 12: the lowest live rank. */
static int get_current_root(void)
{
	for (int n = 0; n < size; n++)
		if (rank_ok(n))
			return n;
	die("no live rank");
	return -1;
}

/* The paper's ring does not survive its root: end the job (figure 11). */
static void check_root(void)
{
	if (get_current_root() != P_Root)
		die("the root failed; this ring, as the paper's, does not survive that");
}

/* Figure 4. */
static int to_left_of(int n)
{
	do
		n = n == 0 ? size - 1 : n - 1;
	while (!rank_ok(n));
	if (n == me)
		die("alone in the ring");
	return n;
}

static int to_right_of(int n)
{
	do
		n = (n + 1) % size;
	while (!rank_ok(n));
	if (n == me)
		die("alone in the ring");
	return n;
}

static void post_detector(void)
{
	MPI_Irecv(&detect_buf, 1, MPI_INT, P_R, T_F, MCW, &detect);
}

/* Figure 5. */
static void FT_Send_right(const struct ring_msg *buffer)
{
	last_sent = *buffer;
	while (MPI_Send(&last_sent, 2, MPI_INT, P_R, T_N, MCW) != MPI_SUCCESS) {
		check_root();
		P_R = to_right_of(P_R);
		/* The detector watched the old neighbour. */
		MPI_Cancel(&detect);
		MPI_Request_free(&detect);
		post_detector();
	}
}

/* The right neighbour failed (the detector's receive completed in error):
 * resend to the next one, and watch it. */
static void right_failed(void)
{
	check_root();
	P_R = to_right_of(P_R);
	post_detector();
	struct ring_msg resend = last_sent;
	FT_Send_right(&resend);
}

/* Figure 9. */
static void FT_Recv_left(struct ring_msg *buffer)
{
	MPI_Request req[2];
	bool failed;

	MPI_Irecv(buffer, 2, MPI_INT, P_L, T_N, MCW, &req[IDX_N]);
	do {
		int idx = MPI_UNDEFINED, ret;
		MPI_Status status;
		req[IDX_F] = detect;
		ret = MPI_Waitany(2, req, &idx, &status);
		detect = req[IDX_F];
		failed = false;
		if (ret != MPI_SUCCESS) {
			failed = true;
			if (idx == IDX_F) {
				right_failed();
			} else if (idx == IDX_N) {
				/* The left neighbour failed: the next one resends. */
				check_root();
				P_L = to_left_of(P_L);
				MPI_Irecv(buffer, 2, MPI_INT, P_L, T_N, MCW, &req[IDX_N]);
			} else {
				die("MPI_Waitany failed with no request named");
			}
		} else if (idx == IDX_F) {
			die("a message came back from the right");
		} else if (buffer->marker < cur_marker) {
			/* A resend of an iteration already passed on. */
			failed = true;
			MPI_Irecv(buffer, 2, MPI_INT, P_L, T_N, MCW, &req[IDX_N]);
		} else if (buffer->marker > cur_marker) {
			die("a message from an iteration not started yet");
		}
	} while (failed);
}

/* Figure 13: agree on the end while still resending. */
static int FT_Termination_fig13(void)
{
	MPI_Request req[2];
	int cnt = -1;

	MPI_Icomm_validate_all(MCW, &cnt, &req[IDX_N]);
	for (;;) {
		int idx = MPI_UNDEFINED;
		MPI_Status status;
		req[IDX_F] = detect;
		int ret = MPI_Waitany(2, req, &idx, &status);
		detect = req[IDX_F];
		if (ret == MPI_SUCCESS && idx == IDX_N)
			return cnt;
		if (ret == MPI_SUCCESS)
			die("a message came back from the right");
		if (idx == IDX_F)
			right_failed();
		else /* validate should not fail, but if it does, repost */
			MPI_Icomm_validate_all(MCW, &cnt, &req[IDX_N]);
	}
}

/* Figure 11: the root tells every other process to stop. */
static void FT_Termination_fig11(void)
{
	if (me == P_Root) {
		for (int p = 0; p < size; p++)
			if (p != me)
				MPI_Send(NULL, 0, MPI_INT, p, T_D, MCW); /* ignore failures */
		return;
	}
	MPI_Request req[2];
	MPI_Irecv(NULL, 0, MPI_INT, P_Root, T_D, MCW, &req[IDX_N]);
	for (;;) {
		int idx = MPI_UNDEFINED;
		MPI_Status status;
		req[IDX_F] = detect;
		int ret = MPI_Waitany(2, req, &idx, &status);
		detect = req[IDX_F];
		if (ret == MPI_SUCCESS && idx == IDX_N)
			return;
		if (ret == MPI_SUCCESS)
			die("a message came back from the right");
		if (idx == IDX_F)
			right_failed();
		else
			die("the root failed; this ring, as the paper's, does not survive that");
	}
}

int main(int argc, char **argv)
{
	int max_iter = argc > 1 ? atoi(argv[1]) : 50;
	bool fig11 = argc > 2 && strcmp(argv[2], "fig11") == 0;
	struct ring_msg buffer = { 0, 0 };

	MPI_Init(&argc, &argv);
	MCW = MPI_COMM_WORLD;
	MPI_Comm_size(MCW, &size);
	MPI_Comm_rank(MCW, &me);
	if (!MPI_Comm_validate_rank) {
		if (me == 0)
			fprintf(stderr, "rts_ring: needs ftshim (LD_PRELOAD=libftshim.so)\n");
		MPI_Finalize();
		return 2;
	}
	if (size < 3 || max_iter < 1) {
		if (me == 0)
			fprintf(stderr, "rts_ring: needs 3 ranks or more and 1 iteration or more\n");
		MPI_Finalize();
		return 2;
	}
	MPI_Comm_set_errhandler(MCW, MPI_ERRORS_RETURN);
	inject_point = (void (*)(const char *, long))(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_inject_point");
	P_R = to_right_of(me);
	P_L = to_left_of(me);
	P_Root = get_current_root();
	post_detector();
	struct timespec hold = { 0, 1000000 };

	for (int i = 0; i < max_iter; ++i) {
		if (inject_point)
			inject_point("iteration", i);
		if (P_Root == me) {
			buffer.marker = cur_marker = i;
			buffer.value = 1;
			FT_Send_right(&buffer);
			FT_Recv_left(&buffer);
			if (buffer.marker != i)
				die("the root got another iteration back");
		} else {
			FT_Recv_left(&buffer);
			nanosleep(&hold, NULL);
			buffer.value++;
			FT_Send_right(&buffer);
			cur_marker++;
		}
	}
	int agreed = -1;
	if (fig11)
		FT_Termination_fig11();
	else
		agreed = FT_Termination_fig13();
	MPI_Cancel(&detect);
	MPI_Wait(&detect, MPI_STATUS_IGNORE);
	if (me != P_Root && cur_marker != max_iter)
		die("passed on a number of iterations other than the ring's");

	if (me == P_Root) {
		MPI_Rank_info *infos = calloc((size_t)size, sizeof *infos);
		int nfailed = 0, at = 0;
		char lost[1024] = "none";
		MPI_Comm_validate(MCW, size, &nfailed, infos);
		for (int k = 0; k < nfailed && k < size; k++)
			at += snprintf(lost + at, sizeof lost - (size_t)at, "%s%d", k ? "," : "", infos[k].rank);
		printf("rts_ring: %d iterations completed, each once; survivors %d of %d; lost ranks %s; ",
		       max_iter, size - nfailed, size, lost);
		if (fig11)
			printf("root's termination message\n");
		else
			printf("validate_all agreed %d failed\n", agreed);
		free(infos);
	}
	MPI_Finalize();
	return 0;
}
