/* check_proc_table.c: unit tests of src/proc_table.c, the table of world
 * ranks and the failure epoch. They check a fresh table (nothing failed,
 * epoch 0), marking a rank failed (first report wins and its details are
 * kept, the epoch and the failed count move by exactly one, repeated and
 * out-of-range marks change nothing), that a CLAIMED entry reads as alive,
 * ft_proc_failed_list (ascending ranks, total count even when the output
 * is shorter), and a race of four threads marking the same 1000 ranks
 * while a fifth reads: every rank ends FAILED exactly once, with the
 * details of the one winner, and the epoch is exactly 1000. */
#include "ftshim_config.h"

#include <check.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/proc_table.h"

START_TEST(test_init)
{
	struct ft_proc_table t;
	int32_t out[8];

	ck_assert_int_eq(ft_proc_table_init(&t, 8), 0);
	ck_assert_uint_eq(t.size, 8);
	ck_assert_uint_eq(ft_proc_epoch(&t), 0);
	ck_assert_uint_eq(atomic_load(&t.nfailed), 0);
	for (uint32_t r = 0; r < 8; r++) {
		ck_assert(!ft_proc_is_failed(&t, r));
		ck_assert_uint_eq(atomic_load(&t.procs[r].state), FT_PROC_ALIVE);
	}
	ck_assert_uint_eq(ft_proc_failed_list(&t, out, 8), 0);
	ft_proc_table_destroy(&t);
	ck_assert_ptr_null(t.procs);
	ck_assert_uint_eq(t.size, 0);
}
END_TEST

/* A crash is a death seen, by socket or by process; silence is not. */
START_TEST(test_how_is_crash)
{
	ck_assert(ft_how_is_crash(FT_HOW_CONN_LOST));
	ck_assert(ft_how_is_crash(FT_HOW_EXITED));
	ck_assert(!ft_how_is_crash(FT_HOW_HB_TIMEOUT));
	ck_assert(!ft_how_is_crash(FT_HOW_NOTICE));
	ck_assert(!ft_how_is_crash(FT_HOW_NONE));
}
END_TEST

START_TEST(test_init_empty)
{
	struct ft_proc_table t;
	int32_t out[1] = { -7 };

	ck_assert_int_eq(ft_proc_table_init(&t, 0), 0);
	ck_assert(!ft_proc_mark_failed(&t, 0, FT_HOW_CONN_LOST, -1, -1, 1));
	ck_assert(!ft_proc_is_failed(&t, 0));
	ck_assert_uint_eq(ft_proc_failed_list(&t, out, 1), 0);
	ck_assert_int_eq(out[0], -7);
	ck_assert_uint_eq(ft_proc_epoch(&t), 0);
	ft_proc_table_destroy(&t);
}
END_TEST

START_TEST(test_mark_failed)
{
	struct ft_proc_table t;

	ck_assert_int_eq(ft_proc_table_init(&t, 8), 0);
	ck_assert(ft_proc_mark_failed(&t, 3, FT_HOW_HB_TIMEOUT, 5, 5, UINT64_C(123456789)));
	ck_assert(ft_proc_is_failed(&t, 3));
	ck_assert(ft_proc_is_failed_sc(&t, 3));
	ck_assert(!ft_proc_is_failed_sc(&t, 8)); /* out of range */
	for (uint32_t r = 0; r < 8; r++)
		if (r != 3) {
			ck_assert(!ft_proc_is_failed(&t, r));
			ck_assert(!ft_proc_is_failed_sc(&t, r));
		}
	ck_assert_uint_eq(ft_proc_epoch(&t), 1);
	ck_assert_uint_eq(atomic_load(&t.nfailed), 1);
	ck_assert_uint_eq(atomic_load(&t.procs[3].state), FT_PROC_FAILED);
	ck_assert_uint_eq(t.procs[3].how, FT_HOW_HB_TIMEOUT);
	ck_assert_int_eq(t.procs[3].detector, 5);
	ck_assert_uint_eq(t.procs[3].learned_ns, UINT64_C(123456789));

	/* A second report of the same rank: no change, the first details stay. */
	ck_assert(!ft_proc_mark_failed(&t, 3, FT_HOW_NOTICE, 6, 6, UINT64_C(999)));
	ck_assert(ft_proc_is_failed(&t, 3));
	ck_assert_uint_eq(ft_proc_epoch(&t), 1);
	ck_assert_uint_eq(atomic_load(&t.nfailed), 1);
	ck_assert_uint_eq(t.procs[3].how, FT_HOW_HB_TIMEOUT);
	ck_assert_int_eq(t.procs[3].detector, 5);
	ck_assert_uint_eq(t.procs[3].learned_ns, UINT64_C(123456789));

	/* Another rank moves the epoch again. */
	ck_assert(ft_proc_mark_failed(&t, 0, FT_HOW_CONN_LOST, -1, -1, 7));
	ck_assert_uint_eq(ft_proc_epoch(&t), 2);
	ck_assert_uint_eq(atomic_load(&t.nfailed), 2);
	ck_assert_int_eq(t.procs[0].detector, -1);
	ck_assert_uint_eq(t.procs[0].how, FT_HOW_CONN_LOST);
	ck_assert(ft_proc_mark_failed(&t, 7, FT_HOW_NOTICE, 2, 2, 8));
	ck_assert_uint_eq(ft_proc_epoch(&t), 3);
	ft_proc_table_destroy(&t);
}
END_TEST

