/* replicas.c: ordinary MPI programs for the replication tests
 * (tests/mpi/cases/replicas.sh), with no ftshim or ULFM call. Each rank
 * prints one line, "WORKLOAD rank R: ...", that sums up everything it
 * received; under FTSHIM_REPLICAS a replica's line (in the run
 * directory) must equal its primary's, and the lines that do not depend
 * on timing must equal those of a run without replicas.
 *
 *   stencil  a 1-D heat equation: halo exchange with MPI_Isend/MPI_Irecv
 *            and MPI_Waitall, MPI_Sendrecv, MPI_Sendrecv_replace, a
 *            residual MPI_Allreduce every few steps
 *   mw       manager/worker over MPI_ANY_SOURCE: blocking receives,
 *            MPI_Irecv polled with MPI_Test, MPI_Iprobe, MPI_Waitany and
 *            MPI_Waitsome; the manager's line also counts its polls and
 *            hashes the order it served workers in (timing: equal only
 *            between the copies of a rank)
 *   colls    every blocking collective the replicated communicators
 *            support, with rotating roots (MPI_Alltoallw of mixed types
 *            and in place, and an MPI_Allreduce with a
 *            user-defined operation that is not commutative on a
 *            derived type, an MPI_Bcast of a strided type), on
 *            MPI_COMM_WORLD, a split (named, with an attribute its
 *            duplicate copies), a duplicate, and a communicator
 *            made by MPI_Comm_create of every rank but 1 in reverse
 *            order, and one made by MPI_Comm_create_group of the even
 *            ranks in reverse order (only they call it)
 *   cart     a Cartesian communicator (MPI_Dims_create, MPI_Cart_create,
 *            every query, MPI_Cart_sub, a duplicate, one made for fewer
 *            ranks than there are) and a halo exchange over it
 *   graph    graph topologies: MPI_Graph_create (a ring, and a graph of
 *            every rank but the last), MPI_Dist_graph_create_adjacent
 *            (weighted and not), every query, a duplicate, and
 *            exchanges along the edges
 *   node     MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): each rank's node
 *            (its size, its lowest rank, a sum over it)
 *   timed    each rank works until MPI_Wtime says 50 ms have passed and
 *            counts its steps (timing: equal only between the copies of
 *            a rank, which must agree on the time)
 *   bigcount the large-count calls of MPI-4 with counts that fit an int:
 *            the send-receives (MPI_Sendrecv_c, MPI_Sendrecv_replace_c)
 *            in a ring, each step's value depending on the last; then
 *            MPI_Send_c/MPI_Recv_c, MPI_Isend_c/MPI_Irecv_c and MPI_Wait
 *            round the ring, MPI_Bcast_c, MPI_Allreduce_c,
 *            MPI_Allgather_c and MPI_Allgatherv_c, each rank checking
 *            what it received (an MPI without them says so)
 *   nbc      nonblocking collectives on MPI_COMM_WORLD and a split:
 *            several started together with a ring exchange and
 *            completed by MPI_Waitall, MPI_Testall polling (with an
 *            MPI_Ialltoallw of mixed types),
 *            MPI_Waitany and MPI_Waitsome; an MPI_Ibarrier under way
 *            while a blocking collective runs; in place
 *   nbx      the same, and a sparse exchange that ends by MPI_Issend,
 *            MPI_Iprobe and an MPI_Ibarrier polled with MPI_Test (the
 *            NBX pattern)
 *   persist  persistent requests on MPI_COMM_WORLD and a split, made once
 *            and started every step: a ring exchange both ways
 *            (MPI_Recv_init, MPI_Send_init, MPI_Ssend_init) started by
 *            MPI_Startall and persistent collectives (MPI-4's
 *            MPI_Allreduce_init, MPI_Bcast_init, MPI_Barrier_init,
 *            MPI_Alltoallv_init, MPI_Alltoallw_init; Open MPI 4.1's MPIX_
 *            ones) started by
 *            MPI_Start; completed in turn
 *            by MPI_Waitall, MPI_Testall and MPI_Test polling (with
 *            MPI_Request_get_status), MPI_Waitany and MPI_Wait; each
 *            step's values
 *            depend on the last step's
 *   bigrefused MPI_Bcast_c with a count beyond INT_MAX under
 *            MPI_ERRORS_RETURN: replication refuses it before touching
 *            the buffer, and the program goes on (only with replicas: an
 *            MPI would read 2 GiB)
 *   refused  a call replication does not support (MPI_Win_create)
 *   large    collectives and a ring exchange of 48 KiB blocks, on the world
 *            and on a duplicate (Open MPI moves them on one host by a
 *            single copy that reads the sender's memory)
 *   mprobe   matched probes, as mpi4py's lowercase receive makes them:
 *            MPI_Mprobe and MPI_Mrecv from the left neighbour,
 *            MPI_Improbe from MPI_ANY_SOURCE polled and MPI_Imrecv,
 *            derived types, and MPI_Mprobe of MPI_PROC_NULL; and a
 *            ready send (MPI_Irsend) once every receive is posted
 *   files    each rank keeps files in the current directory: a log it
 *            reopens and appends to every round, a checkpoint it writes
 *            beside and renames over, then reads back, and a scratch
 *            file it makes, finds and deletes (both copies of a
 *            replicated rank would race on each); it leaves log-R.txt and
 *            ckpt-R
 *
 * An optional second argument repeats the work that many times (default
 * 1), and a third makes each step (a stencil step, a worker's task, a
 * round of collectives) sleep that many microseconds, so that a failure
 * injected at a random time falls inside the work. */
#include <limits.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <errno.h>
#include <fcntl.h>

/* Open MPI 4.1's persistent collectives, only in its mpi-ext.h: the
 * persist workload uses them as MPICH's MPI-4 ones. */
#if !(MPI_VERSION >= 4) && defined(OPEN_MPI) && defined(__has_include)
#if __has_include(<openmpi/mpiext/mpiext_pcollreq_c.h>)
#include <openmpi/mpiext/mpiext_pcollreq_c.h>
#define MPI_Allreduce_init MPIX_Allreduce_init
#define MPI_Bcast_init MPIX_Bcast_init
#define MPI_Barrier_init MPIX_Barrier_init
#define MPI_Alltoallv_init MPIX_Alltoallv_init
#define MPI_Alltoallw_init MPIX_Alltoallw_init
#define PERSISTENT_COLLECTIVES 1
#endif
#elif MPI_VERSION >= 4
#define PERSISTENT_COLLECTIVES 1
#endif

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

#define HASH(h, x) ((h) = hash_bytes((h), &(x), sizeof(x)))
#define FNV 1469598103934665603ull

static int rank, size, rounds = 1, pace_us;

/* A step's pause (the third argument): the answer does not change. */
static void pace(void)
{
	if (pace_us > 0)
		usleep((useconds_t)pace_us);
}

