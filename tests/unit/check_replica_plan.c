/* check_replica_plan.c: unit tests of src/replica_plan.c. FTSHIM_REPLICAS
 * values are accepted or refused with a line naming the value and what is
 * accepted; launches split into logical ranks and replicas by count and
 * by percentage, and impossible launches are refused naming the nearest
 * sizes that work; replicas are placed on other hosts than their
 * primaries as often as a plain matching allows (checked against one on
 * small random jobs), where taking the lowest free rank would not, and
 * quickly for a million ranks; plans are the same for the same inputs. */
#include "ftshim_config.h"

#include <check.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/replica_plan.h"

#define A 0xa
#define B 0xb
#define C 0xc

static void assert_contains(const char *text, const char *part)
{
	ck_assert_msg(strstr(text, part) != NULL, "'%s' lacks '%s'", text, part);
}

/* --- FTSHIM_REPLICAS ------------------------------------------------------ */

START_TEST(test_parse_accepts)
{
	static const struct {
		const char *text;
		uint32_t value;
		bool percent;
	} ok[] = {
		{ "", 0, false },
		{ "0", 0, false },
		{ "4", 4, false },
		{ "1048576", FT_REPLICAS_MAX, false },
		{ "1%", 1, true },
		{ "50%", 50, true },
		{ "100%", 100, true },
	};

	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		struct ft_replica_spec spec = { 99, true };
		char err[256] = "";

		ck_assert_msg(ft_replica_spec_parse(&ft_split_replicas, ok[i].text, &spec, err, sizeof err) == 0,
			      "'%s' refused: %s", ok[i].text, err);
		ck_assert_uint_eq(spec.value, ok[i].value);
		ck_assert(spec.percent == ok[i].percent);
	}
}
END_TEST

START_TEST(test_parse_refuses)
{
	static const char *const bad[] = {
		"abc", " 4", "4 ", "-1", "+4", "4.5", "4x", "0%", "101%", "%", "50%%", "%50",
		"1048577", "99999999999999999999", "12345678901%",
	};

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct ft_replica_spec spec;
		char err[256] = "";
		char named[64];

		ck_assert_msg(ft_replica_spec_parse(&ft_split_replicas, bad[i], &spec, err, sizeof err) == -EINVAL,
			      "'%s' accepted", bad[i]);
		snprintf(named, sizeof named, "FTSHIM_REPLICAS=%s:", bad[i]);
		ck_assert_msg(strncmp(err, named, strlen(named)) == 0, "'%s' does not start '%s'",
			      err, named);
		assert_contains(err, "count of replicas (0 to 1048576");
		assert_contains(err, "percentage of the logical ranks (1% to 100%");
		ck_assert_ptr_null(strchr(err, '\n'));
	}
}
END_TEST

/* --- splitting a launch --------------------------------------------------- */

static void assert_split(struct ft_replica_spec spec, uint32_t launched, uint32_t n, uint32_t r)
{
	uint32_t got_n = 99, got_r = 99;
	char err[256] = "";

	ck_assert_msg(ft_replica_split(&ft_split_replicas, &spec, launched, &got_n, &got_r, err, sizeof err) == 0,
		      "%u%s of %u refused: %s", spec.value, spec.percent ? "%" : "", launched, err);
	ck_assert_uint_eq(got_n, n);
	ck_assert_uint_eq(got_r, r);
}

static void assert_split_refused(struct ft_replica_spec spec, uint32_t launched, const char *want)
{
	uint32_t n, r;
	char err[256] = "";

	ck_assert_int_eq(ft_replica_split(&ft_split_replicas, &spec, launched, &n, &r, err, sizeof err), -EINVAL);
	ck_assert_str_eq(err, want);
}

START_TEST(test_split_count)
{
	const struct ft_replica_spec none = { 0, false }, four = { 4, false };

	assert_split(none, 8, 8, 0);
	assert_split(four, 8, 4, 4);
	assert_split(four, 9, 5, 4);
	assert_split(none, 0, 0, 0);
	assert_split_refused((struct ft_replica_spec){ 5, false }, 8,
			     "FTSHIM_REPLICAS=5 with 8 processes launched: 5 replicas need at "
			     "least 5 logical ranks, so launch 10 processes or more, or ask for "
			     "at most 4");
	assert_split_refused((struct ft_replica_spec){ 1, false }, 1,
			     "FTSHIM_REPLICAS=1 with 1 process launched: 1 replica needs at least "
			     "1 logical rank, so launch 2 processes or more");
}
END_TEST

