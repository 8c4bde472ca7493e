/* check_ring.c: unit tests of src/ring.c, the heartbeat ring and its
 * broadcast topology. They check the positions (identity without shuffle;
 * with it a permutation, the same for the same seed (pinned for one),
 * different for another, each permutation about equally likely),
 * successor, predecessor and ft_ring_step against a plain walk over the
 * positions (after removals, across runs of removed ranks, from removed
 * ranks, for every step count and for the extreme ones), the one-rank,
 * empty and all-removed rings, the broadcast targets (the worked n = 8
 * examples, a model of each kind, no self, no duplicates, only in-ring
 * ranks, truncation at max), ft_ring_max_targets, that a flood over each
 * kind reaches every in-ring rank within ceil(log2 n) rounds (also with a
 * third of the ranks removed), and a ring of 2^20 ranks. */
#include "ftshim_config.h"

#include <check.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/ring.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const enum ft_bcast_kind all_kinds[] = { FT_BCAST_CHORD, FT_BCAST_BMG, FT_BCAST_HYPERCUBE };

/* The tests' own random numbers (xorshift64*), independent of the ring's. */
static uint64_t test_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(0x2545f4914f6cdd1d);
}

static uint32_t ceil_log2(uint32_t n)
{
	uint32_t c = 0;

	while (c < 32 && (UINT64_C(1) << c) < n)
		c++;
	return c;
}

/* Remove a third of the job's ranks, chosen at random, from those in. */
static void remove_third(struct ft_ring *r, uint64_t seed)
{
	uint64_t s = seed | 1;
	uint32_t want = r->n / 3, done = 0, before = r->nin;

	ck_assert_uint_ge(r->nin, want);
	while (done < want)
		if (ft_ring_remove(r, (uint32_t)(test_rand(&s) % r->n)))
			done++;
	ck_assert_uint_eq(r->nin, before - want);
}

/* --- a plain model of the ring, walking positions one by one ----------------- */

/* The in-ring ranks other than rank, forward from rank's position. Returns
 * how many; out has room for n. */
static uint32_t model_others(const struct ft_ring *r, uint32_t rank, uint32_t *out)
{
	uint32_t m = 0, pos = r->pos_of[rank];

	for (uint32_t k = 1; k < r->n; k++) {
		uint32_t p = (pos + k) % r->n;
		if (r->in[p])
			out[m++] = r->rank_at[p];
	}
	return m;
}

/* The in-ring ranks in position order. */
static uint32_t model_in_order(const struct ft_ring *r, uint32_t *out)
{
	uint32_t m = 0;

	for (uint32_t p = 0; p < r->n; p++)
		if (r->in[p])
			out[m++] = r->rank_at[p];
	return m;
}

/* Check ft_ring_step from every rank for d in [-lim, lim] against the model. */
static void check_steps_against_model(const struct ft_ring *r, int64_t lim)
{
	uint32_t *others = malloc((r->n ? r->n : 1) * sizeof *others);

	ck_assert_ptr_nonnull(others);
	for (uint32_t rank = 0; rank < r->n; rank++) {
		uint32_t m = model_others(r, rank, others);
		for (int64_t d = -lim; d <= lim; d++) {
			uint32_t got = ft_ring_step(r, rank, d), want;
			if (d == 0)
				want = ft_ring_contains(r, rank) ? rank : FT_RANK_NONE;
			else if (m == 0)
				want = FT_RANK_NONE;
			else if (d > 0)
				want = others[(uint64_t)(d - 1) % m];
			else
				want = others[m - 1 - (uint64_t)(-d - 1) % m];
			ck_assert_msg(got == want, "step(%u, %lld) = %u, want %u", rank,
				      (long long)d, got, want);
		}
	}
	free(others);
}

/* --- positions ---------------------------------------------------------------- */

