/* jacobi.c: a heat solver written for ULFM that loses ranks and still
 * gives the answer of a failure-free run. A rod of POINTS cells between
 * two fixed temperatures is cut into blocks, one per rank of a working
 * communicator; each iteration swaps halo cells with the neighbours and
 * sets every cell to the mean of its two neighbours (Jacobi), and an
 * allreduce finds the largest change. Every EVERY iterations each rank
 * checkpoints its block in its own memory and sends a copy to its buddy,
 * which keeps it in memory (no files). When a halo exchange or the
 * allreduce fails, the survivors revoke the communicator, shrink it,
 * agree (MPIX_Comm_agree) on the newest checkpoint they all hold, rebuild
 * the rod from it (a dead rank's block from its buddy's copy), share it
 * out among themselves in new, larger blocks, checkpoint that layout, and
 * go on from the checkpoint's iteration. A failure during all this starts
 * the recovery again.
 *
 * Usage: jacobi [ITERATIONS [POINTS [EVERY]]]   (default 2000 4000 100)
 * Rank 0 of the final communicator prints
 *   jacobi: 2000 iterations, checksum C, residual R; survivors S of P; lost ranks L
 * where C is the sum of every cell, R the largest change in the last
 * iteration, and L the world ranks lost ("none"). Each recovery prints a
 * line "jacobi: recovery ...". Exit status 0; 3 if a failure could not be
 * recovered (below); 2 for bad arguments.
 *
 * The answer does not depend on the ranks or the failures: a cell's new
 * value is computed from the same two doubles whatever the blocks, a
 * checkpoint holds the exact doubles, the largest change is a maximum
 * (exact in any order), and the checksum is summed in global cell order
 * at one rank. So C and R are bitwise those of a failure-free run with
 * any number of ranks; the test (tests/mpi/cases/example_jacobi.sh)
 * accepts a relative difference of 1e-12 in C, and requires R equal.
 *
 * The buddy of layout rank r is r + 1, and that of the last rank the one
 * before it: so a survivor's cells and the copies it keeps always form one
 * run of the rod, which makes sharing them out one MPI_Alltoallv. Losing
 * a rank and its buddy between two recoveries loses a block: the program
 * then says so and exits with status 3 (it could start again from
 * iteration 0, but a solver that silently throws away all its work is
 * worse than one that stops and says why). Until the first checkpoint,
 * the initial state, which every rank can compute, serves as checkpoint
 * 0, and any loss can be recovered.
 *
 * Every ULFM call on a communicator must be made by all its survivors in
 * the same order (they are numbered per communicator), though errors
 * reach ranks at different times. So each rank goes through the same
 * steps: on an error it revokes the communicator (which makes the others'
 * calls fail too) and calls MPIX_Comm_agree, matching the agreement that
 * ends a successful run; a recovery attempt is shrink, agree, then work
 * whose errors only revoke and are counted, then a last agreement that
 * says uniformly whether the attempt stands.
 *
 * Build: mpicc -std=gnu11 -I PREFIX/include/ftshim jacobi.c -lm. It finds
 * ftshim_inject_point with dlsym, so it also runs without the shim (then
 * nothing is recovered: an error aborts). */
#include <dlfcn.h>
#include <math.h>
#include <mpi.h>
#include <mpi-ext.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_HALO 1
#define TAG_CKPT 2
#define EXIT_LOST 3

/* The allreduce of the largest change runs every few iterations, and
 * always in the last one; EVERY must be a multiple of it (see
 * choose_generation). */
#define RESIDUAL_EVERY 10

static const double t_left = 1.0, t_right = 0.0; /* the rod's ends */

static long iterations = 2000, points = 4000, every = 100;

/* One checkpoint: the cells this rank held at iteration gen * every,
 * in the layout of that time. */
struct ckpt {
	long gen;      /* iteration / every; 0: nothing stored (see gen_bit) */
	bool complete; /* this rank's block and every copy it keeps are here */
	long lo, hi;   /* the run of global cells held: own block and copies */
	double *cell;  /* hi - lo values; room for the whole rod */
};

