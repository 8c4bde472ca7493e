/* ckpt_calls.c: a program written for ftshim's in-memory checkpoints
 * (ftshim_protect, ftshim_checkpoint, ftshim_restart_version from
 * ftshim.h, linked with mpicc alone). Each rank's state is a step
 * counter, an accumulator and a vector of K KiB; each step changes the
 * vector, passes one of its entries to the next rank around a ring
 * (MPI_Sendrecv) and folds what came from the previous one into the
 * accumulator, so that a rank that resumed from another step than the
 * others ends with a wrong answer. Every E steps the ranks checkpoint,
 * with the step as the version. Every entry into main says "in main:
 * rank R of N from step S (restart version V)"; rank 0 ends with
 * "result: X (expected Y)", Y computed serially by rank 0.
 *
 * Usage: ckpt_calls STEPS [--kib K] [--every E] [--nap-ms MS]
 *   [--pending] (rank 1 leaves a receive pending at each checkpoint)
 *   [--skip-rank R] (rank R never checkpoints)
 *   [--odd-version] (rank 1 gives another version)
 *   [--overlap] (a third region overlapping the vector)
 *   [--cart] (the ring is a Cartesian communicator made in each run)
 *   [--nonblocking] (the ring's exchange is MPI_Irecv, MPI_Isend and
 *   MPI_Waitall rather than MPI_Sendrecv)
 *   [--no-result] (no final reduction: MPI_Finalize right after the loop) */
#include <ftshim.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct state {
	long step;
	unsigned long long acc;
};

static struct state st;

static void step_vec(unsigned long long *vec, long m, int rank, long step)
{
	for (long i = 0; i < m; i++)
		vec[i] += (unsigned long long)(rank + 1) * (unsigned long long)(step + 1) + (unsigned long long)i;
}

/* The whole job, serially, without failures. */
static unsigned long long expected(int size, long steps, long m)
{
	unsigned long long *vec = calloc((size_t)size * (size_t)m, sizeof *vec);
	unsigned long long *acc = calloc((size_t)size, sizeof *acc), *out = calloc((size_t)size, sizeof *out);
	unsigned long long total = 0;

	for (long s = 0; s < steps; s++) {
		for (int r = 0; r < size; r++) {
			step_vec(vec + (size_t)r * (size_t)m, m, r, s);
			out[r] = vec[(size_t)r * (size_t)m + (size_t)(s % m)];
		}
		for (int r = 0; r < size; r++)
			acc[r] = acc[r] * 3 + out[(r + size - 1) % size];
	}
	for (int r = 0; r < size; r++) {
		total += acc[r];
		for (long i = 0; i < m; i++)
			total += vec[(size_t)r * (size_t)m + (size_t)i];
	}
	free(vec);
	free(acc);
	free(out);
	return total;
}

static void nap_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	int rank, size;
	long steps = argc > 1 ? atol(argv[1]) : 0, kib = 4, every = 10, nap = 0, skip = -1;
	int pending = 0, odd = 0, overlap = 0, cart = 0, result = 1, nonblocking = 0;

	if (steps <= 0) {
		fprintf(stderr, "usage: ckpt_calls STEPS [--kib K] [--every E] [--nap-ms MS] [--pending] "
				"[--skip-rank R] [--odd-version] [--overlap] [--cart] [--no-result] [--nonblocking]\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--kib") == 0 && i + 1 < argc)
			kib = atol(argv[++i]);
		else if (strcmp(argv[i], "--every") == 0 && i + 1 < argc)
			every = atol(argv[++i]);
		else if (strcmp(argv[i], "--nap-ms") == 0 && i + 1 < argc)
			nap = atol(argv[++i]);
		else if (strcmp(argv[i], "--skip-rank") == 0 && i + 1 < argc)
			skip = atol(argv[++i]);
		else if (strcmp(argv[i], "--pending") == 0)
			pending = 1;
		else if (strcmp(argv[i], "--odd-version") == 0)
			odd = 1;
		else if (strcmp(argv[i], "--overlap") == 0)
			overlap = 1;
		else if (strcmp(argv[i], "--cart") == 0)
			cart = 1;
		else if (strcmp(argv[i], "--no-result") == 0)
			result = 0;
		else if (strcmp(argv[i], "--nonblocking") == 0)
			nonblocking = 1;
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	long m = kib * 1024 / (long)sizeof(unsigned long long);
	if (m < 1)
		m = 1;
	unsigned long long *vec = calloc((size_t)m, sizeof *vec);
	/* A restart may find no checkpoint whole: start from nothing. */
	st = (struct state){ 0 };
	if (!ftshim_protect) {
		fprintf(stderr, "ckpt_calls: run under ftshim (LD_PRELOAD=libftshim.so)\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (ftshim_protect(0, &st, sizeof st) != 0 || ftshim_protect(1, vec, (size_t)m * sizeof *vec) != 0)
		printf("rank %d: ftshim_protect failed\n", rank);
	if (overlap)
		printf("rank %d: overlapping region: %d\n", rank, ftshim_protect(2, vec + 1, sizeof *vec));
	long v = ftshim_restart_version();
	printf("in main: rank %d of %d from step %ld (restart version %ld)\n", rank, size, st.step, v);
	fflush(stdout);
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	MPI_Comm ring = MPI_COMM_WORLD;
	if (cart) {
		int dims[1] = { size }, periods[1] = { 1 };
		MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
		MPI_Cart_shift(ring, 0, 1, &left, &right);
	}
	while (st.step < steps) {
		step_vec(vec, m, rank, st.step);
		unsigned long long out = vec[st.step % m], in = 0;
		if (nonblocking) {
			MPI_Request both[2];
			MPI_Status sts[2]; /* not MPI_STATUSES_IGNORE: gcc 12 warns of it with MPICH */
			MPI_Irecv(&in, 1, MPI_UNSIGNED_LONG_LONG, left, 7, ring, &both[0]);
			MPI_Isend(&out, 1, MPI_UNSIGNED_LONG_LONG, right, 7, ring, &both[1]);
			MPI_Waitall(2, both, sts);
		} else {
			MPI_Sendrecv(&out, 1, MPI_UNSIGNED_LONG_LONG, right, 7, &in, 1, MPI_UNSIGNED_LONG_LONG,
				     left, 7, ring, MPI_STATUS_IGNORE);
		}
		st.acc = st.acc * 3 + in;
		st.step++;
		if (nap)
			nap_ms(nap);
		if (st.step % every != 0 || rank == skip)
			continue;
		MPI_Request req = MPI_REQUEST_NULL;
		int dummy = 0;
		if (pending && rank == 1)
			MPI_Irecv(&dummy, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, &req);
		int rc = ftshim_checkpoint(odd && rank == 1 ? st.step + 1 : st.step);
		if (rc != 0)
			printf("rank %d: checkpoint at step %ld: %d\n", rank, st.step, rc);
		if (req != MPI_REQUEST_NULL) {
			MPI_Cancel(&req);
			MPI_Wait(&req, MPI_STATUS_IGNORE);
		}
	}
	unsigned long long mine = st.acc, all = 0;
	for (long i = 0; i < m; i++)
		mine += vec[i];
	if (result)
		MPI_Reduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (result && rank == 0)
		printf("result: %llu (expected %llu)\n", all, expected(size, steps, m));
	fflush(stdout);
	free(vec);
	if (ring != MPI_COMM_WORLD)
		MPI_Comm_free(&ring);
	MPI_Finalize();
	return 0;
}