START_TEST(test_identity_succ_pred)
{
	struct ft_ring r;
	const uint32_t n = 10;

	ck_assert_int_eq(ft_ring_init(&r, n, false, 0), 0);
	ck_assert_uint_eq(r.n, n);
	ck_assert_uint_eq(r.nin, n);
	for (uint32_t i = 0; i < n; i++) {
		ck_assert_uint_eq(r.rank_at[i], i);
		ck_assert_uint_eq(r.pos_of[i], i);
		ck_assert(ft_ring_contains(&r, i));
		ck_assert_uint_eq(ft_ring_successor(&r, i), (i + 1) % n);
		ck_assert_uint_eq(ft_ring_predecessor(&r, i), (i + n - 1) % n);
		ck_assert_uint_eq(ft_ring_step(&r, i, 0), i);
		ck_assert_uint_eq(ft_ring_step(&r, i, 3), (i + 3) % n);
		ck_assert_uint_eq(ft_ring_step(&r, i, -3), (i + n - 3) % n);
		/* Nine others: the ninth step forward is the predecessor, the
		 * tenth wraps to the successor. */
		ck_assert_uint_eq(ft_ring_step(&r, i, 9), (i + n - 1) % n);
		ck_assert_uint_eq(ft_ring_step(&r, i, 10), (i + 1) % n);
		ck_assert_uint_eq(ft_ring_step(&r, i, -9), (i + 1) % n);
		ck_assert_uint_eq(ft_ring_step(&r, i, -10), (i + n - 1) % n);
	}
	/* The extremes of d reduce like any other value. */
	ck_assert_uint_eq(ft_ring_step(&r, 0, INT64_MAX), (uint32_t)((INT64_MAX - 1) % 9) + 1);
	ck_assert_uint_eq(ft_ring_step(&r, 0, INT64_MIN),
			  n - 1 - (uint32_t)(((uint64_t)INT64_MAX) % 9));
	check_steps_against_model(&r, 25);
	/* Ranks outside the job are in nothing. */
	ck_assert(!ft_ring_contains(&r, n));
	ck_assert(!ft_ring_contains(&r, FT_RANK_NONE));
	ck_assert_uint_eq(ft_ring_successor(&r, n), FT_RANK_NONE);
	ck_assert_uint_eq(ft_ring_step(&r, FT_RANK_NONE, 0), FT_RANK_NONE);
	ck_assert(!ft_ring_remove(&r, n));
	ck_assert_uint_eq(r.nin, n);
	ft_ring_destroy(&r);
	ck_assert_ptr_null(r.rank_at);
	ck_assert_ptr_null(r.tree);
	ft_ring_destroy(&r); /* twice is harmless */
}
END_TEST

START_TEST(test_shuffle_is_permutation)
{
	const uint32_t sizes[] = { 2, 3, 7, 64, 1000, 4097 };

	for (size_t s = 0; s < ARRAY_SIZE(sizes); s++) {
		uint32_t n = sizes[s];
		struct ft_ring r;
		bool *seen = calloc(n, sizeof *seen);

		ck_assert_ptr_nonnull(seen);
		ck_assert_int_eq(ft_ring_init(&r, n, true, UINT64_C(0x5eed) + s), 0);
		ck_assert_uint_eq(r.nin, n);
		for (uint32_t p = 0; p < n; p++) {
			uint32_t rank = r.rank_at[p];
			ck_assert_uint_lt(rank, n);
			ck_assert_msg(!seen[rank], "rank %u at two positions", rank);
			seen[rank] = true;
			ck_assert_uint_eq(r.pos_of[rank], p);
			ck_assert(ft_ring_contains(&r, rank));
			/* Successor and predecessor follow positions, not ranks. */
			ck_assert_uint_eq(ft_ring_successor(&r, rank), r.rank_at[(p + 1) % n]);
			ck_assert_uint_eq(ft_ring_predecessor(&r, rank),
					  r.rank_at[(p + n - 1) % n]);
		}
		free(seen);
		ft_ring_destroy(&r);
	}
}
END_TEST

START_TEST(test_shuffle_seeded)
{
	const uint32_t n = 64;
	struct ft_ring a, b, c, id;

	ck_assert_int_eq(ft_ring_init(&a, n, true, 42), 0);
	ck_assert_int_eq(ft_ring_init(&b, n, true, 42), 0);
	ck_assert_int_eq(ft_ring_init(&c, n, true, 43), 0);
	ck_assert_int_eq(ft_ring_init(&id, n, false, 42), 0);
	ck_assert_mem_eq(a.rank_at, b.rank_at, n * sizeof *a.rank_at);
	ck_assert_mem_eq(a.pos_of, b.pos_of, n * sizeof *a.pos_of);
	ck_assert(memcmp(a.rank_at, c.rank_at, n * sizeof *a.rank_at) != 0);
	/* Shuffled means not the identity; without shuffle the seed is unused. */
	uint32_t fixed_a = 0;
	for (uint32_t i = 0; i < n; i++) {
		fixed_a += a.rank_at[i] == i;
		ck_assert_uint_eq(id.rank_at[i], i);
		ck_assert_uint_eq(id.pos_of[i], i);
	}
	ck_assert_uint_lt(fixed_a, n / 2);
	/* Different seeds give different rings, not just these two. */
	for (uint64_t seed = 0; seed < 20; seed++) {
		struct ft_ring d;
		ck_assert_int_eq(ft_ring_init(&d, n, true, seed), 0);
		ck_assert(memcmp(d.rank_at, a.rank_at, n * sizeof *a.rank_at) != 0 || seed == 42);
		ft_ring_destroy(&d);
	}
	ft_ring_destroy(&a);
	ft_ring_destroy(&b);
	ft_ring_destroy(&c);
	ft_ring_destroy(&id);

	/* Pinned: every process of a job must draw this same ring, so a
	 * change to the generator or the shuffle must be deliberate. */
	const uint32_t pinned[] = { 4, 2, 8, 1, 9, 3, 0, 6, 7, 5 };
	ck_assert_int_eq(ft_ring_init(&a, ARRAY_SIZE(pinned), true, 1), 0);
	for (uint32_t p = 0; p < ARRAY_SIZE(pinned); p++)
		ck_assert_uint_eq(a.rank_at[p], pinned[p]);
	ft_ring_destroy(&a);
}
END_TEST

