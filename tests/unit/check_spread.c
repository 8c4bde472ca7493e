/* check_spread.c: unit tests of src/spread.c, the flood that carries a
 * revocation to every live member of a communicator. A small round-based
 * model runs one struct ft_spread per member: a message sent in round t
 * arrives in round t + 1 unless its receiver is dead by then; a member
 * forwards the news when it first gets it, and again (to new targets
 * only) when it learns of a failure. They check: the revoker alone and
 * the trivial sizes; that nothing goes to the sender itself, to a member
 * known dead, or twice to the same member; that with the dead set known
 * to all, every live member is reached within ceil(log2 m) rounds with
 * at most ceil(log2 m) messages per member (twice that for BMG), for
 * every dead set of at most half the members, every live revoker and
 * every kind, up to 12 members (the dead sets that cut the old forwarding
 * by member index among them), and for random sets at 1024 and 4096;
 * and that members dying while the news spreads, learned by each member
 * at its own random later time, still leave every survivor reached. */
#include "ftshim_config.h"

#include <check.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/spread.h"

static const enum ft_bcast_kind all_kinds[] = { FT_BCAST_CHORD, FT_BCAST_BMG, FT_BCAST_HYPERCUBE };
#define NKINDS (sizeof all_kinds / sizeof all_kinds[0])

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

	while ((UINT64_C(1) << c) < n)
		c++;
	return c;
}

/* --- the model ------------------------------------------------------------ */

struct msg {
	uint32_t to;
	uint32_t round; /* arrives then */
};

struct model {
	uint32_t n;
	enum ft_bcast_kind kind;
	struct ft_spread *s;      /* per member, once it has the news */
	bool *informed;
	uint32_t *dies_at;        /* the round a member dies, UINT32_MAX: never */
	uint32_t **learns_at;     /* learns_at[p][q]: when p learns q died */
	struct msg *q;            /* messages in flight */
	uint32_t nq, qcap;
	uint64_t sent, lost;
	uint32_t last_told;       /* the last round a member was told first */
	uint32_t *scratch;
};

static bool dead_at(const struct model *m, uint32_t p, uint32_t round)
{
	return m->dies_at[p] <= round;
}

static void model_init(struct model *m, uint32_t n, enum ft_bcast_kind kind)
{
	memset(m, 0, sizeof *m);
	m->n = n;
	m->kind = kind;
	m->s = calloc(n, sizeof *m->s);
	m->informed = calloc(n, sizeof *m->informed);
	m->dies_at = malloc(n * sizeof *m->dies_at);
	m->learns_at = calloc(n, sizeof *m->learns_at);
	m->qcap = 64;
	m->q = malloc(m->qcap * sizeof *m->q);
	m->scratch = malloc(ft_ring_max_targets(n) * sizeof *m->scratch + sizeof *m->scratch);
	ck_assert(m->s && m->informed && m->dies_at && m->learns_at && m->q && m->scratch);
	for (uint32_t p = 0; p < n; p++)
		m->dies_at[p] = UINT32_MAX;
}

static void model_fini(struct model *m)
{
	for (uint32_t p = 0; p < m->n; p++) {
		if (m->informed[p])
			ft_spread_destroy(&m->s[p]);
		free(m->learns_at[p]);
	}
	free(m->s);
	free(m->informed);
	free(m->dies_at);
	free(m->learns_at);
	free(m->q);
	free(m->scratch);
}

/* q is dead from round 0 and every member knows it from the start. */
static void model_dead_from_start(struct model *m, uint32_t q)
{
	m->dies_at[q] = 0;
}

/* When p learns that q died: from the start unless set otherwise. */
static uint32_t learns(const struct model *m, uint32_t p, uint32_t q)
{
	return m->learns_at[p] ? m->learns_at[p][q] : 0;
}

static void send_due(struct model *m, uint32_t p, uint32_t round)
{
	uint32_t k = ft_spread_due(&m->s[p], m->scratch, ft_ring_max_targets(m->n) + 1);

	for (uint32_t i = 0; i < k; i++) {
		uint32_t to = m->scratch[i];
		ck_assert_uint_ne(to, p);
		ck_assert_uint_lt(to, m->n);
		/* Never to a member this one knows dead. */
		ck_assert(!(m->dies_at[to] != UINT32_MAX && learns(m, p, to) <= round));
		if (m->nq == m->qcap) {
			m->qcap *= 2;
			m->q = realloc(m->q, m->qcap * sizeof *m->q);
			ck_assert_ptr_nonnull(m->q);
		}
		m->q[m->nq++] = (struct msg){ to, round + 1 };
		m->sent++;
	}
}