struct jacobi {
	MPI_Comm comm; /* the working communicator, MPI_ERRORS_RETURN */
	int rank, size;
	int *members;  /* world rank of each member of comm */
	long lo, n;    /* this rank's block: cells lo .. lo + n - 1 */
	/* n + 2 values each: left halo, block, right halo; room for the
	 * whole rod, so that a recovery never reallocates a buffer that a
	 * failed call may still touch. */
	double *u, *unew;
	/* The allreduce's buffers: a collective that failed may still write
	 * them, so they live as long as the program. */
	double change, residual;

	/* The layout of the checkpoints: comm's members when the last
	 * recovery (or the start) fixed it. */
	int lsize;
	int *lmembers; /* their world ranks, in rank order */
	struct ckpt slot[2];
	struct ckpt pending; /* a recovery's checkpoint, adopted if it stands */

	/* Arguments of the collectives, kept for the same reason. */
	int *scount, *sdispl, *rcount, *rdispl;
	double *rod; /* the whole rod, at rank 0, for the checksum */

	MPI_Group world;
	int world_size;
	int recoveries; /* recovery attempts (shrinks) so far */
};

static void (*inject_point)(const char *, long);

/* The ULFM calls are in force: ftshim (or an MPI with ULFM) says so with
 * the MPIX_FT attribute. MPICH declares MPIX_Comm_agree and friends
 * without them working, so the functions' presence is not enough. */
static bool ulfm;

static bool ulfm_in_force(void)
{
	int *ft = NULL, flag = 0, key = MPIX_FT;

	if (key == MPI_KEYVAL_INVALID || !MPIX_Comm_revoke || !MPIX_Comm_shrink || !MPIX_Comm_agree)
		return false;
	MPI_Comm_get_attr(MPI_COMM_WORLD, key, &ft, &flag);
	return flag && ft && *ft;
}

/* The first cell of block r of p. */
static long block_lo(int r, int p)
{
	return (long)r * points / p;
}

/* Whose checkpoint copy layout rank r keeps: the next rank's, the last
 * rank's the one before; -1 alone. */
static int buddy(int r, int p)
{
	if (p < 2)
		return -1;
	return r < p - 1 ? r + 1 : r - 1;
}