/* Over many seeds every permutation of 4 ranks comes up about equally
 * often: the shuffle is a full, unbiased Fisher-Yates. The seeds are fixed,
 * so the counts are too; the bounds are five standard deviations wide. */
START_TEST(test_shuffle_uniform)
{
	uint32_t counts[256] = { 0 };
	const uint32_t draws = 24000;

	for (uint64_t seed = 0; seed < draws; seed++) {
		struct ft_ring r;
		ck_assert_int_eq(ft_ring_init(&r, 4, true, seed), 0);
		uint32_t code = 0;
		for (uint32_t p = 0; p < 4; p++)
			code = code * 4 + r.rank_at[p];
		counts[code]++;
		ft_ring_destroy(&r);
	}
	uint32_t perms = 0;
	for (uint32_t code = 0; code < 256; code++) {
		if (!counts[code])
			continue;
		perms++;
		ck_assert_msg(counts[code] > 845 && counts[code] < 1155,
			      "permutation %#x drawn %u times of %u", code, counts[code], draws);
	}
	ck_assert_uint_eq(perms, 24);
}
END_TEST

/* --- removal and steps -------------------------------------------------------- */

START_TEST(test_remove_skips)
{
	struct ft_ring r;
	const uint32_t n = 12;

	ck_assert_int_eq(ft_ring_init(&r, n, false, 0), 0);
	ck_assert(ft_ring_remove(&r, 5));
	ck_assert(!ft_ring_remove(&r, 5));
	ck_assert_uint_eq(r.nin, n - 1);
	ck_assert(!ft_ring_contains(&r, 5));
	ck_assert_uint_eq(ft_ring_successor(&r, 4), 6);
	ck_assert_uint_eq(ft_ring_predecessor(&r, 6), 4);

	/* A run of removed ranks: 7, 8, 9 and 5 gone, 6 alone between. */
	ck_assert(ft_ring_remove(&r, 7));
	ck_assert(ft_ring_remove(&r, 8));
	ck_assert(ft_ring_remove(&r, 9));
	ck_assert_uint_eq(r.nin, n - 4);
	ck_assert_uint_eq(ft_ring_successor(&r, 6), 10);
	ck_assert_uint_eq(ft_ring_predecessor(&r, 10), 6);
	ck_assert_uint_eq(ft_ring_successor(&r, 4), 6);
	ck_assert_uint_eq(ft_ring_step(&r, 4, 2), 10);
	ck_assert_uint_eq(ft_ring_step(&r, 10, -2), 4);

	/* Runs across the wrap: 11, 0, 1 gone. */
	ck_assert(ft_ring_remove(&r, 11));
	ck_assert(ft_ring_remove(&r, 0));
	ck_assert(ft_ring_remove(&r, 1));
	ck_assert_uint_eq(r.nin, n - 7);
	ck_assert_uint_eq(ft_ring_successor(&r, 10), 2);
	ck_assert_uint_eq(ft_ring_predecessor(&r, 2), 10);
	/* Left: 2, 3, 4, 6, 10. */
	const uint32_t left[] = { 2, 3, 4, 6, 10 };
	for (size_t i = 0; i < ARRAY_SIZE(left); i++) {
		ck_assert(ft_ring_contains(&r, left[i]));
		ck_assert_uint_eq(ft_ring_successor(&r, left[i]), left[(i + 1) % 5]);
		ck_assert_uint_eq(ft_ring_predecessor(&r, left[i]), left[(i + 4) % 5]);
	}
	check_steps_against_model(&r, 13);
	ft_ring_destroy(&r);
}
END_TEST