static void stencil(void)
{
	enum { N = 64 };
	const int STEPS = 200 * rounds;
	double u[N + 2], v[N + 2], resid = 0;
	int left = rank > 0 ? rank - 1 : MPI_PROC_NULL,
	    right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
	uint64_t h = FNV;

	for (int i = 0; i < N + 2; i++)
		u[i] = (double)((rank * N + i) % 17);
	for (int step = 0; step < STEPS; step++) {
		MPI_Request req[4];
		if (step % 3 == 0) {
			MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, left, 1, &u[N + 1], 1, MPI_DOUBLE, right,
				     1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Sendrecv(&u[N], 1, MPI_DOUBLE, right, 2, &u[0], 1, MPI_DOUBLE, left, 2,
				     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Irecv(&u[0], 1, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, &req[0]);
			MPI_Irecv(&u[N + 1], 1, MPI_DOUBLE, right, 4, MPI_COMM_WORLD, &req[1]);
			MPI_Isend(&u[N], 1, MPI_DOUBLE, right, 3, MPI_COMM_WORLD, &req[2]);
			MPI_Isend(&u[1], 1, MPI_DOUBLE, left, 4, MPI_COMM_WORLD, &req[3]);
			MPI_Status sts[4];
			MPI_Waitall(4, req, sts);
		}
		if (left == MPI_PROC_NULL)
			u[0] = 0;
		if (right == MPI_PROC_NULL)
			u[N + 1] = 0;
		double local = 0;
		for (int i = 1; i <= N; i++) {
			v[i] = u[i] + 0.25 * (u[i - 1] - 2 * u[i] + u[i + 1]);
			local += (v[i] - u[i]) * (v[i] - u[i]);
		}
		memcpy(&u[1], &v[1], N * sizeof(double));
		pace();
		if (step % 10 == 0) {
			MPI_Allreduce(&local, &resid, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
			HASH(h, resid);
		}
	}
	/* A ring shift in place, once. */
	double token = u[N / 2];
	MPI_Sendrecv_replace(&token, 1, MPI_DOUBLE, (rank + 1) % size, 5, (rank + size - 1) % size,
			     5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	HASH(h, token);
	for (int i = 1; i <= N; i++)
		HASH(h, u[i]);
	printf("stencil rank %d: residual %.17g token %.17g hash %016llx\n", rank, resid, token,
	       (unsigned long long)h);
}

#if MPI_VERSION >= 4
/* What rank r contributes to the large-count calls: element i of step k. */
static double big_value(int r, int k, int i)
{
	return r * 1000.0 + k * 10.0 + i;
}

static int big_bad; /* received values that are not what was sent */

static void big_check(double got, double want)
{
	big_bad += got != want;
}

/* The large-count calls other than the send-receives, with counts that
 * fit an int: each rank checks every value it received. */
static void bigcount_more(void)
{
	enum { N = 3 };
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	double out[N], in[N];
	MPI_Request req[2];

	/* Blocking, round the ring: rank 0 sends first, the others receive first. */
	for (int i = 0; i < N; i++)
		out[i] = big_value(rank, 1, i);
	if (rank == 0) {
		MPI_Send_c(out, N, MPI_DOUBLE, next, 20, MPI_COMM_WORLD);
		MPI_Recv_c(in, N, MPI_DOUBLE, prev, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else {
		MPI_Recv_c(in, N, MPI_DOUBLE, prev, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Send_c(out, N, MPI_DOUBLE, next, 20, MPI_COMM_WORLD);
	}
	for (int i = 0; i < N; i++)
		big_check(in[i], big_value(prev, 1, i));

	/* Nonblocking, the other way round. */
	for (int i = 0; i < N; i++)
		out[i] = big_value(rank, 2, i);
	MPI_Irecv_c(in, N, MPI_DOUBLE, next, 21, MPI_COMM_WORLD, &req[0]);
	MPI_Isend_c(out, N, MPI_DOUBLE, prev, 21, MPI_COMM_WORLD, &req[1]);
	MPI_Wait(&req[0], MPI_STATUS_IGNORE);
	MPI_Wait(&req[1], MPI_STATUS_IGNORE);
	for (int i = 0; i < N; i++)
		big_check(in[i], big_value(next, 2, i));

	/* Broadcast from the last rank. */
	for (int i = 0; i < N; i++)
		in[i] = rank == size - 1 ? big_value(rank, 3, i) : -1;
	MPI_Bcast_c(in, N, MPI_DOUBLE, size - 1, MPI_COMM_WORLD);
	for (int i = 0; i < N; i++)
		big_check(in[i], big_value(size - 1, 3, i));

	/* Sum over the ranks. */
	for (int i = 0; i < N; i++)
		out[i] = big_value(rank, 4, i);
	MPI_Allreduce_c(out, in, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < N; i++) {
		double want = 0;
		for (int r = 0; r < size; r++)
			want += big_value(r, 4, i);
		big_check(in[i], want);
	}

	/* Every rank's N values; then rank r's r + 1 values, packed. */
	double *all = malloc(sizeof *all * (size_t)size * (size_t)(size + N));
	double *mine = malloc(sizeof *mine * (size_t)(rank + 1));
	MPI_Count *counts = malloc(sizeof *counts * (size_t)size);
	MPI_Aint *displs = malloc(sizeof *displs * (size_t)size);
	if (!all || !mine || !counts || !displs)
		MPI_Abort(MPI_COMM_WORLD, 3);
	for (int i = 0; i < N; i++)
		out[i] = big_value(rank, 5, i);
	MPI_Allgather_c(out, N, MPI_DOUBLE, all, N, MPI_DOUBLE, MPI_COMM_WORLD);
	for (int r = 0; r < size; r++)
		for (int i = 0; i < N; i++)
			big_check(all[r * N + i], big_value(r, 5, i));
	MPI_Aint at = 0;
	for (int r = 0; r < size; r++) {
		counts[r] = r + 1;
		displs[r] = at;
		at += r + 1;
	}
	for (int i = 0; i <= rank; i++)
		mine[i] = big_value(rank, 6, i);
	MPI_Allgatherv_c(mine, rank + 1, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
	for (int r = 0; r < size; r++)
		for (int i = 0; i <= r; i++)
			big_check(all[displs[r] + i], big_value(r, 6, i));
	free(all);
	free(mine);
	free(counts);
	free(displs);
	printf("bigcount rank %d: large-count calls, %d wrong values received\n", rank, big_bad);
}
#endif

static void bigcount(void)
{
#if MPI_VERSION >= 4
	double x = rank + 1, got[2];
	uint64_t h = FNV;

	for (int step = 0; step < 100 * rounds; step++) {
		double out[2] = { x, x * 0.5 };
		MPI_Sendrecv_c(out, 2, MPI_DOUBLE, (rank + 1) % size, 8, got, 2, MPI_DOUBLE,
			       (rank + size - 1) % size, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Sendrecv_replace_c(got, 2, MPI_DOUBLE, (rank + size - 1) % size, 9, (rank + 1) % size, 9,
				       MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		x = 0.5 * x + 0.25 * got[0] + got[1] + step;
		HASH(h, x);
		pace();
	}
	printf("bigcount rank %d: x %.17g hash %016llx\n", rank, x, (unsigned long long)h);
	bigcount_more();
#else
	printf("bigcount rank %d: this MPI has no large-count calls\n", rank);
#endif
}

enum { TAG_ASK = 10, TAG_TASK = 11, TAG_STOP = 12 };
#define TASKS (120 * rounds)

static long work(int task)
{
	long x = task;

	for (int i = 0; i < 2000; i++)
		x = (x * 1103515245 + 12345) % 2147483648l;
	return x % 1000;
}

/* The manager serves TASKS tasks, a third each by a blocking receive from
 * MPI_ANY_SOURCE, by MPI_Irecv polled with MPI_Test, and by MPI_Iprobe
 * then MPI_Recv; then gathers goodbyes with MPI_Waitany and MPI_Waitsome. */
static void manager(void)
{
	long sum = 0, polls = 0;
	uint64_t order = FNV;
	int next = 0, stopped = 0;

	while (stopped < size - 1) {
		long result[2];
		MPI_Status st;
		int mode = next % 3, flag = 0;
		if (mode == 0) {
			MPI_Recv(result, 2, MPI_LONG, MPI_ANY_SOURCE, TAG_ASK, MPI_COMM_WORLD, &st);
		} else if (mode == 1) {
			MPI_Request req;
			MPI_Irecv(result, 2, MPI_LONG, MPI_ANY_SOURCE, TAG_ASK, MPI_COMM_WORLD,
				  &req);
			while (!flag) {
				MPI_Test(&req, &flag, &st);
				polls++;
			}
		} else {
			while (!flag) {
				MPI_Iprobe(MPI_ANY_SOURCE, TAG_ASK, MPI_COMM_WORLD, &flag, &st);
				polls++;
			}
			MPI_Recv(result, 2, MPI_LONG, st.MPI_SOURCE, TAG_ASK, MPI_COMM_WORLD, &st);
		}
		int worker = st.MPI_SOURCE;
		if (result[0] >= 0) {
			sum += result[1];
			HASH(order, worker);
			HASH(order, result[0]);
		}
		if (next < TASKS) {
			MPI_Send(&next, 1, MPI_INT, worker, TAG_TASK, MPI_COMM_WORLD);
			next++;
		} else {
			MPI_Send(&next, 1, MPI_INT, worker, TAG_STOP, MPI_COMM_WORLD);
			stopped++;
		}
	}
	/* Goodbyes: half with MPI_Waitany, the rest with MPI_Waitsome. */
	int nw = size - 1, got = 0, bye[64];
	MPI_Request req[64];
	for (int w = 0; w < nw; w++)
		MPI_Irecv(&bye[w], 1, MPI_INT, MPI_ANY_SOURCE, TAG_STOP, MPI_COMM_WORLD, &req[w]);
	while (got < nw / 2) {
		int index;
		MPI_Status st;
		MPI_Waitany(nw, req, &index, &st);
		HASH(order, st.MPI_SOURCE);
		got++;
	}
	while (got < nw) {
		int out, idx[64];
		MPI_Status sts[64];
		MPI_Waitsome(nw, req, &out, idx, sts);
		for (int k = 0; k < out; k++)
			HASH(order, sts[k].MPI_SOURCE);
		got += out;
	}
	printf("mw rank 0: %d tasks, checksum %ld\n", TASKS, sum);
	printf("mw rank 0: polls %ld order %016llx\n", polls, (unsigned long long)order);
}

static void worker(void)
{
	long result[2] = {-1, 0}, sum = 0;
	int done = 0;

	for (;;) {
		int task;
		MPI_Status st;
		MPI_Send(result, 2, MPI_LONG, 0, TAG_ASK, MPI_COMM_WORLD);
		MPI_Recv(&task, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
		if (st.MPI_TAG == TAG_STOP)
			break;
		result[0] = task;
		result[1] = work(task);
		pace();
		sum += result[1];
		done++;
	}
	MPI_Send(&rank, 1, MPI_INT, 0, TAG_STOP, MPI_COMM_WORLD);
	printf("mw rank %d: %d tasks, sum %ld\n", rank, done, sum);
}

/* A derived type (a pair of unsigned ints), a strided one (3 ints, every
 * other one) and a user-defined operation that is not commutative: each
 * pair is the map v -> v * m + c, and in op inout applies in's map first
 * (made in main). */
static MPI_Datatype pair_type, strided_type;
static MPI_Op compose_op;

static void compose(void *in, void *inout, int *len, MPI_Datatype *type)
{
	const unsigned *a = in;
	unsigned *b = inout;

	(void)type;
	for (int i = 0; i < *len; i++, a += 2, b += 2) {
		b[1] = a[1] * b[0] + b[1];
		b[0] = a[0] * b[0];
	}
}

/* MPI_Alltoallw of mixed types, then in place: block i of 16 ints at
 * byte 64 i; a sender of odd rank sends the strided type (the holes of
 * its blocks keep what they held), the others ints. The whole buffer is
 * hashed, holes and all. */
static uint64_t alltoallw_on(MPI_Comm comm, uint64_t h, int iter)
{
	int me, n;

	MPI_Comm_rank(comm, &me);
	MPI_Comm_size(comm, &n);
	int *sb = malloc((size_t)16 * n * sizeof *sb), *rb = malloc((size_t)16 * n * sizeof *rb);
	int *sc = malloc((size_t)4 * n * sizeof *sc), *rc = sc + n, *sd = rc + n, *rd = sd + n;
	MPI_Datatype *st = malloc((size_t)2 * n * sizeof *st), *rt = st + n;
	for (int j = 0; j < n; j++) {
		st[j] = me % 2 ? strided_type : MPI_INT;
		rt[j] = j % 2 ? strided_type : MPI_INT;
		sc[j] = 1 + (me + 2 * j + iter) % 2;
		rc[j] = 1 + (j + 2 * me + iter) % 2;
		sd[j] = rd[j] = 64 * j;
		for (int k = 0; k < 16; k++) {
			sb[16 * j + k] = me * 1000 + j * 10 + k + iter;
			rb[16 * j + k] = -k;
		}
	}
	MPI_Alltoallw(sb, sc, sd, st, rb, rc, rd, rt, comm);
	h = hash_bytes(h, rb, (size_t)16 * n * sizeof *rb);
	/* In place: each pair's count and type the same both ways. */
	for (int j = 0; j < n; j++) {
		rt[j] = (me + j) % 2 ? strided_type : MPI_INT;
		rc[j] = 1 + (me + j + iter) % 3;
	}
	MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, rb, rc, rd, rt, comm);
	h = hash_bytes(h, rb, (size_t)16 * n * sizeof *rb);
	free(sb);
	free(rb);
	free(sc);
	free(st);
	return h;
}

static uint64_t colls_on(MPI_Comm comm, uint64_t h, int iter)
{
	int me, n;

	MPI_Comm_rank(comm, &me);
	MPI_Comm_size(comm, &n);
	int root = iter % n;
	int *a = calloc((size_t)n * 4, sizeof *a), *b = calloc((size_t)n * 4, sizeof *b);
	int *counts = calloc((size_t)n, sizeof *counts),
	    *displs = calloc((size_t)n, sizeof *displs);
	int *rcounts = calloc((size_t)n, sizeof *rcounts);
	for (int i = 0; i < n; i++) {
		counts[i] = 1 + (i + iter) % 3;
		rcounts[i] = 1 + (me + iter) % 3; /* what each sends to me */
		displs[i] = 3 * i;
	}
	int x = me * 31 + iter, y = 0;
	for (int i = 0; i < n * 4; i++)
		a[i] = me * 1000 + i + iter;

	MPI_Bcast(&x, 1, MPI_INT, root, comm);
	HASH(h, x);
	MPI_Reduce(&x, &y, 1, MPI_INT, MPI_MAX, root, comm);
	if (me == root)
		HASH(h, y);
	x = me + iter;
	MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm);
	HASH(h, y);
	MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, comm);
	HASH(h, y);
	MPI_Exscan(&x, &y, 1, MPI_INT, MPI_SUM, comm);
	if (me > 0)
		HASH(h, y);
	MPI_Gather(&x, 1, MPI_INT, b, 1, MPI_INT, root, comm);
	if (me == root)
		h = hash_bytes(h, b, (size_t)n * sizeof *b);
	memset(b, 0, (size_t)n * 4 * sizeof *b);
	MPI_Gatherv(a, counts[me], MPI_INT, b, counts, displs, MPI_INT, root, comm);
	if (me == root)
		for (int i = 0; i < n; i++)
			h = hash_bytes(h, b + displs[i], (size_t)counts[i] * sizeof *b);
	MPI_Scatter(a, 1, MPI_INT, &y, 1, MPI_INT, root, comm);
	HASH(h, y);
	MPI_Scatterv(a, counts, displs, MPI_INT, b, counts[me], MPI_INT, root, comm);
	h = hash_bytes(h, b, (size_t)counts[me] * sizeof *b);
	MPI_Allgather(&x, 1, MPI_INT, b, 1, MPI_INT, comm);
	h = hash_bytes(h, b, (size_t)n * sizeof *b);
	memset(b, 0, (size_t)n * 4 * sizeof *b);
	MPI_Allgatherv(a, counts[me], MPI_INT, b, counts, displs, MPI_INT, comm);
	for (int i = 0; i < n; i++)
		h = hash_bytes(h, b + displs[i], (size_t)counts[i] * sizeof *b);
	MPI_Alltoall(a, 2, MPI_INT, b, 2, MPI_INT, comm);
	h = hash_bytes(h, b, (size_t)n * 2 * sizeof *b);
	memset(b, 0, (size_t)n * 4 * sizeof *b);
	MPI_Alltoallv(a, counts, displs, MPI_INT, b, rcounts, displs, MPI_INT, comm);
	for (int i = 0; i < n; i++)
		h = hash_bytes(h, b + displs[i], (size_t)rcounts[i] * sizeof *b);
	h = alltoallw_on(comm, h, iter);
	MPI_Reduce_scatter_block(a, &y, 1, MPI_INT, MPI_SUM, comm);
	HASH(h, y);
	MPI_Reduce_scatter(a, b, counts, MPI_INT, MPI_SUM, comm);
	h = hash_bytes(h, b, (size_t)counts[me] * sizeof *b);
	unsigned pair[2] = {2u * (unsigned)me + 3u + (unsigned)iter, (unsigned)x}, composed[2];
	MPI_Allreduce(pair, composed, 1, pair_type, compose_op, comm);
	HASH(h, composed);
	int strided[6] = {me, -1, iter, -1, x, -1};
	MPI_Bcast(strided, 1, strided_type, root, comm);
	HASH(h, strided);
	MPI_Barrier(comm);
	pace();
	free(a);
	free(b);
	free(counts);
	free(rcounts);
	free(displs);
	return h;
}

static void colls(void)
{
	uint64_t h = FNV;
	MPI_Comm half, dup;

	for (int iter = 0; iter < 20 * rounds; iter++)
		h = colls_on(MPI_COMM_WORLD, h, iter);
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
	/* A name and an attribute that MPI_Comm_dup copies. */
	int key, value = 40 + rank % 2, *copied = NULL, found = 0, len = 0;
	char name[MPI_MAX_OBJECT_NAME];
	MPI_Comm_set_name(half, rank % 2 ? "odd" : "even");
	MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL);
	MPI_Comm_set_attr(half, key, &value);
	MPI_Comm_dup(half, &dup);
	MPI_Comm_get_attr(dup, key, &copied, &found);
	MPI_Comm_get_name(half, name, &len);
	HASH(h, len);
	h = hash_bytes(h, name, (size_t)len);
	if (found && copied)
		HASH(h, *copied);
	HASH(h, found);
	int hr, hs;
	MPI_Comm_rank(half, &hr);
	MPI_Comm_size(half, &hs);
	HASH(h, hr);
	HASH(h, hs);
	for (int iter = 0; iter < 10 * rounds; iter++)
		h = colls_on(iter % 2 ? dup : half, h, iter);
	/* Point to point on the split: a ring. */
	int token = rank, got = -1;
	MPI_Sendrecv(&token, 1, MPI_INT, (hr + 1) % hs, 7, &got, 1, MPI_INT, (hr + hs - 1) % hs, 7,
		     half, MPI_STATUS_IGNORE);
	HASH(h, got);
	MPI_Comm_free(&dup);
	MPI_Comm_free(&half);
	MPI_Comm_free_keyval(&key);
	/* MPI_Comm_create: every rank but 1, in reverse order. */
	MPI_Group world, rev;
	int *order = malloc((size_t)size * sizeof *order), m = 0, rr = -1, rs = 0;
	for (int i = size - 1; order && i >= 0; i--)
		if (i != 1 || size == 1)
			order[m++] = i;
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_incl(world, m, order, &rev);
	MPI_Comm made;
	MPI_Comm_create(MPI_COMM_WORLD, rev, &made);
	if (made != MPI_COMM_NULL) {
		MPI_Comm_rank(made, &rr);
		MPI_Comm_size(made, &rs);
		for (int iter = 0; iter < 5 * rounds; iter++)
			h = colls_on(made, h, iter);
		int at = -1;
		MPI_Sendrecv(&rank, 1, MPI_INT, (rr + 1) % rs, 9, &at, 1, MPI_INT, (rr + rs - 1) % rs,
			     9, made, MPI_STATUS_IGNORE);
		HASH(h, at);
		MPI_Comm_free(&made);
	}
	/* MPI_Comm_create_group: the even ranks, in reverse order; only
	 * they call it. */
	MPI_Group evens;
	int gr = -1, gs = 0;
	m = 0;
	for (int i = size - 1; order && i >= 0; i--)
		if (i % 2 == 0)
			order[m++] = i;
	MPI_Group_incl(world, m, order, &evens);
	if (rank % 2 == 0) {
		MPI_Comm grp;
		MPI_Comm_create_group(MPI_COMM_WORLD, evens, 11, &grp);
		MPI_Comm_rank(grp, &gr);
		MPI_Comm_size(grp, &gs);
		for (int iter = 0; iter < 5 * rounds; iter++)
			h = colls_on(grp, h, iter);
		int at = -1;
		MPI_Sendrecv(&rank, 1, MPI_INT, (gr + 1) % gs, 9, &at, 1, MPI_INT, (gr + gs - 1) % gs, 9,
			     grp, MPI_STATUS_IGNORE);
		HASH(h, at);
		MPI_Comm_free(&grp);
	}
	MPI_Group_free(&evens);
	MPI_Group_free(&rev);
	MPI_Group_free(&world);
	free(order);
	printf("colls rank %d: half rank %d of %d, got %d, made rank %d of %d, group rank %d of %d, "
	       "hash %016llx\n",
	       rank, hr, hs, got, rr, rs, gr, gs, (unsigned long long)h);
}

/* One round of nonblocking collectives on comm; h hashes what came. */
static uint64_t nbc_on(MPI_Comm comm, uint64_t h, int iter)
{
	int r, n;
	MPI_Comm_rank(comm, &r);
	MPI_Comm_size(comm, &n);
	int root = iter % n, right = (r + 1) % n, left = (r + n - 1) % n;
	int *a = calloc((size_t)4 * n + 4, sizeof *a), *b = calloc((size_t)4 * n, sizeof *b);
	int *counts = calloc((size_t)n, sizeof *counts), *displs = calloc((size_t)n, sizeof *displs);
	int sum[4], mine[4], bc[3] = {0, 0, 0}, ring = -1, token = r * 100 + iter;
	MPI_Request q[8];
	MPI_Status st[8];

	for (int i = 0; i < 4; i++)
		mine[i] = r * 7 + i + iter;
	if (r == root)
		for (int i = 0; i < 3; i++)
			bc[i] = iter * 31 + i;
	/* Started together, with a ring exchange among them. */
	MPI_Iallreduce(mine, sum, 4, MPI_INT, MPI_SUM, comm, &q[0]);
	MPI_Irecv(&ring, 1, MPI_INT, left, 5, comm, &q[1]);
	MPI_Ibcast(bc, 3, MPI_INT, root, comm, &q[2]);
	MPI_Isend(&token, 1, MPI_INT, right, 5, comm, &q[3]);
	MPI_Waitall(4, q, st);
	h = hash_bytes(h, sum, sizeof sum);
	h = hash_bytes(h, bc, sizeof bc);
	HASH(h, ring);
	/* Polled with MPI_Testall. */
	for (int i = 0; i < n; i++) {
		counts[i] = 1 + (i + iter) % 3;
		displs[i] = i == 0 ? 0 : displs[i - 1] + counts[i - 1];
	}
	int mycount = counts[r], gathered[4], scanned = 0, exscanned = -1, reduced = -1;
	for (int i = 0; i < mycount; i++)
		a[i] = r * 10 + i + iter;
	MPI_Iallgatherv(a, mycount, MPI_INT, b, counts, displs, MPI_INT, comm, &q[0]);
	for (int i = 0; i < n; i++)
		a[2 * n + i] = r * 1000 + i + iter;
	int *c = malloc((size_t)n * sizeof *c);
	MPI_Ialltoall(a + 2 * n, 1, MPI_INT, c, 1, MPI_INT, comm, &q[1]);
	MPI_Ireduce(&token, &reduced, 1, MPI_INT, MPI_MAX, root, comm, &q[2]);
	MPI_Iscan(&token, &scanned, 1, MPI_INT, MPI_SUM, comm, &q[3]);
	MPI_Iexscan(&token, &exscanned, 1, MPI_INT, MPI_SUM, comm, &q[4]);
	MPI_Igather(&token, 1, MPI_INT, r == root ? gathered : NULL, 1, MPI_INT, root, comm, &q[5]);
	/* An MPI_Ialltoallw: ints to even ranks, pairs of unsigned ints to
	 * odd ones (by byte displacement). */
	int *wc = malloc((size_t)2 * n * sizeof *wc), *wd = wc + n;
	MPI_Datatype *wt = malloc((size_t)n * sizeof *wt);
	unsigned *ws = malloc((size_t)4 * n * sizeof *ws), *wr = calloc((size_t)4 * n, sizeof *wr);
	for (int i = 0; i < n; i++) {
		wt[i] = r % 2 ? pair_type : MPI_UNSIGNED;
		wc[i] = 1;
		wd[i] = 16 * i;
		for (int k = 0; k < 4; k++)
			ws[4 * i + k] = (unsigned)(r * 100 + i * 10 + k + iter);
	}
	MPI_Datatype *wrt = malloc((size_t)n * sizeof *wrt);
	for (int i = 0; i < n; i++)
		wrt[i] = i % 2 ? pair_type : MPI_UNSIGNED;
	MPI_Ialltoallw(ws, wc, wd, wt, wr, wc, wd, wrt, comm, &q[6]);
	int flag = 0;
	while (!flag)
		MPI_Testall(7, q, &flag, st);
	h = hash_bytes(h, wr, (size_t)4 * n * sizeof *wr);
	free(wc);
	free(wt);
	free(wrt);
	free(ws);
	free(wr);
	h = hash_bytes(h, b, (size_t)(displs[n - 1] + counts[n - 1]) * sizeof *b);
	h = hash_bytes(h, c, (size_t)n * sizeof *c);
	HASH(h, scanned);
	if (r != 0)
		HASH(h, exscanned);
	if (r == root) {
		HASH(h, reduced);
		h = hash_bytes(h, gathered, (size_t)(n < 4 ? n : 4) * sizeof *gathered);
	}
	/* An MPI_Ibarrier under way while a blocking collective runs, and an
	 * in-place reduction. */
	int total = 0, inplace[2] = {r, iter};
	MPI_Ibarrier(comm, &q[0]);
	MPI_Allreduce(&token, &total, 1, MPI_INT, MPI_SUM, comm);
	MPI_Iallreduce(MPI_IN_PLACE, inplace, 2, MPI_INT, MPI_SUM, comm, &q[1]);
	MPI_Wait(&q[0], MPI_STATUS_IGNORE);
	MPI_Wait(&q[1], MPI_STATUS_IGNORE);
	HASH(h, total);
	h = hash_bytes(h, inplace, sizeof inplace);
	/* MPI_Waitany and MPI_Waitsome over collectives and messages. */
	int scat[3] = {-1, -1, -1}, any_sum = 0, bmax = 0;
	for (int i = 0; i < n; i++)
		a[i] = i * 3 + iter;
	MPI_Iscatterv(a, counts, displs, MPI_INT, scat, counts[r], MPI_INT, root, comm, &q[0]);
	MPI_Iallreduce(&token, &any_sum, 1, MPI_INT, MPI_SUM, comm, &q[1]);
	MPI_Ireduce_scatter_block(a, &bmax, 1, MPI_INT, MPI_MAX, comm, &q[2]);
	for (int left_ = 3; left_ > 0;) {
		int idx = MPI_UNDEFINED, out = 0, idxs[3];
		if (left_ % 2) {
			MPI_Waitany(3, q, &idx, MPI_STATUS_IGNORE);
			left_--;
		} else {
			MPI_Waitsome(3, q, &out, idxs, st);
			left_ -= out;
		}
	}
	h = hash_bytes(h, scat, (size_t)counts[r] * sizeof *scat);
	HASH(h, any_sum);
	HASH(h, bmax);
	free(a);
	free(b);
	free(c);
	free(counts);
	free(displs);
	pace();
	return h;
}

/* A sparse exchange that ends without anyone knowing who sends to whom:
 * synchronous sends, MPI_Iprobe, and an MPI_Ibarrier once this rank's
 * sends are matched (Hoefler's NBX). The sum of what came is fixed. */
static long nbx_on(MPI_Comm comm, int iter)
{
	int r, n;
	MPI_Comm_rank(comm, &r);
	MPI_Comm_size(comm, &n);
	int to[2] = {(r + 1) % n, (r + 3) % n}, val[2] = {r * 10 + iter, r * 20 + iter};
	MPI_Request s[2], bar = MPI_REQUEST_NULL;
	MPI_Status sst[2];
	long got = 0;
	bool barrier = false;

	for (int i = 0; i < 2; i++)
		MPI_Issend(&val[i], 1, MPI_INT, to[i], 21, comm, &s[i]);
	for (;;) {
		int flag = 0, v;
		MPI_Status st;
		MPI_Iprobe(MPI_ANY_SOURCE, 21, comm, &flag, &st);
		if (flag) {
			MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, 21, comm, MPI_STATUS_IGNORE);
			got += v;
		}
		if (!barrier) {
			int sent = 0;
			MPI_Testall(2, s, &sent, sst);
			if (sent) {
				MPI_Ibarrier(comm, &bar);
				barrier = true;
			}
		} else {
			int done = 0;
			MPI_Test(&bar, &done, MPI_STATUS_IGNORE);
			if (done)
				break;
		}
	}
	return got;
}

static void nbc(bool with_nbx)
{
	uint64_t h = FNV;
	long sparse = 0;
	MPI_Comm half;

	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	for (int iter = 0; iter < 10 * rounds; iter++) {
		h = nbc_on(MPI_COMM_WORLD, h, iter);
		h = nbc_on(half, h, iter);
		if (with_nbx)
			sparse += nbx_on(MPI_COMM_WORLD, iter);
	}
	/* Collectives on two communicators under way together. */
	int x = rank, y = -1, z = -1;
	MPI_Request q[2];
	MPI_Status st[2];
	MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[0]);
	MPI_Iallreduce(&x, &z, 1, MPI_INT, MPI_MAX, half, &q[1]);
	MPI_Waitall(2, q, st);
	HASH(h, y);
	HASH(h, z);
	MPI_Comm_free(&half);
	printf("nbc rank %d: sparse %ld, hash %016llx\n", rank, sparse, (unsigned long long)h);
}

/* persist: the requests of one communicator, made once. */
struct persist_set {
	MPI_Comm comm;
	int r, n;
	int rl[4], rr[4], sl[4], sr[4]; /* received from left, right; sent */
	int val, sum, bc[2], *a2a_in, *a2a_out, *counts, *displs, *bdispls;
	int *w_in, *w_out; /* MPI_Alltoallw_init's: ints at byte displacements */
	MPI_Datatype *types;
	MPI_Request q[9];
	int nq;
};

static void persist_make(struct persist_set *p, MPI_Comm comm)
{
	memset(p, 0, sizeof *p);
	p->comm = comm;
	MPI_Comm_rank(comm, &p->r);
	MPI_Comm_size(comm, &p->n);
	int n = p->n, left = (p->r + n - 1) % n, right = (p->r + 1) % n;
	for (int i = 0; i < 4; i++)
		p->sl[i] = p->sr[i] = p->r * 4 + i;
	MPI_Recv_init(p->rl, 4, MPI_INT, left, 7, comm, &p->q[0]);
	MPI_Recv_init(p->rr, 4, MPI_INT, right, 8, comm, &p->q[1]);
	MPI_Send_init(p->sl, 4, MPI_INT, right, 7, comm, &p->q[2]);
	MPI_Ssend_init(p->sr, 4, MPI_INT, left, 8, comm, &p->q[3]);
	p->nq = 4;
	p->a2a_in = calloc((size_t)2 * n, sizeof(int));
	p->a2a_out = calloc((size_t)2 * n, sizeof(int));
	p->counts = calloc((size_t)n, sizeof(int));
	p->displs = calloc((size_t)n, sizeof(int));
	p->bdispls = calloc((size_t)n, sizeof(int));
	p->w_in = calloc((size_t)2 * n, sizeof(int));
	p->w_out = calloc((size_t)2 * n, sizeof(int));
	p->types = calloc((size_t)n, sizeof(MPI_Datatype));
	for (int i = 0; i < n; i++) {
		p->counts[i] = 1;
		p->displs[i] = 2 * i;
		p->bdispls[i] = 8 * i;
		p->types[i] = MPI_INT;
	}
#ifdef PERSISTENT_COLLECTIVES
	MPI_Allreduce_init(&p->val, &p->sum, 1, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &p->q[4]);
	MPI_Bcast_init(p->bc, 2, MPI_INT, 0, comm, MPI_INFO_NULL, &p->q[5]);
	MPI_Barrier_init(comm, MPI_INFO_NULL, &p->q[6]);
	MPI_Alltoallv_init(p->a2a_in, p->counts, p->displs, MPI_INT, p->a2a_out, p->counts, p->displs,
			   MPI_INT, comm, MPI_INFO_NULL, &p->q[7]);
	MPI_Alltoallw_init(p->w_in, p->counts, p->bdispls, p->types, p->w_out, p->counts, p->bdispls,
			   p->types, comm, MPI_INFO_NULL, &p->q[8]);
	p->nq = 9;
#endif
}

static uint64_t persist_step(struct persist_set *p, uint64_t h, int iter)
{
	MPI_Status st[9];
	int flag = 0, idx;

	for (int i = 0; i < 4; i++) {
		p->sl[i] = p->rl[i] + p->r * iter + i;
		p->sr[i] = p->rr[i] * 3 + iter;
	}
	p->val = p->rl[0] + p->rr[3];
	if (p->r == 0) {
		p->bc[0] = iter * 13 + p->rl[1];
		p->bc[1] = p->sum;
	}
	for (int i = 0; i < p->n; i++) {
		p->a2a_in[2 * i] = p->r * 100 + i + iter + p->rr[i % 4];
		p->w_in[2 * i] = p->r * 50 + i + iter + p->rl[i % 4];
	}
	MPI_Startall(4, p->q);
	for (int i = 4; i < p->nq; i++)
		MPI_Start(&p->q[i]);
	switch (iter % 3) {
	case 0:
		MPI_Waitall(p->nq, p->q, st);
		break;
	case 1:
		/* MPICH 4.0.2's own MPI_Testall fails on persistent
		 * collectives ("Pending request"): they are polled one by
		 * one with MPI_Test, which an inactive request passes. */
		while (!flag) {
			int peek = 0, done = 1;
			MPI_Request_get_status(p->q[0], &peek, MPI_STATUS_IGNORE);
			MPI_Testall(4, p->q, &flag, st);
			for (int i = 4; i < p->nq; i++) {
				int one = 0;
				MPI_Test(&p->q[i], &one, MPI_STATUS_IGNORE);
				done &= one;
			}
			flag &= done;
		}
		break;
	default:
		/* MPICH 4.0.2's MPI_Waitany returns a persistent collective
		 * again once it is inactive: they are waited for one by one. */
		for (int left = 4; left > 0; left--)
			MPI_Waitany(4, p->q, &idx, MPI_STATUS_IGNORE);
		/* Every one inactive now: MPI_UNDEFINED. */
		MPI_Waitany(4, p->q, &idx, MPI_STATUS_IGNORE);
		if (idx != MPI_UNDEFINED)
			printf("persist rank %d: MPI_Waitany of inactive requests gave %d\n", rank, idx);
		for (int i = 4; i < p->nq; i++)
			MPI_Wait(&p->q[i], MPI_STATUS_IGNORE);
		break;
	}
	h = hash_bytes(h, p->rl, sizeof p->rl);
	h = hash_bytes(h, p->rr, sizeof p->rr);
	if (p->nq > 4) {
		HASH(h, p->sum);
		h = hash_bytes(h, p->bc, sizeof p->bc);
		for (int i = 0; i < p->n; i++) {
			HASH(h, p->a2a_out[2 * i]);
			HASH(h, p->w_out[2 * i]);
		}
	}
	return h;
}

static void persist_free(struct persist_set *p)
{
	for (int i = 0; i < p->nq; i++)
		MPI_Request_free(&p->q[i]);
	free(p->a2a_in);
	free(p->a2a_out);
	free(p->counts);
	free(p->displs);
	free(p->bdispls);
	free(p->w_in);
	free(p->w_out);
	free(p->types);
}

static void persist(void)
{
	struct persist_set w, half;
	MPI_Comm split;
	uint64_t h = FNV;

	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &split);
	persist_make(&w, MPI_COMM_WORLD);
	persist_make(&half, split);
	for (int iter = 0; iter < 20 * rounds; iter++) {
		h = persist_step(&w, h, iter);
		h = persist_step(&half, h, iter);
		pace();
	}
	persist_free(&w);
	persist_free(&half);
	MPI_Comm_free(&split);
	printf("persist rank %d: requests %d, hash %016llx\n", rank, w.nq, (unsigned long long)h);
}

static void cart(void)
{
	int dims[2] = {0, 0}, periods[2] = {1, 0}, coords[2], d[2], p[2], c[2];
	int kind, nd, r, lo, hi, lo2, hi2, mapped;
	uint64_t h = FNV;
	MPI_Comm grid, row, dup, line;

	MPI_Dims_create(size, 2, dims);
	MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &grid);
	MPI_Topo_test(grid, &kind);
	MPI_Cartdim_get(grid, &nd);
	MPI_Cart_get(grid, 2, d, p, coords);
	MPI_Cart_rank(grid, coords, &r);
	HASH(h, kind);
	HASH(h, nd);
	HASH(h, d);
	HASH(h, p);
	HASH(h, r);
	for (int q = 0; q < size; q++) {
		MPI_Cart_coords(grid, q, 2, c);
		HASH(h, c);
	}
	/* Out of range on the periodic dimension: wrapped. */
	c[0] = coords[0] + dims[0];
	c[1] = coords[1];
	MPI_Cart_rank(grid, c, &r);
	HASH(h, r);
	MPI_Cart_shift(grid, 0, 1, &lo, &hi);
	MPI_Cart_shift(grid, 1, 1, &lo2, &hi2);
	HASH(h, lo);
	HASH(h, hi);
	HASH(h, lo2);
	HASH(h, hi2);
	/* A halo exchange along both dimensions. */
	double mine = rank + 1, got = 0, sum = 0;
	for (int step = 0; step < 20 * rounds; step++) {
		MPI_Sendrecv(&mine, 1, MPI_DOUBLE, hi, 1, &got, 1, MPI_DOUBLE, lo, 1, grid,
			     MPI_STATUS_IGNORE);
		mine = 0.5 * (mine + got);
		got = 0;
		MPI_Sendrecv(&mine, 1, MPI_DOUBLE, hi2, 2, &got, 1, MPI_DOUBLE, lo2, 2, grid,
			     MPI_STATUS_IGNORE);
		mine += 0.25 * got;
		pace();
	}
	MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, grid);
	/* A row of the grid: the second dimension kept. */
	int keep[2] = {0, 1}, rr, rs;
	MPI_Cart_sub(grid, keep, &row);
	MPI_Comm_rank(row, &rr);
	MPI_Comm_size(row, &rs);
	MPI_Cart_get(row, 1, d, p, c);
	double rsum = 0;
	MPI_Allreduce(&mine, &rsum, 1, MPI_DOUBLE, MPI_SUM, row);
	HASH(h, rr);
	HASH(h, rs);
	HASH(h, d[0]);
	HASH(h, c[0]);
	HASH(h, rsum);
	/* A duplicate keeps the topology. */
	MPI_Comm_dup(grid, &dup);
	MPI_Topo_test(dup, &kind);
	MPI_Cart_shift(dup, 0, -1, &lo, &hi);
	HASH(h, kind);
	HASH(h, lo);
	HASH(h, hi);
	/* A line of fewer ranks than the world: the last one is left out. */
	int n1 = size > 1 ? size - 1 : 1, per1 = 0;
	MPI_Cart_map(MPI_COMM_WORLD, 1, &n1, &per1, &mapped);
	MPI_Cart_create(MPI_COMM_WORLD, 1, &n1, &per1, 0, &line);
	bool in_line = line != MPI_COMM_NULL;
	if (in_line) {
		/* (Outside the line MPI_Cart_map gives MPI_UNDEFINED, but Open
		 * MPI 4.1's gives a rank.) */
		HASH(h, mapped);
		MPI_Cart_shift(line, 0, 1, &lo, &hi);
		HASH(h, lo);
		HASH(h, hi);
		MPI_Comm_free(&line);
	}
	MPI_Comm_free(&dup);
	MPI_Comm_free(&row);
	MPI_Comm_free(&grid);
	printf("cart rank %d: grid %dx%d at (%d,%d), in line %s, sum %.17g, hash %016llx\n", rank,
	       dims[0], dims[1], coords[0], coords[1], in_line ? "yes" : "no", sum,
	       (unsigned long long)h);
}

static void node(void)
{
	MPI_Comm here;
	int nr, ns, lowest, sum;

	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &here);
	MPI_Comm_rank(here, &nr);
	MPI_Comm_size(here, &ns);
	MPI_Allreduce(&rank, &lowest, 1, MPI_INT, MPI_MIN, here);
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, here);
	MPI_Comm_free(&here);
	printf("node rank %d: rank %d of %d on a node from rank %d, sum %d\n", rank, nr, ns, lowest, sum);
}

