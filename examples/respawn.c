/* respawn.c: ULFM's non-shrinking recovery. A periodic 1-D stencil keeps
 * its NP ranks whatever it loses: when a step fails, the survivors revoke
 * the working communicator, shrink it, spawn as many processes as died
 * (MPI_Comm_spawn), merge with them (MPI_Intercomm_merge) and split the
 * result back into the old rank order (MPI_Comm_split), so each
 * replacement takes the rank of the process it replaces. Everyone then
 * rolls back to the newest checkpoint that all hold; a replacement gets
 * its block from its buddy's in-memory copy. The program goes on and ends
 * with the answer of a failure-free run.
 *
 * Each rank holds CELLS integer cells of a ring of NP * CELLS; a step
 * swaps one halo cell with each neighbour and sets every cell to
 * (left + 2 * self + right + step) mod 1000003. Integers, so the answer
 * does not depend on anything but the arguments: rank 0 also computes the
 * whole ring alone and compares. Every EVERY steps each rank checkpoints
 * its block in its own memory and sends a copy to its buddy (the next
 * rank), which keeps the last two copies; losing a rank and its buddy
 * between two recoveries loses a block, and the program then says so and
 * exits with status 3.
 *
 * Usage: respawn [STEPS [CELLS [EVERY]]]   (default 300 1000 10)
 * Rank 0 of the final communicator prints
 *   respawn: STEPS steps on NP ranks, checksum C, expected E: correct; recoveries R, respawned N
 * ("wrong" instead of "correct" if C != E; exit status 4 then). Each
 * recovery prints a line "respawn: recovery ...".
 *
 * A test kills ranks at chosen steps with ftshim's injection, through the
 * point ftshim_inject_point("step", step) each rank passes at every step
 * (found with dlsym, so the program also runs without ftshim; then
 * nothing is recovered: an error aborts). Replacements start with the
 * same arguments and know what they are from MPI_Comm_get_parent.
 *
 * Build: mpicc -std=gnu11 respawn.c (with ULFM's mpi-ext.h, or ftshim's:
 * -I PREFIX/include/ftshim). */
#include <dlfcn.h>
#include <mpi.h>
#include <mpi-ext.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MOD 1000003
#define TAG_HALO 1
#define TAG_CKPT 2
#define TAG_RESTORE 3
#define TAG_ROLE 4

struct ckpt {
	long step; /* -1: empty */
	int64_t *cells;
};

struct run {
	long steps, every;
	int cells;
	MPI_Comm comm; /* the working communicator: np ranks in the original order */
	int rank, np;
	long step;         /* the step cur is at */
	int64_t *cur, *next;
	struct ckpt own[2];  /* this rank's last two checkpoints */
	struct ckpt held[2]; /* the last two of the rank before it (its buddy is this one) */
	int recoveries, respawned;
	void (*point)(const char *, long); /* ftshim_inject_point, or NULL */
	char **argv;
};

static void die(const char *what, int status)
{
	fprintf(stderr, "respawn: %s\n", what);
	exit(status);
}

static int64_t *cells_new(int n)
{
	int64_t *p = calloc((size_t)n + 2, sizeof *p);

	if (!p)
		die("out of memory", 1);
	return p;
}

/* One step of the ring, on cells c[1..n] with halos c[0] and c[n + 1]. */
static void stencil(const int64_t *c, int64_t *out, int n, long step)
{
	for (int i = 1; i <= n; i++)
		out[i] = (c[i - 1] + 2 * c[i] + c[i + 1] + step) % MOD;
}

static int64_t initial(long global)
{
	return (global * 7919) % MOD;
}

/* The failure-free answer, computed alone. */
static int64_t expected(const struct run *r)
{
	int total = r->np * r->cells;
	int64_t *c = cells_new(total), *o = cells_new(total), sum = 0;

	for (int i = 1; i <= total; i++)
		c[i] = initial(i - 1);
	for (long s = 0; s < r->steps; s++) {
		c[0] = c[total];
		c[total + 1] = c[1];
		stencil(c, o, total, s);
		int64_t *t = c;
		c = o;
		o = t;
	}
	for (int i = 1; i <= total; i++)
		sum += c[i];
	free(c);
	free(o);
	return sum;
}

static void ckpt_save(struct ckpt *k, long step, const int64_t *cells, int n)
{
	k->step = step;
	memcpy(k->cells, cells, (size_t)n * sizeof *cells);
}

