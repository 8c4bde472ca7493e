/* colls.c: MPI_Allreduce and MPI_Barrier give the right answers however
 * ftshim runs them (on Open MPI, small reductions and barriers run as
 * point-to-point exchanges: pmpi/coll_p2p.c). Every communicator size
 * from 1 to the job's, built-in and user-defined operations (one of them
 * not commutative, so that rank order matters), MPI_IN_PLACE, counts
 * around the size limit, a datatype with padding, an intercommunicator,
 * and communicators freed and made again; and MPI_Alltoallw of mixed
 * types, blocking, nonblocking and in place. Prints one line per check
 * group; any wrong value prints CHECK FAILED. */
#include "testutil.h"

/* x -> a*x + b, composed in rank order: (f then g)(x) = g(f(x)).
 * Stored as two ints per element; not commutative. */
static void affine_compose(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	int *f = in, *g = inout;

	(void)dt;
	for (int i = 0; i < *len; i++) {
		/* inout = in op inout: in comes from the lower ranks, so it is
		 * applied first. */
		long long a = (long long)g[2 * i] * f[2 * i];
		long long b = (long long)g[2 * i] * f[2 * i + 1] + g[2 * i + 1];
		g[2 * i] = (int)(a % 1000003);
		g[2 * i + 1] = (int)(b % 1000003);
	}
}

