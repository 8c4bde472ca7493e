/* nb_errors.c: a nonblocking operation started when a failure is already
 * known still hands back a valid request, and the error comes when the
 * request is completed (ULFM, as Open MPI 5 does it): the common ULFM
 * program checks errors only at MPI_Wait. 4 ranks, MPI_ERRORS_RETURN on
 * MPI_COMM_WORLD and on a duplicate of it, work. Rank 3 dies after a
 * barrier; once the shim holds it failed, each survivor checks, on its
 * own (the operations on work fail locally everywhere):
 *  1. MPI_Iallreduce on work, completed by MPI_Wait;
 *  2. MPI_Ibarrier on work, completed by an MPI_Test loop;
 *  3. MPI_Isend to rank 3 on work, MPI_Wait;
 *  4. MPI_Irecv from rank 3 on work, MPI_Wait;
 *  5. MPI_Send_init to rank 3 and MPI_Start: MPI_Wait fails, and the
 *     request stays an inactive persistent request that MPI_Request_free
 *     frees;
 *  6. MPI_Comm_idup of work: MPI_Wait fails, the new communicator is
 *     MPI_COMM_NULL;
 *  7. MPI_Waitall over a ring send and receive among the survivors on
 *     MPI_COMM_WORLD and an MPI_Iallreduce on work: MPI_ERR_IN_STATUS,
 *     the point-to-point ones succeed (with the right value), the
 *     collective one fails;
 *  8. MPI_Waitany over an MPI_Iallreduce and an MPI_Ibarrier on work:
 *     each call completes one of them, failed;
 *  5b. a synchronous persistent send to rank 3 started before it died:
 *     MPI_Wait fails, and the request stays for MPI_Request_free;
 * each failing with MPIX_ERR_PROC_FAILED; then, once all are done,
 *  9. rank 0 revokes work, and everyone's MPI_Ibarrier on it fails with
 *     MPIX_ERR_REVOKED at MPI_Wait.
 * A start call returns MPI_SUCCESS (ULFM would also allow the error, but
 * ftshim reports it once, at completion), its request must be set (each
 * is garbage before it), and completing it must give the error and free
 * it (except the persistent one). The
 * survivors then shrink MPI_COMM_WORLD and sum their failed checks over
 * it; its rank 0 prints ALL CHECKS PASSED. Exit status 1 if a check
 * failed here, 2 without the shim. */
#include <signal.h>
#include <time.h>

#include "mpi-ext.h"
#include "testutil.h"

#define DEAD 3

/* The class of an error code, or -1 if the MPI knows no such code. */
static int cls_of(int rc)
{
	int cls = -1;

	if (MPI_Error_class(rc, &cls) != MPI_SUCCESS)
		return -1;
	return cls;
}

/* A request handle that is not MPI_REQUEST_NULL and no real request: what
 * each request holds before its start call, to catch one left unset. */
static MPI_Request garbage_req(void)
{
	MPI_Request r;

	memset(&r, 0x5a, sizeof(r));
	return r;
}

static int is_garbage(MPI_Request r)
{
	MPI_Request g = garbage_req();

	return memcmp(&r, &g, sizeof(r)) == 0;
}

/* After a start call that returned rc: rc is MPI_SUCCESS (ftshim reports
 * the error once, at completion; ULFM would also allow the error now,
 * with a valid request), and *req was set to a request. Returns whether
 * there is one to complete; one left unset (still the garbage) becomes
 * MPI_REQUEST_NULL, so that nothing waits on it. */
static int started(const char *what, int rc, int want, MPI_Request *req)
{
	int cls = cls_of(rc);

	(void)want;
	TU_CHECK(cls == MPI_SUCCESS, "%s: the start returned %d (class %d)", what, rc, cls);
	if (is_garbage(*req)) {
		TU_CHECK(!is_garbage(*req), "%s: request left unset (the start returned %d)", what,
			 rc);
		*req = MPI_REQUEST_NULL;
		return 0;
	}
	TU_CHECK(*req != MPI_REQUEST_NULL, "%s: the start gave MPI_REQUEST_NULL (returned %d)",
		 what, rc);
	return *req != MPI_REQUEST_NULL;
}

/* Complete *req by MPI_Wait: an error of class want, the request freed. */
static void waited(const char *what, MPI_Request *req, int want)
{
	int rc = MPI_Wait(req, MPI_STATUS_IGNORE), cls = cls_of(rc);

	TU_CHECK(cls == want, "%s: MPI_Wait returned %d (class %d), not class %d", what, rc, cls,
		 want);
	TU_CHECK(*req == MPI_REQUEST_NULL, "%s: MPI_Wait left the request set", what);
}

