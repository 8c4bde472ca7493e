/* layers.c: a rank dies while the others wait on it, and the calls reach
 * the MPI by the other ways into it than a plain MPI_ call. Usage:
 *
 *   layers [--pmpi | --tool]
 *
 * 4 ranks or more, MPI_ERRORS_RETURN on a duplicate of MPI_COMM_WORLD.
 * Every rank makes allreduces until one fails (rank 2 is to be killed by
 * FTSHIM_INJECT after its 5th MPI_Allreduce); then the survivors receive
 * from rank 2, which must fail too, shrink and sum their ranks. Before
 * that, every rank sends to itself and completes with a NULL status
 * (MPI_Wait, MPI_Recv), which must mean MPI_STATUS_IGNORE on both MPIs.
 *
 * --pmpi  the program calls PMPI_Comm_dup, PMPI_Allreduce and PMPI_Recv
 *         itself, as libraries built on the profiling interface do;
 * --tool  a tool (progs/tool.c) preloaded before the shim wraps the
 *         MPI_ calls; the program checks that the tool saw them.
 *
 * The survivors' rank 0 prints ALL CHECKS PASSED. */
#include <mpi-ext.h>

#include "testutil.h"

typedef long (*tool_calls_fn)(void);

int main(int argc, char **argv)
{
	int pmpi = tu_has_arg(argc, argv, "--pmpi"), tool = tu_has_arg(argc, argv, "--tool");
	int rank, size, rc = MPI_SUCCESS, cls = -1, iter;
	MPI_Comm comm;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (pmpi)
		PMPI_Comm_dup(MPI_COMM_WORLD, &comm);
	else
		MPI_Comm_dup(MPI_COMM_WORLD, &comm);
	MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);

	/* A NULL status means MPI_STATUS_IGNORE on both MPIs (MPICH alone
	 * rejects it; Fenix passes it). */
	int mine = rank, got = -1, got2 = -1, sent, wrc;
	MPI_Request self;
	MPI_Irecv(&got, 1, MPI_INT, rank, 3, comm, &self);
	sent = MPI_Send(&mine, 1, MPI_INT, rank, 3, comm);
	wrc = MPI_Wait(&self, NULL);
	TU_CHECK(sent == MPI_SUCCESS && wrc == MPI_SUCCESS && got == rank, "MPI_Wait with a NULL status: %d %d %d",
		 sent, wrc, got);
	MPI_Send(&mine, 1, MPI_INT, rank, 4, comm);
	wrc = MPI_Recv(&got2, 1, MPI_INT, rank, 4, comm, NULL);
	TU_CHECK(wrc == MPI_SUCCESS && got2 == rank, "MPI_Recv with a NULL status: %d %d", wrc, got2);

	for (iter = 0; iter < 1000 && rc == MPI_SUCCESS; iter++) {
		int one = 1, sum = 0;

		rc = pmpi ? PMPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm)
			  : MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
		if (rc == MPI_SUCCESS)
			TU_CHECK(sum == size, "iteration %d: sum %d", iter, sum);
		tu_nap_ms(2);
	}
	TU_CHECK(rc != MPI_SUCCESS, "%d allreduces and none failed: rank 2 was not killed", iter);
	MPI_Error_class(rc, &cls);
	TU_CHECK(cls == MPIX_ERR_PROC_FAILED || cls == MPIX_ERR_REVOKED,
		 "the allreduce failed with class %d, expected MPIX_ERR_PROC_FAILED or MPIX_ERR_REVOKED", cls);

	/* From the dead rank: an error at once, never a hang. */
	int x = 0;
	double t0 = tu_now_s();
	rc = pmpi ? PMPI_Recv(&x, 1, MPI_INT, 2, 7, comm, MPI_STATUS_IGNORE)
		  : MPI_Recv(&x, 1, MPI_INT, 2, 7, comm, MPI_STATUS_IGNORE);
	MPI_Error_class(rc, &cls);
	TU_CHECK(cls == MPIX_ERR_PROC_FAILED, "MPI_Recv from the dead rank 2: class %d after %.3f s",
		 cls, tu_now_s() - t0);

	if (tool) {
		tool_calls_fn calls = (tool_calls_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "tool_calls");

		TU_CHECK(calls && calls() >= iter + 1, "the tool saw %ld calls, expected %d",
			 calls ? calls() : -1L, iter + 1);
	}

	MPI_Comm survivors = MPI_COMM_NULL;
	int src = MPIX_Comm_shrink(comm, &survivors);
	if (src == MPI_SUCCESS) {
		int ssum = 0;

		rc = pmpi ? PMPI_Allreduce(&rank, &ssum, 1, MPI_INT, MPI_SUM, survivors)
			  : MPI_Allreduce(&rank, &ssum, 1, MPI_INT, MPI_SUM, survivors);
		TU_CHECK(rc == MPI_SUCCESS && ssum == size * (size - 1) / 2 - 2,
			 "the survivors' sum of ranks: rc %d, %d", rc, ssum);
	}
	MPI_Comm_free(&comm);
	return tu_survivors_finish(src, survivors, size - 1);
}
