/* rts.c: each call of run-through stabilization (ftshim-rts.h) on its
 * own, 6 ranks. Rank 4 dies first (SIGKILL, after a barrier); the
 * survivors check, on MPI_COMM_WORLD and on `dup`, a duplicate made
 * before the failure:
 *
 *   - a receive from MPI_PROC_NULL, before any failure: the empty status;
 *   - MPI_Comm_validate_rank and MPI_Comm_validate: OK before, FAILED
 *     after, NULL once recognized; bad ranks and counts refused;
 *   - point-to-point with an unrecognized failed rank fails in the class
 *     MPI_ERR_RANK_FAIL_STOP; a receive from MPI_ANY_SOURCE fails while a
 *     failure is unrecognized; collectives fail;
 *   - MPI_Comm_validate_clear: a live rank refused; once recognized, a
 *     send to, receive from, probe of and send-receive with the failed
 *     rank act as with MPI_PROC_NULL, and MPI_ANY_SOURCE works; the
 *     recognition is this communicator's only (dup still fails), and
 *     collectives still fail (recognition is local);
 *   - MPI_Comm_validate_all: 1 everywhere; then every collective runs
 *     among the live ranks with the failed one's slots untouched (blocking,
 *     in place, v forms, and nonblocking ones), a broadcast from the failed
 *     root fails everywhere alike; a creation is refused, MPIX_Comm_shrink
 *     works;
 *   - MPI_Icomm_validate_all on dup, completed with MPI_Wait;
 *   - a second death (rank 1, after the validations): collectives fail
 *     again until the next MPI_Comm_validate_all, which says 2;
 *   - a third (rank 5) during a validation, which it never enters: the
 *     others' MPI_Comm_validate_all completes and says 3.
 *
 * Rank 0 prints ALL CHECKS PASSED or CHECKS FAILED. */
#include <signal.h>
#include <stdbool.h>

#include "ftshim-rts.h"
#include "testutil.h"

#define N 6
#define DEAD 4
#define DEAD2 1
#define DEAD3 5
#define SENTINEL (-7)

static int me;

static int err_class(int rc)
{
	int cls = rc;

	if (rc != MPI_SUCCESS)
		MPI_Error_class(rc, &cls);
	return cls;
}

static void await_state(MPI_Comm comm, int rank, int state)
{
	for (int i = 0; i < 5000; i++) {
		MPI_Rank_info info;
		MPI_Comm_validate_rank(comm, rank, &info);
		if (info.state == state)
			return;
		tu_nap_ms(1);
	}
	TU_CHECK(0, "rank %d never reached state %d", rank, state);
}

/* The live ranks of the world, in order, except those in dead[0..ndead). */
static int live_of(int *live, const int *dead, int ndead)
{
	int n = 0;

	for (int r = 0; r < N; r++) {
		int gone = 0;
		for (int k = 0; k < ndead; k++)
			gone |= dead[k] == r;
		if (!gone)
			live[n++] = r;
	}
	return n;
}