/* Checkpoint cur at this step: own copy, and a copy to the buddy. */
static int checkpoint(struct run *r)
{
	int slot = (int)((r->step / r->every) % 2);
	int next = (r->rank + 1) % r->np, prev = (r->rank + r->np - 1) % r->np;
	long got_step = -1;

	ckpt_save(&r->own[slot], r->step, r->cur + 1, r->cells);
	int rc = MPI_Sendrecv(r->cur + 1, r->cells, MPI_INT64_T, next, TAG_CKPT, r->held[slot].cells, r->cells,
			      MPI_INT64_T, prev, TAG_CKPT, r->comm, MPI_STATUS_IGNORE);
	if (rc == MPI_SUCCESS)
		got_step = r->step;
	r->held[slot].step = got_step;
	return rc;
}

/* One step: halos, then the stencil. */
static int step(struct run *r)
{
	int next = (r->rank + 1) % r->np, prev = (r->rank + r->np - 1) % r->np;
	int rc = MPI_Sendrecv(&r->cur[1], 1, MPI_INT64_T, prev, TAG_HALO, &r->cur[r->cells + 1], 1, MPI_INT64_T,
			      next, TAG_HALO, r->comm, MPI_STATUS_IGNORE);

	if (rc == MPI_SUCCESS)
		rc = MPI_Sendrecv(&r->cur[r->cells], 1, MPI_INT64_T, next, TAG_HALO, &r->cur[0], 1, MPI_INT64_T,
				  prev, TAG_HALO, r->comm, MPI_STATUS_IGNORE);
	if (rc != MPI_SUCCESS)
		return rc;
	stencil(r->cur, r->next, r->cells, r->step);
	int64_t *t = r->cur;
	r->cur = r->next;
	r->next = t;
	r->step++;
	return MPI_SUCCESS;
}

static const struct ckpt *find(const struct ckpt k[2], long step)
{
	return k[0].step == step ? &k[0] : k[1].step == step ? &k[1] : NULL;
}

/* The newest step this rank holds both its own and its buddy's copy of
 * (a replacement holds nothing: no limit). */
static long newest_complete(const struct run *r)
{
	long best = -1;

	for (int i = 0; i < 2; i++)
		if (r->own[i].step > best && find(r->held, r->own[i].step))
			best = r->own[i].step;
	return best;
}

/* After the new communicator is in place: everyone rolls back to the
 * newest checkpoint all hold; each replacement gets its block from its
 * buddy. replaced[i]: whether rank i is new. */
static int restore(struct run *r, const bool *replaced, bool self_new)
{
	long mine = self_new ? r->steps + 1 : newest_complete(r), at = 0;
	int rc = MPI_Allreduce(&mine, &at, 1, MPI_LONG, MPI_MIN, r->comm);

	if (rc != MPI_SUCCESS)
		return rc;
	if (at < 0)
		die("no checkpoint left that every rank holds", 3);
	int next = (r->rank + 1) % r->np, prev = (r->rank + r->np - 1) % r->np;
	if (self_new) {
		if (replaced[next])
			die("lost a rank and its buddy between two recoveries: a block is gone", 3);
		rc = MPI_Recv(r->cur + 1, r->cells, MPI_INT64_T, next, TAG_RESTORE, r->comm, MPI_STATUS_IGNORE);
	} else {
		const struct ckpt *k = find(r->own, at);
		if (!k)
			die("this rank lacks the agreed checkpoint", 3);
		memcpy(r->cur + 1, k->cells, (size_t)r->cells * sizeof *k->cells);
		if (replaced[prev]) {
			const struct ckpt *h = find(r->held, at);
			if (!h)
				die("the buddy's copy of the agreed checkpoint is gone", 3);
			rc = MPI_Send(h->cells, r->cells, MPI_INT64_T, prev, TAG_RESTORE, r->comm);
		}
	}
	if (rc != MPI_SUCCESS)
		return rc;
	r->step = at;
	/* The computation is deterministic, so copies of later steps stay
	 * good; a replacement's first are these. */
	return checkpoint(r);
}

/* What the leader of the old ranks tells each replacement: its rank, the
 * counts so far, and which ranks are new. */
enum { ROLE_RANK, ROLE_RECOVERIES, ROLE_RESPAWNED, ROLE_REPLACED };