/* Re-admission: a removed rank goes back to its own position. */
START_TEST(test_insert_restores)
{
	struct ft_ring r;
	const uint32_t n = 10;

	ck_assert_int_eq(ft_ring_init(&r, n, true, 42), 0);
	uint32_t succ = ft_ring_successor(&r, 3), pred = ft_ring_predecessor(&r, 3);
	ck_assert(!ft_ring_insert(&r, 3)); /* already in */
	ck_assert(ft_ring_remove(&r, 3));
	ck_assert(ft_ring_remove(&r, succ));
	ck_assert_uint_eq(r.nin, n - 2);
	ck_assert(ft_ring_insert(&r, 3));
	ck_assert(!ft_ring_insert(&r, 3));
	ck_assert(!ft_ring_insert(&r, n)); /* out of range */
	ck_assert_uint_eq(r.nin, n - 1);
	ck_assert(ft_ring_contains(&r, 3));
	ck_assert_uint_eq(ft_ring_predecessor(&r, 3), pred);
	ck_assert_uint_eq(ft_ring_successor(&r, 3), ft_ring_step(&r, pred, 2));
	ck_assert(ft_ring_insert(&r, succ));
	ck_assert_uint_eq(ft_ring_successor(&r, 3), succ);
	check_steps_against_model(&r, 11);
	ft_ring_destroy(&r);
}
END_TEST

START_TEST(test_step_from_removed)
{
	struct ft_ring r;

	ck_assert_int_eq(ft_ring_init(&r, 10, false, 0), 0);
	for (uint32_t rank = 3; rank <= 6; rank++)
		ck_assert(ft_ring_remove(&r, rank));
	/* From a removed rank, its position is the starting point and every
	 * in-ring rank counts: 6 in-ring ranks, all of them "others". */
	ck_assert_uint_eq(ft_ring_step(&r, 4, 0), FT_RANK_NONE);
	ck_assert_uint_eq(ft_ring_successor(&r, 4), 7);
	ck_assert_uint_eq(ft_ring_predecessor(&r, 4), 2);
	ck_assert_uint_eq(ft_ring_successor(&r, 6), 7);
	ck_assert_uint_eq(ft_ring_predecessor(&r, 3), 2);
	ck_assert_uint_eq(ft_ring_step(&r, 4, 6), 2);
	ck_assert_uint_eq(ft_ring_step(&r, 4, 7), 7);
	ck_assert_uint_eq(ft_ring_step(&r, 4, -6), 7);
	ck_assert_uint_eq(ft_ring_step(&r, 4, 4), 0);
	/* One rank left: everyone else reaches it, it reaches no one. */
	for (uint32_t rank = 0; rank < 10; rank++)
		if (rank != 8)
			ft_ring_remove(&r, rank);
	ck_assert_uint_eq(r.nin, 1);
	ck_assert_uint_eq(ft_ring_successor(&r, 8), FT_RANK_NONE);
	ck_assert_uint_eq(ft_ring_predecessor(&r, 8), FT_RANK_NONE);
	ck_assert_uint_eq(ft_ring_step(&r, 8, 0), 8);
	for (uint32_t rank = 0; rank < 10; rank++) {
		if (rank == 8)
			continue;
		ck_assert_uint_eq(ft_ring_successor(&r, rank), 8);
		ck_assert_uint_eq(ft_ring_predecessor(&r, rank), 8);
		ck_assert_uint_eq(ft_ring_step(&r, rank, 5), 8);
		ck_assert_uint_eq(ft_ring_step(&r, rank, -5), 8);
	}
	ft_ring_destroy(&r);
}
END_TEST

/* step(+k) for k = 1..m lists every other in-ring rank once, in position
 * order; step(-k) the same in reverse. From in-ring and removed ranks. */
START_TEST(test_step_enumerates)
{
	const uint32_t n = 97;
	struct ft_ring r;
	bool *seen = calloc(n, sizeof *seen);

	ck_assert_ptr_nonnull(seen);
	ck_assert_int_eq(ft_ring_init(&r, n, true, 7), 0);
	for (int round = 0; round < 2; round++) {
		for (uint32_t rank = 0; rank < n; rank++) {
			uint32_t m = r.nin - ft_ring_contains(&r, rank);
			memset(seen, 0, n * sizeof *seen);
			uint32_t prev_pos = r.pos_of[rank];
			for (uint32_t k = 1; k <= m; k++) {
				uint32_t f = ft_ring_step(&r, rank, k);
				ck_assert_uint_lt(f, n);
				ck_assert_uint_ne(f, rank);
				ck_assert(ft_ring_contains(&r, f));
				ck_assert_msg(!seen[f], "step(%u, %u) repeats %u", rank, k, f);
				seen[f] = true;
				/* Forward: positions increase, cyclically, from rank's. */
				uint32_t gap = (r.pos_of[f] + n - prev_pos) % n;
				ck_assert_uint_gt(gap, 0);
				prev_pos = r.pos_of[f];
				/* Backward is the same list read from the other end. */
				ck_assert_uint_eq(ft_ring_step(&r, rank, -(int64_t)(m + 1 - k)), f);
			}
			/* The walk went round exactly once. */
			uint32_t total = 0;
			for (uint32_t k = 1; k <= m; k++)
				total += (r.pos_of[ft_ring_step(&r, rank, k)] + n -
					  (k == 1 ? r.pos_of[rank]
						  : r.pos_of[ft_ring_step(&r, rank, k - 1)])) %
					 n;
			ck_assert_uint_lt(total, n);
			for (uint32_t o = 0; o < n; o++)
				ck_assert(seen[o] == (o != rank && ft_ring_contains(&r, o)));
			/* And it repeats with period m. */
			ck_assert_uint_eq(ft_ring_step(&r, rank, m + 1), ft_ring_step(&r, rank, 1));
			ck_assert_uint_eq(ft_ring_step(&r, rank, -(int64_t)m - 1),
					  ft_ring_step(&r, rank, -1));
		}
		check_steps_against_model(&r, 3 * n);
		if (round == 0)
			remove_third(&r, 99);
	}
	free(seen);
	ft_ring_destroy(&r);
}
END_TEST