/* p now knows every death it has learned by round. */
static void apply_view(struct model *m, uint32_t p, uint32_t round)
{
	for (uint32_t q = 0; q < m->n; q++)
		if (m->dies_at[q] != UINT32_MAX && learns(m, p, q) <= round)
			ft_spread_failed(&m->s[p], q);
}

static void inform(struct model *m, uint32_t p, uint32_t round)
{
	ck_assert_int_eq(ft_spread_init(&m->s[p], m->n, p, m->kind), 0);
	m->informed[p] = true;
	apply_view(m, p, round);
	send_due(m, p, round);
}

/* Run from revoker at round 0 until no message is in flight and no
 * informed member has a death left to learn. Returns the last round. */
static uint32_t model_run(struct model *m, uint32_t revoker)
{
	uint32_t last_learn = 0;

	for (uint32_t p = 0; p < m->n; p++)
		for (uint32_t q = 0; q < m->n && m->learns_at[p]; q++)
			if (m->dies_at[q] != UINT32_MAX && m->learns_at[p][q] > last_learn)
				last_learn = m->learns_at[p][q];
	inform(m, revoker, 0);
	uint32_t round = 0;
	while (m->nq > 0 || round <= last_learn) {
		round++;
		/* Deliveries of this round; what they send goes out in the next. */
		uint32_t nq = m->nq, kept = 0;
		for (uint32_t i = 0; i < nq; i++) {
			struct msg g = m->q[i];
			if (g.round != round) {
				m->q[kept++] = g;
				continue;
			}
			if (dead_at(m, g.to, round)) {
				m->lost++;
				continue;
			}
			if (!m->informed[g.to]) {
				m->last_told = round;
				inform(m, g.to, round);
			}
		}
		/* inform() appended behind the first nq; keep those too. */
		memmove(m->q + kept, m->q + nq, (m->nq - nq) * sizeof *m->q);
		m->nq = kept + (m->nq - nq);
		/* Deaths learned this round make informed members send again. */
		for (uint32_t p = 0; p < m->n; p++) {
			if (!m->informed[p] || dead_at(m, p, round) || !m->learns_at[p])
				continue;
			bool changed = false;
			for (uint32_t q = 0; q < m->n; q++)
				if (m->dies_at[q] != UINT32_MAX && m->learns_at[p][q] == round)
					changed |= ft_spread_failed(&m->s[p], q);
			if (changed)
				send_due(m, p, round);
		}
		ck_assert_uint_lt(round, 100000);
	}
	return round;
}

static void expect_all_live_informed(const struct model *m)
{
	for (uint32_t p = 0; p < m->n; p++)
		if (m->dies_at[p] == UINT32_MAX)
			ck_assert_msg(m->informed[p], "n=%u kind=%d: live member %u never told", m->n, m->kind, p);
}

/* The dead set (bits of mask, n <= 32) known to all: everyone live is
 * told within ceil(log2 m) rounds, each member sending at most the
 * topology's number of targets. */
static void check_static(uint32_t n, uint32_t mask, uint32_t revoker, enum ft_bcast_kind kind)
{
	struct model m;
	uint32_t live = n;

	model_init(&m, n, kind);
	for (uint32_t q = 0; q < n; q++)
		if (mask & (1u << q)) {
			model_dead_from_start(&m, q);
			live--;
		}
	model_run(&m, revoker);
	expect_all_live_informed(&m);
	ck_assert_uint_eq(m.lost, 0);
	ck_assert_msg(m.last_told <= ceil_log2(live), "n=%u dead=%#x revoker=%u kind=%d: %u rounds", n,
		      mask, revoker, kind, m.last_told);
	uint64_t per = (kind == FT_BCAST_BMG ? 2 : 1) * (uint64_t)ceil_log2(live);
	ck_assert_uint_le(m.sent, per * live);
	model_fini(&m);
}

/* --- the tests ---------------------------------------------------------- */