static double initial(long cell)
{
	double x = (double)(cell + 1) / (double)(points + 1);

	return 0.5 + 0.5 * sin(17 * M_PI * x);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		fprintf(stderr, "jacobi: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	return p;
}

/* Without ULFM nothing can fail over, and an allreduce decides alike. */
static int agree(MPI_Comm comm, int *flag)
{
	if (ulfm)
		return MPIX_Comm_agree(comm, flag);
	int in = *flag;
	return MPI_Allreduce(&in, flag, 1, MPI_INT, MPI_BAND, comm);
}

/* Adopt comm as the working communicator: its rank, size, members and
 * this rank's block. */
static void set_comm(struct jacobi *j, MPI_Comm comm)
{
	MPI_Group g;
	int idx[j->world_size];

	j->comm = comm;
	MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
	MPI_Comm_rank(comm, &j->rank);
	MPI_Comm_size(comm, &j->size);
	MPI_Comm_group(comm, &g);
	for (int k = 0; k < j->size; k++)
		idx[k] = k;
	MPI_Group_translate_ranks(g, j->size, idx, j->world, j->members);
	MPI_Group_free(&g);
	j->lo = block_lo(j->rank, j->size);
	j->n = block_lo(j->rank + 1, j->size) - j->lo;
}

/* The rod's ends are halo cells that never change. */
static void set_ends(struct jacobi *j)
{
	if (j->rank == 0)
		j->u[0] = j->unew[0] = t_left;
	if (j->rank == j->size - 1)
		j->u[j->n + 1] = j->unew[j->n + 1] = t_right;
}

static void set_layout(struct jacobi *j)
{
	j->lsize = j->size;
	memcpy(j->lmembers, j->members, (size_t)j->size * sizeof *j->lmembers);
}

/* Without ULFM nothing is revoked; recover() then stops the job. */
static void revoke(MPI_Comm comm)
{
	if (ulfm)
		MPIX_Comm_revoke(comm);
}

/* MPI_Waitall; after an error, revoke comm so that nothing this rank
 * posted stays pending (ftshim then gives up on every request, a receive
 * only once it is cancelled, so no late message lands in a buffer this
 * rank reuses), and return the error. */
static int waitall(MPI_Comm comm, int n, MPI_Request *reqs)
{
	MPI_Status st[n > 0 ? n : 1];
	int rc = MPI_Waitall(n, reqs, st);

	if (rc == MPI_ERR_IN_STATUS) {
		rc = MPI_ERR_PENDING; /* if only some requests are still pending */
		for (int k = 0; k < n; k++)
			if (st[k].MPI_ERROR != MPI_SUCCESS && st[k].MPI_ERROR != MPI_ERR_PENDING)
				rc = st[k].MPI_ERROR;
	}
	if (rc != MPI_SUCCESS) {
		revoke(comm);
		MPI_Waitall(n, reqs, st);
	}
	return rc;
}

/* Post one request of a checkpoint: counted in *n if posted, else its
 * error in *rc. */
static void post(int err, int *n, int *rc)
{
	if (err == MPI_SUCCESS)
		(*n)++;
	else if (*rc == MPI_SUCCESS)
		*rc = err;
}

/* Checkpoint generation gen of this rank's block into c, in the current
 * layout: a copy here, one at the buddy, and the copies this rank keeps
 * for the ranks whose buddy it is (the one before; the last one too if
 * this is the last but one). */
static int checkpoint(struct jacobi *j, struct ckpt *c, long gen)
{
	int first = j->rank > 0 ? j->rank - 1 : j->rank;
	int last = j->rank == j->size - 2 ? j->rank + 1 : j->rank;
	int b = buddy(j->rank, j->size), n = 0, rc = MPI_SUCCESS;
	long end = j->lo + j->n;
	MPI_Request reqs[3];

	c->gen = gen;
	c->complete = false;
	c->lo = block_lo(first, j->size);
	c->hi = block_lo(last + 1, j->size);
	memcpy(c->cell + (j->lo - c->lo), j->u + 1, (size_t)j->n * sizeof *c->cell);
	if (first != j->rank)
		post(MPI_Irecv(c->cell, (int)(j->lo - c->lo), MPI_DOUBLE, first, TAG_CKPT, j->comm,
			       &reqs[n]),
		     &n, &rc);
	if (last != j->rank)
		post(MPI_Irecv(c->cell + (end - c->lo), (int)(c->hi - end), MPI_DOUBLE, last, TAG_CKPT,
			       j->comm, &reqs[n]),
		     &n, &rc);
	if (b >= 0)
		post(MPI_Isend(j->u + 1, (int)j->n, MPI_DOUBLE, b, TAG_CKPT, j->comm, &reqs[n]), &n, &rc);
	if (rc != MPI_SUCCESS)
		revoke(j->comm); /* so that the waitall below gives up at once */
	int err = waitall(j->comm, n, reqs);
	if (rc == MPI_SUCCESS)
		rc = err;
	c->complete = rc == MPI_SUCCESS;
	return rc;
}

static int exchange_halos(struct jacobi *j)
{
	int left = j->rank > 0 ? j->rank - 1 : MPI_PROC_NULL;
	int right = j->rank < j->size - 1 ? j->rank + 1 : MPI_PROC_NULL;
	double *u = j->u;
	int rc;

	/* A receive from MPI_PROC_NULL leaves the rod's ends alone. */
	rc = MPI_Sendrecv(&u[j->n], 1, MPI_DOUBLE, right, TAG_HALO, &u[0], 1, MPI_DOUBLE, left,
			  TAG_HALO, j->comm, MPI_STATUS_IGNORE);
	if (rc == MPI_SUCCESS)
		rc = MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, left, TAG_HALO, &u[j->n + 1], 1, MPI_DOUBLE,
				  right, TAG_HALO, j->comm, MPI_STATUS_IGNORE);
	return rc;
}

static void relax(struct jacobi *j)
{
	double change = 0, *t;

	for (long k = 1; k <= j->n; k++) {
		j->unew[k] = 0.5 * (j->u[k - 1] + j->u[k + 1]);
		change = fmax(change, fabs(j->unew[k] - j->u[k]));
	}
	t = j->u;
	j->u = j->unew;
	j->unew = t;
	j->change = change;
}