static void timed(void)
{
	double t0 = MPI_Wtime();
	long steps = 0, all = 0;
	volatile double x = 1;

	while (MPI_Wtime() - t0 < 0.05) {
		for (int i = 0; i < 1000; i++)
			x = x * 1.0000001 + 1e-9;
		steps++;
	}
	MPI_Allreduce(&steps, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	printf("timed rank %d: %ld steps of %ld\n", rank, steps, all);
}

static void large(void)
{
	enum { N = 6144 }; /* doubles: 48 KiB */
	double *a = malloc((size_t)N * size * sizeof *a), *b = malloc((size_t)N * size * sizeof *b);
	uint64_t h = FNV;
	MPI_Comm dup;

	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	for (int iter = 0; iter < 20 * rounds; iter++) {
		MPI_Comm comm = iter % 2 ? dup : MPI_COMM_WORLD;
		for (int i = 0; i < N * size; i++)
			a[i] = rank * 1e6 + i + iter;
		MPI_Alltoall(a, N, MPI_DOUBLE, b, N, MPI_DOUBLE, comm);
		h = hash_bytes(h, b, (size_t)N * size * sizeof *b);
		MPI_Allreduce(a, b, N, MPI_DOUBLE, MPI_SUM, comm);
		h = hash_bytes(h, b, (size_t)N * sizeof *b);
		MPI_Bcast(a, N, MPI_DOUBLE, iter % size, comm);
		h = hash_bytes(h, a, (size_t)N * sizeof *a);
		MPI_Sendrecv(a, N, MPI_DOUBLE, (rank + 1) % size, 7, b, N, MPI_DOUBLE, (rank + size - 1) % size, 7,
			     comm, MPI_STATUS_IGNORE);
		h = hash_bytes(h, b, (size_t)N * sizeof *b);
		MPI_Barrier(comm);
		pace();
	}
	MPI_Comm_free(&dup);
	free(a);
	free(b);
	printf("large rank %d: hash %016llx\n", rank, (unsigned long long)h);
}

/* Matched probes (mpi4py's lowercase recv is MPI_Mprobe and
 * MPI_Mrecv): each round, every rank sends its right neighbour two
 * messages of tags 3 and 4 (a derived type), then takes the one of tag 4
 * first by MPI_Mprobe from its left one and MPI_Mrecv, the other by
 * MPI_Improbe polled from MPI_ANY_SOURCE and MPI_Imrecv with MPI_Wait;
 * and MPI_Mprobe of MPI_PROC_NULL gives MPI_MESSAGE_NO_PROC. */
static void mprobe(void)
{
	uint64_t h = FNV;
	int right = (rank + 1) % size, left = (rank + size - 1) % size;

	for (int iter = 0; iter < 50 * rounds; iter++) {
		unsigned out3[4], out4[6], in3[4], in4[6];
		MPI_Request q[2];
		MPI_Message m;
		MPI_Status st;
		int count = -1, flag = 0;
		for (int i = 0; i < 4; i++)
			out3[i] = (unsigned)(rank * 100 + iter * 7 + i);
		for (int i = 0; i < 6; i++)
			out4[i] = (unsigned)(rank * 1000 + iter + i);
		MPI_Isend(out3, 4, MPI_UNSIGNED, right, 3, MPI_COMM_WORLD, &q[0]);
		MPI_Isend(out4, 3, pair_type, right, 4, MPI_COMM_WORLD, &q[1]);
		MPI_Mprobe(left, 4, MPI_COMM_WORLD, &m, &st);
		MPI_Get_count(&st, pair_type, &count);
		HASH(h, count);
		MPI_Mrecv(in4, 3, pair_type, &m, &st);
		h = hash_bytes(h, in4, sizeof in4);
		HASH(h, st.MPI_SOURCE);
		HASH(h, st.MPI_TAG);
		int taken = m == MPI_MESSAGE_NULL;
		HASH(h, taken);
		while (!flag)
			MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st);
		HASH(h, st.MPI_SOURCE);
		HASH(h, st.MPI_TAG);
		MPI_Request r;
		MPI_Imrecv(in3, 4, MPI_UNSIGNED, &m, &r);
		MPI_Wait(&r, &st);
		MPI_Get_count(&st, MPI_UNSIGNED, &count);
		HASH(h, count);
		h = hash_bytes(h, in3, sizeof in3);
		MPI_Status sent[2];
		MPI_Waitall(2, q, sent);
		/* A ready send, once every receive is posted. */
		int ready = -1, mine = rank * 3 + iter;
		MPI_Irecv(&ready, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &q[0]);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Irsend(&mine, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &q[1]);
		MPI_Waitall(2, q, sent);
		HASH(h, ready);
		pace();
	}
	MPI_Message none;
	MPI_Status st;
	MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &none, &st);
	HASH(h, st.MPI_SOURCE);
	printf("mprobe rank %d: no proc %s, hash %016llx\n", rank,
	       none == MPI_MESSAGE_NO_PROC ? "right" : "wrong", (unsigned long long)h);
}

