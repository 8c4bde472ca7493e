/* report.c: a job for the failure report to describe. Usage:
 *
 *   report [--fatal] [--die]
 *
 * On 4 or more ranks: the last rank marks ftshim_inject_point("phase", 1)
 * (where the test's FTSHIM_INJECT kills it) and the rank before it waits
 * for a message from it in MPI_Recv, inside wait_for_neighbour, which
 * prints "recv line N" (the line of that MPI_Recv) first. With
 * MPI_ERRORS_RETURN the survivors then revoke a communicator, agree and
 * shrink it (having acknowledged the failure, so that both agreements
 * succeed), so that the report has one of each, and rank 0 prints ALL
 * CHECKS PASSED. With --fatal, MPI_COMM_WORLD keeps MPI_ERRORS_ARE_FATAL
 * and the job ends at the failed receive. With --die the last rank kills
 * itself instead (SIGKILL, no injection). */
#include <signal.h>
#include <unistd.h>

#include "mpi-ext.h"
#include "testutil.h"

typedef void (*point_fn)(const char *, long);

__attribute__((noinline)) static int wait_for_neighbour(int from, MPI_Comm comm)
{
	int value = 0;
	volatile int line = __LINE__ + 4; /* the MPI_Recv below */

	printf("recv line %d\n", line);
	fflush(stdout);
	int rc = MPI_Recv(&value, 1, MPI_INT, from, 5, comm, MPI_STATUS_IGNORE);
	return rc;
}

int main(int argc, char **argv)
{
	int rank, size, flag = 1;
	point_fn point = (point_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_inject_point");
	int fatal = tu_has_arg(argc, argv, "--fatal");

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (!fatal)
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm work;
	MPI_Comm_dup(MPI_COMM_WORLD, &work);
	MPI_Comm_set_errhandler(work, MPI_ERRORS_RETURN);
	/* Everyone has its copy before the victim dies: when one leaves a
	 * barrier, all have entered it; and the others have left it (a death
	 * while they are inside would fail it) well before 200 ms. */
	MPI_Barrier(MPI_COMM_WORLD);
	int victim = size - 1;
	if (rank == victim) {
		usleep(200000);
		if (tu_has_arg(argc, argv, "--die"))
			raise(SIGKILL); /* not by ftshim: no injection record */
		if (point)
			point("phase", 1);
		pause(); /* not reached when the injection works */
	}
	if (rank == victim - 1) {
		int rc = wait_for_neighbour(victim, MPI_COMM_WORLD);
		int cls = rc;
		MPI_Error_class(rc, &cls);
		TU_CHECK(cls == MPIX_ERR_PROC_FAILED, "the receive from the dead rank returned %d", rc);
	}
	/* Revoke, agree, shrink: every survivor takes part, once it knows of
	 * the failure (so that it acknowledges it before agreeing). */
	int (*state)(int) = (int (*)(int))(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_rank_state");
	while (state && state(victim) != 1)
		usleep(1000);
	if (rank == 0)
		MPIX_Comm_revoke(work);
	for (int revoked = 0; !revoked; usleep(1000))
		MPIX_Comm_is_revoked(work, &revoked);
	MPIX_Comm_failure_ack(work);
	MPIX_Comm_agree(work, &flag);
	MPI_Comm live;
	int rc = MPIX_Comm_shrink(work, &live);
	TU_CHECK(rc == MPI_SUCCESS, "shrink: %d", rc);
	int n = 0;
	MPI_Comm_size(live, &n);
	TU_CHECK(n == size - 1, "the shrunk communicator has %d ranks, not %d", n, size - 1);
	int ok = tu_failures == 0;
	MPIX_Comm_agree(live, &ok);
	if (rank == 0)
		printf("%s\n", ok ? "ALL CHECKS PASSED" : "CHECKS FAILED");
	MPI_Comm_free(&live);
	MPI_Comm_free(&work);
	MPI_Finalize();
	return tu_failures ? 1 : 0;
}
