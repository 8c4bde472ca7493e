/* check_rank_map.c: unit tests of src/rank_map.c. A reversed map of 4
 * program ranks onto a 6-rank communicator translates every rank both
 * ways; negative ranks (MPI's wildcards and null process) pass unchanged;
 * ranks past the program's become ranks past the MPI's; MPI ranks no
 * program rank addresses come back as -1; malformed maps are refused;
 * with two copies per program rank (replication), each copy is found by
 * slot, the lead is the first live one, and a copy's death empties its
 * slot and moves the rank that addressed it to the lead. */
#include "ftshim_config.h"

#include <check.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "src/rank_map.h"

START_TEST(test_both_ways)
{
	struct ft_rank_map m;
	const int32_t real_of[4] = { 5, 3, 1, 0 };

	ck_assert_int_eq(ft_rank_map_init(&m, real_of, 4, 6), 0);
	for (int32_t r = 0; r < 4; r++) {
		ck_assert_int_eq(ft_rank_map_in(&m, r), real_of[r]);
		ck_assert_int_eq(ft_rank_map_out(&m, real_of[r]), r);
	}
	/* MPI ranks 2 and 4 are nobody's in the program's view. */
	ck_assert_int_eq(ft_rank_map_out(&m, 2), -1);
	ck_assert_int_eq(ft_rank_map_out(&m, 4), -1);
	ck_assert_int_eq(ft_rank_map_out(&m, 6), -1);
	for (int32_t neg = -4; neg < 0; neg++) {
		ck_assert_int_eq(ft_rank_map_in(&m, neg), neg);
		ck_assert_int_eq(ft_rank_map_out(&m, neg), neg);
	}
	/* Past the end stays past the end, where the MPI refuses it. */
	ck_assert_int_eq(ft_rank_map_in(&m, 4), 6);
	ck_assert_int_eq(ft_rank_map_in(&m, 9), 11);
	ck_assert_int_eq(ft_rank_map_in(&m, INT32_MAX), INT32_MAX);
	ft_rank_map_fini(&m);
	ft_rank_map_fini(&m); /* twice is harmless */
}
END_TEST

START_TEST(test_refused)
{
	struct ft_rank_map m;
	const int32_t twice[3] = { 0, 2, 0 };
	const int32_t outside[2] = { 0, 3 };
	const int32_t negative[2] = { -1, 0 };

	ck_assert_int_eq(ft_rank_map_init(&m, twice, 3, 3), -EINVAL);
	ck_assert_ptr_null(m.real_of);
	ck_assert_int_eq(ft_rank_map_init(&m, outside, 2, 3), -EINVAL);
	ck_assert_int_eq(ft_rank_map_init(&m, negative, 2, 3), -EINVAL);
	/* An empty program view of an empty communicator is a map. */
	ck_assert_int_eq(ft_rank_map_init(&m, NULL, 0, 0), 0);
	ck_assert_int_eq(ft_rank_map_in(&m, 0), 0);
	ck_assert_int_eq(ft_rank_map_out(&m, 0), -1);
	ft_rank_map_fini(&m);
}
END_TEST

/* A replica's death moves a program rank to the surviving copy. */
START_TEST(test_retarget)
{
	struct ft_rank_map m;
	const int32_t real_of[3] = {4, 5, 0};

	ck_assert_int_eq(ft_rank_map_init(&m, real_of, 3, 6), 0);
	ck_assert_int_eq(ft_rank_map_retarget(&m, 1, 2), 0);
	ck_assert_int_eq(ft_rank_map_in(&m, 1), 2);
	ck_assert_int_eq(ft_rank_map_out(&m, 2), 1);
	ck_assert_int_eq(ft_rank_map_out(&m, 5), -1);
	ck_assert_int_eq(ft_rank_map_retarget(&m, 1, 2), 0); /* again: no change */
	ck_assert_int_eq(ft_rank_map_retarget(&m, 0, 0), -EINVAL); /* rank 2's */
	ck_assert_int_eq(ft_rank_map_retarget(&m, 3, 1), -EINVAL);
	ck_assert_int_eq(ft_rank_map_retarget(&m, 0, 6), -EINVAL);
	ck_assert_int_eq(ft_rank_map_in(&m, 0), 4);
	ft_rank_map_fini(&m);
}
END_TEST

/* Program ranks 0 and 1 with a primary and a replica, 2 with one copy;
 * this process (a replica) addresses the replicas. */
START_TEST(test_copies)
{
	struct ft_rank_map m;
	const int32_t real_of[3] = {3, 4, 2};
	const int32_t copies[6] = {0, 3, 1, 4, 2, -1};

	ck_assert_int_eq(ft_rank_map_init(&m, real_of, 3, 5), 0);
	ck_assert_int_eq(ft_rank_map_copy(&m, 1, 0), 4); /* no copies yet: real_of */
	ck_assert_int_eq(ft_rank_map_copy(&m, 1, 1), -1);
	ck_assert_int_eq(ft_rank_map_set_copies(&m, copies, 0), -EINVAL);
	const int32_t bad[6] = {0, 3, 1, 5, 2, -1};
	ck_assert_int_eq(ft_rank_map_set_copies(&m, bad, 2), -EINVAL);
	ck_assert_int_eq(ft_rank_map_set_copies(&m, copies, 2), 0);
	ck_assert_int_eq(ft_rank_map_copy(&m, 0, 0), 0);
	ck_assert_int_eq(ft_rank_map_copy(&m, 0, 1), 3);
	ck_assert_int_eq(ft_rank_map_copy(&m, 2, 1), -1);
	ck_assert_int_eq(ft_rank_map_copy(&m, 3, 0), -1);
	ck_assert_int_eq(ft_rank_map_copy(&m, 0, 2), -1);
	ck_assert_int_eq(ft_rank_map_lead(&m, 1), 1);
	/* Rank 1's replica (4), which this process addressed, dies: rank 1
	 * is its primary (1) from now on. */
	ck_assert_int_eq(ft_rank_map_forget(&m, 4), 1);
	ck_assert_int_eq(ft_rank_map_copy(&m, 1, 1), -1);
	ck_assert_int_eq(ft_rank_map_in(&m, 1), 1);
	ck_assert_int_eq(ft_rank_map_out(&m, 1), 1);
	ck_assert_int_eq(ft_rank_map_out(&m, 4), -1);
	/* Rank 0's primary (0), which this process did not address, dies:
	 * its replica leads and is still addressed. */
	ck_assert_int_eq(ft_rank_map_forget(&m, 0), 0);
	ck_assert_int_eq(ft_rank_map_lead(&m, 0), 3);
	ck_assert_int_eq(ft_rank_map_in(&m, 0), 3);
	/* A rank's last copy: no lead, the map still addresses it. */
	ck_assert_int_eq(ft_rank_map_forget(&m, 2), 2);
	ck_assert_int_eq(ft_rank_map_lead(&m, 2), -1);
	ck_assert_int_eq(ft_rank_map_in(&m, 2), 2);
	ck_assert_int_eq(ft_rank_map_forget(&m, 2), -1); /* no copy any more */
	ck_assert_int_eq(ft_rank_map_forget(&m, -1), -1);
	ft_rank_map_fini(&m);
	ck_assert_ptr_null(m.copy_of);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rank_map");
	TCase *tc = tcase_create("rank_map");

	tcase_add_test(tc, test_both_ways);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_retarget);
	tcase_add_test(tc, test_copies);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