/* Graph topologies: a ring as MPI_Graph_create makes it (and one of
 * every rank but the last, which gets MPI_COMM_NULL), a weighted and an
 * unweighted MPI_Dist_graph_create_adjacent, every query, a duplicate
 * (which keeps the topology), and an exchange along the edges. */
static void graph(void)
{
	uint64_t h = FNV;
	int n = size, right = (rank + 1) % n, left = (rank + n - 1) % n;
	int *index = malloc((size_t)n * sizeof *index), *edges = malloc(2 * (size_t)n * sizeof *edges);
	MPI_Comm ring, shorter, dup, dist, plain;

	for (int i = 0; i < n; i++) {
		index[i] = 2 * (i + 1);
		edges[2 * i] = (i + n - 1) % n;
		edges[2 * i + 1] = (i + 1) % n;
	}
	MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &ring);
	int kind = -1, nnodes = 0, nedges = 0, count = 0, nb[4] = {-1, -1, -1, -1}, mapped = -2;
	MPI_Topo_test(ring, &kind);
	MPI_Graphdims_get(ring, &nnodes, &nedges);
	HASH(h, kind);
	HASH(h, nnodes);
	HASH(h, nedges);
	int *gi = calloc((size_t)n, sizeof *gi), *ge = calloc(2 * (size_t)n, sizeof *ge);
	MPI_Graph_get(ring, n, 2 * n, gi, ge);
	h = hash_bytes(h, gi, (size_t)n * sizeof *gi);
	h = hash_bytes(h, ge, 2 * (size_t)n * sizeof *ge);
	MPI_Graph_neighbors_count(ring, (rank + 2) % n, &count);
	MPI_Graph_neighbors(ring, (rank + 2) % n, 4, nb);
	HASH(h, count);
	h = hash_bytes(h, nb, sizeof nb);
	MPI_Comm_dup(ring, &dup);
	MPI_Topo_test(dup, &kind);
	HASH(h, kind);
	for (int iter = 0; iter < 20 * rounds; iter++) {
		int mine = rank * 100 + iter, from[2] = {-1, -1};
		MPI_Graph_neighbors(dup, rank, 4, nb);
		MPI_Sendrecv(&mine, 1, MPI_INT, nb[1], 8, &from[0], 1, MPI_INT, nb[0], 8, dup,
			     MPI_STATUS_IGNORE);
		MPI_Sendrecv(&mine, 1, MPI_INT, nb[0], 9, &from[1], 1, MPI_INT, nb[1], 9, ring,
			     MPI_STATUS_IGNORE);
		h = hash_bytes(h, from, sizeof from);
		pace();
	}
	/* Every rank but the last: that one gets MPI_COMM_NULL. */
	for (int i = 0; i < n - 1; i++)
		edges[2 * i + 1] = (i + 1) % (n - 1), edges[2 * i] = (i + n - 2) % (n - 1);
	MPI_Graph_map(MPI_COMM_WORLD, n - 1, index, edges, &mapped);
	/* Outside the graph MPI says MPI_UNDEFINED; Open MPI 4.1 gives the
	 * rank itself. */
	if (rank < n - 1)
		HASH(h, mapped);
	MPI_Graph_create(MPI_COMM_WORLD, n - 1, index, edges, 1, &shorter);
	int null = shorter == MPI_COMM_NULL, ssize = 0;
	HASH(h, null);
	if (!null) {
		MPI_Comm_size(shorter, &ssize);
		MPI_Comm_free(&shorter);
	}
	HASH(h, ssize);
	/* Weighted: from left and two to the left, to right and two to the
	 * right. */
	int srcs[2] = {left, (rank + n - 2) % n}, dsts[2] = {right, (rank + 2) % n};
	int sw[2] = {rank + 1, rank + 2}, dw[2] = {rank + 3, rank + 4};
	MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, sw, 2, dsts, dw, MPI_INFO_NULL, 0, &dist);
	int indeg = -1, outdeg = -1, weighted = -1, gs[2], gsw[2], gd[2], gdw[2];
	MPI_Topo_test(dist, &kind);
	MPI_Dist_graph_neighbors_count(dist, &indeg, &outdeg, &weighted);
	MPI_Dist_graph_neighbors(dist, 2, gs, gsw, 2, gd, gdw);
	HASH(h, kind);
	HASH(h, indeg);
	HASH(h, outdeg);
	HASH(h, weighted);
	h = hash_bytes(h, gs, sizeof gs);
	h = hash_bytes(h, gsw, sizeof gsw);
	h = hash_bytes(h, gd, sizeof gd);
	h = hash_bytes(h, gdw, sizeof gdw);
	for (int iter = 0; iter < 20 * rounds; iter++) {
		int out = rank * 7 + iter, in[2] = {-1, -1};
		MPI_Request q[4];
		MPI_Status st[4];
		for (int k = 0; k < 2; k++) {
			MPI_Irecv(&in[k], 1, MPI_INT, gs[k], 11, dist, &q[k]);
			MPI_Isend(&out, 1, MPI_INT, gd[k], 11, dist, &q[2 + k]);
		}
		MPI_Waitall(4, q, st);
		h = hash_bytes(h, in, sizeof in);
		pace();
	}
	MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 1, &right,
				       MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &plain);
	MPI_Dist_graph_neighbors_count(plain, &indeg, &outdeg, &weighted);
	HASH(h, indeg);
	HASH(h, outdeg);
	HASH(h, weighted);
	MPI_Comm_free(&plain);
	MPI_Comm_free(&dist);
	MPI_Comm_free(&dup);
	MPI_Comm_free(&ring);
	free(index);
	free(edges);
	free(gi);
	free(ge);
	printf("graph rank %d: hash %016llx\n", rank, (unsigned long long)h);
}