START_TEST(test_init_errors)
{
	struct ft_spread s;

	ck_assert_int_eq(ft_spread_init(&s, 0, 0, FT_BCAST_CHORD), -EINVAL);
	ck_assert_int_eq(ft_spread_init(&s, 4, 4, FT_BCAST_CHORD), -EINVAL);
}
END_TEST

START_TEST(test_alone_and_pairs)
{
	struct ft_spread s;
	uint32_t out[8];

	ck_assert_int_eq(ft_spread_init(&s, 1, 0, FT_BCAST_CHORD), 0);
	ck_assert_uint_eq(ft_spread_due(&s, out, 8), 0);
	ft_spread_destroy(&s);

	ck_assert_int_eq(ft_spread_init(&s, 2, 1, FT_BCAST_CHORD), 0);
	ck_assert_uint_eq(ft_spread_due(&s, out, 8), 1);
	ck_assert_uint_eq(out[0], 0);
	ck_assert_uint_eq(ft_spread_due(&s, out, 8), 0); /* sent already */
	ck_assert(!ft_spread_failed(&s, 1));              /* itself */
	ck_assert(!ft_spread_failed(&s, 2));              /* out of range */
	ck_assert(ft_spread_failed(&s, 0));
	ck_assert(!ft_spread_failed(&s, 0));              /* known already */
	ck_assert_uint_eq(ft_spread_due(&s, out, 8), 0);
	ft_spread_destroy(&s);
}
END_TEST

/* The first pattern that stranded a survivor: 6 members, 1, 3 and 4
 * dead, revoker 0. Index distances 1, 2, 4 from 0 reach only 2, whose
 * own reach 3, 4 and 0: 5 was never told. Over the live members (0, 2,
 * 5) member 0 sends to 2 and 5 directly. */
START_TEST(test_worked_example)
{
	struct ft_spread s;
	uint32_t out[8];

	ck_assert_int_eq(ft_spread_init(&s, 6, 0, FT_BCAST_CHORD), 0);
	ft_spread_failed(&s, 1);
	ft_spread_failed(&s, 3);
	ft_spread_failed(&s, 4);
	uint32_t k = ft_spread_due(&s, out, 8);
	ck_assert_uint_eq(k, 2);
	ck_assert_uint_eq(out[0], 2);
	ck_assert_uint_eq(out[1], 5);
	ft_spread_destroy(&s);
}
END_TEST

/* Learning a failure later sends only to the targets that are new. */
START_TEST(test_resend_only_new)
{
	struct ft_spread s;
	uint32_t out[8];

	ck_assert_int_eq(ft_spread_init(&s, 8, 0, FT_BCAST_CHORD), 0);
	ck_assert_uint_eq(ft_spread_due(&s, out, 8), 3); /* 1, 2, 4 */
	ck_assert(ft_spread_failed(&s, 1));
	/* Live 0 2 3 4 5 6 7: distances 1, 2, 4 are 2, 3, 5; 3 and 5 new. */
	uint32_t k = ft_spread_due(&s, out, 8);
	ck_assert_uint_eq(k, 2);
	ck_assert_uint_eq(out[0], 3);
	ck_assert_uint_eq(out[1], 5);
	/* Live 0 3 4 5 6 7: distances 1, 2, 4 are 3, 4, 6; only 6 is new. */
	ck_assert(ft_spread_failed(&s, 2));
	ck_assert_uint_eq(ft_spread_due(&s, out, 8), 1);
	ck_assert_uint_eq(out[0], 6);
	ck_assert_uint_eq(ft_spread_due(&s, out, 8), 0);
	ft_spread_destroy(&s);

	/* Truncated at max: the rest comes next time. */
	ck_assert_int_eq(ft_spread_init(&s, 8, 0, FT_BCAST_CHORD), 0);
	ck_assert_uint_eq(ft_spread_due(&s, out, 2), 2);
	ck_assert_uint_eq(out[0], 1);
	ck_assert_uint_eq(out[1], 2);
	ck_assert_uint_eq(ft_spread_due(&s, out, 8), 1);
	ck_assert_uint_eq(out[0], 4);
	ft_spread_destroy(&s);
}
END_TEST

/* Every dead set of at most half the members, every live revoker, every
 * kind, n = 1..12 (n = 12: 2510 dead sets). */
