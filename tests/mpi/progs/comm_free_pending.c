/* comm_free_pending.c: a request outlives the communicator it was posted
 * on (MPI_Comm_free with operations pending is legal: the communicator
 * goes when they complete). 4 ranks, MPI_ERRORS_RETURN everywhere.
 *
 * Round one: rank 0 posts 8 receives from rank 1, one on each of 8
 * duplicates of MPI_COMM_WORLD, and frees the 8 at once. Every rank then
 * makes 8 new duplicates (which may take the memory and the context ids
 * of the freed ones), rank 2 revokes every other one, and they are all
 * freed. Rank 1 then sends on its own, still open, duplicates: rank 0's
 * MPI_Waitall must succeed with each value from the communicator its
 * request was posted on, in order, not from a revoked or recycled one.
 *
 * Round two: rank 0 posts a receive from rank 1 on a duplicate, frees
 * it, and rank 1 dies: the orphaned request must still be watched, and
 * end in MPI_Test with MPIX_ERR_PROC_FAILED, not wait forever. The
 * survivors then shrink MPI_COMM_WORLD and sum their failed checks over
 * it.
 *
 * With the argument "plain" only round one runs, without the revokes and
 * without any MPIX call, so that it can run without the shim to show that
 * the program is correct MPI. Rank 0 prints ALL CHECKS PASSED; exit
 * status 1 if a check failed here. */
#include <signal.h>
#include <time.h>

#include "mpi-ext.h"
#include "testutil.h"

#define NDUP 8

static void dup_world(MPI_Comm *c)
{
	MPI_Comm_dup(MPI_COMM_WORLD, c);
	MPI_Comm_set_errhandler(*c, MPI_ERRORS_RETURN);
}

static void round_one(int rank, int plain)
{
	MPI_Comm d[NDUP], e[NDUP];
	MPI_Request req[NDUP];
	MPI_Status st[NDUP];
	int x[NDUP], rc;

	for (int i = 0; i < NDUP; i++)
		dup_world(&d[i]);
	if (rank == 0) {
		for (int i = 0; i < NDUP; i++) {
			x[i] = -1;
			rc = MPI_Irecv(&x[i], 1, MPI_INT, 1, 7, d[i], &req[i]);
			TU_CHECK(rc == MPI_SUCCESS, "Irecv %d: %d", i, rc);
		}
		for (int i = 0; i < NDUP; i++) {
			rc = MPI_Comm_free(&d[i]);
			TU_CHECK(rc == MPI_SUCCESS, "free of d[%d] with a receive pending: %d", i,
				 rc);
		}
	}
	/* New communicators while the freed ones still have requests. */
	for (int i = 0; i < NDUP; i++)
		dup_world(&e[i]);
	if (rank == 2 && !plain) {
		for (int i = 0; i < NDUP; i += 2) {
			rc = MPIX_Comm_revoke(e[i]);
			TU_CHECK(rc == MPI_SUCCESS, "revoke of e[%d]: %d", i, rc);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	tu_nap_ms(200); /* the revocations reach everyone */
	for (int i = 0; i < NDUP; i++) {
		rc = MPI_Comm_free(&e[i]);
		TU_CHECK(rc == MPI_SUCCESS, "free of e[%d]: %d", i, rc);
	}
	if (rank == 1) {
		for (int i = 0; i < NDUP; i++) {
			int v = 100 + i;

			rc = MPI_Send(&v, 1, MPI_INT, 0, 7, d[i]);
			TU_CHECK(rc == MPI_SUCCESS, "send on d[%d]: %d", i, rc);
		}
	}
	if (rank != 0)
		for (int i = 0; i < NDUP; i++)
			MPI_Comm_free(&d[i]);
	if (rank == 0) {
		rc = MPI_Waitall(NDUP, req, st);
		TU_CHECK(rc == MPI_SUCCESS, "Waitall of the orphaned receives: %d", rc);
		for (int i = 0; i < NDUP; i++)
			TU_CHECK(x[i] == 100 + i,
				 "receive %d (posted on d[%d]) got %d, not %d (error %d)", i, i,
				 x[i], 100 + i, rc == MPI_SUCCESS ? MPI_SUCCESS : st[i].MPI_ERROR);
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

static void round_two(int rank)
{
	MPI_Comm f;
	MPI_Request req = MPI_REQUEST_NULL;
	int x = -1, rc;

	dup_world(&f);
	if (rank == 0) {
		rc = MPI_Irecv(&x, 1, MPI_INT, 1, 0, f, &req);
		TU_CHECK(rc == MPI_SUCCESS, "Irecv: %d", rc);
	}
	MPI_Comm_free(&f);
	/* The last collective on MPI_COMM_WORLD with rank 1 in it. */
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 1)
		raise(SIGKILL);
	if (rank == 0) {
		int flag = 0, cls = -1;
		double t0 = tu_now_s();

		rc = MPI_SUCCESS;
		while (!flag && rc == MPI_SUCCESS && tu_now_s() - t0 < 20) {
			rc = MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
			if (!flag && rc == MPI_SUCCESS)
				tu_nap_ms(1);
		}
		MPI_Error_class(rc, &cls);
		TU_CHECK(cls == MPIX_ERR_PROC_FAILED,
			 "the orphaned receive from the dead rank: %s%d (class %d)",
			 flag || rc != MPI_SUCCESS ? "" : "still pending after 20 s, ", rc, cls);
	}
	int (*state)(int) = (int (*)(int))(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_rank_state");
	while (state(1) != 1) /* FTSHIM_FAILED */
		tu_nap_ms(1);
}

int main(int argc, char **argv)
{
	int plain = tu_has_arg(argc, argv, "plain");
	int rank = tu_init(&argc, &argv, 4, !plain, "4 ranks, and the shim unless plain");

	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

	round_one(rank, plain);
	if (plain) {
		int any = -1;

		MPI_Allreduce(&tu_failures, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		if (rank == 0)
			printf("%s\n", any == 0 ? "ALL CHECKS PASSED" : "CHECKS FAILED");
		MPI_Finalize();
		return tu_failures ? 1 : 0;
	}
	round_two(rank);

	/* The survivors: 0, 2 and 3. */
	MPI_Comm s = MPI_COMM_NULL;
	int shrunk = MPIX_Comm_shrink(MPI_COMM_WORLD, &s);
	return tu_survivors_finish(shrunk, s, 3);
}