/* Spares need no program rank each: only one program rank left. */
START_TEST(test_split_spares)
{
	uint32_t n = 99, k = 99;
	char err[256] = "";
	struct ft_replica_spec spec;

	ck_assert_int_eq(ft_replica_split(&ft_split_spares, &(struct ft_replica_spec){ 5, false }, 8,
					  &n, &k, err, sizeof err), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(k, 5);
	ck_assert_int_eq(ft_replica_split(&ft_split_spares, &(struct ft_replica_spec){ 25, true }, 5,
					  &n, &k, err, sizeof err), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(k, 1);
	ck_assert_int_eq(ft_replica_split(&ft_split_spares, &(struct ft_replica_spec){ 4, false }, 4,
					  &n, &k, err, sizeof err), -EINVAL);
	ck_assert_str_eq(err, "FTSHIM_SPARES=4 with 4 processes launched leaves no program rank, so "
			      "launch 5 processes or more, or ask for at most 3");
	ck_assert_int_eq(ft_replica_split(&ft_split_spares, &(struct ft_replica_spec){ 50, true }, 4,
					  &n, &k, err, sizeof err), -EINVAL);
	ck_assert_str_eq(err, "FTSHIM_SPARES=50% with 4 processes launched: n program ranks and 50% of "
			      "n as spares (rounded up) never make 4 processes; launch 3 (2 + 1) or 5 (3 + 2)");
	ck_assert_int_eq(ft_replica_spec_parse(&ft_split_spares, "x", &spec, err, sizeof err), -EINVAL);
	ck_assert_str_eq(err, "FTSHIM_SPARES=x: expected a count of spares (0 to 1048576, like 4) or a "
			      "percentage of the program ranks (1% to 100%, like 50%)");
}
END_TEST

START_TEST(test_split_percent)
{
	assert_split((struct ft_replica_spec){ 100, true }, 8, 4, 4);
	assert_split((struct ft_replica_spec){ 50, true }, 6, 4, 2);
	assert_split((struct ft_replica_spec){ 50, true }, 5, 3, 2);
	assert_split((struct ft_replica_spec){ 50, true }, 0, 0, 0);
	assert_split((struct ft_replica_spec){ 1, true }, 101, 100, 1);
	/* 1% of 101 rounds up to 2, so 102 processes fit no n. */
	assert_split((struct ft_replica_spec){ 1, true }, 103, 101, 2);
	assert_split_refused((struct ft_replica_spec){ 1, true }, 102,
			     "FTSHIM_REPLICAS=1% with 102 processes launched: n logical ranks and "
			     "1% of n as replicas (rounded up) never make 102 processes; launch "
			     "101 (100 + 1) or 103 (101 + 2)");
	assert_split_refused((struct ft_replica_spec){ 100, true }, 7,
			     "FTSHIM_REPLICAS=100% with 7 processes launched: n logical ranks and "
			     "100% of n as replicas (rounded up) never make 7 processes; launch "
			     "6 (3 + 3) or 8 (4 + 4)");
	assert_split_refused((struct ft_replica_spec){ 50, true }, 4,
			     "FTSHIM_REPLICAS=50% with 4 processes launched: n logical ranks and "
			     "50% of n as replicas (rounded up) never make 4 processes; launch "
			     "3 (2 + 1) or 5 (3 + 2)");
	/* One process cannot be split at any percentage: 1 + 1 is the least. */
	assert_split_refused((struct ft_replica_spec){ 10, true }, 1,
			     "FTSHIM_REPLICAS=10% with 1 process launched: n logical ranks and "
			     "10% of n as replicas (rounded up) never make 1 process; launch "
			     "2 (1 + 1)");
}
END_TEST

/* Every percentage and launch size up to 300 against a search of every n. */
START_TEST(test_split_percent_exhaustive)
{
	for (uint32_t p = 1; p <= 100; p++) {
		for (uint32_t launched = 0; launched <= 300; launched++) {
			struct ft_replica_spec spec = {p, true};
			uint32_t n, r, fits = 0, fit = 0;
			char err[256] = "";

			for (uint32_t i = 0; i <= launched; i++) {
				if (i + (i * p + 99) / 100 == launched) {
					fits++;
					fit = i;
				}
			}
			ck_assert_uint_le(fits, 1);
			int rc = ft_replica_split(&ft_split_replicas, &spec, launched, &n, &r, err, sizeof err);
			if (fits) {
				ck_assert_int_eq(rc, 0);
				ck_assert_uint_eq(n, fit);
				ck_assert_uint_eq(r, launched - fit);
				ck_assert_uint_le(r, n);
			} else {
				ck_assert_int_eq(rc, -EINVAL);
				ck_assert_msg(err[0] != '\0' && !strchr(err, '\n'), "%s", err);
			}
		}
	}
}
END_TEST

/* --- placement ------------------------------------------------------------ */

/* Without Check's per-assertion bookkeeping, for plans of a million. */
#define EXPECT(cond) \
	do { \
		if (!(cond)) \
			ck_abort_msg("line %d: %s", __LINE__, #cond); \
	} while (0)

/* A plan is well formed: logical_of and replica_of agree, every replica
 * serves a distinct logical rank, primaries serve themselves. Returns how
 * many replicas are on another host than their primary. */
static uint32_t check_plan(const struct ft_replica_plan *p, const uint32_t *host_of)
{
	uint32_t apart = 0, replicated = 0;

	for (uint32_t l = 0; l < p->n; l++) {
		EXPECT(p->logical_of[l] == (int32_t)l);
		int32_t k = p->replica_of[l];
		if (k < 0) {
			EXPECT(k == -1);
			continue;
		}
		replicated++;
		EXPECT((uint32_t)k >= p->n && (uint32_t)k < p->n + p->r);
		EXPECT(p->logical_of[k] == (int32_t)l);
	}
	EXPECT(replicated == p->r);
	for (uint32_t k = p->n; k < p->n + p->r; k++) {
		int32_t l = p->logical_of[k];
		EXPECT(l >= 0 && (uint32_t)l < p->n);
		EXPECT(p->replica_of[l] == (int32_t)k);
		apart += host_of[k] != host_of[l];
	}
	return apart;
}

START_TEST(test_one_host)
{
	struct ft_replica_plan p;
	uint32_t host_of[7] = { A, A, A, A, A, A, A };

	ck_assert_int_eq(ft_replica_plan_make(&p, 4, 3, host_of), 0);
	ck_assert_uint_eq(check_plan(&p, host_of), 0);
	for (uint32_t j = 0; j < 3; j++)
		ck_assert_int_eq(p.logical_of[4 + j], (int32_t)j);
	ck_assert_int_eq(p.replica_of[3], -1);
	ft_replica_plan_fini(&p);
}
END_TEST

START_TEST(test_two_hosts)
{
	struct ft_replica_plan p;
	const uint32_t host_of[8] = { A, A, A, A, B, B, B, B };

	ck_assert_int_eq(ft_replica_plan_make(&p, 4, 4, host_of), 0);
	ck_assert_uint_eq(check_plan(&p, host_of), 4);
	for (uint32_t j = 0; j < 4; j++)
		ck_assert_int_eq(p.logical_of[4 + j], (int32_t)j);
	ft_replica_plan_fini(&p);
}
END_TEST

/* Taking the lowest free logical rank off its host, replica 2 (on C)
 * would take 0 and leave replica 3 (on B) only 1, on B too; the
 * matching gives 2 rank 1 and 3 rank 0. Then a bigger job of the same
 * kind, where replicas must make room for each other in a chain. */
START_TEST(test_matching_beats_greedy)
{
	struct ft_replica_plan p;
	const uint32_t small[4] = { A, B, C, B };

	ck_assert_int_eq(ft_replica_plan_make(&p, 2, 2, small), 0);
	ck_assert_uint_eq(check_plan(&p, small), 2);
	ck_assert_int_eq(p.logical_of[2], 1);
	ck_assert_int_eq(p.logical_of[3], 0);
	ft_replica_plan_fini(&p);

	/* Logical 0-2 on A, 3-5 on B. Replicas 6-8, on C, come first and
	 * would take 0-2, which are all that replicas 9-11, on B, can take. */
	const uint32_t crowded[12] = { A, A, A, B, B, B, C, C, C, B, B, B };
	ck_assert_int_eq(ft_replica_plan_make(&p, 6, 6, crowded), 0);
	ck_assert_uint_eq(check_plan(&p, crowded), 6);
	for (uint32_t k = 9; k < 12; k++)
		ck_assert_int_lt(p.logical_of[k], 3);
	ft_replica_plan_fini(&p);
}
END_TEST

/* The most replicas apart a matching can place, by plain Kuhn. */
static bool kuhn_try(uint32_t n, const uint32_t *host_of, uint32_t k, int32_t *owner, bool *seen)
{
	for (uint32_t l = 0; l < n; l++) {
		if (seen[l] || host_of[l] == host_of[k])
			continue;
		seen[l] = true;
		if (owner[l] < 0 || kuhn_try(n, host_of, (uint32_t)owner[l], owner, seen)) {
			owner[l] = (int32_t)k;
			return true;
		}
	}
	return false;
}

static uint32_t kuhn_size(uint32_t n, uint32_t r, const uint32_t *host_of)
{
	int32_t owner[16];
	bool seen[16];
	uint32_t size = 0;

	for (uint32_t l = 0; l < n; l++)
		owner[l] = -1;
	for (uint32_t k = n; k < n + r; k++) {
		memset(seen, 0, sizeof seen);
		size += kuhn_try(n, host_of, k, owner, seen);
	}
	return size;
}

START_TEST(test_maximum_on_random_jobs)
{
	uint64_t state = 42;

	for (int round = 0; round < 20000; round++) {
		uint32_t host_of[32];
		state = state * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t n = 1 + (uint32_t)(state >> 33) % 16;
		uint32_t r = (uint32_t)(state >> 45) % (n + 1);
		uint32_t hosts = 1 + (uint32_t)(state >> 55) % 5;
		for (uint32_t k = 0; k < n + r; k++) {
			state = state * 6364136223846793005ull + 1442695040888963407ull;
			host_of[k] = (uint32_t)(state >> 40) % hosts;
		}
		struct ft_replica_plan p;
		ck_assert_int_eq(ft_replica_plan_make(&p, n, r, host_of), 0);
		ck_assert_uint_eq(check_plan(&p, host_of), kuhn_size(n, r, host_of));
		ft_replica_plan_fini(&p);
	}
}
END_TEST

START_TEST(test_deterministic)
{
	uint32_t host_of[40], copy[40];
	struct ft_replica_plan p, q;

	for (uint32_t k = 0; k < 40; k++)
		host_of[k] = (k * 7919u) % 5;
	memcpy(copy, host_of, sizeof copy);
	ck_assert_int_eq(ft_replica_plan_make(&p, 24, 16, host_of), 0);
	ck_assert_int_eq(ft_replica_plan_make(&q, 24, 16, copy), 0);
	ck_assert_mem_eq(p.replica_of, q.replica_of, 24 * sizeof *p.replica_of);
	ck_assert_mem_eq(p.logical_of, q.logical_of, 40 * sizeof *p.logical_of);
	ft_replica_plan_fini(&p);
	ft_replica_plan_fini(&q);
}
END_TEST

/* A million ranks, 64 to a host, half of them replicas; then all on one
 * host. Both must be quick and put every replica where it can. */
START_TEST(test_large)
{
	const uint32_t n = 1u << 19, r = 1u << 19;
	uint32_t *host_of = malloc((n + r) * sizeof *host_of);
	struct ft_replica_plan p;

	ck_assert_ptr_nonnull(host_of);
	for (uint32_t k = 0; k < n + r; k++)
		host_of[k] = k / 64;
	ck_assert_int_eq(ft_replica_plan_make(&p, n, r, host_of), 0);
	ck_assert_uint_eq(check_plan(&p, host_of), r);
	ft_replica_plan_fini(&p);
	for (uint32_t k = 0; k < n + r; k++)
		host_of[k] = 0;
	ck_assert_int_eq(ft_replica_plan_make(&p, n, r, host_of), 0);
	ck_assert_uint_eq(check_plan(&p, host_of), 0);
	ft_replica_plan_fini(&p);
	free(host_of);
}
END_TEST

START_TEST(test_helpers)
{
	struct ft_replica_plan p;
	const uint32_t host_of[6] = { A, A, B, B, B, A };

	ck_assert_int_eq(ft_replica_plan_make(&p, 4, 2, host_of), 0);
	ck_assert_uint_eq(check_plan(&p, host_of), 2);
	/* Replica 4 (B) takes 0 (A); replica 5 (A) takes 2 (B). */
	ck_assert_int_eq(p.logical_of[4], 0);
	ck_assert_int_eq(p.logical_of[5], 2);
	ck_assert_int_eq(ft_replica_plan_partner(&p, 0), 4);
	ck_assert_int_eq(ft_replica_plan_partner(&p, 4), 0);
	ck_assert_int_eq(ft_replica_plan_partner(&p, 2), 5);
	ck_assert_int_eq(ft_replica_plan_partner(&p, 5), 2);
	ck_assert_int_eq(ft_replica_plan_partner(&p, 1), -1);
	ck_assert_int_eq(ft_replica_plan_partner(&p, 3), -1);
	ck_assert_int_eq(ft_replica_plan_partner(&p, 6), -1);
	ck_assert_int_eq(ft_replica_plan_partner(&p, -1), -1);
	for (int32_t k = -1; k < 8; k++)
		ck_assert(ft_replica_plan_is_replica(&p, k) == (k == 4 || k == 5));
	ft_replica_plan_fini(&p);
}
END_TEST

START_TEST(test_refused_and_empty)
{
	struct ft_replica_plan p;
	const uint32_t host_of[5] = { A, B, A, B, A };

	memset(&p, 0, sizeof p);
	ft_replica_plan_fini(&p); /* a zeroed plan */
	ck_assert_int_eq(ft_replica_plan_make(&p, 2, 3, host_of), -EINVAL);
	ck_assert_ptr_null(p.replica_of);
	ck_assert_ptr_null(p.logical_of);
	ck_assert_int_eq(ft_replica_plan_make(&p, 2, 1, NULL), -EINVAL);
	ck_assert_int_eq(ft_replica_plan_make(&p, INT32_MAX, 1, host_of), -EINVAL);
	/* No replicas, or no ranks at all, is a plan. */
	ck_assert_int_eq(ft_replica_plan_make(&p, 5, 0, host_of), 0);
	ck_assert_uint_eq(check_plan(&p, host_of), 0);
	ck_assert_int_eq(ft_replica_plan_partner(&p, 0), -1);
	ck_assert(!ft_replica_plan_is_replica(&p, 4));
	ft_replica_plan_fini(&p);
	ck_assert_int_eq(ft_replica_plan_make(&p, 0, 0, NULL), 0);
	ft_replica_plan_fini(&p);
	ft_replica_plan_fini(&p); /* twice is harmless */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("replica_plan");
	TCase *tc_spec = tcase_create("spec");
	TCase *tc_plan = tcase_create("plan");

	tcase_add_test(tc_spec, test_parse_accepts);
	tcase_add_test(tc_spec, test_parse_refuses);
	tcase_add_test(tc_spec, test_split_count);
	tcase_add_test(tc_spec, test_split_percent);
	tcase_add_test(tc_spec, test_split_spares);
	tcase_add_test(tc_spec, test_split_percent_exhaustive);
	tcase_add_test(tc_plan, test_one_host);
	tcase_add_test(tc_plan, test_two_hosts);
	tcase_add_test(tc_plan, test_matching_beats_greedy);
	tcase_add_test(tc_plan, test_maximum_on_random_jobs);
	tcase_add_test(tc_plan, test_deterministic);
	tcase_add_test(tc_plan, test_large);
	tcase_add_test(tc_plan, test_helpers);
	tcase_add_test(tc_plan, test_refused_and_empty);
	suite_add_tcase(s, tc_spec);
	suite_add_tcase(s, tc_plan);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