static void files_die(const char *what, const char *path)
{
	fprintf(stderr, "files rank %d: %s %s: %s\n", rank, what, path, strerror(errno));
	MPI_Abort(MPI_COMM_WORLD, 3);
}

static void files(void)
{
	char log[32], ckpt[32], fresh[32], scratch[32], buf[64];
	long value = rank + 1, sum = 0;
	FILE *f;
	int fd, round;

	snprintf(log, sizeof log, "log-%d.txt", rank);
	snprintf(ckpt, sizeof ckpt, "ckpt-%d", rank);
	snprintf(fresh, sizeof fresh, "ckpt-%d.new", rank);
	snprintf(scratch, sizeof scratch, "scratch-%d", rank);
	if (!(f = fopen(log, "w")))
		files_die("fopen", log);
	fprintf(f, "rank %d of %d\n", rank, size);
	fclose(f);
	for (int i = 0; i < 20 * rounds; i++) {
		MPI_Allreduce(&value, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		value = (value * 31 + sum) % 1000003;
		if (!(f = fopen(log, "a")))
			files_die("fopen", log);
		fprintf(f, "round %d value %ld sum %ld\n", i, value, sum);
		fclose(f);
		if ((fd = open(fresh, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0)
			files_die("open", fresh);
		dprintf(fd, "%d %ld\n", i, value);
		close(fd);
		if (rename(fresh, ckpt) != 0)
			files_die("rename", fresh);
		if (access(fresh, F_OK) == 0 || errno != ENOENT)
			files_die("still there after the rename:", fresh);
		if ((fd = open(ckpt, O_RDONLY)) < 0)
			files_die("open", ckpt);
		ssize_t n = read(fd, buf, sizeof buf - 1);
		close(fd);
		long back = -1;
		buf[n > 0 ? n : 0] = '\0';
		if (sscanf(buf, "%d %ld", &round, &back) != 2 || round != i || back != value) {
			fprintf(stderr, "files rank %d: read back \"%s\" from %s, wrote round %d value %ld\n", rank, buf,
				ckpt, i, value);
			MPI_Abort(MPI_COMM_WORLD, 3);
		}
		if ((fd = open(scratch, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0)
			files_die("open", scratch);
		close(fd);
		if (access(scratch, F_OK) != 0)
			files_die("access", scratch);
		if (remove(scratch) != 0)
			files_die("remove", scratch);
		struct stat st;
		if (stat(scratch, &st) == 0 || errno != ENOENT)
			files_die("still there after the remove:", scratch);
		pace();
	}
	printf("files rank %d: value %ld, sum %ld\n", rank, value, sum);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "stencil";

	if (argc > 2)
		rounds = atoi(argv[2]) > 0 ? atoi(argv[2]) : 1;
	if (argc > 3)
		pace_us = atoi(argv[3]);
	MPI_Init(&argc, &argv);
	MPI_Type_contiguous(2, MPI_UNSIGNED, &pair_type);
	MPI_Type_commit(&pair_type);
	MPI_Type_vector(3, 1, 2, MPI_INT, &strided_type);
	MPI_Type_commit(&strided_type);
	MPI_Op_create(compose, 0, &compose_op);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (strcmp(what, "stencil") == 0) {
		stencil();
	} else if (strcmp(what, "mw") == 0) {
		if (rank == 0)
			manager();
		else
			worker();
	} else if (strcmp(what, "colls") == 0) {
		colls();
	} else if (strcmp(what, "cart") == 0) {
		cart();
	} else if (strcmp(what, "nbc") == 0 || strcmp(what, "nbx") == 0) {
		nbc(strcmp(what, "nbx") == 0);
	} else if (strcmp(what, "persist") == 0) {
		persist();
	} else if (strcmp(what, "timed") == 0) {
		timed();
	} else if (strcmp(what, "bigcount") == 0) {
		bigcount();
	} else if (strcmp(what, "node") == 0) {
		node();
	} else if (strcmp(what, "files") == 0) {
		files();
	} else if (strcmp(what, "large") == 0) {
		large();
	} else if (strcmp(what, "mprobe") == 0) {
		mprobe();
	} else if (strcmp(what, "graph") == 0) {
		graph();
	} else if (strcmp(what, "bigrefused") == 0) {
#if MPI_VERSION >= 4
		char byte = 0;
		int class = MPI_SUCCESS;
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
		int rc = MPI_Bcast_c(&byte, (MPI_Count)INT_MAX + 1, MPI_BYTE, 0, MPI_COMM_WORLD);
		MPI_Error_class(rc, &class);
		printf("bigrefused rank %d: %s\n", rank,
		       class == MPI_ERR_UNSUPPORTED_OPERATION ? "MPI_ERR_UNSUPPORTED_OPERATION"
							     : "another error class");
#else
		printf("bigrefused rank %d: this MPI has no large-count calls\n", rank);
#endif
	} else if (strcmp(what, "refused") == 0) {
		MPI_Win win;
		int mem = 0;
		MPI_Win_create(&mem, sizeof mem, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
		printf("refused rank %d: MPI_Win_create returned\n", rank);
		MPI_Win_free(&win);
	} else {
		fprintf(stderr, "usage: replicas stencil|mw|colls|cart|graph|nbc|nbx|persist|node|files|large|mprobe|timed|bigcount|bigrefused|refused [ROUNDS [PAUSE_US]]\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Op_free(&compose_op);
	MPI_Type_free(&strided_type);
	MPI_Type_free(&pair_type);
	MPI_Finalize();
	return 0;
}