START_TEST(test_small_and_empty)
{
	struct ft_ring r;
	uint32_t out[8];

	/* n = 1: nobody else to watch or tell. */
	ck_assert_int_eq(ft_ring_init(&r, 1, true, 3), 0);
	ck_assert_uint_eq(r.rank_at[0], 0);
	ck_assert_uint_eq(r.nin, 1);
	ck_assert_uint_eq(ft_ring_successor(&r, 0), FT_RANK_NONE);
	ck_assert_uint_eq(ft_ring_predecessor(&r, 0), FT_RANK_NONE);
	ck_assert_uint_eq(ft_ring_step(&r, 0, 0), 0);
	ck_assert_uint_eq(ft_ring_step(&r, 0, 5), FT_RANK_NONE);
	for (size_t k = 0; k < ARRAY_SIZE(all_kinds); k++)
		ck_assert_uint_eq(ft_ring_bcast_targets(&r, 0, all_kinds[k], out, 8), 0);
	ck_assert(ft_ring_remove(&r, 0));
	ck_assert_uint_eq(r.nin, 0);
	ck_assert_uint_eq(ft_ring_step(&r, 0, 0), FT_RANK_NONE);
	ck_assert_uint_eq(ft_ring_successor(&r, 0), FT_RANK_NONE);
	ft_ring_destroy(&r);

	/* n = 0: a valid, empty ring. */
	ck_assert_int_eq(ft_ring_init(&r, 0, true, 3), 0);
	ck_assert_uint_eq(r.n, 0);
	ck_assert_uint_eq(r.nin, 0);
	ck_assert(!ft_ring_contains(&r, 0));
	ck_assert(!ft_ring_remove(&r, 0));
	ck_assert_uint_eq(ft_ring_successor(&r, 0), FT_RANK_NONE);
	ck_assert_uint_eq(ft_ring_step(&r, 0, 0), FT_RANK_NONE);
	ck_assert_uint_eq(ft_ring_bcast_targets(&r, 0, FT_BCAST_BMG, out, 8), 0);
	ft_ring_destroy(&r);

	/* n = 2: each is the other's successor and predecessor. */
	ck_assert_int_eq(ft_ring_init(&r, 2, false, 0), 0);
	ck_assert_uint_eq(ft_ring_successor(&r, 0), 1);
	ck_assert_uint_eq(ft_ring_predecessor(&r, 0), 1);
	ck_assert_uint_eq(ft_ring_step(&r, 1, -7), 0);
	for (size_t k = 0; k < ARRAY_SIZE(all_kinds); k++) {
		ck_assert_uint_eq(ft_ring_bcast_targets(&r, 1, all_kinds[k], out, 8), 1);
		ck_assert_uint_eq(out[0], 0);
	}
	ft_ring_destroy(&r);

	/* Everything removed. */
	ck_assert_int_eq(ft_ring_init(&r, 6, true, 11), 0);
	for (uint32_t rank = 0; rank < 6; rank++)
		ck_assert(ft_ring_remove(&r, rank));
	ck_assert_uint_eq(r.nin, 0);
	for (uint32_t rank = 0; rank < 6; rank++) {
		ck_assert(!ft_ring_contains(&r, rank));
		ck_assert_uint_eq(ft_ring_successor(&r, rank), FT_RANK_NONE);
		ck_assert_uint_eq(ft_ring_predecessor(&r, rank), FT_RANK_NONE);
		ck_assert_uint_eq(ft_ring_step(&r, rank, 0), FT_RANK_NONE);
		ck_assert_uint_eq(ft_ring_bcast_targets(&r, rank, FT_BCAST_CHORD, out, 8), 0);
	}
	ft_ring_destroy(&r);
}
END_TEST

