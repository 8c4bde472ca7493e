/* spares.c: a program run with spare processes (FTSHIM_SPARES): every
 * process that gets past MPI_Init says so on stdout ("in main: rank R
 * of N"), so a spare that ran the program would show; MPI_COMM_WORLD is
 * checked to be the program's N ranks everywhere the program sees it
 * (size, group, attributes, a duplicate, a split, a collective). With
 * --run-ms MS the ranks exchange allreduces for that long (a spare can
 * be killed meanwhile). With --ulfm the program is a ULFM one: program
 * rank 1 is killed (FTSHIM_INJECT, by the test), the others find out in
 * an allreduce, revoke, shrink MPI_COMM_WORLD and check the shrunk
 * communicator is the N - 1 survivors. With --multiple it asks for
 * MPI_THREAD_MULTIPLE. */
#include "mpi-ext.h"
#include "testutil.h"

static void check_world(int rank, int size)
{
	int *tag_ub = NULL, flag = 0, gsize = 0, cmp = -1, sum = 0, srank = -1, len = 0;
	char name[MPI_MAX_OBJECT_NAME] = "";
	MPI_Group g;
	MPI_Comm dup, half;

	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
	TU_CHECK(flag && *tag_ub >= 32767, "MPI_TAG_UB on MPI_COMM_WORLD: flag %d", flag);
	MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
	TU_CHECK(strcmp(name, "MPI_COMM_WORLD") == 0, "MPI_COMM_WORLD's name is \"%s\"", name);
	MPI_Comm_group(MPI_COMM_WORLD, &g);
	MPI_Group_size(g, &gsize);
	MPI_Group_free(&g);
	TU_CHECK(gsize == size, "MPI_COMM_WORLD's group has %d members, not %d", gsize, size);
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	MPI_Comm_compare(MPI_COMM_WORLD, dup, &cmp);
	TU_CHECK(cmp == MPI_CONGRUENT, "MPI_Comm_compare(world, its dup) = %d", cmp);
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup);
	TU_CHECK(sum == size * (size - 1) / 2, "sum of ranks %d over %d ranks", sum, size);
	MPI_Comm_split(dup, rank % 2, rank, &half);
	MPI_Comm_rank(half, &srank);
	TU_CHECK(srank == rank / 2, "rank %d in its half, not %d", srank, rank / 2);
	MPI_Comm_free(&half);
	MPI_Comm_free(&dup);
}

int main(int argc, char **argv)
{
	int rank, size, provided;

	if (tu_has_arg(argc, argv, "--multiple"))
		MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	else
		MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	printf("in main: rank %d of %d\n", rank, size);
	fflush(stdout);
	check_world(rank, size);
	long run_ms = 0;
	for (int i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], "--run-ms") == 0)
			run_ms = atol(argv[i + 1]);
	double until = tu_now_s() + (double)run_ms / 1000;
	int go = 1;
	while (go) {
		int one = 1, n = 0;
		MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		TU_CHECK(n == size, "allreduce over MPI_COMM_WORLD: %d, not %d", n, size);
		int more = tu_now_s() < until;
		MPI_Allreduce(&more, &go, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
		tu_nap_ms(5);
	}
	if (!tu_has_arg(argc, argv, "--ulfm"))
		return tu_finish();

	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int rc = MPI_SUCCESS;
	for (int i = 0; rc == MPI_SUCCESS && i < 100000; i++) {
		int one = 1, n = 0;
		rc = MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	}
	int cls = 0;
	MPI_Error_class(rc, &cls);
	TU_CHECK(cls == MPIX_ERR_PROC_FAILED || cls == MPIX_ERR_REVOKED, "allreduce: class %d", cls);
	MPIX_Comm_revoke(MPI_COMM_WORLD);
	MPI_Comm s;
	rc = MPIX_Comm_shrink(MPI_COMM_WORLD, &s);
	if (rc == MPI_SUCCESS) {
		int one = 1, n = 0;
		MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, s);
		TU_CHECK(n == size - 1, "allreduce over the shrunk world: %d, not %d", n, size - 1);
	}
	return tu_survivors_finish(rc, s, size - 1);
}