/* 1. A nonblocking collective on a communicator with a dead member. */
static void item_iallreduce(MPI_Comm work)
{
	MPI_Request req = garbage_req();
	int one = 1, sum = -1;
	int rc = MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, work, &req);

	if (started("1 Iallreduce", rc, MPIX_ERR_PROC_FAILED, &req))
		waited("1 Iallreduce", &req, MPIX_ERR_PROC_FAILED);
}

/* 2. The same, completed by polling with MPI_Test (for up to 10 s): it
 * ends with the flag set and the error. */
static void item_ibarrier_test(MPI_Comm work)
{
	MPI_Request req = garbage_req();
	int flag = 0, cls, rc = MPI_Ibarrier(work, &req);
	double t0 = tu_now_s();

	if (!started("2 Ibarrier", rc, MPIX_ERR_PROC_FAILED, &req))
		return;
	rc = MPI_SUCCESS;
	while (!flag && rc == MPI_SUCCESS && tu_now_s() - t0 < 10) {
		rc = MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
		if (!flag && rc == MPI_SUCCESS)
			tu_nap_ms(1);
	}
	cls = cls_of(rc);
	TU_CHECK(flag && cls == MPIX_ERR_PROC_FAILED,
		 "2 Ibarrier: MPI_Test: %sflag %d, returned %d (class %d)",
		 !flag && rc == MPI_SUCCESS ? "still pending after 10 s, " : "", flag, rc, cls);
	if (flag || rc != MPI_SUCCESS)
		TU_CHECK(req == MPI_REQUEST_NULL, "2 Ibarrier: MPI_Test left the request set");
}

/* 3. A send to the dead rank. */
static void item_isend(MPI_Comm work)
{
	MPI_Request req = garbage_req();
	int x = 3;
	int rc = MPI_Isend(&x, 1, MPI_INT, DEAD, 3, work, &req);

	if (started("3 Isend", rc, MPIX_ERR_PROC_FAILED, &req))
		waited("3 Isend", &req, MPIX_ERR_PROC_FAILED);
}

/* 4. A receive from the dead rank (which never sent anything). */
static void item_irecv(MPI_Comm work)
{
	MPI_Request req = garbage_req();
	int x = -1;
	int rc = MPI_Irecv(&x, 1, MPI_INT, DEAD, 4, work, &req);

	if (started("4 Irecv", rc, MPIX_ERR_PROC_FAILED, &req))
		waited("4 Irecv", &req, MPIX_ERR_PROC_FAILED);
}

/* 5. A persistent send to the dead rank: MPI_Start may fail or not, the
 * MPI_Wait fails, and the request is not freed by either (a persistent
 * request is inactive after its completion, until MPI_Request_free). */
static void item_persistent(MPI_Comm work)
{
	MPI_Request req = garbage_req();
	int x = 5, cls;
	int rc = MPI_Send_init(&x, 1, MPI_INT, DEAD, 5, work, &req);

	if (!started("5 Send_init", rc, MPIX_ERR_PROC_FAILED, &req))
		return;
	rc = MPI_Start(&req);
	cls = cls_of(rc);
	TU_CHECK(cls == MPI_SUCCESS, "5 Send_init: MPI_Start returned %d (class %d)", rc, cls);
	TU_CHECK(req != MPI_REQUEST_NULL, "5 Send_init: MPI_Start freed the persistent request");
	if (req == MPI_REQUEST_NULL)
		return;
	rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
	cls = cls_of(rc);
	TU_CHECK(cls == MPIX_ERR_PROC_FAILED, "5 Send_init: MPI_Wait returned %d (class %d)", rc,
		 cls);
	TU_CHECK(req != MPI_REQUEST_NULL, "5 Send_init: MPI_Wait freed the persistent request");
	if (req == MPI_REQUEST_NULL)
		return;
	rc = MPI_Request_free(&req);
	TU_CHECK(rc == MPI_SUCCESS && req == MPI_REQUEST_NULL,
		 "5 Send_init: MPI_Request_free returned %d%s", rc,
		 req == MPI_REQUEST_NULL ? "" : ", the request still set");
}

/* 6. A nonblocking communicator creation: it fails at MPI_Wait, and gives
 * no communicator (newcomm is MPI_COMM_SELF before, to see it set). */
