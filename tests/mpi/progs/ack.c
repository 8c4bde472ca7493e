/* ack.c: acknowledging failures and MPI_ANY_SOURCE. Rank 3 of 4 dies;
 * then, on a communicator with MPI_ERRORS_RETURN, rank 0 checks that:
 *  - a blocking MPI_ANY_SOURCE receive fails with MPI_ERR_PROC_FAILED
 *    while the failure is not acknowledged;
 *  - a nonblocking one reports MPI_ERR_PROC_FAILED_PENDING from MPI_Wait
 *    and stays valid: after MPIX_Comm_failure_ack, the same request
 *    completes with a live sender's message;
 *  - after acknowledging, MPI_ANY_SOURCE receives work again;
 *  - MPIX_Comm_failure_get_acked / MPIX_Comm_get_failed give the failed
 *    rank (as its rank in the communicator), MPIX_Comm_ack_failed counts;
 *  - a receive naming the dead rank still fails after acknowledgement. */
#include <signal.h>
#include <time.h>

#include "mpi-ext.h"
#include "testutil.h"

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static int failed_in(MPI_Comm comm, MPI_Group g)
{
	int n, r = -1, zero = 0;
	MPI_Group cg;

	MPI_Group_size(g, &n);
	if (n != 1)
		return -n;
	MPI_Comm_group(comm, &cg);
	MPI_Group_translate_ranks(g, 1, &zero, cg, &r);
	MPI_Group_free(&cg);
	return r;
}

int main(int argc, char **argv)
{
	int rank, x = 0, flag;
	MPI_Comm work;
	MPI_Group g;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_dup(MPI_COMM_WORLD, &work);
	MPI_Comm_set_errhandler(work, MPI_ERRORS_RETURN);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 3) {
		nap_ms(200);
		raise(SIGKILL);
	}
	int (*state)(int) = (int (*)(int))(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_rank_state");
	while (state(3) != 1)
		nap_ms(1);
	if (rank == 0) {
		int rc = MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 1, work, MPI_STATUS_IGNORE);
		TU_CHECK(rc == MPIX_ERR_PROC_FAILED, "blocking ANY_SOURCE before ack: %d", rc);
		MPI_Request r;
		rc = MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 2, work, &r);
		TU_CHECK(rc == MPI_SUCCESS, "Irecv ANY_SOURCE: %d", rc);
		rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
		TU_CHECK(rc == MPIX_ERR_PROC_FAILED_PENDING, "Wait before ack: %d", rc);
		TU_CHECK(r != MPI_REQUEST_NULL, "the pending request was freed");
		MPIX_Comm_failure_get_acked(work, &g);
		TU_CHECK(failed_in(work, g) == 0, "acked before any ack: %d", failed_in(work, g));
		MPI_Group_free(&g);
		MPIX_Comm_get_failed(work, &g);
		TU_CHECK(failed_in(work, g) == 3, "get_failed gives %d, not rank 3", failed_in(work, g));
		MPI_Group_free(&g);
		MPIX_Comm_failure_ack(work);
		MPIX_Comm_failure_get_acked(work, &g);
		TU_CHECK(failed_in(work, g) == 3, "acked gives %d, not rank 3", failed_in(work, g));
		MPI_Group_free(&g);
		int acked = -1;
		MPIX_Comm_ack_failed(work, 0, &acked);
		TU_CHECK(acked == 1, "ack_failed counts %d", acked);
		/* Now the live senders go; the pending request completes. */
		MPI_Send(&x, 1, MPI_INT, 1, 9, work);
		MPI_Status st;
		rc = MPI_Wait(&r, &st);
		TU_CHECK(rc == MPI_SUCCESS && st.MPI_SOURCE == 1, "the pending request: rc %d source %d", rc,
			 st.MPI_SOURCE);
		rc = MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 1, work, &st);
		TU_CHECK(rc == MPI_SUCCESS && st.MPI_SOURCE == 2, "ANY_SOURCE after ack: rc %d", rc);
		rc = MPI_Recv(&x, 1, MPI_INT, 3, 1, work, MPI_STATUS_IGNORE);
		TU_CHECK(rc == MPIX_ERR_PROC_FAILED, "named dead source after ack: %d", rc);
		rc = MPI_Iprobe(MPI_ANY_SOURCE, 77, work, &flag, MPI_STATUS_IGNORE);
		TU_CHECK(rc == MPI_SUCCESS && !flag, "Iprobe ANY_SOURCE after ack: rc %d", rc);
	} else if (rank == 1) {
		MPI_Recv(&x, 1, MPI_INT, 0, 9, work, MPI_STATUS_IGNORE);
		MPI_Send(&x, 1, MPI_INT, 0, 2, work);
	} else if (rank == 2) {
		MPI_Send(&x, 1, MPI_INT, 0, 1, work);
	}
	int bad = tu_failures;
	if (rank == 0)
		printf("%s\n", bad ? "CHECKS FAILED" : "ALL CHECKS PASSED");
	MPI_Finalize();
	return bad ? 1 : 0;
}
