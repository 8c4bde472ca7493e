/* revoke_buffers.c: no buffer is touched after the call that reported its
 * request finished. 4 ranks, MPI_ERRORS_RETURN. In each of ROUNDS rounds,
 * on a fresh duplicate of MPI_COMM_WORLD, ranks 1-3 post a 4 MiB
 * MPI_Irecv from the previous of them and a 4 MiB MPI_Isend to the next
 * (a ring), and rank 0 revokes the duplicate at once. Each of ranks 1-3
 * completes its two requests with MPI_Wait (MPI_SUCCESS or
 * MPIX_ERR_REVOKED, both ULFM) and then, as a program may, unmaps both
 * buffers at once (mmap'd, so that a late access by the MPI faults or
 * makes the MPI's shared-memory copy fail instead of going unnoticed).
 * A receive that reported MPI_SUCCESS must hold the sender's pattern.
 * Then everyone frees the duplicate and a barrier on MPI_COMM_WORLD ends
 * the round. Rank 0 prints ALL CHECKS PASSED if every rank got through
 * every round with its checks passed. */
#include <sys/mman.h>

#include "mpi-ext.h"
#include "testutil.h"

#define ROUNDS 20
#define BYTES (4u << 20)

static unsigned char *map_buffer(void)
{
	void *p = mmap(NULL, BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	return p;
}

static int class_of(int rc)
{
	int cls = rc;

	MPI_Error_class(rc, &cls);
	return cls;
}

int main(int argc, char **argv)
{
	int rank = tu_init(&argc, &argv, 4, 1, "4 ranks, and the shim");

	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	for (int round = 0; round < ROUNDS; round++) {
		MPI_Comm d;
		MPI_Comm_dup(MPI_COMM_WORLD, &d);
		MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
		if (rank == 0) {
			MPIX_Comm_revoke(d);
		} else {
			int next = rank % 3 + 1, prev = (rank + 1) % 3 + 1;
			unsigned char *out = map_buffer(), *in = map_buffer();
			MPI_Request rq[2];
			memset(out, rank, BYTES);
			int rc0 = MPI_Irecv(in, (int)BYTES, MPI_BYTE, prev, round, d, &rq[0]);
			int rc1 = MPI_Isend(out, (int)BYTES, MPI_BYTE, next, round, d, &rq[1]);
			TU_CHECK(rc0 == MPI_SUCCESS && rc1 == MPI_SUCCESS, "round %d: starts %d %d", round,
				 rc0, rc1);
			rc0 = MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
			rc1 = MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
			TU_CHECK(rc0 == MPI_SUCCESS || class_of(rc0) == MPIX_ERR_REVOKED,
				 "round %d: receive: %d", round, rc0);
			TU_CHECK(rc1 == MPI_SUCCESS || class_of(rc1) == MPIX_ERR_REVOKED,
				 "round %d: send: %d", round, rc1);
			if (rc0 == MPI_SUCCESS)
				TU_CHECK(in[0] == prev && in[BYTES - 1] == prev,
					 "round %d: received %d..%d, not %d", round, in[0], in[BYTES - 1], prev);
			/* Done, as far as MPI_Wait said: the program may drop them. */
			munmap(out, BYTES);
			munmap(in, BYTES);
		}
		MPI_Comm_free(&d);
		MPI_Barrier(MPI_COMM_WORLD);
	}
	return tu_finish() ? 1 : (rank == 0 ? (printf("ALL CHECKS PASSED\n"), 0) : 0);
}