/* --- broadcast targets -------------------------------------------------------- */

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

/* Sort got and compare it with the sorted want. */
static void assert_same_set(uint32_t *got, uint32_t ngot, uint32_t *want, uint32_t nwant)
{
	ck_assert_uint_eq(ngot, nwant);
	qsort(got, ngot, sizeof *got, cmp_u32);
	qsort(want, nwant, sizeof *want, cmp_u32);
	for (uint32_t i = 0; i < ngot; i++)
		ck_assert_uint_eq(got[i], want[i]);
}

START_TEST(test_bcast_examples)
{
	struct ft_ring r;
	uint32_t out[16];

	ck_assert_int_eq(ft_ring_init(&r, 8, false, 0), 0);
	ck_assert_uint_eq(ft_ring_max_targets(8), 6);

	uint32_t chord[] = { 1, 2, 4 };
	uint32_t got = ft_ring_bcast_targets(&r, 0, FT_BCAST_CHORD, out, 16);
	ck_assert_uint_eq(got, 3);
	/* Chord goes out in order of distance. */
	for (uint32_t i = 0; i < 3; i++)
		ck_assert_uint_eq(out[i], chord[i]);

	uint32_t bmg[] = { 1, 7, 2, 6, 4 };
	got = ft_ring_bcast_targets(&r, 0, FT_BCAST_BMG, out, 16);
	assert_same_set(out, got, bmg, 5);

	uint32_t cube[] = { 4, 7, 1 };
	got = ft_ring_bcast_targets(&r, 5, FT_BCAST_HYPERCUBE, out, 16);
	assert_same_set(out, got, cube, 3);

	/* Chord from 6 wraps: 7, 0, 2. */
	uint32_t chord6[] = { 7, 0, 2 };
	got = ft_ring_bcast_targets(&r, 6, FT_BCAST_CHORD, out, 16);
	assert_same_set(out, got, chord6, 3);

	/* max truncates: the first targets of the full list. */
	got = ft_ring_bcast_targets(&r, 0, FT_BCAST_CHORD, out, 2);
	ck_assert_uint_eq(got, 2);
	ck_assert_uint_eq(out[0], 1);
	ck_assert_uint_eq(out[1], 2);
	ck_assert_uint_eq(ft_ring_bcast_targets(&r, 0, FT_BCAST_BMG, out, 0), 0);

	/* Indices count in-ring ranks: with 3 gone, 0..7 minus 3 has 7 ranks,
	 * and rank 0 (index 0) sends to indices 1, 2, 4: ranks 1, 2, 5. */
	ck_assert(ft_ring_remove(&r, 3));
	uint32_t chord_rm[] = { 1, 2, 5 };
	got = ft_ring_bcast_targets(&r, 0, FT_BCAST_CHORD, out, 16);
	assert_same_set(out, got, chord_rm, 3);
	/* A removed rank sends nothing. */
	ck_assert_uint_eq(ft_ring_bcast_targets(&r, 3, FT_BCAST_CHORD, out, 16), 0);
	ck_assert_uint_eq(ft_ring_bcast_targets(&r, 100, FT_BCAST_CHORD, out, 16), 0);
	ft_ring_destroy(&r);
}
END_TEST

/* The expected targets of rank, from the in-ring list; unsorted, distinct. */
static uint32_t model_targets(const struct ft_ring *r, uint32_t rank, enum ft_bcast_kind kind,
			      uint32_t *order, uint32_t *out)
{
	uint32_t n = model_in_order(r, order), i = 0, count = 0;
	uint64_t idx[2];

	while (order[i] != rank)
		i++;
	for (uint64_t step = 1; step < n; step <<= 1) {
		int nidx = 0;
		switch (kind) {
		case FT_BCAST_CHORD:
			idx[nidx++] = (i + step) % n;
			break;
		case FT_BCAST_BMG:
			idx[nidx++] = (i + step) % n;
			idx[nidx++] = (i + n - step) % n;
			break;
		case FT_BCAST_HYPERCUBE:
			if ((i ^ step) < n)
				idx[nidx++] = i ^ step;
			break;
		}
		for (int j = 0; j < nidx; j++) {
			bool dup = idx[j] == i;
			for (uint32_t c = 0; c < count && !dup; c++)
				dup = out[c] == order[idx[j]];
			if (!dup)
				out[count++] = order[idx[j]];
		}
	}
	return count;
}

/* The targets of one rank: in-ring, not itself, distinct, no more than
 * max_targets, the model's set, and cut at max a prefix of the full list. */
