/* ulfm.c: revoke, agree and shrink, by a ULFM program (it includes
 * mpi-ext.h and calls the MPIX functions by name). Usage: ulfm TEST
 *
 *   revoke       rank 0 revokes a communicator while the others wait in a
 *                receive from it: they get MPI_ERR_REVOKED, see it revoked,
 *                later calls on it fail alike, agree and shrink still work
 *                on it, and it can be freed
 *   agree        the bitwise AND of the flags; after a failure,
 *                MPI_ERR_PROC_FAILED at every survivor until they all
 *                acknowledge it, then success, with the same value everywhere
 *   coordinator  the coordinator of the agreement (rank 0) dies instead of
 *                taking part; the others still agree, uniformly
 *   shrink       after rank 2 dies, the survivors get a communicator of
 *                their own, in the old rank order, that works (and takes
 *                MPI_Alltoallw of mixed types, blocking, nonblocking and
 *                in place, and matched probes, whose statuses name its
 *                ranks)
 *   shrink-death a rank dies on its way into the shrink; the others still
 *                get a working communicator without it
 *   loop         100 rounds of dup, revoke, shrink, free: no hang, no leak
 *   errh-loop    the standard ULFM loop with MPI_ERRORS_RETURN set once on
 *                a duplicate of MPI_COMM_WORLD: ranks 4, then 3 die, and
 *                each time the survivors' barrier fails, they revoke and
 *                shrink; the shrunk communicator keeps MPI_ERRORS_RETURN,
 *                so the second failure is an error returned, not the end
 *                of the job
 *   nonblocking  MPIX_FT says fault tolerance is on; iagree completed by
 *                MPI_Test, by MPI_Waitall beside point-to-point requests,
 *                by MPI_Wait with MPIX_ERR_PROC_FAILED after a failure, by
 *                MPI_Waitany once acknowledged; an iagree request freed
 *                unfinished; ishrink completed by MPI_Wait
 *   ishrink-death a rank dies while the others are in MPIX_Comm_ishrink,
 *                which they complete with MPI_Test: a working communicator
 *   inter        on an intercommunicator (even world ranks against odd):
 *                agree is uniform over both groups; after rank 1 (the odd
 *                group's leader) dies, agree fails until acknowledged, and
 *                shrink gives an intercommunicator of the survivors, with
 *                the parent's error handler, that reduces and merges
 *                (and ishrink gives the same)
 *   inter-lost   the odd group dies whole: shrinking the intercommunicator
 *                returns MPIX_ERR_PROC_FAILED and MPI_COMM_NULL
 *   last-words   rank 4 sends rank 0 three messages and dies; once rank 0
 *                knows, it still gets each of them (MPI_Probe and MPI_Recv,
 *                MPI_Irecv and MPI_Wait, MPI_Sendrecv), then
 *                MPIX_ERR_PROC_FAILED for a receive nothing matches and for
 *                MPI_Iprobe
 *   progress DIR rank 0, the agreement's coordinator, starts an iagree and
 *                makes no MPI call until every other rank has returned from
 *                its blocking agree (each leaves a file in DIR): the
 *                agreement progresses without rank 0's caller
 *   stale        a message sent on a communicator that is then revoked and
 *                freed unreceived never reaches a receive on a later
 *                communicator (which the MPI may give the same context id);
 *                with --sweep, the MPI object is freed 10 s later, the
 *                stale message discarded
 * Exit status 1 if a check failed; survivor rank 0 prints ALL CHECKS
 * PASSED. */
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "mpi-ext.h"
#include "testutil.h"

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static void wait_failed(int r)
{
	int (*state)(int) = (int (*)(int))(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_rank_state");

	while (state && state(r) != 1)
		nap_ms(1);
}

/* Finish: the survivors (comm) agree that all checks passed. */
static int finish(MPI_Comm comm)
{
	int ok = tu_failures == 0, r;

	MPIX_Comm_agree(comm, &ok);
	MPI_Comm_rank(comm, &r);
	if (r == 0)
		printf("%s\n", ok ? "ALL CHECKS PASSED" : "CHECKS FAILED");
	MPI_Finalize();
	return tu_failures ? 1 : 0;
}

/* After a member of comm failed: agreement fails at every survivor until
 * they acknowledge it, then succeeds. */
static void agree_after_failure(MPI_Comm comm)
{
	int flag = 1, rc = MPIX_Comm_agree(comm, &flag);

	TU_CHECK(rc == MPIX_ERR_PROC_FAILED, "after a failure, not acknowledged: %d", rc);
	MPIX_Comm_failure_ack(comm);
	flag = 1;
	rc = MPIX_Comm_agree(comm, &flag);
	TU_CHECK(rc == MPI_SUCCESS && flag == 1, "after acknowledging: %d %d", rc, flag);
}

static int test_revoke(int rank, int size)
{
	MPI_Comm work, sh;
	int x = 0, flag = 0, rc;

	MPI_Comm_dup(MPI_COMM_WORLD, &work);
	MPI_Comm_set_errhandler(work, MPI_ERRORS_RETURN);
	if (rank == 0) {
		nap_ms(200);
		rc = MPIX_Comm_revoke(work);
		TU_CHECK(rc == MPI_SUCCESS, "revoke: %d", rc);
	} else {
		rc = MPI_Recv(&x, 1, MPI_INT, 0, 0, work, MPI_STATUS_IGNORE);
		TU_CHECK(rc == MPIX_ERR_REVOKED, "the pending receive got %d", rc);
	}
	/* Everyone sees it revoked (eventually: it may still be on its way). */
	for (int i = 0; i < 2000 && !flag; i++) {
		MPIX_Comm_is_revoked(work, &flag);
		if (!flag)
			nap_ms(1);
	}
	TU_CHECK(flag, "not revoked here");
	rc = MPI_Barrier(work);
	TU_CHECK(rc == MPIX_ERR_REVOKED, "barrier on a revoked communicator: %d", rc);
	rc = MPI_Send(&x, 1, MPI_INT, (rank + 1) % size, 0, work);
	TU_CHECK(rc == MPIX_ERR_REVOKED, "send on a revoked communicator: %d", rc);
	int one = 1;
	rc = MPIX_Comm_agree(work, &one);
	TU_CHECK(rc == MPI_SUCCESS && one == 1, "agree on a revoked communicator: %d, %d", rc, one);
	rc = MPIX_Comm_shrink(work, &sh);
	TU_CHECK(rc == MPI_SUCCESS, "shrink of a revoked communicator: %d", rc);
	int shsize = 0;
	MPI_Comm_size(sh, &shsize);
	TU_CHECK(shsize == size, "shrunk to %d of %d", shsize, size);
	rc = MPI_Comm_free(&work);
	TU_CHECK(rc == MPI_SUCCESS, "free of a revoked communicator: %d", rc);
	return finish(sh);
}

static int test_agree(int rank, int size)
{
	MPI_Comm work;
	int flag, rc;

	MPI_Comm_dup(MPI_COMM_WORLD, &work);
	MPI_Comm_set_errhandler(work, MPI_ERRORS_RETURN);
	flag = 1;
	rc = MPIX_Comm_agree(work, &flag);
	TU_CHECK(rc == MPI_SUCCESS && flag == 1, "all ones: %d %d", rc, flag);
	flag = rank == size - 1 ? 0 : 1;
	rc = MPIX_Comm_agree(work, &flag);
	TU_CHECK(rc == MPI_SUCCESS && flag == 0, "one zero: %d %d", rc, flag);
	flag = ~(1 << rank);
	rc = MPIX_Comm_agree(work, &flag);
	TU_CHECK(rc == MPI_SUCCESS && (flag & ((1 << size) - 1)) == 0, "bitwise: %x", flag);
	/* Rank 2 dies; not acknowledged: everyone gets the error. */
	MPI_Barrier(work);
	if (rank == 2)
		raise(SIGKILL);
	wait_failed(2);
	agree_after_failure(work);
	MPI_Comm sh;
	MPIX_Comm_shrink(work, &sh);
	return finish(sh);
}

static int test_coordinator(int rank)
{
	MPI_Comm work, sh;
	int flag = rank + 10, rc;

	MPI_Comm_dup(MPI_COMM_WORLD, &work);
	MPI_Comm_set_errhandler(work, MPI_ERRORS_RETURN);
	MPI_Barrier(work);
	if (rank == 0) {
		nap_ms(100);
		raise(SIGKILL);
	}
	rc = MPIX_Comm_agree(work, &flag);
	TU_CHECK(rc == MPIX_ERR_PROC_FAILED, "the coordinator died: %d", rc);
	/* Uniform: the survivors compare what they got. */
	int mine = flag, lo, hi;
	MPIX_Comm_shrink(work, &sh);
	MPI_Allreduce(&mine, &lo, 1, MPI_INT, MPI_MIN, sh);
	MPI_Allreduce(&mine, &hi, 1, MPI_INT, MPI_MAX, sh);
	TU_CHECK(lo == hi, "survivors disagree: %d vs %d", lo, hi);
	return finish(sh);
}

static int test_shrink(int rank, int size, int during)
{
	MPI_Comm work, sh;
	int rc;

	MPI_Comm_dup(MPI_COMM_WORLD, &work);
	MPI_Comm_set_errhandler(work, MPI_ERRORS_RETURN);
	MPI_Barrier(work);
	if (rank == 2) {
		if (during)
			nap_ms(50); /* the others are entering the shrink */
		raise(SIGKILL);
	}
	if (!during)
		wait_failed(2);
	rc = MPIX_Comm_shrink(work, &sh);
	TU_CHECK(rc == MPI_SUCCESS, "shrink: %d", rc);
	int shrank, shsize, sum = 0, expect = 0;
	MPI_Comm_rank(sh, &shrank);
	MPI_Comm_size(sh, &shsize);
	TU_CHECK(shsize == size - 1, "shrunk to %d, not %d", shsize, size - 1);
	TU_CHECK(shrank == (rank < 2 ? rank : rank - 1), "rank %d became %d", rank, shrank);
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, sh);
	for (int r = 0; r < size; r++)
		expect += r == 2 ? 0 : r;
	TU_CHECK(sum == expect, "allreduce on the new communicator: %d, not %d", sum, expect);
	tu_check_alltoallw(sh);
	tu_check_mprobe(sh);
	return finish(sh);
}