START_TEST(test_out_of_range)
{
	struct ft_proc_table t;

	ck_assert_int_eq(ft_proc_table_init(&t, 8), 0);
	ck_assert(!ft_proc_mark_failed(&t, 8, FT_HOW_CONN_LOST, 0, 0, 1));
	ck_assert(!ft_proc_mark_failed(&t, 1000, FT_HOW_CONN_LOST, 0, 0, 1));
	ck_assert(!ft_proc_mark_failed(&t, UINT32_MAX, FT_HOW_CONN_LOST, 0, 0, 1));
	ck_assert(!ft_proc_is_failed(&t, 8));
	ck_assert(!ft_proc_is_failed(&t, UINT32_MAX));
	ck_assert_uint_eq(ft_proc_epoch(&t), 0);
	ck_assert_uint_eq(atomic_load(&t.nfailed), 0);
	ft_proc_table_destroy(&t);
}
END_TEST

START_TEST(test_claimed_reads_alive)
{
	/* An entry some writer has claimed but not yet published. */
	struct ft_proc_table t;
	int32_t out[8];

	ck_assert_int_eq(ft_proc_table_init(&t, 8), 0);
	atomic_store(&t.procs[2].state, FT_PROC_CLAIMED);
	ck_assert(!ft_proc_is_failed(&t, 2));
	ck_assert_uint_eq(ft_proc_failed_list(&t, out, 8), 0);
	/* The claim is someone else's: this report does not win. */
	ck_assert(!ft_proc_mark_failed(&t, 2, FT_HOW_NOTICE, 1, 1, 1));
	ck_assert_uint_eq(ft_proc_epoch(&t), 0);
	ft_proc_table_destroy(&t);
}
END_TEST

START_TEST(test_failed_list)
{
	struct ft_proc_table t;
	int32_t out[8];

	ck_assert_int_eq(ft_proc_table_init(&t, 8), 0);
	/* Marked out of order; listed in ascending order. */
	ck_assert(ft_proc_mark_failed(&t, 6, FT_HOW_CONN_LOST, -1, -1, 1));
	ck_assert(ft_proc_mark_failed(&t, 1, FT_HOW_NOTICE, 0, 0, 2));
	ck_assert(ft_proc_mark_failed(&t, 4, FT_HOW_HB_TIMEOUT, 2, 2, 3));
	ck_assert(ft_proc_mark_failed(&t, 7, FT_HOW_CONN_LOST, 3, 3, 4));

	for (size_t i = 0; i < 8; i++)
		out[i] = -9;
	ck_assert_uint_eq(ft_proc_failed_list(&t, out, 8), 4);
	ck_assert_int_eq(out[0], 1);
	ck_assert_int_eq(out[1], 4);
	ck_assert_int_eq(out[2], 6);
	ck_assert_int_eq(out[3], 7);
	ck_assert_int_eq(out[4], -9);

	/* Room for two: the first two, and the total. */
	for (size_t i = 0; i < 8; i++)
		out[i] = -9;
	ck_assert_uint_eq(ft_proc_failed_list(&t, out, 2), 4);
	ck_assert_int_eq(out[0], 1);
	ck_assert_int_eq(out[1], 4);
	ck_assert_int_eq(out[2], -9);

	/* Room for none: just the count. */
	out[0] = -9;
	ck_assert_uint_eq(ft_proc_failed_list(&t, out, 0), 4);
	ck_assert_int_eq(out[0], -9);
	ft_proc_table_destroy(&t);
}
END_TEST