START_TEST(test_exhaustive_small)
{
	uint32_t n = (uint32_t)_i;

	for (uint32_t mask = 0; mask < (1u << n); mask++) {
		if ((uint32_t)__builtin_popcount(mask) > n / 2)
			continue;
		for (uint32_t r = 0; r < n; r++) {
			if (mask & (1u << r))
				continue;
			for (size_t k = 0; k < NKINDS; k++)
				check_static(n, mask, r, all_kinds[k]);
		}
	}
}
END_TEST

/* Random dead sets (up to half) and revokers at 1024 and 4096 members. */
START_TEST(test_random_large)
{
	static const uint32_t sizes[] = { 1024, 4096 };
	uint64_t seed = 0x5eed0f5eedull;

	for (size_t si = 0; si < 2; si++) {
		uint32_t n = sizes[si];
		for (int trial = 0; trial < 12; trial++) {
			struct model m;
			enum ft_bcast_kind kind = all_kinds[trial % NKINDS];
			uint32_t ndead = (uint32_t)(test_rand(&seed) % (n / 2 + 1)), live = n - ndead;
			model_init(&m, n, kind);
			for (uint32_t d = 0; d < ndead;) {
				uint32_t q = (uint32_t)(test_rand(&seed) % n);
				if (m.dies_at[q] == UINT32_MAX) {
					model_dead_from_start(&m, q);
					d++;
				}
			}
			uint32_t r;
			do
				r = (uint32_t)(test_rand(&seed) % n);
			while (m.dies_at[r] != UINT32_MAX);
			model_run(&m, r);
			expect_all_live_informed(&m);
			ck_assert_uint_le(m.last_told, ceil_log2(live));
			uint64_t per = (kind == FT_BCAST_BMG ? 2 : 1) * (uint64_t)ceil_log2(live);
			ck_assert_uint_le(m.sent, per * live);
			model_fini(&m);
		}
	}
}
END_TEST

/* Members die while it spreads, at rounds 0..3, and each survivor learns
 * of each death 1 to 8 rounds later, in its own order; some dead were
 * known to all from the start. Every survivor is still told. */
START_TEST(test_deaths_while_spreading)
{
	static const uint32_t sizes[] = { 5, 8, 12, 33, 256, 1024 };
	uint64_t seed = 0xd1e5d1e5ull;

	for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
		uint32_t n = sizes[si];
		int trials = n <= 33 ? 300 : 20;
		for (int trial = 0; trial < trials; trial++) {
			struct model m;
			model_init(&m, n, all_kinds[trial % NKINDS]);
			uint32_t r = (uint32_t)(test_rand(&seed) % n);
			uint32_t ndead = 1 + (uint32_t)(test_rand(&seed) % (n / 2));
			for (uint32_t d = 0; d < ndead;) {
				uint32_t q = (uint32_t)(test_rand(&seed) % n);
				if (q == r || m.dies_at[q] != UINT32_MAX)
					continue;
				/* A third dead from the start, the rest during. */
				m.dies_at[q] = test_rand(&seed) % 3 == 0 ? 0 : (uint32_t)(test_rand(&seed) % 4);
				d++;
			}
			for (uint32_t p = 0; p < n; p++) {
				m.learns_at[p] = malloc(n * sizeof **m.learns_at);
				ck_assert_ptr_nonnull(m.learns_at[p]);
				for (uint32_t q = 0; q < n; q++) {
					if (m.dies_at[q] == UINT32_MAX)
						m.learns_at[p][q] = UINT32_MAX;
					else if (m.dies_at[q] == 0 && test_rand(&seed) % 2)
						m.learns_at[p][q] = 0;
					else
						m.learns_at[p][q] = m.dies_at[q] + 1 + (uint32_t)(test_rand(&seed) % 8);
				}
			}
			model_run(&m, r);
			expect_all_live_informed(&m);
			model_fini(&m);
		}
	}
}
END_TEST

static Suite *spread_suite(void)
{
	Suite *s = suite_create("spread");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_init_errors);
	tcase_add_test(tc, test_alone_and_pairs);
	tcase_add_test(tc, test_worked_example);
	tcase_add_test(tc, test_resend_only_new);
	tcase_add_loop_test(tc, test_exhaustive_small, 1, 13);
	tcase_add_test(tc, test_random_large);
	tcase_add_test(tc, test_deaths_while_spreading);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(spread_suite());

	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