/* The rod gathered at rank 0 in cell order, and its sum in that order. */
static int gather(struct jacobi *j, double *checksum)
{
	for (int k = 0; k < j->size; k++) {
		j->rdispl[k] = (int)block_lo(k, j->size);
		j->rcount[k] = (int)(block_lo(k + 1, j->size) - j->rdispl[k]);
	}
	int rc = MPI_Gatherv(j->u + 1, (int)j->n, MPI_DOUBLE, j->rod, j->rcount, j->rdispl,
			     MPI_DOUBLE, 0, j->comm);
	*checksum = 0;
	if (rc == MPI_SUCCESS && j->rank == 0)
		for (long k = 0; k < points; k++)
			*checksum += j->rod[k];
	return rc;
}

/* A generation's bit in the agreement on checkpoints: bit 0 for the
 * initial state (every rank has it), then generations 1, 2, ... modulo
 * 30. Survivors' complete generations are never more than two apart
 * (a rank starts a checkpoint only after an allreduce that everyone
 * entered after finishing the previous one), so no two of them share a
 * bit. */
static unsigned gen_bit(long gen)
{
	return gen == 0 ? 1u : 1u << (1 + (gen - 1) % 30);
}

/* The newest generation whose bit every survivor set: the same at every
 * survivor, since each holds every generation whose bit is in mask. */
static long choose_generation(const struct jacobi *j, unsigned mask)
{
	long best = 0;

	for (int s = 0; s < 2; s++) {
		const struct ckpt *c = &j->slot[s];
		if (c->gen > best && c->complete && (mask & gen_bit(c->gen)))
			best = c->gen;
	}
	return best;
}

static const struct ckpt *slot_of(const struct jacobi *j, long gen)
{
	for (int s = 0; s < 2; s++)
		if (j->slot[s].gen == gen && j->slot[s].complete)
			return &j->slot[s];
	return NULL;
}

/* The run of cells layout rank l holds for a restore: its block, and
 * the blocks of the lost ranks whose buddy it is. */
static void held(int l, int p, const bool *gone, long *lo, long *hi)
{
	*lo = block_lo(l > 0 && gone[l - 1] ? l - 1 : l, p);
	*hi = block_lo(l == p - 2 && gone[p - 1] ? p : l + 1, p);
}

static void list_ranks(char *out, size_t len, const int *ranks, int n)
{
	size_t used = 0;

	snprintf(out, len, "none");
	for (int k = 0; k < n && used + 12 < len; k++)
		used += (size_t)snprintf(out + used, len - used, "%s%d", k ? "," : "", ranks[k]);
}

/* Rebuild this rank's new block from checkpoint generation gen of the
 * layout (lost ranks marked in gone; where[k]: the layout rank of comm's
 * member k) with one MPI_Alltoallv: each survivor sends what it holds of
 * each new block. */
