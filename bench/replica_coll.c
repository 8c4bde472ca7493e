/* replica_coll.c: the two ways a replicated job can run a collective,
 * measured on the plain MPI (no ftshim), for issue 16's choice. The world
 * holds N logical ranks (world ranks 0..N-1, the primaries) and R = size -
 * N replicas (world rank N + i copies logical rank i, i < R). One 8-byte
 * or larger MPI_DOUBLE sum allreduce per iteration, every copy ending with
 * the same result:
 *
 *   replica_coll plain N BYTES ITERS    the primaries alone (the replicas
 *                                       idle, sleeping): the unreplicated job
 *   replica_coll mirror N BYTES ITERS   each team runs its own allreduce:
 *                                       team P the primaries, team R the
 *                                       replicas and the unreplicated ranks,
 *                                       which take part in both (two
 *                                       nonblocking allreduces)
 *   replica_coll forward N BYTES ITERS  the primaries run it and each sends
 *                                       the result to its replica
 *                                       (PartRePer V-C)
 *
 * Rank 0 prints "MODE N R BYTES US" (microseconds per allreduce, the best
 * of five loops after a warm-up, each ended by a barrier of every
 * process). Idle processes wait sleeping, not spinning, so that they do not
 * take the CPU from the others. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A barrier of every process; an idle one waits in it sleeping. */
static void end_barrier(MPI_Comm comm, int idle)
{
	MPI_Request req;
	int done = 0;

	MPI_Ibarrier(comm, &req);
	while (!done) {
		MPI_Test(&req, &done, MPI_STATUS_IGNORE);
		if (!done && idle)
			usleep(200);
	}
}

int main(int argc, char **argv)
{
	int rank, size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc != 5) {
		if (rank == 0)
			fprintf(stderr, "usage: replica_coll plain|mirror|forward N BYTES ITERS\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	const char *mode = argv[1];
	int n = atoi(argv[2]), bytes = atoi(argv[3]), iters = atoi(argv[4]);
	int r = size - n;
	if (n < 1 || r < 0 || r > n || bytes < 8 || iters < 1) {
		if (rank == 0)
			fprintf(stderr, "replica_coll: need 1 <= N, N <= size <= 2N, BYTES >= 8\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int count = bytes / 8;
	double *in = malloc((size_t)count * sizeof *in), *out = malloc((size_t)count * sizeof *out);
	double *out2 = malloc((size_t)count * sizeof *out2);
	int logical = rank < n ? rank : rank - n;
	for (int i = 0; i < count; i++)
		in[i] = logical + i;

	/* Team P: the primaries in logical order. Team R: logical rank i is
	 * its replica (i < R) or the primary itself (unreplicated). */
	MPI_Group world, team_r_group;
	MPI_Comm team_p, team_r = MPI_COMM_NULL;
	int *members = malloc((size_t)n * sizeof *members);
	MPI_Comm_split(MPI_COMM_WORLD, rank < n ? 0 : MPI_UNDEFINED, rank, &team_p);
	for (int i = 0; i < n; i++)
		members[i] = i < r ? n + i : i;
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_incl(world, n, members, &team_r_group);
	int in_r = rank >= n || rank >= r;
	if (in_r)
		MPI_Comm_create_group(MPI_COMM_WORLD, team_r_group, 7, &team_r);
	int is_primary = rank < n, has_replica = rank < r;

	double best = 1e30;
	for (int loop = 0; loop < 6; loop++) {
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		for (int it = 0; it < iters; it++) {
			if (!strcmp(mode, "plain")) {
				if (is_primary)
					MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, team_p);
			} else if (!strcmp(mode, "mirror")) {
				if (is_primary && in_r) {
					MPI_Request two[2];
					MPI_Status st[2];
					MPI_Iallreduce(in, out, count, MPI_DOUBLE, MPI_SUM, team_p, &two[0]);
					MPI_Iallreduce(in, out2, count, MPI_DOUBLE, MPI_SUM, team_r, &two[1]);
					MPI_Waitall(2, two, st);
				} else {
					/* Nonblocking too: MPI matches no blocking
					 * collective with a nonblocking one. */
					MPI_Request one;
					MPI_Iallreduce(in, out, count, MPI_DOUBLE, MPI_SUM,
						       is_primary ? team_p : team_r, &one);
					MPI_Wait(&one, MPI_STATUS_IGNORE);
				}
			} else if (!strcmp(mode, "forward")) {
				if (is_primary) {
					MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, team_p);
					if (has_replica)
						MPI_Send(out, count, MPI_DOUBLE, n + rank, 1, MPI_COMM_WORLD);
				} else {
					MPI_Recv(out, count, MPI_DOUBLE, rank - n, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				}
			} else {
				if (rank == 0)
					fprintf(stderr, "replica_coll: mode '%s': accepted: plain, mirror, forward\n", mode);
				MPI_Abort(MPI_COMM_WORLD, 2);
			}
		}
		end_barrier(MPI_COMM_WORLD, !strcmp(mode, "plain") && !is_primary);
		double us = (MPI_Wtime() - t0) / iters * 1e6;
		if (loop > 0 && us < best)
			best = us;
	}
	if (rank == 0)
		printf("%s %d %d %d %.3f\n", mode, n, r, bytes, best);
	if (team_r != MPI_COMM_NULL)
		MPI_Comm_free(&team_r);
	if (team_p != MPI_COMM_NULL)
		MPI_Comm_free(&team_p);
	MPI_Group_free(&team_r_group);
	MPI_Group_free(&world);
	free(members);
	free(in);
	free(out);
	free(out2);
	MPI_Finalize();
	return 0;
}
