/* done_race: a collective that completed is not failed because a member
 * died right after its own call returned (issue 39, item 5). 4 ranks;
 * rank 2 is killed as soon as its MPI_Comm_dup (dup) or MPI_Allgather
 * (allgather) on MPI_COMM_WORLD returns, while rank 1, under
 * hold_done.so, has not yet seen its own call finish. Every survivor must
 * get MPI_SUCCESS (and, for allgather, every rank's value), as ULFM
 * raises errors only for operations that cannot complete; each prints
 * "rank R: OP: CLASS". Then the survivors shrink and rank 0 of them
 * prints ALL CHECKS PASSED or CHECKS FAILED.
 *
 *   done_race dup|allgather */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "mpi-ext.h"
#include "testutil.h"

#define VICTIM 2

static const char *class_name(int rc)
{
	int cls = rc;

	if (rc == MPI_SUCCESS)
		return "MPI_SUCCESS";
	MPI_Error_class(rc, &cls);
	return cls == MPIX_ERR_PROC_FAILED ? "MPIX_ERR_PROC_FAILED" : "another error";
}

int main(int argc, char **argv)
{
	int rank = tu_init(&argc, &argv, 4, 1, "4 ranks and the shim");
	int dup = argc > 1 && strcmp(argv[1], "dup") == 0, rc, all[4] = { 0 };
	MPI_Comm d = MPI_COMM_NULL, s;

	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Barrier(MPI_COMM_WORLD);
	if (dup) {
		rc = MPI_Comm_dup(MPI_COMM_WORLD, &d);
	} else {
		int mine = 10 + rank;
		rc = MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
	}
	if (rank == VICTIM)
		raise(SIGKILL);
	printf("rank %d: %s: %s\n", rank, dup ? "dup" : "allgather", class_name(rc));
	fflush(stdout);
	TU_CHECK(rc == MPI_SUCCESS, "%s: %s, though it could complete", dup ? "dup" : "allgather", class_name(rc));
	for (int r = 0; !dup && rc == MPI_SUCCESS && r < 4; r++)
		TU_CHECK(all[r] == 10 + r, "allgather: %d from rank %d", all[r], r);
	if (d != MPI_COMM_NULL)
		MPI_Comm_free(&d);
	rc = MPIX_Comm_shrink(MPI_COMM_WORLD, &s);
	return tu_survivors_finish(rc, s, 3);
}