static int test_loop(void)
{
	MPI_Comm c = MPI_COMM_WORLD;

	for (int i = 0; i < 100; i++) {
		MPI_Comm d, sh;
		int rc = MPI_Comm_dup(c, &d);
		TU_CHECK(rc == MPI_SUCCESS, "dup %d: %d", i, rc);
		MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
		MPIX_Comm_revoke(d);
		rc = MPIX_Comm_shrink(d, &sh);
		TU_CHECK(rc == MPI_SUCCESS, "shrink %d: %d", i, rc);
		MPI_Comm_free(&d);
		if (c != MPI_COMM_WORLD)
			MPI_Comm_free(&c);
		c = sh;
	}
	return finish(c);
}

static int test_errh_loop(int rank)
{
	MPI_Comm cur;
	int victims[] = { 4, 3 };

	MPI_Comm_dup(MPI_COMM_WORLD, &cur);
	MPI_Comm_set_errhandler(cur, MPI_ERRORS_RETURN);
	for (int v = 0; v < 2; v++) {
		MPI_Comm sh;
		MPI_Errhandler eh;
		MPI_Barrier(cur);
		if (rank == victims[v])
			raise(SIGKILL);
		wait_failed(victims[v]);
		int rc = MPI_Barrier(cur), cls = rc;
		MPI_Error_class(rc, &cls);
		/* REVOKED: a faster survivor revoked it first. */
		TU_CHECK(cls == MPIX_ERR_PROC_FAILED || cls == MPIX_ERR_REVOKED, "failure %d: barrier: %d",
			 v + 1, rc);
		MPIX_Comm_revoke(cur);
		rc = MPIX_Comm_shrink(cur, &sh);
		TU_CHECK(rc == MPI_SUCCESS, "failure %d: shrink: %d", v + 1, rc);
		MPI_Comm_get_errhandler(sh, &eh);
		TU_CHECK(eh == MPI_ERRORS_RETURN, "failure %d: the shrunk communicator's handler is not "
			 "MPI_ERRORS_RETURN", v + 1);
		if (eh != MPI_ERRORS_RETURN && eh != MPI_ERRORS_ARE_FATAL)
			MPI_Errhandler_free(&eh);
		MPI_Comm_free(&cur);
		cur = sh;
	}
	int size;
	MPI_Comm_size(cur, &size);
	TU_CHECK(size == 3, "after two failures: %d members", size);
	return finish(cur);
}

