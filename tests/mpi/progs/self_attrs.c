/* self_attrs: MPI_Finalize deletes MPI_COMM_SELF's attributes first,
 * while MPI still works, in the reverse order of setting, even after a
 * rank failed (parallel HDF5 and other libraries finalize there). 4
 * ranks; each caches "first", "second" and "dropped" on MPI_COMM_SELF
 * and deletes "dropped" at once. With "kill", rank 2 dies and the others
 * wait until ftshim knows. Each delete callback prints a line with
 * whether MPI was already finalized, and whether an MPI call still
 * works in it; the case checks the lines and their order. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>

#include "mpi-ext.h"
#include "testutil.h"

static int rank;

static int say_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
	int finalized = -1, size = 0;
	int rc = MPI_Comm_size(MPI_COMM_WORLD, &size);

	(void)comm;
	(void)keyval;
	(void)extra;
	MPI_Finalized(&finalized);
	printf("rank %d: delete %s (finalized %d, MPI_Comm_size %s)\n", rank, (const char *)attr,
	       finalized, rc == MPI_SUCCESS && size == 4 ? "works" : "fails");
	fflush(stdout);
	return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
	int kv[3];
	static char *names[3] = { "first", "second", "dropped" };

	rank = tu_init(&argc, &argv, 4, 0, "4 ranks");
	for (int i = 0; i < 3; i++) {
		MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, say_delete, &kv[i], NULL);
		MPI_Comm_set_attr(MPI_COMM_SELF, kv[i], names[i]);
	}
	MPI_Comm_delete_attr(MPI_COMM_SELF, kv[2]);
	if (tu_has_arg(argc, argv, "kill")) {
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 2)
			raise(SIGKILL);
		tu_await_failure(MPI_COMM_WORLD);
	}
	MPI_Finalize();
	printf("rank %d: after MPI_Finalize\n", rank);
	return tu_failures ? 1 : 0;
}