static int redistribute(struct jacobi *j, long gen, const bool *gone, const int *where)
{
	const struct ckpt *c = slot_of(j, gen);
	long hlo, hhi, got = 0;

	if (!c) /* cannot happen: choose_generation picked one held here */
		return MPI_ERR_OTHER;
	held(where[j->rank], j->lsize, gone, &hlo, &hhi);
	for (int k = 0; k < j->size; k++) {
		long nlo = block_lo(k, j->size), nhi = block_lo(k + 1, j->size);
		long a = hlo > nlo ? hlo : nlo, b = hhi < nhi ? hhi : nhi;
		j->scount[k] = a < b ? (int)(b - a) : 0;
		j->sdispl[k] = a < b ? (int)(a - hlo) : 0;
		long slo, shi;
		held(where[k], j->lsize, gone, &slo, &shi);
		a = slo > j->lo ? slo : j->lo;
		b = shi < j->lo + j->n ? shi : j->lo + j->n;
		j->rcount[k] = a < b ? (int)(b - a) : 0;
		j->rdispl[k] = a < b ? (int)(a - j->lo) : 0;
		got += j->rcount[k];
	}
	if (got != j->n) { /* cannot happen: the held runs cover the rod */
		fprintf(stderr, "jacobi: restore covers %ld of %ld cells\n", got, j->n);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	return MPI_Alltoallv(c->cell + (hlo - c->lo), j->scount, j->sdispl, MPI_DOUBLE, j->u + 1,
			     j->rcount, j->rdispl, MPI_DOUBLE, j->comm);
}

/* Recover from a failure on j->comm: returns the iteration to go on
 * from (the cells and j's layout restored), or -1 if a block is lost.
 * entered: this rank has already made the agreement that starts a
 * recovery (the one after the final gather). */
static long recover(struct jacobi *j, bool entered)
{
	if (!ulfm) {
		fprintf(stderr, "jacobi: an MPI call failed, and ULFM is not in force (run under ftshim)\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPIX_Comm_revoke(j->comm);
	if (!entered) {
		/* Matches the final agreement of ranks that got that far, whose
		 * value (0 here) then sends them here too. */
		int zero = 0;
		MPIX_Comm_agree(j->comm, &zero);
	}
	for (;;) {
		MPI_Comm shrunk;
		int rc = MPIX_Comm_shrink(j->comm, &shrunk);
		if (rc != MPI_SUCCESS) {
			fprintf(stderr, "jacobi: MPIX_Comm_shrink failed (%d)\n", rc);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		/* Freeing the old communicator also makes its failed
		 * collectives' buffers safe to use again. */
		MPI_Comm_free(&j->comm);
		set_comm(j, shrunk);
		j->recoveries++;

		/* Who of the layout is gone, and who is who now. */
		bool gone[j->lsize];
		int where[j->size], lost[j->lsize], nlost = 0;
		for (int l = 0; l < j->lsize; l++)
			gone[l] = true;
		for (int k = 0; k < j->size; k++)
			where[k] = -1;
		for (int k = 0; k < j->size; k++)
			for (int l = 0; l < j->lsize; l++)
				if (j->lmembers[l] == j->members[k]) {
					where[k] = l;
					gone[l] = false;
				}
		for (int l = 0; l < j->lsize; l++)
			if (gone[l])
				lost[nlost++] = j->lmembers[l];

		/* The newest checkpoint everyone has. The value is uniform even
		 * when the call reports a new failure; this attempt then fails. */
		int ok = 1, mask = 0;
		for (int s = 0; s < 2; s++)
			if (j->slot[s].complete)
				mask |= (int)gen_bit(j->slot[s].gen);
		mask |= (int)gen_bit(0);
		if (MPIX_Comm_agree(j->comm, &mask) != MPI_SUCCESS) {
			revoke(j->comm);
			ok = 0;
		}
		long gen = choose_generation(j, (unsigned)mask);

		for (int l = 0; gen > 0 && l < j->lsize; l++) {
			int b = buddy(l, j->lsize);
			if (gone[l] && (b < 0 || gone[b])) {
				if (j->rank == 0)
					printf("jacobi: unrecoverable: world rank %d and its buddy, world rank %d, "
					       "were both lost; the checkpoint of iteration %ld of its cells "
					       "is gone\n",
					       j->lmembers[l], b < 0 ? -1 : j->lmembers[b], gen * every);
				fflush(stdout);
				/* Nobody leaves before rank 0 has said why: a launcher
				 * may tear down the others once one exits non-zero. */
				int said = 1;
				MPIX_Comm_agree(j->comm, &said);
				return -1;
			}
		}

		/* The rod of that checkpoint in new blocks. */
		set_ends(j);
		if (ok && gen > 0 && redistribute(j, gen, gone, where) != MPI_SUCCESS) {
			revoke(j->comm);
			ok = 0;
		}
		if (ok && gen == 0)
			for (long k = 0; k < j->n; k++)
				j->u[k + 1] = initial(j->lo + k);
		/* Buddies for the new layout before it replaces the old. */
		if (ok && gen > 0 && checkpoint(j, &j->pending, gen) != MPI_SUCCESS)
			ok = 0;

		/* Does this attempt stand? The same answer everywhere. */
		agree(j->comm, &ok);
		if (!ok)
			continue;
		set_layout(j);
		if (gen > 0) {
			struct ckpt t = j->slot[0];
			j->slot[0] = j->pending;
			j->pending = t;
		} else {
			j->slot[0].gen = 0;
			j->slot[0].complete = false;
		}
		j->slot[1].gen = 0;
		j->slot[1].complete = false;
		if (j->rank == 0) {
			char list[256];
			list_ranks(list, sizeof list, lost, nlost);
			printf("jacobi: recovery: lost ranks %s; %d ranks go on from iteration %ld "
			       "(attempt %d)\n",
			       list, j->size, gen * every, j->recoveries);
			fflush(stdout);
		}
		return gen * every;
	}
}

static int usage(void)
{
	fprintf(stderr, "usage: jacobi [ITERATIONS [POINTS [EVERY]]]; EVERY a multiple of %d\n",
		RESIDUAL_EVERY);
	return 2;
}

int main(int argc, char **argv)
{
	struct jacobi j = { 0 };
	int rc;

	MPI_Init(&argc, &argv);
	MPI_Comm_size(MPI_COMM_WORLD, &j.world_size);
	if (argc > 1)
		iterations = atol(argv[1]);
	if (argc > 2)
		points = atol(argv[2]);
	if (argc > 3)
		every = atol(argv[3]);
	if (argc > 4 || iterations < 1 || points < 2L * j.world_size || points > 100000000 ||
	    every < RESIDUAL_EVERY || every % RESIDUAL_EVERY) {
		MPI_Finalize();
		return usage();
	}
	ulfm = ulfm_in_force();
	inject_point = (void (*)(const char *, long))(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_inject_point");

	size_t room = (size_t)points + 2, ws = (size_t)j.world_size;
	j.u = xmalloc(room * sizeof *j.u);
	j.unew = xmalloc(room * sizeof *j.unew);
	j.rod = xmalloc(room * sizeof *j.rod);
	for (int s = 0; s < 3; s++) {
		struct ckpt *c = s < 2 ? &j.slot[s] : &j.pending;
		c->cell = xmalloc(room * sizeof *c->cell);
	}
	j.members = xmalloc(ws * sizeof *j.members);
	j.lmembers = xmalloc(ws * sizeof *j.lmembers);
	j.scount = xmalloc(ws * sizeof(int));
	j.sdispl = xmalloc(ws * sizeof(int));
	j.rcount = xmalloc(ws * sizeof(int));
	j.rdispl = xmalloc(ws * sizeof(int));
	MPI_Comm_group(MPI_COMM_WORLD, &j.world);

	/* The working communicator. Under ULFM, a shrink of MPI_COMM_WORLD:
	 * a dup that also succeeds when a rank has died already. */
	MPI_Comm work;
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	rc = ulfm ? MPIX_Comm_shrink(MPI_COMM_WORLD, &work) : MPI_Comm_dup(MPI_COMM_WORLD, &work);
	if (rc != MPI_SUCCESS) {
		fprintf(stderr, "jacobi: could not make the working communicator (error %d)\n", rc);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	set_comm(&j, work);
	set_layout(&j);
	set_ends(&j);
	for (long k = 0; k < j.n; k++)
		j.u[k + 1] = initial(j.lo + k);

	long i = 0;
	double checksum = 0;
	for (;;) {
		rc = MPI_SUCCESS;
		while (rc == MPI_SUCCESS && i < iterations) {
			i++;
			if (inject_point)
				inject_point("iteration", i);
			rc = exchange_halos(&j);
			if (rc != MPI_SUCCESS)
				break;
			relax(&j);
			if (i % RESIDUAL_EVERY == 0 || i == iterations)
				rc = MPI_Allreduce(&j.change, &j.residual, 1, MPI_DOUBLE, MPI_MAX, j.comm);
			if (rc == MPI_SUCCESS && i % every == 0 && i < iterations) {
				struct ckpt *c = j.slot[0].gen <= j.slot[1].gen ? &j.slot[0] : &j.slot[1];
				rc = checkpoint(&j, c, i / every);
			}
		}
		bool entered = false;
		if (rc == MPI_SUCCESS) {
			/* Done only if everyone got the whole rod to rank 0. */
			int ok = gather(&j, &checksum) == MPI_SUCCESS;
			agree(j.comm, &ok);
			if (ok)
				break;
			entered = true;
		}
		i = recover(&j, entered);
		if (i < 0) {
			MPI_Finalize();
			return EXIT_LOST;
		}
	}

	if (j.rank == 0) {
		int lost[j.world_size], nlost = 0;
		for (int w = 0, k = 0; w < j.world_size; w++) {
			if (k < j.size && j.members[k] == w)
				k++;
			else
				lost[nlost++] = w;
		}
		char list[256];
		list_ranks(list, sizeof list, lost, nlost);
		printf("jacobi: %ld iterations, checksum %.17g, residual %.6e; survivors %d of %d; lost ranks %s\n",
		       iterations, checksum, j.residual, j.size, j.world_size, list);
		fflush(stdout);
	}
	MPI_Comm_free(&j.comm);
	MPI_Group_free(&j.world);
	MPI_Finalize();
	return 0;
}