static void item_idup(MPI_Comm work)
{
	MPI_Request req = garbage_req();
	MPI_Comm nc = MPI_COMM_SELF;
	int rc = MPI_Comm_idup(work, &nc, &req);

	if (!started("6 Comm_idup", rc, MPIX_ERR_PROC_FAILED, &req))
		return;
	waited("6 Comm_idup", &req, MPIX_ERR_PROC_FAILED);
	TU_CHECK(nc == MPI_COMM_NULL, "6 Comm_idup: the new communicator is not MPI_COMM_NULL%s",
		 nc == MPI_COMM_SELF ? " (left unset)" : "");
	if (nc != MPI_COMM_NULL && nc != MPI_COMM_SELF)
		MPI_Comm_free(&nc);
}

/* 7. MPI_Waitall over requests of which one fails: MPI_ERR_IN_STATUS,
 * each status saying how its own request ended, all requests freed. The
 * ring among ranks 0-2 on MPI_COMM_WORLD has only live members. */
static void item_waitall(int rank, MPI_Comm work)
{
	static int out, in; /* static: safe from a receive that outlives us */
	MPI_Request req[3];
	MPI_Status st[3];
	int one = 1, sum = -1, have_coll, cls, rc;
	int to = (rank + 1) % 3, from = (rank + 2) % 3;

	out = 700 + rank;
	in = -1;
	for (int i = 0; i < 3; i++) {
		req[i] = garbage_req();
		st[i].MPI_ERROR = -12345;
	}
	rc = MPI_Isend(&out, 1, MPI_INT, to, 5, MPI_COMM_WORLD, &req[0]);
	started("7 Isend to a live rank", rc, MPI_SUCCESS, &req[0]);
	rc = MPI_Irecv(&in, 1, MPI_INT, from, 5, MPI_COMM_WORLD, &req[1]);
	started("7 Irecv from a live rank", rc, MPI_SUCCESS, &req[1]);
	rc = MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, work, &req[2]);
	have_coll = started("7 Iallreduce", rc, MPIX_ERR_PROC_FAILED, &req[2]);

	rc = MPI_Waitall(3, req, st);
	cls = cls_of(rc);
	if (have_coll) {
		TU_CHECK(cls == MPI_ERR_IN_STATUS, "7 Waitall returned %d (class %d)", rc, cls);
		if (cls == MPI_ERR_IN_STATUS) {
			TU_CHECK(st[0].MPI_ERROR == MPI_SUCCESS, "7 Waitall: the Isend's error %d",
				 st[0].MPI_ERROR);
			TU_CHECK(st[1].MPI_ERROR == MPI_SUCCESS, "7 Waitall: the Irecv's error %d",
				 st[1].MPI_ERROR);
			TU_CHECK(cls_of(st[2].MPI_ERROR) == MPIX_ERR_PROC_FAILED,
				 "7 Waitall: the Iallreduce's error %d (class %d)", st[2].MPI_ERROR,
				 cls_of(st[2].MPI_ERROR));
		}
	}
	if (cls == MPI_SUCCESS || (cls == MPI_ERR_IN_STATUS && st[1].MPI_ERROR == MPI_SUCCESS))
		TU_CHECK(in == 700 + from && st[1].MPI_SOURCE == from,
			 "7 Waitall: received %d from %d, not %d from %d", in, st[1].MPI_SOURCE,
			 700 + from, from);
	for (int i = 0; i < 3; i++)
		TU_CHECK(req[i] == MPI_REQUEST_NULL, "7 Waitall left request %d set", i);
	/* Whatever happened, the ring's messages go through (the others wait
	 * for them). */
	for (int i = 0; i < 2; i++)
		if (req[i] != MPI_REQUEST_NULL)
			MPI_Wait(&req[i], MPI_STATUS_IGNORE);
}

/* 8. MPI_Waitany over two failing collectives: each call completes one,
 * with its index and its error, and frees it. */
static void item_waitany(MPI_Comm work)
{
	MPI_Request req[2] = { garbage_req(), garbage_req() };
	int one = 1, sum = -1, ok, idx = -7, idx2 = -7, cls, rc;

	rc = MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, work, &req[0]);
	ok = started("8 Iallreduce", rc, MPIX_ERR_PROC_FAILED, &req[0]);
	rc = MPI_Ibarrier(work, &req[1]);
	ok &= started("8 Ibarrier", rc, MPIX_ERR_PROC_FAILED, &req[1]);
	if (!ok) {
		for (int i = 0; i < 2; i++)
			MPI_Wait(&req[i], MPI_STATUS_IGNORE);
		return;
	}
	rc = MPI_Waitany(2, req, &idx, MPI_STATUS_IGNORE);
	cls = cls_of(rc);
	TU_CHECK(cls == MPIX_ERR_PROC_FAILED && (idx == 0 || idx == 1),
		 "8 Waitany: returned %d (class %d), index %d", rc, cls, idx);
	if (idx == 0 || idx == 1)
		TU_CHECK(req[idx] == MPI_REQUEST_NULL, "8 Waitany left request %d set", idx);
	rc = MPI_Waitany(2, req, &idx2, MPI_STATUS_IGNORE);
	cls = cls_of(rc);
	TU_CHECK(cls == MPIX_ERR_PROC_FAILED && (idx == 0 || idx == 1) && idx2 == 1 - idx,
		 "8 second Waitany: returned %d (class %d), index %d after %d", rc, cls, idx2, idx);
	TU_CHECK(req[0] == MPI_REQUEST_NULL && req[1] == MPI_REQUEST_NULL,
		 "8 Waitany: requests left set: %d %d", req[0] != MPI_REQUEST_NULL,
		 req[1] != MPI_REQUEST_NULL);
}