static int test_nonblocking(int rank, int size)
{
	MPI_Comm work, sh;
	MPI_Request req, reqs[3];
	int *ft = NULL, found = 0, flag, done = 0, rc, idx = -1;

	rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPIX_FT, &ft, &found);
	TU_CHECK(rc == MPI_SUCCESS && found && ft && *ft == 1, "MPIX_FT: rc %d found %d value %d", rc,
		 found, ft ? *ft : -1);
	MPI_Comm_dup(MPI_COMM_WORLD, &work);
	MPI_Comm_set_errhandler(work, MPI_ERRORS_RETURN);

	/* By MPI_Test. */
	flag = rank == 1 ? 0x6 : 0x7;
	rc = MPIX_Comm_iagree(work, &flag, &req);
	TU_CHECK(rc == MPI_SUCCESS, "iagree: %d", rc);
	for (long i = 0; !done && i < 20000000; i++)
		rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
	TU_CHECK(done && rc == MPI_SUCCESS && flag == 0x6, "iagree by MPI_Test: done %d rc %d flag %x",
		 done, rc, flag);
	TU_CHECK(req == MPI_REQUEST_NULL, "the request is not freed");

	/* By MPI_Waitall, beside a ring exchange. */
	int left = (rank + size - 1) % size, right = (rank + 1) % size, in = -1, out = rank;
	flag = 1;
	MPI_Irecv(&in, 1, MPI_INT, left, 7, work, &reqs[0]);
	MPIX_Comm_iagree(work, &flag, &reqs[1]);
	MPI_Isend(&out, 1, MPI_INT, right, 7, work, &reqs[2]);
	MPI_Status st[3];
	rc = MPI_Waitall(3, reqs, st);
	TU_CHECK(rc == MPI_SUCCESS && in == left && flag == 1, "Waitall: rc %d in %d flag %d", rc, in,
		 flag);

	/* After a failure nobody acknowledged: MPI_Wait reports it. */
	MPI_Barrier(work);
	if (rank == 2)
		raise(SIGKILL);
	wait_failed(2);
	flag = 1;
	MPIX_Comm_iagree(work, &flag, &req);
	rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
	TU_CHECK(rc == MPIX_ERR_PROC_FAILED && flag == 1, "iagree after a failure: rc %d flag %d", rc,
		 flag);
	MPIX_Comm_failure_ack(work);
	flag = rank + 1;
	reqs[0] = MPI_REQUEST_NULL;
	MPIX_Comm_iagree(work, &flag, &reqs[1]);
	rc = MPI_Waitany(2, reqs, &idx, MPI_STATUS_IGNORE);
	TU_CHECK(rc == MPI_SUCCESS && idx == 1, "iagree by Waitany: rc %d index %d", rc, idx);

	/* Freed before it finished: the agreement still happens. */
	flag = 1;
	MPIX_Comm_iagree(work, &flag, &req);
	rc = MPI_Request_free(&req);
	TU_CHECK(rc == MPI_SUCCESS, "freeing an iagree request: %d", rc);
	flag = 1;
	rc = MPIX_Comm_agree(work, &flag);
	TU_CHECK(rc == MPI_SUCCESS && flag == 1, "agree after a freed iagree: %d %d", rc, flag);

	/* ishrink. */
	rc = MPIX_Comm_ishrink(work, &sh, &req);
	TU_CHECK(rc == MPI_SUCCESS, "ishrink: %d", rc);
	rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
	TU_CHECK(rc == MPI_SUCCESS, "ishrink by MPI_Wait: %d", rc);
	int shsize = 0, shrank = -1;
	MPI_Comm_size(sh, &shsize);
	MPI_Comm_rank(sh, &shrank);
	TU_CHECK(shsize == size - 1 && shrank == (rank < 2 ? rank : rank - 1),
		 "ishrink made size %d rank %d", shsize, shrank);
	return finish(sh);
}

