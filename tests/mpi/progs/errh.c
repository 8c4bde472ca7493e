/* errh.c: how a failure reaches the program through the error handler.
 * Rank 2 of 4 dies (SIGKILL) after a barrier; once every survivor knows,
 * rank 0 receives from it:
 *
 *   errh fatal    the default handler, MPI_ERRORS_ARE_FATAL: the job must
 *                 end at once with ftshim's one-line explanation
 *   errh return   MPI_ERRORS_RETURN: the receive returns the error class,
 *                 which MPI_Error_class and MPI_Error_string know
 *   errh handler  a user handler: called once, with the communicator and
 *                 the code; then live ranks still talk to each other
 *   errh abort    no failure: rank 1 calls MPI_Abort(MPI_COMM_WORLD, 7)
 *                 while the others wait in a barrier; all must end
 *   errh abort-spin  rank 0 calls MPI_Abort(MPI_COMM_WORLD, 7) right after
 *                 a barrier while the others compute without calling MPI
 *                 for up to 30 s: they must end all the same (the abort
 *                 must reach them even when rank 0's death is seen first)
 *   errh abort-spin-early  the same without the barrier: MPI_Abort as soon
 *                 as MPI_Init returns */
#include <signal.h>
#include <time.h>

#include "testutil.h"

static int handler_calls, handler_code;
static MPI_Comm handler_comm;

static void on_error(MPI_Comm *comm, int *code, ...)
{
	handler_calls++;
	handler_code = *code;
	handler_comm = *comm;
}

int main(int argc, char **argv)
{
	int rank, size, x = 1, cls, len;
	char text[MPI_MAX_ERROR_STRING];
	const char *mode = argc > 1 ? argv[1] : "return";
	int (*state)(int) = (int (*)(int))(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_rank_state");

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (!strncmp(mode, "abort-spin", 10)) {
		if (strcmp(mode, "abort-spin-early") != 0)
			MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0)
			MPI_Abort(MPI_COMM_WORLD, 7);
		double t0 = MPI_Wtime();
		volatile double sink = 0;
		while (MPI_Wtime() - t0 < 30)
			for (int i = 0; i < 100000; i++)
				sink += i;
		printf("rank %d went on after MPI_Abort\n", rank);
		return 1;
	}
	if (!strcmp(mode, "abort")) {
		if (rank == 1) {
			struct timespec ts = { 0, 200000000 };
			nanosleep(&ts, NULL);
			MPI_Abort(MPI_COMM_WORLD, 7);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		printf("rank %d went on after MPI_Abort\n", rank);
		MPI_Finalize();
		return 1;
	}
	MPI_Comm live, work;
	MPI_Comm_dup(MPI_COMM_WORLD, &work);
	MPI_Comm_split(MPI_COMM_WORLD, rank == 2 ? MPI_UNDEFINED : 0, rank, &live);
	if (!strcmp(mode, "return"))
		MPI_Comm_set_errhandler(work, MPI_ERRORS_RETURN);
	if (!strcmp(mode, "handler")) {
		MPI_Errhandler eh;
		MPI_Comm_create_errhandler(on_error, &eh);
		MPI_Comm_set_errhandler(work, eh);
		MPI_Errhandler_free(&eh);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 2) {
		/* Not at once: the others must be out of the barrier first (a
		 * collective may fail where it has not completed yet). */
		struct timespec ts = { 0, 300000000 };
		nanosleep(&ts, NULL);
		raise(SIGKILL);
	}
	while (state && state(2) != 1) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	if (rank == 0) {
		int rc = MPI_Recv(&x, 1, MPI_INT, 2, 0, work, MPI_STATUS_IGNORE);
		MPI_Error_class(rc, &cls);
		MPI_Error_string(rc, text, &len);
		printf("rc %d class %d string \"%s\"\n", rc, cls, text);
		TU_CHECK(rc != MPI_SUCCESS, "the receive from the dead rank succeeded");
		TU_CHECK(strstr(text, "MPI_ERR_PROC_FAILED") != NULL, "string: %s", text);
		if (!strcmp(mode, "handler")) {
			int same;
			MPI_Comm_compare(handler_comm, work, &same);
			TU_CHECK(handler_calls == 1, "the handler ran %d times", handler_calls);
			TU_CHECK(handler_code == rc, "handler code %d, returned %d", handler_code, rc);
			TU_CHECK(same == MPI_IDENT, "the handler got another communicator");
		}
	}
	/* Live ranks are not disturbed: a ring among them on the old world. */
	int lrank, lsize, token = 0;
	MPI_Comm_rank(live, &lrank);
	MPI_Comm_size(live, &lsize);
	int next = lrank + 1 == lsize ? 0 : lrank + 1, prev = lrank == 0 ? lsize - 1 : lrank - 1;
	int wnext, wprev;
	MPI_Group lg, wg;
	MPI_Comm_group(live, &lg);
	MPI_Comm_group(work, &wg);
	MPI_Group_translate_ranks(lg, 1, &next, wg, &wnext);
	MPI_Group_translate_ranks(lg, 1, &prev, wg, &wprev);
	if (lrank == 0) {
		token = 1;
		MPI_Send(&token, 1, MPI_INT, wnext, 5, work);
		MPI_Recv(&token, 1, MPI_INT, wprev, 5, work, MPI_STATUS_IGNORE);
		TU_CHECK(token == lsize, "token %d after the ring", token);
	} else {
		MPI_Recv(&token, 1, MPI_INT, wprev, 5, work, MPI_STATUS_IGNORE);
		token++;
		MPI_Send(&token, 1, MPI_INT, wnext, 5, work);
	}
	int bad = 0;
	MPI_Allreduce(&tu_failures, &bad, 1, MPI_INT, MPI_SUM, live);
	if (lrank == 0)
		printf("%s\n", bad ? "CHECKS FAILED" : "ALL CHECKS PASSED");
	MPI_Finalize();
	return bad ? 1 : 0;
}