static void check_targets_of(const struct ft_ring *r, uint32_t rank, enum ft_bcast_kind kind)
{
	uint32_t out[64], want[64], part[64], order[100] = { 0 };
	bool seen[100] = { false };
	uint32_t got = ft_ring_bcast_targets(r, rank, kind, out, 64);

	if (!ft_ring_contains(r, rank)) {
		ck_assert_uint_eq(got, 0);
		return;
	}
	ck_assert_uint_le(got, ft_ring_max_targets(r->nin));
	ck_assert_uint_gt(got, 0);
	for (uint32_t t = 0; t < got; t++) {
		ck_assert_uint_ne(out[t], rank);
		ck_assert(ft_ring_contains(r, out[t]));
		ck_assert_msg(!seen[out[t]], "target %u twice", out[t]);
		seen[out[t]] = true;
	}
	uint32_t npart = ft_ring_bcast_targets(r, rank, kind, part, got / 2);
	ck_assert_uint_eq(npart, got / 2);
	for (uint32_t t = 0; t < npart; t++)
		ck_assert_uint_eq(part[t], out[t]);
	uint32_t nwant = model_targets(r, rank, kind, order, want);
	assert_same_set(out, got, want, nwant);
}

START_TEST(test_bcast_properties)
{
	const uint32_t sizes[] = { 2, 3, 4, 5, 6, 7, 8, 9, 13, 16, 17, 31, 33, 100 };

	for (size_t s = 0; s < ARRAY_SIZE(sizes); s++) {
		for (int removed = 0; removed < 2; removed++) {
			struct ft_ring r;
			ck_assert_int_eq(ft_ring_init(&r, sizes[s], removed, s), 0);
			if (removed)
				remove_third(&r, s + 5);
			for (size_t k = 0; k < ARRAY_SIZE(all_kinds); k++)
				for (uint32_t rank = 0; rank < r.n; rank++)
					check_targets_of(&r, rank, all_kinds[k]);
			ft_ring_destroy(&r);
		}
	}
}
END_TEST

START_TEST(test_max_targets)
{
	ck_assert_uint_eq(ft_ring_max_targets(0), 0);
	ck_assert_uint_eq(ft_ring_max_targets(1), 0);
	ck_assert_uint_eq(ft_ring_max_targets(2), 2);
	ck_assert_uint_eq(ft_ring_max_targets(3), 4);
	ck_assert_uint_eq(ft_ring_max_targets(4), 4);
	ck_assert_uint_eq(ft_ring_max_targets(5), 6);
	ck_assert_uint_eq(ft_ring_max_targets(8), 6);
	ck_assert_uint_eq(ft_ring_max_targets(9), 8);
	ck_assert_uint_eq(ft_ring_max_targets(1000), 20);
	ck_assert_uint_eq(ft_ring_max_targets(1u << 20), 40);
	ck_assert_uint_eq(ft_ring_max_targets((1u << 20) + 1), 42);
	ck_assert_uint_eq(ft_ring_max_targets(UINT32_MAX), 64);
}
END_TEST

/* Flood from src: every reached rank sends to its targets, round by round.
 * Asserts that exactly the in-ring ranks are reached and returns the
 * number of rounds. */
static uint32_t flood(const struct ft_ring *r, uint32_t src, enum ft_bcast_kind kind)
{
	uint32_t *depth = malloc(r->n * sizeof *depth);
	uint32_t *queue = malloc(r->n * sizeof *queue);
	uint32_t max = ft_ring_max_targets(r->n);
	uint32_t *out = malloc((max ? max : 1) * sizeof *out);
	uint32_t head = 0, tail = 0, rounds = 0, reached = 0;

	ck_assert(depth && queue && out);
	for (uint32_t i = 0; i < r->n; i++)
		depth[i] = UINT32_MAX;
	depth[src] = 0;
	queue[tail++] = src;
	while (head < tail) {
		uint32_t u = queue[head++];
		uint32_t got = ft_ring_bcast_targets(r, u, kind, out, max);
		reached++;
		if (depth[u] > rounds)
			rounds = depth[u];
		for (uint32_t t = 0; t < got; t++) {
			uint32_t v = out[t];
			ck_assert(ft_ring_contains(r, v));
			if (depth[v] == UINT32_MAX) {
				depth[v] = depth[u] + 1;
				queue[tail++] = v;
			}
		}
	}
	ck_assert_uint_eq(reached, r->nin);
	for (uint32_t i = 0; i < r->n; i++)
		ck_assert((depth[i] != UINT32_MAX) == ft_ring_contains(r, i));
	free(depth);
	free(queue);
	free(out);
	return rounds;
}