static int test_ishrink_death(int rank, int size)
{
	MPI_Comm work, sh = MPI_COMM_NULL;
	MPI_Request req;
	int done = 0, rc;

	MPI_Comm_dup(MPI_COMM_WORLD, &work);
	MPI_Comm_set_errhandler(work, MPI_ERRORS_RETURN);
	MPI_Barrier(work);
	if (rank == 2) {
		nap_ms(50);
		raise(SIGKILL);
	}
	rc = MPIX_Comm_ishrink(work, &sh, &req);
	TU_CHECK(rc == MPI_SUCCESS, "ishrink: %d", rc);
	while (!done && rc == MPI_SUCCESS) {
		rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
		nap_ms(1);
	}
	TU_CHECK(rc == MPI_SUCCESS && done, "ishrink by MPI_Test: %d", rc);
	int shsize = 0, sum = 0, expect = 0;
	MPI_Comm_size(sh, &shsize);
	TU_CHECK(shsize == size - 1, "shrunk to %d, not %d", shsize, size - 1);
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, sh);
	for (int r = 0; r < size; r++)
		expect += r == 2 ? 0 : r;
	TU_CHECK(sum == expect, "allreduce on the new communicator: %d, not %d", sum, expect);
	return finish(sh);
}

static int test_stale(int rank, int sweep)
{
	MPI_Comm a, b;
	int stale = 111, fresh = 222, got = 0, rc;

	/* As a program recovers: a made by shrink, revoked with a message
	 * unreceived on it, shrunk to b, freed; then b shrunk to c. */
	MPIX_Comm_shrink(MPI_COMM_WORLD, &a);
	MPI_Comm_set_errhandler(a, MPI_ERRORS_RETURN);
	/* Small enough to go eagerly: it waits at rank 1, never received. */
	if (rank == 0)
		MPI_Send(&stale, 1, MPI_INT, 1, 7, a);
	MPI_Barrier(MPI_COMM_WORLD);
	/* No operation left pending on a (an abandoned request would keep
	 * the MPI from recycling its context id). */
	if (rank == 0)
		MPIX_Comm_revoke(a);
	for (int revoked = 0; !revoked; nap_ms(1))
		MPIX_Comm_is_revoked(a, &revoked);
	rc = MPIX_Comm_shrink(a, &b);
	TU_CHECK(rc == MPI_SUCCESS, "shrink: %d", rc);
	rc = MPI_Comm_free(&a);
	TU_CHECK(rc == MPI_SUCCESS && a == MPI_COMM_NULL, "free of the revoked communicator: %d", rc);
	/* Several made by MPIX_Comm_shrink (MPI_Comm_create_group),
	 * MPI_Comm_split and MPI_Comm_dup, all kept until the end: whatever
	 * ftshim makes for itself, one of them gets a's context id if the
	 * MPI recycles it (MPICH does). */
	MPI_Comm c[6];
	for (int i = 0; i < 6; i++) {
		if (i % 3 == 0)
			MPIX_Comm_shrink(b, &c[i]);
		else if (i % 3 == 1)
			MPI_Comm_split(b, 0, rank, &c[i]);
		else
			MPI_Comm_dup(b, &c[i]);
	}
	for (int i = 0; i < 6; i++) {
		if (rank == 0)
			MPI_Send(&fresh, 1, MPI_INT, 1, 7, c[i]);
		if (rank == 1) {
			MPI_Recv(&got, 1, MPI_INT, 0, 7, c[i], MPI_STATUS_IGNORE);
			TU_CHECK(got == fresh, "communicator %d received %d, not %d", i, got, fresh);
		}
	}
	for (int i = 0; i < 6; i++)
		MPI_Comm_free(&c[i]);
	MPI_Comm_free(&b);
	/* After 10 s, the next MPI_Comm_free frees a's MPI object, having
	 * discarded the stale message (the case checks the log). */
	if (sweep) {
		nap_ms(10500);
		MPI_Comm_dup(MPI_COMM_WORLD, &b);
		MPI_Comm_free(&b);
	}
	return finish(MPI_COMM_WORLD);
}

