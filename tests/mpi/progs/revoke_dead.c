/* revoke_dead.c: a revocation reaches every live member of a communicator
 * whatever set of its members is dead (the revoke's spread must route
 * around every dead member, not only a lucky few). Usage:
 *
 *   revoke_dead DEAD REVOKER [during]     e.g. revoke_dead 1,3,4 0
 *
 * DEAD is a comma-separated list of world ranks that die by SIGKILL after
 * a barrier; REVOKER is a live rank. Every survivor waits until the shim
 * holds each dead rank failed and acknowledges them on MPI_COMM_WORLD
 * (MPI_ERRORS_RETURN). The revoker then revokes MPI_COMM_WORLD, 100 ms
 * later, while every other survivor is blocked in an MPI_Recv from the
 * revoker that only the revocation can end: it must return
 * MPIX_ERR_REVOKED, and MPIX_Comm_is_revoked must say so on every
 * survivor. With "during", the dead ranks stop (SIGSTOP) right after the
 * barrier and the revoker revokes 50 ms later, long before a heartbeat
 * timeout can tell anyone: its news to them is lost, and only members
 * passing it on again once they learn of the failures reach the ones
 * behind them (without that, they wait for ever); nobody acknowledges
 * the failures. The first survivor then kills the stopped ranks (one
 * host). The survivors then shrink
 * MPI_COMM_WORLD, which must hold
 * exactly them, and sum their failed checks over it; its rank 0 prints
 * ALL CHECKS PASSED. Exit status 1 if a check failed here. */
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "mpi-ext.h"
#include "testutil.h"

#define MAX_DEAD 64

static int parse_ranks(const char *s, int *out, int max)
{
	int n = 0;
	char *end;

	while (*s && n < max) {
		out[n++] = (int)strtol(s, &end, 10);
		if (end == s)
			return -1;
		s = *end == ',' ? end + 1 : end;
	}
	return *s ? -1 : n;
}

/* The lowest world rank not in dead. */
static int first_live(const int *dead, int ndead)
{
	for (int r = 0;; r++) {
		int is_dead = 0;
		for (int i = 0; i < ndead; i++)
			is_dead |= dead[i] == r;
		if (!is_dead)
			return r;
	}
}

int main(int argc, char **argv)
{
	int rank, size, dead[MAX_DEAD], ndead, revoker, rc;
	int x = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int during = argc == 4 && !strcmp(argv[3], "during");
	ndead = argc == 3 || during ? parse_ranks(argv[1], dead, MAX_DEAD) : -1;
	revoker = argc == 3 || during ? atoi(argv[2]) : -1;
	int bad_args = ndead < 1 || revoker < 0 || revoker >= size;
	for (int i = 0; i < ndead && !bad_args; i++)
		if (dead[i] < 0 || dead[i] >= size || dead[i] == revoker)
			bad_args = 1;
	if (bad_args) {
		if (rank == 0)
			fprintf(stderr, "usage: revoke_dead DEAD[,DEAD...] REVOKER (live, < %d) [during]\n",
				size);
		MPI_Finalize();
		return 2;
	}
	int (*state)(int) = (int (*)(int))(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_rank_state");
	if (!state) {
		if (rank == 0)
			fprintf(stderr, "revoke_dead: needs the shim (no ftshim_rank_state)\n");
		MPI_Finalize();
		return 2;
	}

	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int pid = (int)getpid(), *pids = malloc((size_t)size * sizeof *pids);
	MPI_Allgather(&pid, 1, MPI_INT, pids, 1, MPI_INT, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < ndead; i++)
		if (dead[i] == rank)
			raise(during ? SIGSTOP : SIGKILL);

	/* Every dead rank known failed here, and acknowledged. */
	for (int i = 0; i < ndead && !during; i++)
		while (state(dead[i]) != 1) /* FTSHIM_FAILED */
			tu_nap_ms(1);
	int acked = during ? ndead : -1;
	for (int tries = 0; tries < 10000 && !during; tries++) {
		MPI_Group g;

		MPIX_Comm_failure_ack(MPI_COMM_WORLD);
		MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &g);
		MPI_Group_size(g, &acked);
		MPI_Group_free(&g);
		if (acked == ndead)
			break;
		tu_nap_ms(1);
	}
	TU_CHECK(acked == ndead, "%d failures acknowledged, not %d", acked, ndead);

	/* The revocation, and a receive only it can end. */
	if (rank == revoker) {
		tu_nap_ms(during ? 50 : 100);
		rc = MPIX_Comm_revoke(MPI_COMM_WORLD);
		TU_CHECK(rc == MPI_SUCCESS, "revoke: %d", rc);
	} else {
		int cls = -1;

		rc = MPI_Recv(&x, 1, MPI_INT, revoker, MPI_ANY_TAG, MPI_COMM_WORLD,
			      MPI_STATUS_IGNORE);
		MPI_Error_class(rc, &cls);
		TU_CHECK(cls == MPIX_ERR_REVOKED, "the receive from the revoker got %d (class %d)",
			 rc, cls);
	}
	if (during && rank == first_live(dead, ndead))
		for (int i = 0; i < ndead; i++)
			kill(pids[dead[i]], SIGKILL);
	free(pids);
	int flag = 0;
	rc = MPIX_Comm_is_revoked(MPI_COMM_WORLD, &flag);
	TU_CHECK(rc == MPI_SUCCESS && flag == 1, "is_revoked: %d, flag %d", rc, flag);

	/* Recover: the survivors alone. */
	MPI_Comm s = MPI_COMM_NULL;
	int shrunk = MPIX_Comm_shrink(MPI_COMM_WORLD, &s);
	return tu_survivors_finish(shrunk, s, size - ndead);
}
