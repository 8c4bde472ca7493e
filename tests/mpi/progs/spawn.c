/* spawn.c: processes that MPI_Comm_spawn starts are members of the job
 * (tests/mpi/cases/spawn.sh). Four parents spawn two children from
 * MPI_COMM_WORLD and merge with them (parents first). Then, on the merged
 * communicator of six:
 *   - every member knows it by one job-wide id (ftshim_comm_id);
 *   - an agreement and an allreduce work;
 *   - a revoke by parent 0 ends every other member's receive that nobody
 *     matches (MPIX_ERR_REVOKED), children's too.
 * With "kill", the second child then SIGKILLs itself instead, and the
 * others' allreduce on the merged communicator fails with
 * MPIX_ERR_PROC_FAILED; they shrink it and the five go on.
 * Rank 0 of what is left prints ALL CHECKS PASSED when every member's
 * checks held.
 *
 * "probe": parents only spawn one child, which prints "spawned" (the
 * case first checks that the MPI can spawn at all). "nonmpi": they spawn
 * /bin/true, which never calls MPI_Init, so the MPI's spawn never
 * returns; ftshim must end them instead. */
#include <mpi.h>
#include <mpi-ext.h>
#include <signal.h>
#include <unistd.h>

#include "testutil.h"

static int all_checks(MPI_Comm comm)
{
	int mine = tu_failures, sum = -1, rank;

	MPI_Comm_rank(comm, &rank);
	int rc = MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, comm);
	if (rank == 0)
		printf("%s\n", rc == MPI_SUCCESS && sum == 0 ? "ALL CHECKS PASSED" : "CHECKS FAILED");
	return tu_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	MPI_Comm parent, inter, merged;
	int kill_one = tu_has_arg(argc, argv, "kill"), probe = tu_has_arg(argc, argv, "probe");

	MPI_Init(&argc, &argv);
	if (tu_has_arg(argc, argv, "nonmpi")) {
		MPI_Comm_spawn("/bin/true", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
			       MPI_ERRCODES_IGNORE);
		printf("spawn returned\n");
		MPI_Finalize();
		return 0;
	}
	MPI_Comm_get_parent(&parent);
	if (probe) {
		if (parent == MPI_COMM_NULL) {
			MPI_Comm_spawn(argv[0], argv + 1, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
				       MPI_ERRCODES_IGNORE);
			MPI_Comm_disconnect(&inter);
		} else {
			printf("spawned\n");
			MPI_Comm_disconnect(&parent);
		}
		MPI_Finalize();
		return 0;
	}
	if (parent == MPI_COMM_NULL) {
		int rc = MPI_Comm_spawn(argv[0], argv + 1, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
					MPI_ERRCODES_IGNORE);
		TU_CHECK(rc == MPI_SUCCESS, "spawn: %d", rc);
		MPI_Intercomm_merge(inter, 0, &merged);
	} else {
		inter = parent;
		MPI_Intercomm_merge(inter, 1, &merged);
	}
	MPI_Comm_set_errhandler(merged, MPI_ERRORS_RETURN);
	int rank, size;
	MPI_Comm_rank(merged, &rank);
	MPI_Comm_size(merged, &size);
	TU_CHECK(size == 6, "merged size %d", size);

	/* One id everywhere. */
	uint64_t id = 0, ids[6] = { 0 };
	tu_comm_id_fn comm_id = tu_comm_id();
	TU_CHECK(comm_id && comm_id(merged, &id) == 0, "the merged communicator is not tracked");
	MPI_Allgather(&id, 1, MPI_UINT64_T, ids, 1, MPI_UINT64_T, merged);
	for (int i = 0; i < 6; i++)
		TU_CHECK(ids[i] == id && id != 0, "rank %d has id %016llx, this one %016llx", i,
			 (unsigned long long)ids[i], (unsigned long long)id);

	int flag = 1, sum = 0;
	TU_CHECK(MPIX_Comm_agree(merged, &flag) == MPI_SUCCESS && flag == 1, "agree");
	TU_CHECK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged) == MPI_SUCCESS && sum == 15, "allreduce %d",
		 sum);

	if (kill_one) {
		if (rank == 5) {
			/* Not at once: the others may still be in the
			 * allreduce above (rank 5 can leave it first), which
			 * a death would fail; 200 ms is ample. */
			fflush(stdout);
			usleep(200000);
			raise(SIGKILL);
		}
		int rc = MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged);
		int eclass = -1;
		MPI_Error_class(rc, &eclass);
		TU_CHECK(eclass == MPIX_ERR_PROC_FAILED, "allreduce with a dead child: class %d", eclass);
		MPI_Comm shrunk;
		rc = MPIX_Comm_shrink(merged, &shrunk);
		int ssize = 0;
		if (rc == MPI_SUCCESS)
			MPI_Comm_size(shrunk, &ssize);
		TU_CHECK(rc == MPI_SUCCESS && ssize == 5, "shrink: %d, size %d", rc, ssize);
		int status = all_checks(rc == MPI_SUCCESS ? shrunk : MPI_COMM_SELF);
		MPI_Finalize();
		return status;
	}

	/* A revoke reaches everyone, children included. */
	MPI_Barrier(merged);
	if (rank == 0) {
		tu_nap_ms(200);
		TU_CHECK(MPIX_Comm_revoke(merged) == MPI_SUCCESS, "revoke");
	} else {
		int x, eclass = -1;
		int rc = MPI_Recv(&x, 1, MPI_INT, 0, 99, merged, MPI_STATUS_IGNORE);
		MPI_Error_class(rc, &eclass);
		TU_CHECK(eclass == MPIX_ERR_REVOKED, "receive on the revoked communicator: class %d", eclass);
	}
	MPI_Comm again;
	int rc = MPIX_Comm_shrink(merged, &again);
	TU_CHECK(rc == MPI_SUCCESS, "shrink after revoke: %d", rc);
	int status = all_checks(again);
	MPI_Comm_free(&again);
	MPI_Comm_free(&merged);
	MPI_Comm_disconnect(&inter);
	MPI_Finalize();
	return status;
}