/* 9. On a revoked communicator the error is MPIX_ERR_REVOKED, also at
 * the completion of an operation started on it. */
static void item_revoked(int rank, MPI_Comm work)
{
	MPI_Request req = garbage_req();
	int flag = 0, rc;
	double t0;

	if (rank == 0) {
		rc = MPIX_Comm_revoke(work);
		TU_CHECK(rc == MPI_SUCCESS, "9 revoke: %d", rc);
		tu_nap_ms(100);
	}
	t0 = tu_now_s();
	while (!flag && tu_now_s() - t0 < 10) {
		MPIX_Comm_is_revoked(work, &flag);
		if (!flag)
			tu_nap_ms(1);
	}
	TU_CHECK(flag, "9: work not seen revoked after 10 s");
	rc = MPI_Ibarrier(work, &req);
	if (started("9 Ibarrier after the revoke", rc, MPIX_ERR_REVOKED, &req))
		waited("9 Ibarrier after the revoke", &req, MPIX_ERR_REVOKED);
}

/* 5b. An active persistent request given up on stays the caller's. */
static void item_persistent_active(MPI_Request *req)
{
	int rc = MPI_Wait(req, MPI_STATUS_IGNORE), cls = cls_of(rc);

	TU_CHECK(cls == MPIX_ERR_PROC_FAILED, "5b Ssend_init: MPI_Wait returned %d (class %d)", rc,
		 cls);
	TU_CHECK(*req != MPI_REQUEST_NULL, "5b Ssend_init: MPI_Wait freed the persistent request");
	if (*req == MPI_REQUEST_NULL)
		return;
	rc = MPI_Request_free(req);
	TU_CHECK(rc == MPI_SUCCESS, "5b Ssend_init: MPI_Request_free returned %d", rc);
}

int main(int argc, char **argv)
{
	int rank = tu_init(&argc, &argv, 4, 1, "4 ranks, and the shim");
	int x = 0, rc;
	MPI_Comm work;

	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_dup(MPI_COMM_WORLD, &work);
	MPI_Comm_set_errhandler(work, MPI_ERRORS_RETURN);
	/* 5b: rank 3 never receives it, so it stays active. */
	MPI_Request active = MPI_REQUEST_NULL;
	static int never;
	if (rank != DEAD) {
		MPI_Ssend_init(&never, 1, MPI_INT, DEAD, 11, work, &active);
		MPI_Start(&active);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == DEAD) {
		tu_nap_ms(200);
		raise(SIGKILL);
	}
	int (*state)(int) = (int (*)(int))(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_rank_state");
	double t0 = tu_now_s();
	while (state(DEAD) != 1 && tu_now_s() - t0 < 20) /* FTSHIM_FAILED */
		tu_nap_ms(1);
	TU_CHECK(state(DEAD) == 1, "rank %d not known failed after 20 s", DEAD);

	item_iallreduce(work);
	item_ibarrier_test(work);
	item_isend(work);
	item_irecv(work);
	item_persistent(work);
	item_persistent_active(&active);
	item_idup(work);
	item_waitall(rank, work);
	item_waitany(work);
	/* Everyone is done with items 1-8 before work is revoked. */
	if (rank == 0) {
		for (int i = 1; i < 3; i++) {
			rc = MPI_Recv(&x, 1, MPI_INT, i, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			TU_CHECK(rc == MPI_SUCCESS, "rank %d's done: %d", i, rc);
		}
	} else {
		rc = MPI_Send(&x, 1, MPI_INT, 0, 9, MPI_COMM_WORLD);
		TU_CHECK(rc == MPI_SUCCESS, "done to rank 0: %d", rc);
	}
	item_revoked(rank, work);

	/* The survivors: 0, 1 and 2. */
	MPI_Comm s = MPI_COMM_NULL;
	int shrunk = MPIX_Comm_shrink(MPI_COMM_WORLD, &s);
	return tu_survivors_finish(shrunk, s, 3);
}
