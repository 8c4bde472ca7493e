/* sessions_only: a program on MPI-4 sessions alone, which never calls
 * MPI_Init (issue 22). 4 ranks make a communicator from their session's
 * mpi://WORLD process set. With "kill", rank 2 dies while the others are
 * in an MPI_Allreduce on it: they must get MPIX_ERR_PROC_FAILED (or
 * MPIX_ERR_REVOKED, once another survivor revoked), revoke, shrink,
 * reduce over the 3 survivors, and end with MPI_Session_finalize. Without,
 * the reduction and the end work as they do without ftshim. The program
 * has no MPI_COMM_WORLD, so its checks are its own (testutil's use it). */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>

#include "mpi-ext.h"
#include "testutil.h"

static int rank, failures;

#define CHECK(cond, ...) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "CHECK FAILED rank %d line %d: %s: ", rank, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
			failures++; \
		} \
	} while (0)

static int error_class(int rc)
{
	int cls = rc;

	if (rc != MPI_SUCCESS)
		MPI_Error_class(rc, &cls);
	return cls;
}

int main(int argc, char **argv)
{
	MPI_Session session;
	MPI_Group world;
	MPI_Comm comm, s;
	int size, rc, sum = 0, any = 0;

	rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session);
	if (rc != MPI_SUCCESS) {
		fprintf(stderr, "MPI_Session_init: %d\n", rc);
		return 2;
	}
	MPI_Group_from_session_pset(session, "mpi://WORLD", &world);
	rc = MPI_Comm_create_from_group(world, "org.ftshim.test.sessions", MPI_INFO_NULL, MPI_ERRORS_RETURN,
					&comm);
	MPI_Group_free(&world);
	if (rc != MPI_SUCCESS) {
		fprintf(stderr, "MPI_Comm_create_from_group: %d\n", rc);
		return 2;
	}
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	if (size != 4) {
		if (rank == 0)
			fprintf(stderr, "sessions_only: needs 4 ranks\n");
		return 2;
	}
	if (tu_has_arg(argc, argv, "kill")) {
		MPI_Barrier(comm);
		if (rank == 2) {
			tu_nap_ms(200);
			raise(SIGKILL);
		}
		int one = 1;
		rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
		/* Revoked, if a faster survivor revoked first. */
		CHECK(error_class(rc) == MPIX_ERR_PROC_FAILED || error_class(rc) == MPIX_ERR_REVOKED,
		      "MPI_Allreduce with rank 2 dead: class %d", error_class(rc));
		MPIX_Comm_revoke(comm);
		rc = MPIX_Comm_shrink(comm, &s);
		CHECK(rc == MPI_SUCCESS, "MPIX_Comm_shrink: %d", rc);
		MPI_Comm_free(&comm);
		comm = s;
		MPI_Comm_size(comm, &size);
		CHECK(size == 3, "shrunk to %d", size);
	}
	int one = 1;
	rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
	CHECK(rc == MPI_SUCCESS && sum == size, "MPI_Allreduce over %d: %d, sum %d", size, rc, sum);
	MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_SUM, comm);
	MPI_Comm_rank(comm, &rank);
	if (rank == 0)
		printf("%s\n", any == 0 ? "ALL CHECKS PASSED" : "CHECKS FAILED");
	MPI_Comm_free(&comm);
	rc = MPI_Session_finalize(&session);
	CHECK(rc == MPI_SUCCESS, "MPI_Session_finalize: %d", rc);
	printf("session finalized\n");
	return failures ? 1 : 0;
}