/* Survivors: revoke, shrink, spawn the missing ranks, merge, split back
 * into the old order, restore. On an error, again from the revoke. */
static void recover(struct run *r)
{
	for (int attempt = 0;; attempt++) {
		if (attempt == 5)
			die("recovery failed five times in a row", 3);
		MPI_Comm shrunk = MPI_COMM_NULL, inter = MPI_COMM_NULL, merged = MPI_COMM_NULL, fresh = MPI_COMM_NULL;
		MPIX_Comm_revoke(r->comm);
		if (MPIX_Comm_shrink(r->comm, &shrunk) != MPI_SUCCESS)
			continue;
		int ns = 0, me = 0;
		MPI_Comm_size(shrunk, &ns);
		MPI_Comm_rank(shrunk, &me);
		int *olds = malloc((size_t)ns * sizeof *olds);
		bool *replaced = calloc((size_t)r->np, sizeof *replaced);
		int *missing = malloc((size_t)r->np * sizeof *missing), nmissing = 0;
		if (!olds || !replaced || !missing)
			die("out of memory", 1);
		int rc = MPI_Allgather(&r->rank, 1, MPI_INT, olds, 1, MPI_INT, shrunk);
		if (rc == MPI_SUCCESS) {
			for (int i = 0; i < r->np; i++)
				replaced[i] = true;
			for (int i = 0; i < ns; i++)
				replaced[olds[i]] = false;
			for (int i = 0; i < r->np; i++)
				if (replaced[i])
					missing[nmissing++] = i;
			rc = MPI_Comm_spawn(r->argv[0], r->argv + 1, nmissing, MPI_INFO_NULL, 0, shrunk, &inter,
					    MPI_ERRCODES_IGNORE);
		}
		if (rc == MPI_SUCCESS)
			rc = MPI_Intercomm_merge(inter, 0, &merged);
		int *role = malloc(((size_t)ROLE_REPLACED + (size_t)r->np) * sizeof *role);
		if (!role)
			die("out of memory", 1);
		role[ROLE_RECOVERIES] = r->recoveries + 1;
		role[ROLE_RESPAWNED] = r->respawned + nmissing;
		for (int i = 0; i < r->np; i++)
			role[ROLE_REPLACED + i] = replaced[i];
		for (int i = 0; rc == MPI_SUCCESS && me == 0 && i < nmissing; i++) {
			role[ROLE_RANK] = missing[i];
			rc = MPI_Send(role, ROLE_REPLACED + r->np, MPI_INT, ns + i, TAG_ROLE, merged);
		}
		free(role);
		if (rc == MPI_SUCCESS)
			rc = MPI_Comm_split(merged, 0, r->rank, &fresh);
		if (rc == MPI_SUCCESS) {
			MPI_Comm_set_errhandler(fresh, MPI_ERRORS_RETURN);
			MPI_Comm_free(&r->comm);
			r->comm = fresh;
			rc = restore(r, replaced, false);
		}
		if (rc == MPI_SUCCESS && me == 0) {
			printf("respawn: recovery %d: lost rank(s)", r->recoveries + 1);
			for (int i = 0; i < nmissing; i++)
				printf(" %d", missing[i]);
			printf(", respawned them; back to step %ld\n", r->step);
			fflush(stdout);
		}
		r->respawned += rc == MPI_SUCCESS ? nmissing : 0;
		free(olds);
		free(replaced);
		free(missing);
		if (merged != MPI_COMM_NULL)
			MPI_Comm_free(&merged);
		if (inter != MPI_COMM_NULL)
			MPI_Comm_free(&inter);
		if (shrunk != MPI_COMM_NULL)
			MPI_Comm_free(&shrunk);
		if (rc == MPI_SUCCESS) {
			r->recoveries++;
			return;
		}
	}
}

/* A replacement: merge with the parents, learn its rank, take its place,
 * restore. */
