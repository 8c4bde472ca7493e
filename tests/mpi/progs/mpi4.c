/* mpi4: the MPI-4 calls with a dead member (issue 22), 4 ranks, rank 2
 * SIGKILLed. A communicator made by MPI_Comm_create_from_group from a
 * session's group ("mpi://WORLD") is watched and takes the ULFM calls:
 * agree before the failure, an allreduce that fails with
 * MPIX_ERR_PROC_FAILED after it, shrink. A creation from groups that hold
 * the dead rank (MPI_Comm_create_from_group, and
 * MPI_Intercomm_create_from_groups) fails at once. Partitioned
 * communication: rank 1 waits for partitions from rank 2, which marks one
 * ready and dies (MPI_Parrived of another and MPI_Wait give the error
 * instead of polling for ever); rank 3 sends partitions to rank 2 after
 * its death (MPI_Wait gives the error). Persistent collectives
 * (MPI_Allreduce_init, MPI_Barrier_init) started again and again,
 * completed by MPI_Testall polling and MPI_Waitany with the other one
 * inactive (MPICH 4.0.2's own calls fail on those), then started after
 * the failure: MPI_Wait gives the error; and two on the shrunk
 * communicator (a view), which refused them before.
 *
 *   mpi4 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "mpi-ext.h"
#include "testutil.h"

#define VICTIM 2
#define PARTS 4

static int is_failed(int rc)
{
	int cls = rc;

	if (rc != MPI_SUCCESS)
		MPI_Error_class(rc, &cls);
	return cls == MPIX_ERR_PROC_FAILED;
}

int main(int argc, char **argv)
{
	MPI_Session session;
	MPI_Group world;
	MPI_Comm comm, s;
	int rank = tu_init(&argc, &argv, 4, 1, "4 ranks and the shim"), rc, flag = 0;
	double buf[PARTS] = { 0 };
	MPI_Request preq = MPI_REQUEST_NULL;

	rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session);
	TU_CHECK(rc == MPI_SUCCESS, "MPI_Session_init: %d", rc);
	MPI_Group_from_session_pset(session, "mpi://WORLD", &world);
	rc = MPI_Comm_create_from_group(world, "org.ftshim.test.mpi4", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm);
	TU_CHECK(rc == MPI_SUCCESS, "MPI_Comm_create_from_group: %d", rc);
	/* The ULFM calls on it (MPI_ERR_COMM when it was untracked). */
	flag = 1;
	rc = MPIX_Comm_agree(comm, &flag);
	TU_CHECK(rc == MPI_SUCCESS && flag == 1, "MPIX_Comm_agree before the failure: %d, flag %d", rc, flag);

	/* Persistent collectives, failure-free. */
	int one = 1, sum = 0, idx = -1;
	MPI_Request pc[2];
	MPI_Status pst[2];
	MPI_Allreduce_init(&one, &sum, 1, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &pc[0]);
	MPI_Barrier_init(comm, MPI_INFO_NULL, &pc[1]);
	for (int round = 0; round < 3; round++) {
		sum = 0;
		MPI_Startall(2, pc);
		for (flag = 0; !flag && rc == MPI_SUCCESS;)
			rc = MPI_Testall(2, pc, &flag, pst);
		TU_CHECK(rc == MPI_SUCCESS && sum == 4, "persistent MPI_Allreduce by MPI_Testall: %d, sum %d", rc, sum);
		MPI_Start(&pc[0]);
		rc = MPI_Waitany(2, pc, &idx, MPI_STATUS_IGNORE);
		TU_CHECK(rc == MPI_SUCCESS && idx == 0, "persistent MPI_Allreduce by MPI_Waitany: %d, index %d", rc, idx);
		rc = MPI_Waitany(2, pc, &idx, MPI_STATUS_IGNORE);
		TU_CHECK(rc == MPI_SUCCESS && idx == MPI_UNDEFINED, "MPI_Waitany of inactive persistent collectives: %d, index %d", rc, idx);
	}

	/* Partitioned: rank 2 sends to rank 1, rank 3 to rank 2. */
	if (rank == 1)
		MPI_Precv_init(buf, PARTS, 1, MPI_DOUBLE, VICTIM, 7, comm, MPI_INFO_NULL, &preq);
	else if (rank == VICTIM || rank == 3)
		MPI_Psend_init(buf, PARTS, 1, MPI_DOUBLE, rank == VICTIM ? 1 : VICTIM, 7, comm, MPI_INFO_NULL,
			       &preq);
	if (preq != MPI_REQUEST_NULL)
		MPI_Start(&preq);
	MPI_Barrier(comm);
	if (rank == VICTIM) {
		MPI_Pready(0, preq);
		tu_nap_ms(100);
		raise(SIGKILL);
	}
	tu_await_failure(comm);
	if (rank == 1) {
		/* Partition 3 never comes: not a loop for ever. */
		flag = 0;
		for (int i = 0; i < 100000 && rc == MPI_SUCCESS && !flag; i++)
			rc = MPI_Parrived(preq, PARTS - 1, &flag);
		TU_CHECK(is_failed(rc), "MPI_Parrived from the dead rank: %d, flag %d", rc, flag);
	}
	if (rank == 3)
		MPI_Pready_range(0, PARTS - 1, preq);
	if (preq != MPI_REQUEST_NULL) {
		rc = MPI_Wait(&preq, MPI_STATUS_IGNORE);
		TU_CHECK(is_failed(rc), "MPI_Wait on a partitioned request with the dead rank: %d", rc);
		MPI_Request_free(&preq);
	}

	rc = MPI_Allreduce(MPI_IN_PLACE, buf, 1, MPI_DOUBLE, MPI_SUM, comm);
	TU_CHECK(is_failed(rc), "MPI_Allreduce after the failure: %d", rc);
	MPI_Start(&pc[0]);
	rc = MPI_Wait(&pc[0], MPI_STATUS_IGNORE);
	TU_CHECK(is_failed(rc), "a persistent MPI_Allreduce started after the failure: %d", rc);
	MPI_Request_free(&pc[0]);
	MPI_Request_free(&pc[1]);
	MPI_Comm again;
	rc = MPI_Comm_create_from_group(world, "org.ftshim.test.again", MPI_INFO_NULL, MPI_ERRORS_RETURN, &again);
	TU_CHECK(is_failed(rc), "MPI_Comm_create_from_group with the dead rank: %d", rc);
	MPI_Group low, high;
	int lo[] = { 0, 1 }, hi[] = { 2, 3 };
	MPI_Group_incl(world, 2, lo, &low);
	MPI_Group_incl(world, 2, hi, &high);
	if (rank < 2)
		rc = MPI_Intercomm_create_from_groups(low, 0, high, 0, "org.ftshim.test.inter", MPI_INFO_NULL,
						      MPI_ERRORS_RETURN, &again);
	else
		rc = MPI_Intercomm_create_from_groups(high, 0, low, 0, "org.ftshim.test.inter", MPI_INFO_NULL,
						      MPI_ERRORS_RETURN, &again);
	TU_CHECK(is_failed(rc), "MPI_Intercomm_create_from_groups with the dead rank: %d", rc);
	MPI_Group_free(&low);
	MPI_Group_free(&high);
	MPI_Group_free(&world);

	rc = MPIX_Comm_shrink(comm, &s);
	if (rc == MPI_SUCCESS) {
		flag = 1;
		int arc = MPIX_Comm_agree(s, &flag);
		TU_CHECK(arc == MPI_SUCCESS && flag == 1, "MPIX_Comm_agree on the shrunk communicator: %d", arc);
		/* Persistent collectives on the shrunk communicator (a view). */
		MPI_Request sh[2];
		int root = -1;
		arc = MPI_Allreduce_init(&one, &sum, 1, MPI_INT, MPI_SUM, s, MPI_INFO_NULL, &sh[0]);
		if (arc == MPI_SUCCESS)
			arc = MPI_Bcast_init(&root, 1, MPI_INT, 2, s, MPI_INFO_NULL, &sh[1]);
		for (int round = 0; round < 2 && arc == MPI_SUCCESS; round++) {
			sum = 0;
			root = rank * 10 + round; /* rank 3 is the shrunk rank 2 */
			MPI_Startall(2, sh);
			arc = MPI_Waitall(2, sh, pst);
		}
		TU_CHECK(arc == MPI_SUCCESS && sum == 3 && root == 31,
			 "persistent collectives on the shrunk communicator: %d, sum %d, root's %d", arc, sum, root);
		if (arc == MPI_SUCCESS) {
			MPI_Request_free(&sh[0]);
			MPI_Request_free(&sh[1]);
		}
	}
	MPI_Comm_free(&comm);
	MPI_Session_finalize(&session);
	return tu_survivors_finish(rc, s, 3);
}