static int test_inter(int rank, int size)
{
	MPI_Comm half, inter, sh, merged;
	MPI_Errhandler eh;
	int odd = rank % 2, flag, rc, is_inter = 0, nlocal = 0, nremote = 0, sum = -1, expect = 0;

	MPI_Comm_split(MPI_COMM_WORLD, odd, rank, &half);
	MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, odd ? 0 : 1, 7, &inter);
	MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
	/* Each side lists its own group first: the agreement must still be
	 * one, with one coordinator. */
	flag = ~(1 << rank);
	rc = MPIX_Comm_agree(inter, &flag);
	TU_CHECK(rc == MPI_SUCCESS && (flag & ((1 << size) - 1)) == 0, "bitwise: %d %x", rc, flag);
	flag = 1;
	rc = MPIX_Comm_agree(inter, &flag);
	TU_CHECK(rc == MPI_SUCCESS && flag == 1, "all ones: %d %d", rc, flag);
	MPI_Barrier(inter);
	if (rank == 1)
		raise(SIGKILL);
	wait_failed(1);
	agree_after_failure(inter);
	rc = MPIX_Comm_shrink(inter, &sh);
	TU_CHECK(rc == MPI_SUCCESS, "shrink: %d", rc);
	if (rc != MPI_SUCCESS)
		return finish(MPI_COMM_SELF);
	MPI_Comm_test_inter(sh, &is_inter);
	MPI_Comm_size(sh, &nlocal);
	MPI_Comm_remote_size(sh, &nremote);
	int want_local = 0, want_remote = 0;
	for (int r = 0; r < size; r++) {
		if (r == 1)
			continue;
		if (r % 2 == odd)
			want_local++;
		else
			want_remote++;
		if (r % 2 != odd)
			expect += r;
	}
	TU_CHECK(is_inter && nlocal == want_local && nremote == want_remote,
		 "shrunk: inter %d, %d local (want %d), %d remote (want %d)", is_inter, nlocal, want_local,
		 nremote, want_remote);
	MPI_Comm_get_errhandler(sh, &eh);
	TU_CHECK(eh == MPI_ERRORS_RETURN, "the shrunk intercommunicator lost MPI_ERRORS_RETURN");
	MPI_Errhandler_free(&eh);
	/* On an intercommunicator each group gets the other's reduction. */
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, sh);
	TU_CHECK(sum == expect, "allreduce across: %d, not %d", sum, expect);
	/* The nonblocking form gives the same. */
	MPI_Comm ish;
	MPI_Request req;
	rc = MPIX_Comm_ishrink(inter, &ish, &req);
	if (rc == MPI_SUCCESS)
		rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
	TU_CHECK(rc == MPI_SUCCESS, "ishrink: %d", rc);
	if (rc == MPI_SUCCESS) {
		int ilocal = 0, iremote = 0;
		MPI_Comm_size(ish, &ilocal);
		MPI_Comm_remote_size(ish, &iremote);
		TU_CHECK(ilocal == want_local && iremote == want_remote, "ishrink: %d local, %d remote", ilocal,
			 iremote);
		MPI_Comm_free(&ish);
	}
	MPI_Intercomm_merge(sh, odd, &merged);
	int mrank, msize;
	MPI_Comm_rank(merged, &mrank);
	MPI_Comm_size(merged, &msize);
	TU_CHECK(msize == size - 1, "merged: %d ranks, not %d", msize, size - 1);
	return finish(merged);
}