static void join(struct run *r, MPI_Comm parent)
{
	MPI_Comm merged, fresh;
	bool *replaced = calloc((size_t)r->np, sizeof *replaced);
	int *role = malloc(((size_t)ROLE_REPLACED + (size_t)r->np) * sizeof *role);

	if (!replaced || !role)
		die("out of memory", 1);
	MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
	if (MPI_Intercomm_merge(parent, 1, &merged) != MPI_SUCCESS ||
	    MPI_Recv(role, ROLE_REPLACED + r->np, MPI_INT, 0, TAG_ROLE, merged, MPI_STATUS_IGNORE) != MPI_SUCCESS)
		die("a replacement could not join its parents", 3);
	r->rank = role[ROLE_RANK];
	r->recoveries = role[ROLE_RECOVERIES];
	r->respawned = role[ROLE_RESPAWNED];
	for (int i = 0; i < r->np; i++)
		replaced[i] = role[ROLE_REPLACED + i];
	if (MPI_Comm_split(merged, 0, r->rank, &fresh) != MPI_SUCCESS)
		die("a replacement could not take its rank", 3);
	MPI_Comm_set_errhandler(fresh, MPI_ERRORS_RETURN);
	r->comm = fresh;
	if (restore(r, replaced, true) != MPI_SUCCESS)
		die("a replacement could not restore its block", 3);
	MPI_Comm_free(&merged);
	MPI_Comm_free(&parent);
	free(replaced);
	free(role);
}

int main(int argc, char **argv)
{
	struct run r = { .steps = 300, .cells = 1000, .every = 10, .argv = argv };
	MPI_Comm parent;

	if (argc > 1)
		r.steps = atol(argv[1]);
	if (argc > 2)
		r.cells = atoi(argv[2]);
	if (argc > 3)
		r.every = atol(argv[3]);
	if (r.steps < 1 || r.cells < 1 || r.every < 1) {
		fprintf(stderr, "usage: respawn [STEPS [CELLS [EVERY]]], each at least 1\n");
		return 2;
	}
	MPI_Init(&argc, &argv);
	r.point = (void (*)(const char *, long))(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_inject_point");
	r.cur = cells_new(r.cells);
	r.next = cells_new(r.cells);
	for (int i = 0; i < 2; i++) {
		r.own[i] = (struct ckpt){ -1, cells_new(r.cells) };
		r.held[i] = (struct ckpt){ -1, cells_new(r.cells) };
	}
	MPI_Comm_get_parent(&parent);
	if (parent == MPI_COMM_NULL) {
		MPI_Comm_dup(MPI_COMM_WORLD, &r.comm);
		MPI_Comm_set_errhandler(r.comm, MPI_ERRORS_RETURN);
		MPI_Comm_size(r.comm, &r.np);
		MPI_Comm_rank(r.comm, &r.rank);
		for (int i = 1; i <= r.cells; i++)
			r.cur[i] = initial((long)r.rank * r.cells + i - 1);
		if (checkpoint(&r) != MPI_SUCCESS)
			recover(&r);
	} else {
		int nlocal = 0, nremote = 0;
		MPI_Comm_size(MPI_COMM_WORLD, &nlocal);
		MPI_Comm_remote_size(parent, &nremote);
		r.np = nlocal + nremote;
		join(&r, parent);
	}
	while (r.step < r.steps) {
		if (r.point)
			r.point("step", r.step);
		int rc = step(&r);
		if (rc == MPI_SUCCESS && r.step % r.every == 0)
			rc = checkpoint(&r);
		/* Every rank ends the step knowing whether anyone failed in it.
		 * One that saw an error revokes first: a neighbour may still wait
		 * for its message, and only a revoke ends that wait. */
		int ok = rc == MPI_SUCCESS;
		if (!ok)
			MPIX_Comm_revoke(r.comm);
		if (MPIX_Comm_agree(r.comm, &ok) != MPI_SUCCESS || !ok)
			recover(&r);
	}
	int64_t sum = 0, all = 0;
	for (int i = 1; i <= r.cells; i++)
		sum += r.cur[i];
	int rc = MPI_Reduce(&sum, &all, 1, MPI_INT64_T, MPI_SUM, 0, r.comm);
	int status = 0;
	if (rc != MPI_SUCCESS)
		die("the final sum failed", 3);
	if (r.rank == 0) {
		int64_t want = expected(&r);
		status = all == want ? 0 : 4;
		printf("respawn: %ld steps on %d ranks, checksum %lld, expected %lld: %s; recoveries %d, respawned %d\n",
		       r.steps, r.np, (long long)all, (long long)want, status ? "wrong" : "correct", r.recoveries,
		       r.respawned);
	}
	MPI_Comm_free(&r.comm);
	MPI_Finalize();
	return status;
}