START_TEST(test_flooding)
{
	const uint32_t sizes[] = { 1, 2, 3, 5, 8, 13, 64, 100, 1000 };

	for (size_t s = 0; s < ARRAY_SIZE(sizes); s++) {
		uint32_t n = sizes[s];
		struct ft_ring r;
		ck_assert_int_eq(ft_ring_init(&r, n, true, 1000 + s), 0);
		for (int removed = 0; removed < 2; removed++) {
			if (removed)
				remove_third(&r, 77 + s);
			uint32_t lg = ceil_log2(r.nin);
			uint32_t srcs = 0;
			/* Every in-ring source for small rings, a spread of them otherwise. */
			uint32_t stride = r.n <= 64 ? 1 : r.n / 7;
			for (uint32_t src = 0; src < r.n; src += stride) {
				if (!ft_ring_contains(&r, src))
					continue;
				srcs++;
				for (size_t k = 0; k < ARRAY_SIZE(all_kinds); k++) {
					uint32_t rounds = flood(&r, src, all_kinds[k]);
					/* Chord: any distance below n is a sum of at most
					 * lg distinct powers of two; BMG has chord's links
					 * and more; the hypercube fixes one of lg bits per
					 * round (clearing first keeps every hop below n),
					 * tighter than the 2 lg it is usually quoted at. */
					ck_assert_uint_le(rounds, lg);
					if (all_kinds[k] == FT_BCAST_HYPERCUBE)
						ck_assert_uint_le(rounds, 2 * lg);
				}
			}
			ck_assert_uint_gt(srcs, 0);
		}
		ft_ring_destroy(&r);
	}
}
END_TEST

/* --- scale ---------------------------------------------------------------------- */

START_TEST(test_large)
{
	const uint32_t n = 1u << 20;
	struct ft_ring r;
	uint32_t out[64];
	uint64_t s = 12345;

	ck_assert_int_eq(ft_ring_init(&r, n, true, UINT64_C(0xdeadbeef)), 0);
	ck_assert_uint_eq(r.nin, n);
	ck_assert_uint_eq(ft_ring_max_targets(n), 40);
	for (uint32_t i = 0; i < 1000; i++) {
		uint32_t rank = (uint32_t)(test_rand(&s) % n);
		if (i % 3 == 0)
			ft_ring_remove(&r, rank);
		uint32_t succ = ft_ring_successor(&r, rank);
		uint32_t pred = ft_ring_predecessor(&r, rank);
		ck_assert(ft_ring_contains(&r, succ));
		ck_assert(ft_ring_contains(&r, pred));
		if (ft_ring_contains(&r, rank)) {
			ck_assert_uint_eq(ft_ring_predecessor(&r, succ), rank);
			ck_assert_uint_eq(ft_ring_successor(&r, pred), rank);
		}
		uint32_t far = ft_ring_step(&r, rank, (int64_t)test_rand(&s) % n);
		ck_assert(far == rank || ft_ring_contains(&r, far));
		for (size_t k = 0; k < ARRAY_SIZE(all_kinds); k++) {
			uint32_t got = ft_ring_bcast_targets(&r, rank, all_kinds[k], out, 64);
			ck_assert_uint_le(got, 40);
			for (uint32_t t = 0; t < got; t++)
				ck_assert(ft_ring_contains(&r, out[t]));
		}
	}
	ck_assert_uint_le(r.nin, n - 300);
	ft_ring_destroy(&r);
}
END_TEST

static Suite *ring_suite(void)
{
	Suite *s = suite_create("ring");
	TCase *tc_pos = tcase_create("positions");
	TCase *tc_step = tcase_create("steps");
	TCase *tc_bcast = tcase_create("bcast");
	TCase *tc_scale = tcase_create("scale");

	tcase_add_test(tc_pos, test_identity_succ_pred);
	tcase_add_test(tc_pos, test_shuffle_is_permutation);
	tcase_add_test(tc_pos, test_shuffle_seeded);
	tcase_add_test(tc_pos, test_shuffle_uniform);
	suite_add_tcase(s, tc_pos);

	tcase_add_test(tc_step, test_remove_skips);
	tcase_add_test(tc_step, test_insert_restores);
	tcase_add_test(tc_step, test_step_from_removed);
	tcase_add_test(tc_step, test_step_enumerates);
	tcase_add_test(tc_step, test_small_and_empty);
	tcase_set_timeout(tc_step, 60);
	suite_add_tcase(s, tc_step);

	tcase_add_test(tc_bcast, test_bcast_examples);
	tcase_add_test(tc_bcast, test_bcast_properties);
	tcase_add_test(tc_bcast, test_max_targets);
	tcase_add_test(tc_bcast, test_flooding);
	tcase_set_timeout(tc_bcast, 120);
	suite_add_tcase(s, tc_bcast);

	tcase_add_test(tc_scale, test_large);
	tcase_set_timeout(tc_scale, 120);
	suite_add_tcase(s, tc_scale);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(ring_suite());

	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
