/* proc_table.c: the process table; see proc_table.h for who writes what. */
#include "ftshim_config.h"

#include <errno.h>
#include <stdlib.h>

#include "src/proc_table.h"

#define FT_HOW_NAME(e, s) s,
const char *const ft_fail_how_names[FT_HOW_COUNT] = { FT_FAIL_HOWS(FT_HOW_NAME) };
#undef FT_HOW_NAME

int ft_proc_table_init(struct ft_proc_table *t, uint32_t size)
{
	t->procs = calloc(size ? size : 1, sizeof *t->procs);
	t->order = calloc(size ? size : 1, sizeof *t->order);
	if (!t->procs || !t->order) {
		free(t->procs);
		free(t->order);
		return -ENOMEM;
	}
	t->size = size;
	atomic_init(&t->epoch, 0);
	atomic_init(&t->nfailed, 0);
	atomic_init(&t->nreserved, 0);
	for (uint32_t i = 0; i < size; i++) {
		atomic_init(&t->procs[i].state, FT_PROC_ALIVE);
		t->procs[i].detector = -1;
		t->procs[i].told_by = -1;
	}
	return 0;
}

void ft_proc_table_destroy(struct ft_proc_table *t)
{
	free(t->procs);
	free(t->order);
	t->procs = NULL;
	t->order = NULL;
	t->size = 0;
}

bool ft_proc_mark_failed(struct ft_proc_table *t, uint32_t rank, enum ft_fail_how how,
			 int32_t detector, int32_t told_by, uint64_t learned_ns)
{
	if (rank >= t->size)
		return false;
	struct ft_proc *p = &t->procs[rank];
	uint32_t expected = FT_PROC_ALIVE;
	/* relaxed on success is enough for the claim: nobody reads the
	 * details until the release store below. */
	if (!atomic_compare_exchange_strong_explicit(&p->state, &expected, FT_PROC_CLAIMED,
						     memory_order_relaxed, memory_order_relaxed))
		return false;
	p->how = how;
	p->detector = detector;
	p->told_by = told_by;
	p->learned_ns = learned_ns;
	atomic_store_explicit(&p->state, FT_PROC_FAILED, memory_order_release);
	/* Take a slot of the order list, fill it, and publish the slots in
	 * order: a later writer waits (briefly) for an earlier one. */
	uint32_t n = atomic_fetch_add_explicit(&t->nreserved, 1, memory_order_relaxed);
	t->order[n] = (int32_t)rank;
	for (uint32_t expect = n; !atomic_compare_exchange_weak_explicit(
		     &t->nfailed, &expect, n + 1, memory_order_release, memory_order_relaxed);
	     expect = n)
		;
	atomic_fetch_add_explicit(&t->epoch, 1, memory_order_release);
	return true;
}

/* Move rank from one settled state to another and publish it. */
static bool move(struct ft_proc_table *t, uint32_t rank, uint32_t from, uint32_t to)
{
	if (rank >= t->size)
		return false;
	uint32_t expected = from;
	if (!atomic_compare_exchange_strong_explicit(&t->procs[rank].state, &expected, to,
						     memory_order_release, memory_order_relaxed))
		return false;
	atomic_fetch_add_explicit(&t->epoch, 1, memory_order_release);
	return true;
}

bool ft_proc_readmit(struct ft_proc_table *t, uint32_t rank)
{
	return move(t, rank, FT_PROC_FAILED, FT_PROC_READMITTED);
}

bool ft_proc_mark_failed_again(struct ft_proc_table *t, uint32_t rank)
{
	/* The details stay those of the first failure (readers may hold them). */
	return move(t, rank, FT_PROC_READMITTED, FT_PROC_FAILED);
}

uint32_t ft_proc_failed_list(const struct ft_proc_table *t, int32_t *out, uint32_t max)
{
	uint32_t n = 0;

	for (uint32_t r = 0; r < t->size; r++) {
		if (!ft_proc_is_failed(t, r))
			continue;
		if (n < max)
			out[n] = (int32_t)r;
		n++;
	}
	return n;
}