/* FTSHIM_READMIT: FAILED -> READMITTED -> FAILED, once; the order list
 * (what ULFM acknowledged) keeps the rank throughout. */
START_TEST(test_readmit)
{
	struct ft_proc_table t;
	int32_t out[4];

	ck_assert_int_eq(ft_proc_table_init(&t, 4), 0);
	ck_assert(!ft_proc_readmit(&t, 2)); /* alive: nothing to undo */
	ck_assert(ft_proc_mark_failed(&t, 2, FT_HOW_HB_TIMEOUT, 1, 1, 5));
	uint64_t epoch = ft_proc_epoch(&t);
	ck_assert(ft_proc_readmit(&t, 2));
	ck_assert_uint_gt(ft_proc_epoch(&t), epoch);
	ck_assert(!ft_proc_is_failed(&t, 2));
	ck_assert(ft_proc_ever_failed(&t, 2));
	ck_assert(!ft_proc_ever_failed(&t, 1));
	ck_assert_uint_eq(ft_proc_nfailed(&t), 1);
	ck_assert_int_eq(t.order[0], 2);
	ck_assert_uint_eq(ft_proc_failed_list(&t, out, 4), 0);
	ck_assert(!ft_proc_readmit(&t, 2));
	/* A re-admitted rank cannot be marked failed the first way again. */
	ck_assert(!ft_proc_mark_failed(&t, 2, FT_HOW_HB_TIMEOUT, 1, 1, 6));
	ck_assert(ft_proc_mark_failed_again(&t, 2));
	ck_assert(!ft_proc_mark_failed_again(&t, 2));
	ck_assert(ft_proc_is_failed(&t, 2));
	ck_assert_uint_eq(ft_proc_nfailed(&t), 1);
	ck_assert_uint_eq(ft_proc_failed_list(&t, out, 4), 1);
	ck_assert_int_eq(out[0], 2);
	/* The details are those of the first failure. */
	ck_assert_int_eq(t.procs[2].detector, 1);
	ck_assert_uint_eq(t.procs[2].learned_ns, 5);
	ck_assert(!ft_proc_readmit(&t, 9));
	ck_assert(!ft_proc_mark_failed_again(&t, 9));
	ft_proc_table_destroy(&t);
}
END_TEST

START_TEST(test_how_names)
{
	for (int h = 0; h < FT_HOW_COUNT; h++) {
		ck_assert_ptr_nonnull(ft_fail_how_names[h]);
		ck_assert(ft_fail_how_names[h][0] != '\0');
	}
	ck_assert_str_eq(ft_fail_how_names[FT_HOW_NONE], "unknown");
	ck_assert_str_eq(ft_fail_how_names[FT_HOW_HB_TIMEOUT], "heartbeat timeout");
}
END_TEST

/* --- the race ------------------------------------------------------------------ */

#define RACE_RANKS 1000
#define RACE_WRITERS 4
#define RACE_ROUNDS 20

struct race {
	struct ft_proc_table t;
	pthread_barrier_t start;
	_Atomic bool writers_done;
};

struct writer_arg {
	struct race *race;
	int id;
	uint32_t wins;
};

struct reader_arg {
	struct race *race;
	uint32_t bad_details; /* FAILED seen without its details */
	uint32_t epoch_back;  /* the epoch went backwards */
	uint32_t fewer_failed; /* an epoch was seen, then fewer FAILED entries */
};

/* Details that tie learned_ns to reported_by, so a mix of two writers'
 * details is detectable. */
static uint64_t race_learned(int32_t id)
{
	return UINT64_C(1000000) + (uint64_t)id * 7919;
}

static void *race_writer(void *p)
{
	struct writer_arg *a = p;
	struct ft_proc_table *t = &a->race->t;

	pthread_barrier_wait(&a->race->start);
	/* Half the writers go up, half down, to vary the contention. */
	for (uint32_t i = 0; i < RACE_RANKS; i++) {
		uint32_t r = a->id % 2 ? RACE_RANKS - 1 - i : i;
		if (ft_proc_mark_failed(t, r, (enum ft_fail_how)(1 + a->id % (FT_HOW_COUNT - 1)),
					a->id, a->id, race_learned(a->id)))
			a->wins++;
	}
	return NULL;
}