static int check_sizes(MPI_Comm comm, MPI_Op affine, MPI_Datatype pair, int counts_n,
		       const int *counts)
{
	int rank, size, bad = 0;

	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	for (int ci = 0; ci < counts_n; ci++) {
		int n = counts[ci];
		double *d = malloc((size_t)(n ? n : 1) * sizeof *d), *r = malloc((size_t)(n ? n : 1) * sizeof *r);
		int *p = malloc((size_t)(n ? n : 1) * 2 * sizeof *p), *q = malloc((size_t)(n ? n : 1) * 2 * sizeof *q);

		/* Sum of doubles, into another buffer and in place. */
		for (int i = 0; i < n; i++)
			d[i] = rank + i * 0.5;
		MPI_Allreduce(d, r, n, MPI_DOUBLE, MPI_SUM, comm);
		for (int i = 0; i < n; i++) {
			double want = size * (size - 1) / 2.0 + size * i * 0.5;
			TU_CHECK(r[i] == want, "size %d count %d sum[%d] = %g, want %g", size, n, i, r[i], want);
			bad += r[i] != want;
		}
		MPI_Allreduce(MPI_IN_PLACE, d, n, MPI_DOUBLE, MPI_MAX, comm);
		for (int i = 0; i < n; i++) {
			double want = size - 1 + i * 0.5;
			TU_CHECK(d[i] == want, "size %d count %d in-place max[%d] = %g, want %g", size, n, i, d[i], want);
			bad += d[i] != want;
		}
		/* Not commutative: the fold in rank order. */
		for (int i = 0; i < n; i++) {
			p[2 * i] = 2 + (rank + i) % 5;
			p[2 * i + 1] = rank * 3 + i;
		}
		MPI_Allreduce(p, q, n, pair, affine, comm);
		for (int i = 0; i < n; i++) {
			long long a = 1, b = 0;
			for (int k = 0; k < size; k++) {
				long long fa = 2 + (k + i) % 5, fb = k * 3 + i;
				b = (fa * b + fb) % 1000003;
				a = (fa * a) % 1000003;
			}
			TU_CHECK(q[2 * i] == a && q[2 * i + 1] == b,
				 "size %d count %d affine[%d] = (%d, %d), want (%lld, %lld)", size, n, i, q[2 * i],
				 q[2 * i + 1], a, b);
			bad += q[2 * i] != a || q[2 * i + 1] != b;
		}
		/* MINLOC on MPI_2INT. */
		for (int i = 0; i < n; i++) {
			p[2 * i] = (rank * 7 + i) % size;
			p[2 * i + 1] = rank;
		}
		MPI_Allreduce(p, q, n, MPI_2INT, MPI_MINLOC, comm);
		for (int i = 0; i < n; i++) {
			int best = -1, where = -1;
			for (int k = 0; k < size; k++)
				if (best < 0 || (k * 7 + i) % size < best)
					best = (k * 7 + i) % size, where = k;
			TU_CHECK(q[2 * i] == best && q[2 * i + 1] == where,
				 "size %d count %d minloc[%d] = (%d, %d), want (%d, %d)", size, n, i, q[2 * i],
				 q[2 * i + 1], best, where);
			bad += q[2 * i] != best || q[2 * i + 1] != where;
		}
		free(d);
		free(r);
		free(p);
		free(q);
	}
	/* MPI_DOUBLE_INT has padding (size 12, extent 16). */
	struct { double v; int r; } in = { (double)(rank % 3), rank }, out;
	MPI_Allreduce(&in, &out, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
	int want_r = size > 2 ? 2 : size - 1;
	TU_CHECK(out.v == (size > 2 ? 2.0 : size - 1.0) && out.r == want_r,
		 "size %d maxloc = (%g, %d), want rank %d", size, out.v, out.r, want_r);
	bad += out.r != want_r;
	MPI_Barrier(comm);
	return bad;
}

int main(int argc, char **argv)
{
	int rank, size;
	const int counts[] = { 0, 1, 5, 128, 256, 257 }; /* 256 doubles = 2048 bytes */
	MPI_Op affine;
	MPI_Datatype pair;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Op_create(affine_compose, 0, &affine);
	MPI_Type_contiguous(2, MPI_INT, &pair);
	MPI_Type_commit(&pair);

	int bad = check_sizes(MPI_COMM_WORLD, affine, pair, 6, counts);
	if (rank == 0)
		printf("world of %d: %s\n", size, bad ? "wrong" : "right");
	/* Every size from 1 up: the first k ranks, made and freed twice. */
	for (int k = 1; k <= size; k++) {
		for (int again = 0; again < 2; again++) {
			MPI_Comm sub;
			MPI_Comm_split(MPI_COMM_WORLD, rank < k ? 0 : MPI_UNDEFINED, rank, &sub);
			if (sub != MPI_COMM_NULL) {
				bad = check_sizes(sub, affine, pair, 3, counts + 1);
				int sum = 0;
				MPI_Allreduce(&bad, &sum, 1, MPI_INT, MPI_SUM, sub);
				if (rank == 0)
					printf("size %d (round %d): %s\n", k, again, sum ? "wrong" : "right");
				MPI_Comm_free(&sub);
			}
			MPI_Barrier(MPI_COMM_WORLD);
		}
	}
	/* MPI_Alltoallw of mixed types, in place too (on MPICH 4.0, ftshim
	 * must not run the in-place one as MPICH's MPI_Ialltoallw). */
	tu_check_alltoallw(MPI_COMM_WORLD);
	if (rank == 0)
		printf("alltoallw: %s\n", tu_failures ? "wrong" : "right");
	/* Barriers order: what rank 0 writes before one, rank 1 sees after. */
	for (int i = 0; i < 200; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	/* An intercommunicator: even ranks against odd ones. */
	if (size >= 2) {
		MPI_Comm half, inter;
		MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
		MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &inter);
		int mine = rank, theirs = -1, want = 0;
		MPI_Allreduce(&mine, &theirs, 1, MPI_INT, MPI_SUM, inter);
		for (int k = 0; k < size; k++)
			want += k % 2 != rank % 2 ? k : 0;
		TU_CHECK(theirs == want, "intercommunicator sum %d, want %d", theirs, want);
		MPI_Barrier(inter);
		if (rank == 0)
			printf("intercommunicator: %s\n", theirs == want ? "right" : "wrong");
		MPI_Comm_free(&inter);
		MPI_Comm_free(&half);
	}
	MPI_Type_free(&pair);
	MPI_Op_free(&affine);
	MPI_Finalize();
	return tu_failures ? 1 : 0;
}