static void check_collectives(MPI_Comm comm, const int *dead, int ndead)
{
	int live[N], nlive = live_of(live, dead, ndead), sum = 0, rc;
	for (int k = 0; k < nlive; k++)
		sum += live[k];

	TU_CHECK(MPI_Barrier(comm) == MPI_SUCCESS, "barrier");

	/* 64 KiB: several rounds of the schedule. */
	static double big[8192], bigsum[8192];
	for (int k = 0; k < 8192; k++)
		big[k] = me + k;
	TU_CHECK(MPI_Allreduce(big, bigsum, 8192, MPI_DOUBLE, MPI_SUM, comm) == MPI_SUCCESS &&
			 bigsum[0] == sum && bigsum[8191] == sum + 8191.0 * nlive,
		 "allreduce of 64 KiB: %g %g", bigsum[0], bigsum[8191]);

	int v = me, r = -1;
	TU_CHECK(MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS && r == sum,
		 "allreduce: %d, not %d", r, sum);
	r = me;
	TU_CHECK(MPI_Allreduce(MPI_IN_PLACE, &r, 1, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS && r == sum,
		 "allreduce in place: %d", r);

	int root = live[nlive - 1], b = me == root ? 42 : 0;
	TU_CHECK(MPI_Bcast(&b, 1, MPI_INT, root, comm) == MPI_SUCCESS && b == 42, "bcast from %d: %d", root, b);
	b = 5;
	rc = MPI_Bcast(&b, 1, MPI_INT, dead[0], comm);
	TU_CHECK(err_class(rc) == MPI_ERR_RANK_FAIL_STOP && b == 5, "bcast from the failed root: %d", rc);

	r = -1;
	TU_CHECK(MPI_Reduce(&v, &r, 1, MPI_INT, MPI_MAX, live[0], comm) == MPI_SUCCESS, "reduce");
	if (me == live[0])
		TU_CHECK(r == live[nlive - 1], "reduce max: %d", r);

	/* Gather: the failed ranks' slots are untouched. */
	int g[N], want;
	for (int k = 0; k < N; k++)
		g[k] = SENTINEL;
	int s = 100 + me;
	TU_CHECK(MPI_Gather(&s, 1, MPI_INT, g, 1, MPI_INT, root, comm) == MPI_SUCCESS, "gather");
	for (int k = 0; me == root && k < N; k++) {
		want = SENTINEL;
		for (int j = 0; j < nlive; j++)
			want = live[j] == k ? 100 + k : want;
		TU_CHECK(g[k] == want, "gather slot %d: %d, not %d", k, g[k], want);
	}
	for (int k = 0; k < N; k++)
		g[k] = SENTINEL;
	TU_CHECK(MPI_Allgather(&s, 1, MPI_INT, g, 1, MPI_INT, comm) == MPI_SUCCESS, "allgather");
	for (int k = 0; k < N; k++) {
		want = SENTINEL;
		for (int j = 0; j < nlive; j++)
			want = live[j] == k ? 100 + k : want;
		TU_CHECK(g[k] == want, "allgather slot %d: %d, not %d", k, g[k], want);
	}
	/* In place: each rank's block already at its slot. */
	for (int k = 0; k < N; k++)
		g[k] = k == me ? 200 + me : SENTINEL;
	TU_CHECK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g, 1, MPI_INT, comm) == MPI_SUCCESS,
		 "allgather in place");
	for (int j = 0; j < nlive; j++)
		TU_CHECK(g[live[j]] == 200 + live[j], "allgather in place slot %d: %d", live[j], g[live[j]]);

	/* Gatherv: rank k sends k+1 ints, placed at displs[k] = k(k+1)/2. */
	int counts[N], displs[N], sendv[N];
	for (int k = 0; k < N; k++) {
		counts[k] = k + 1;
		displs[k] = k * (k + 1) / 2;
		sendv[k] = 10 * me + k;
	}
	int gvbig[N * (N + 1) / 2];
	for (int k = 0; k < N * (N + 1) / 2; k++)
		gvbig[k] = SENTINEL;
	TU_CHECK(MPI_Gatherv(sendv, me + 1, MPI_INT, gvbig, counts, displs, MPI_INT, root, comm) == MPI_SUCCESS,
		 "gatherv");
	for (int k = 0; me == root && k < N; k++) {
		bool alive = false;
		for (int j = 0; j < nlive; j++)
			alive |= live[j] == k;
		for (int i = 0; i <= k; i++)
			TU_CHECK(gvbig[displs[k] + i] == (alive ? 10 * k + i : SENTINEL), "gatherv rank %d item %d: %d",
				 k, i, gvbig[displs[k] + i]);
	}

	for (int k = 0; k < N * (N + 1) / 2; k++)
		gvbig[k] = SENTINEL;
	TU_CHECK(MPI_Allgatherv(sendv, me + 1, MPI_INT, gvbig, counts, displs, MPI_INT, comm) == MPI_SUCCESS,
		 "allgatherv");
	for (int k = 0; k < N; k++) {
		bool alive = false;
		for (int j = 0; j < nlive; j++)
			alive |= live[j] == k;
		for (int i = 0; i <= k; i++)
			TU_CHECK(gvbig[displs[k] + i] == (alive ? 10 * k + i : SENTINEL),
				 "allgatherv rank %d item %d: %d", k, i, gvbig[displs[k] + i]);
	}

	/* Scatter: slot k goes to rank k. */
	int sc[N], got = SENTINEL;
	for (int k = 0; k < N; k++)
		sc[k] = 300 + k;
	TU_CHECK(MPI_Scatter(sc, 1, MPI_INT, &got, 1, MPI_INT, root, comm) == MPI_SUCCESS && got == 300 + me,
		 "scatter: %d", got);
	got = SENTINEL;
	TU_CHECK(MPI_Scatterv(sc, (int[N]){ 1, 1, 1, 1, 1, 1 }, (int[N]){ 5, 4, 3, 2, 1, 0 }, MPI_INT, &got, 1,
			      MPI_INT, root, comm) == MPI_SUCCESS &&
			 got == 300 + (5 - me),
		 "scatterv: %d", got);

	/* Alltoall: I send 1000*me + k to rank k. */
	int a2a_s[N], a2a_r[N];
	for (int k = 0; k < N; k++) {
		a2a_s[k] = 1000 * me + k;
		a2a_r[k] = SENTINEL;
	}
	TU_CHECK(MPI_Alltoall(a2a_s, 1, MPI_INT, a2a_r, 1, MPI_INT, comm) == MPI_SUCCESS, "alltoall");
	for (int k = 0; k < N; k++) {
		want = SENTINEL;
		for (int j = 0; j < nlive; j++)
			want = live[j] == k ? 1000 * k + me : want;
		TU_CHECK(a2a_r[k] == want, "alltoall from %d: %d, not %d", k, a2a_r[k], want);
	}
	int ones[N] = { 1, 1, 1, 1, 1, 1 }, idx[N] = { 0, 1, 2, 3, 4, 5 };
	for (int k = 0; k < N; k++)
		a2a_r[k] = SENTINEL;
	TU_CHECK(MPI_Alltoallv(a2a_s, ones, idx, MPI_INT, a2a_r, ones, idx, MPI_INT, comm) == MPI_SUCCESS,
		 "alltoallv");
	for (int j = 0; j < nlive; j++)
		TU_CHECK(a2a_r[live[j]] == 1000 * live[j] + me, "alltoallv from %d: %d", live[j], a2a_r[live[j]]);

	/* Reduce-scatter: block k (k+1 ints... here 1 int) is rank k's sum
	 * over the live ranks of 10*sender + k. */
	int rs_s[N], rs_r = SENTINEL;
	for (int k = 0; k < N; k++)
		rs_s[k] = 10 * me + k;
	TU_CHECK(MPI_Reduce_scatter_block(rs_s, &rs_r, 1, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS &&
			 rs_r == 10 * sum + nlive * me,
		 "reduce_scatter_block: %d, not %d", rs_r, 10 * sum + nlive * me);
	int rcounts[N] = { 1, 1, 1, 1, 1, 1 };
	rs_r = SENTINEL;
	TU_CHECK(MPI_Reduce_scatter(rs_s, &rs_r, rcounts, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS &&
			 rs_r == 10 * sum + nlive * me,
		 "reduce_scatter: %d", rs_r);

	/* Scan over the live ranks in order. */
	int prefix = 0;
	for (int j = 0; j < nlive && live[j] <= me; j++)
		prefix += live[j];
	r = -1;
	TU_CHECK(MPI_Scan(&v, &r, 1, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS && r == prefix, "scan: %d, not %d",
		 r, prefix);
	r = -1;
	TU_CHECK(MPI_Exscan(&v, &r, 1, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS &&
			 (me == live[0] || r == prefix - me),
		 "exscan: %d", r);

	/* Nonblocking ones, started together. */
	MPI_Request req[3];
	MPI_Status sts[3];
	int ir = -1, ib = me == root ? 77 : 0;
	for (int k = 0; k < N; k++)
		a2a_r[k] = SENTINEL;
	int r0 = MPI_Iallreduce(&v, &ir, 1, MPI_INT, MPI_SUM, comm, &req[0]);
	int r1 = MPI_Ibcast(&ib, 1, MPI_INT, root, comm, &req[1]);
	int r2 = MPI_Ialltoall(a2a_s, 1, MPI_INT, a2a_r, 1, MPI_INT, comm, &req[2]);
	rc = MPI_Waitall(3, req, sts);
	TU_CHECK(rc == MPI_SUCCESS, "nonblocking collectives: starts %d %d %d, waitall %d (%d %d %d)", r0, r1, r2,
		 rc, sts[0].MPI_ERROR, sts[1].MPI_ERROR, sts[2].MPI_ERROR);
	TU_CHECK(ir == sum && ib == 77, "iallreduce %d, ibcast %d", ir, ib);
	for (int j = 0; j < nlive; j++)
		TU_CHECK(a2a_r[live[j]] == 1000 * live[j] + me, "ialltoall from %d: %d", live[j], a2a_r[live[j]]);
}

int main(int argc, char **argv)
{
	me = tu_init(&argc, &argv, N, 1, "6 ranks and ftshim");
	MPI_Comm dup;
	MPI_Rank_info info, infos[N];
	int n = -1, rc, x = 0;

	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);

	/* Before any failure. */
	for (int r = 0; r < N; r++) {
		TU_CHECK(MPI_Comm_validate_rank(MPI_COMM_WORLD, r, &info) == MPI_SUCCESS && info.rank == r &&
				 info.state == MPI_RANK_OK && info.generation == 0,
			 "validate_rank %d before: state %d", r, info.state);
	}
	TU_CHECK(MPI_Comm_validate(MPI_COMM_WORLD, N, &n, infos) == MPI_SUCCESS && n == 0, "validate before: %d", n);
	TU_CHECK(MPI_Comm_validate_rank(MPI_COMM_WORLD, N, &info) == MPI_ERR_RANK, "validate_rank of rank N");
	TU_CHECK(MPI_Comm_validate(MPI_COMM_WORLD, -1, &n, infos) == MPI_ERR_COUNT, "validate, incount -1");
	TU_CHECK(MPI_Comm_validate_all(MPI_COMM_WORLD, &n) == MPI_SUCCESS && n == 0, "validate_all before: %d", n);
	/* What a recognized rank acts as: a receive from MPI_PROC_NULL gives
	 * the empty status (MPICH's own MPI_Wait on its request does not). */
	MPI_Status pst;
	int pcount = -1;
	pst.MPI_SOURCE = pst.MPI_TAG = -99;
	TU_CHECK(MPI_Recv(&x, 1, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &pst) == MPI_SUCCESS &&
			 pst.MPI_SOURCE == MPI_PROC_NULL && pst.MPI_TAG == MPI_ANY_TAG &&
			 MPI_Get_count(&pst, MPI_INT, &pcount) == MPI_SUCCESS && pcount == 0,
		 "receive from MPI_PROC_NULL: source %d tag %d count %d", pst.MPI_SOURCE, pst.MPI_TAG, pcount);
	TU_CHECK(MPI_Allreduce(&me, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS && x == 15,
		 "allreduce before: %d", x);

	MPI_Barrier(MPI_COMM_WORLD);
	if (me == DEAD)
		raise(SIGKILL);
	/* Collectives until one fails: a round abandoned then may leave a
	 * message of the MPI's on its way (Open MPI's run over
	 * point-to-point), which the collectives after the validation must
	 * not take. */
	while (MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS)
		tu_nap_ms(1);
	await_state(MPI_COMM_WORLD, DEAD, MPI_RANK_FAILED);
	await_state(dup, DEAD, MPI_RANK_FAILED);

	TU_CHECK(MPI_Comm_validate(MPI_COMM_WORLD, 0, &n, NULL) == MPI_SUCCESS && n == 1, "validate count: %d", n);
	TU_CHECK(MPI_Comm_validate(MPI_COMM_WORLD, N, &n, infos) == MPI_SUCCESS && n == 1 &&
			 infos[0].rank == DEAD && infos[0].state == MPI_RANK_FAILED,
		 "validate after: %d, rank %d state %d", n, infos[0].rank, infos[0].state);

	/* Unrecognized: errors. */
	rc = MPI_Send(&x, 1, MPI_INT, DEAD, 0, MPI_COMM_WORLD);
	TU_CHECK(err_class(rc) == MPI_ERR_RANK_FAIL_STOP, "send to the failed rank: %d", rc);
	rc = MPI_Recv(&x, 1, MPI_INT, DEAD, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	TU_CHECK(err_class(rc) == MPI_ERR_RANK_FAIL_STOP, "receive from the failed rank: %d", rc);
	rc = MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	TU_CHECK(err_class(rc) == MPI_ERR_RANK_FAIL_STOP, "MPI_ANY_SOURCE, unrecognized: %d", rc);
	rc = MPI_Barrier(MPI_COMM_WORLD);
	TU_CHECK(err_class(rc) == MPI_ERR_RANK_FAIL_STOP, "barrier, unrecognized: %d", rc);

	/* Local recognition. */
	info = (MPI_Rank_info){ .rank = me };
	TU_CHECK(MPI_Comm_validate_clear(MPI_COMM_WORLD, 1, &info) == MPI_ERR_ARG, "validate_clear of a live rank");
	info = (MPI_Rank_info){ .rank = DEAD };
	TU_CHECK(MPI_Comm_validate_clear(MPI_COMM_WORLD, 1, &info) == MPI_SUCCESS, "validate_clear");
	TU_CHECK(MPI_Comm_validate_rank(MPI_COMM_WORLD, DEAD, &info) == MPI_SUCCESS && info.state == MPI_RANK_NULL,
		 "recognized: state %d", info.state);
	TU_CHECK(MPI_Comm_validate(MPI_COMM_WORLD, N, &n, infos) == MPI_SUCCESS && n == 1 &&
			 infos[0].state == MPI_RANK_NULL,
		 "validate, recognized: state %d", infos[0].state);
	TU_CHECK(MPI_Send(&x, 1, MPI_INT, DEAD, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "send to a recognized rank");
	MPI_Status st;
	int count = -1, flag = 0;
	st.MPI_SOURCE = -99;
	rc = MPI_Recv(&x, 1, MPI_INT, DEAD, 0, MPI_COMM_WORLD, &st);
	TU_CHECK(rc == MPI_SUCCESS &&
			 st.MPI_SOURCE == MPI_PROC_NULL && MPI_Get_count(&st, MPI_INT, &count) == MPI_SUCCESS &&
			 count == 0,
		 "receive from a recognized rank: rc %d source %d count %d", rc, st.MPI_SOURCE, count);
	TU_CHECK(MPI_Iprobe(DEAD, 0, MPI_COMM_WORLD, &flag, &st) == MPI_SUCCESS && flag &&
			 st.MPI_SOURCE == MPI_PROC_NULL,
		 "iprobe of a recognized rank: flag %d", flag);
	TU_CHECK(MPI_Sendrecv(&me, 1, MPI_INT, DEAD, 1, &x, 1, MPI_INT, DEAD, 1, MPI_COMM_WORLD, &st) ==
			 MPI_SUCCESS,
		 "sendrecv with a recognized rank");
	/* MPI_ANY_SOURCE among the live: each sends to its next live rank. */
	int live[N], nlive = live_of(live, (int[]){ DEAD }, 1), pos = 0;
	for (int j = 0; j < nlive; j++)
		pos = live[j] == me ? j : pos;
	MPI_Request sreq;
	MPI_Isend(&me, 1, MPI_INT, live[(pos + 1) % nlive], 2, MPI_COMM_WORLD, &sreq);
	x = -1;
	TU_CHECK(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &st) == MPI_SUCCESS &&
			 x == live[(pos + nlive - 1) % nlive],
		 "MPI_ANY_SOURCE, recognized: %d", x);
	MPI_Wait(&sreq, MPI_STATUS_IGNORE);
	/* Per communicator: dup has not recognized it. */
	TU_CHECK(MPI_Comm_validate_rank(dup, DEAD, &info) == MPI_SUCCESS && info.state == MPI_RANK_FAILED,
		 "dup: state %d", info.state);
	rc = MPI_Send(&x, 1, MPI_INT, DEAD, 0, dup);
	TU_CHECK(err_class(rc) == MPI_ERR_RANK_FAIL_STOP, "dup: send to the failed rank: %d", rc);
	/* Recognition is local: collectives still fail. */
	rc = MPI_Allreduce(&me, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	TU_CHECK(err_class(rc) == MPI_ERR_RANK_FAIL_STOP, "allreduce after validate_clear: %d", rc);

	/* Collective recognition. */
	n = -1;
	TU_CHECK(MPI_Comm_validate_all(MPI_COMM_WORLD, &n) == MPI_SUCCESS && n == 1, "validate_all: %d", n);
	/* More collectives than there are tags in turn: none may take what
	 * the collectives abandoned at the failure left behind. */
	for (int k = 0; k < 600; k++) {
		int one = 1, live_n = 0;
		rc = MPI_Allreduce(&one, &live_n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		if (rc != MPI_SUCCESS || live_n != N - 1) {
			TU_CHECK(0, "allreduce %d after the validation: rc %d, %d", k, rc, live_n);
			break;
		}
	}
	check_collectives(MPI_COMM_WORLD, (int[]){ DEAD }, 1);
	MPI_Comm made = MPI_COMM_NULL;
	rc = MPI_Comm_dup(MPI_COMM_WORLD, &made);
	TU_CHECK(rc == MPI_ERR_UNSUPPORTED_OPERATION, "dup of a validated communicator: %d", rc);
	TU_CHECK(MPIX_Comm_shrink(MPI_COMM_WORLD, &made) == MPI_SUCCESS, "shrink");
	int ssize = 0;
	MPI_Comm_size(made, &ssize);
	TU_CHECK(ssize == N - 1, "shrunk to %d", ssize);
	MPI_Comm_free(&made);

	/* dup, nonblocking. */
	rc = MPI_Barrier(dup);
	TU_CHECK(err_class(rc) == MPI_ERR_RANK_FAIL_STOP, "dup: barrier before its validation: %d", rc);
	MPI_Request vreq;
	n = -1;
	TU_CHECK(MPI_Icomm_validate_all(dup, &n, &vreq) == MPI_SUCCESS, "icomm_validate_all");
	TU_CHECK(MPI_Wait(&vreq, MPI_STATUS_IGNORE) == MPI_SUCCESS && n == 1, "icomm_validate_all: %d", n);
	TU_CHECK(MPI_Comm_validate_rank(dup, DEAD, &info) == MPI_SUCCESS && info.state == MPI_RANK_NULL,
		 "dup after its validation: state %d", info.state);
	x = -1;
	TU_CHECK(MPI_Allreduce(&me, &x, 1, MPI_INT, MPI_SUM, dup) == MPI_SUCCESS && x == 15 - DEAD,
		 "dup: allreduce: %d", x);

	/* A second death. */
	MPI_Barrier(MPI_COMM_WORLD);
	if (me == DEAD2)
		raise(SIGKILL);
	await_state(MPI_COMM_WORLD, DEAD2, MPI_RANK_FAILED);
	rc = MPI_Allreduce(&me, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	TU_CHECK(err_class(rc) == MPI_ERR_RANK_FAIL_STOP, "allreduce after a second death: %d", rc);
	n = -1;
	TU_CHECK(MPI_Comm_validate_all(MPI_COMM_WORLD, &n) == MPI_SUCCESS && n == 2, "second validate_all: %d", n);
	check_collectives(MPI_COMM_WORLD, (int[]){ DEAD2, DEAD }, 2);

	/* A death during a validation: DEAD3 never enters it, so the
	 * others' agreement can end only once it knows DEAD3 failed, and
	 * names it. */
	MPI_Barrier(MPI_COMM_WORLD);
	if (me == DEAD3)
		raise(SIGKILL);
	n = -1;
	TU_CHECK(MPI_Comm_validate_all(MPI_COMM_WORLD, &n) == MPI_SUCCESS && n == 3,
		 "validate_all with a death in it: %d", n);
	check_collectives(MPI_COMM_WORLD, (int[]){ DEAD3, DEAD2, DEAD }, 3);

	int any = -1;
	MPI_Allreduce(&tu_failures, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (me == 0)
		printf("%s\n", any == 0 ? "ALL CHECKS PASSED" : "CHECKS FAILED");
	MPI_Comm_free(&dup);
	MPI_Finalize();
	return tu_failures ? 1 : 0;
}