static void *race_reader(void *p)
{
	struct reader_arg *a = p;
	struct ft_proc_table *t = &a->race->t;
	uint64_t last_epoch = 0;

	pthread_barrier_wait(&a->race->start);
	do {
		uint64_t epoch = ft_proc_epoch(t);
		if (epoch < last_epoch)
			a->epoch_back++;
		last_epoch = epoch;
		uint32_t seen = 0;
		for (uint32_t r = 0; r < RACE_RANKS; r++) {
			if (!ft_proc_is_failed(t, r))
				continue;
			seen++;
			const struct ft_proc *e = &t->procs[r];
			if (e->detector < 0 || e->detector >= RACE_WRITERS ||
			    e->learned_ns != race_learned(e->detector) || e->how == FT_HOW_NONE)
				a->bad_details++;
		}
		/* Every change counted in the epoch read before the scan is
		 * visible to the scan. */
		if (seen < epoch)
			a->fewer_failed++;
	} while (!atomic_load(&a->race->writers_done));
	return NULL;
}

START_TEST(test_race_mark_same_ranks)
{
	for (int round = 0; round < RACE_ROUNDS; round++) {
		struct race race;
		struct writer_arg w[RACE_WRITERS];
		struct reader_arg rd = { .race = &race };
		pthread_t tw[RACE_WRITERS], tr;

		ck_assert_int_eq(ft_proc_table_init(&race.t, RACE_RANKS), 0);
		atomic_init(&race.writers_done, false);
		ck_assert_int_eq(pthread_barrier_init(&race.start, NULL, RACE_WRITERS + 1), 0);
		for (int i = 0; i < RACE_WRITERS; i++) {
			w[i] = (struct writer_arg){ .race = &race, .id = i, .wins = 0 };
			ck_assert_int_eq(pthread_create(&tw[i], NULL, race_writer, &w[i]), 0);
		}
		ck_assert_int_eq(pthread_create(&tr, NULL, race_reader, &rd), 0);
		uint32_t wins = 0;
		for (int i = 0; i < RACE_WRITERS; i++) {
			ck_assert_int_eq(pthread_join(tw[i], NULL), 0);
			wins += w[i].wins;
		}
		atomic_store(&race.writers_done, true);
		ck_assert_int_eq(pthread_join(tr, NULL), 0);
		pthread_barrier_destroy(&race.start);

		ck_assert_uint_eq(wins, RACE_RANKS);
		ck_assert_uint_eq(ft_proc_epoch(&race.t), RACE_RANKS);
		ck_assert_uint_eq(atomic_load(&race.t.nfailed), RACE_RANKS);
		ck_assert_uint_eq(rd.bad_details, 0);
		ck_assert_uint_eq(rd.epoch_back, 0);
		ck_assert_uint_eq(rd.fewer_failed, 0);
		for (uint32_t r = 0; r < RACE_RANKS; r++) {
			const struct ft_proc *e = &race.t.procs[r];
			ck_assert(ft_proc_is_failed(&race.t, r));
			ck_assert_uint_eq(atomic_load(&e->state), FT_PROC_FAILED);
			ck_assert_int_ge(e->detector, 0);
			ck_assert_int_lt(e->detector, RACE_WRITERS);
			/* All details from the one winner. */
			ck_assert_uint_eq(e->learned_ns, race_learned(e->detector));
			ck_assert_uint_eq(e->how, 1 + e->detector % (FT_HOW_COUNT - 1));
		}

		static int32_t list[RACE_RANKS];
		ck_assert_uint_eq(ft_proc_failed_list(&race.t, list, RACE_RANKS), RACE_RANKS);
		for (int32_t r = 0; r < RACE_RANKS; r++)
			ck_assert_int_eq(list[r], r);
		ft_proc_table_destroy(&race.t);
	}
}
END_TEST

static Suite *proc_table_suite(void)
{
	Suite *s = suite_create("proc_table");
	TCase *tc = tcase_create("core");
	TCase *tc_race = tcase_create("race");

	tcase_add_test(tc, test_init);
	tcase_add_test(tc, test_init_empty);
	tcase_add_test(tc, test_how_is_crash);
	tcase_add_test(tc, test_mark_failed);
	tcase_add_test(tc, test_out_of_range);
	tcase_add_test(tc, test_claimed_reads_alive);
	tcase_add_test(tc, test_failed_list);
	tcase_add_test(tc, test_how_names);
	tcase_add_test(tc, test_readmit);
	suite_add_tcase(s, tc);

	tcase_add_test(tc_race, test_race_mark_same_ranks);
	tcase_set_timeout(tc_race, 60);
	suite_add_tcase(s, tc_race);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(proc_table_suite());

	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