/* The whole odd group dies: the even survivors' shrink of the
 * intercommunicator has no remote group to make one with. */
static int test_inter_lost(int rank, int size)
{
	MPI_Comm half, inter, sh = MPI_COMM_WORLD, world;
	int odd = rank % 2, rc;

	MPI_Comm_split(MPI_COMM_WORLD, odd, rank, &half);
	MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, odd ? 0 : 1, 7, &inter);
	MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
	MPI_Barrier(inter);
	if (odd)
		raise(SIGKILL);
	for (int r = 1; r < size; r += 2)
		wait_failed(r);
	rc = MPIX_Comm_shrink(inter, &sh);
	TU_CHECK(rc == MPIX_ERR_PROC_FAILED && sh == MPI_COMM_NULL, "shrink with no remote survivor: %d", rc);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPIX_Comm_shrink(MPI_COMM_WORLD, &world);
	return finish(world);
}

static int test_last_words(int rank, int size)
{
	MPI_Comm world;
	int victim = size - 1, got = -1, flag = 1, rc;

	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == victim) {
		for (int tag = 1; tag <= 3; tag++)
			MPI_Send(&tag, 1, MPI_INT, 0, tag, MPI_COMM_WORLD);
		raise(SIGKILL);
	}
	if (rank == 0) {
		MPI_Status st;
		MPI_Request r;

		wait_failed(victim);
		rc = MPI_Probe(victim, 1, MPI_COMM_WORLD, &st);
		TU_CHECK(rc == MPI_SUCCESS && st.MPI_SOURCE == victim && st.MPI_TAG == 1,
			 "MPI_Probe of a message from the dead rank: %d", rc);
		rc = MPI_Recv(&got, 1, MPI_INT, victim, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		TU_CHECK(rc == MPI_SUCCESS && got == 1, "MPI_Recv: %d, got %d", rc, got);
		rc = MPI_Irecv(&got, 1, MPI_INT, victim, 2, MPI_COMM_WORLD, &r);
		if (rc == MPI_SUCCESS)
			rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
		TU_CHECK(rc == MPI_SUCCESS && got == 2, "MPI_Irecv and MPI_Wait: %d, got %d", rc, got);
		rc = MPI_Sendrecv(&rank, 1, MPI_INT, MPI_PROC_NULL, 0, &got, 1, MPI_INT, victim, 3,
				  MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		TU_CHECK(rc == MPI_SUCCESS && got == 3, "MPI_Sendrecv: %d, got %d", rc, got);
		rc = MPI_Recv(&got, 1, MPI_INT, victim, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		TU_CHECK(rc == MPIX_ERR_PROC_FAILED, "MPI_Recv of nothing: %d", rc);
		rc = MPI_Iprobe(victim, 4, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
		TU_CHECK(rc == MPIX_ERR_PROC_FAILED, "MPI_Iprobe of nothing: %d", rc);
	}
	MPIX_Comm_shrink(MPI_COMM_WORLD, &world);
	return finish(world);
}

static int test_progress(int rank, int size, const char *dir)
{
	char path[4096];
	int flag = rank == 2 ? 0x3 : 0x7, rc;

	if (rank == 0) {
		MPI_Request req;
		int seen = 0;
		rc = MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, &req);
		TU_CHECK(rc == MPI_SUCCESS, "iagree: %d", rc);
		for (int i = 0; i < 60000 && seen < size - 1; i++) {
			seen = 0;
			for (int r = 1; r < size; r++) {
				snprintf(path, sizeof path, "%s/agreed.%d", dir, r);
				seen += access(path, F_OK) == 0;
			}
			if (seen < size - 1)
				nap_ms(1);
		}
		TU_CHECK(seen == size - 1, "%d of %d ranks returned from the agreement while its coordinator made no MPI call",
			 seen, size - 1);
		rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
		TU_CHECK(rc == MPI_SUCCESS && flag == 0x3, "iagree by MPI_Wait: rc %d flag %x", rc, flag);
	} else {
		rc = MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
		TU_CHECK(rc == MPI_SUCCESS && flag == 0x3, "agree: rc %d flag %x", rc, flag);
		snprintf(path, sizeof path, "%s/agreed.%d", dir, rank);
		FILE *f = fopen(path, "w");
		TU_CHECK(f != NULL, "cannot write %s", path);
		if (f)
			fclose(f);
	}
	return finish(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
	int rank, size;
	const char *test = argc > 1 ? argv[1] : "agree";

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (!MPIX_Comm_agree || !MPIX_Comm_shrink || !MPIX_Comm_revoke) {
		fprintf(stderr, "ulfm needs ftshim preloaded\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (!strcmp(test, "revoke"))
		return test_revoke(rank, size);
	if (!strcmp(test, "agree"))
		return test_agree(rank, size);
	if (!strcmp(test, "coordinator"))
		return test_coordinator(rank);
	if (!strcmp(test, "shrink"))
		return test_shrink(rank, size, 0);
	if (!strcmp(test, "shrink-death"))
		return test_shrink(rank, size, 1);
	if (!strcmp(test, "loop"))
		return test_loop();
	if (!strcmp(test, "errh-loop"))
		return test_errh_loop(rank);
	if (!strcmp(test, "nonblocking"))
		return test_nonblocking(rank, size);
	if (!strcmp(test, "ishrink-death"))
		return test_ishrink_death(rank, size);
	if (!strcmp(test, "inter"))
		return test_inter(rank, size);
	if (!strcmp(test, "inter-lost"))
		return test_inter_lost(rank, size);
	if (!strcmp(test, "last-words"))
		return test_last_words(rank, size);
	if (!strcmp(test, "progress") && argc > 2)
		return test_progress(rank, size, argv[2]);
	if (!strcmp(test, "stale"))
		return test_stale(rank, argc > 2 && !strcmp(argv[2], "--sweep"));
	fprintf(stderr, "unknown test %s\n", test);
	MPI_Abort(MPI_COMM_WORLD, 2);
	return 2;
}
