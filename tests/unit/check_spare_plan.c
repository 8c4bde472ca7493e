/* check_spare_plan.c: unit tests for src/spare_plan.c: which spare takes
 * a failed program rank's place. */
#include "ftshim_config.h"

#include <check.h>
#include <errno.h>

#include "src/spare_plan.h"

/* 4 program ranks and 3 spares; hosts: {0,1,4} on host 1, {2,3,5,6} on
 * host 2. */
static const uint64_t hosts[] = { 1, 1, 2, 2, 1, 2, 2 };

START_TEST(test_start)
{
	struct ft_spare_plan p;
	bool alive[7] = { 1, 1, 1, 1, 1, 1, 1 };

	ck_assert_int_eq(ft_spare_plan_init(&p, 4, 3), 0);
	for (int32_t r = 0; r < 4; r++)
		ck_assert_int_eq(p.holder[r], r);
	ck_assert_int_eq(p.serving[4], -1);
	ck_assert_int_eq(ft_spare_plan_replace(&p, alive, hosts), 0);
	ck_assert_uint_eq(ft_spare_plan_spares_left(&p, alive), 3);
	ft_spare_plan_fini(&p);
}
END_TEST

/* Rank 1 (host 1) dies: spare 5, the lowest on host 2, takes it, not 4. */
START_TEST(test_other_host_first)
{
	struct ft_spare_plan p;
	bool alive[7] = { 1, 0, 1, 1, 1, 1, 1 };

	ft_spare_plan_init(&p, 4, 3);
	ck_assert_int_eq(ft_spare_plan_replace(&p, alive, hosts), 1);
	ck_assert_int_eq(p.holder[1], 5);
	ck_assert_int_eq(p.serving[5], 1);
	ck_assert_int_eq(p.serving[1], -1);
	ck_assert_uint_eq(p.replaced, 1);
	/* Rank 2 (host 2) dies next: 4 is on host 1. */
	alive[2] = false;
	ck_assert_int_eq(ft_spare_plan_replace(&p, alive, hosts), 1);
	ck_assert_int_eq(p.holder[2], 4);
	/* Rank 3 (host 2): only 6 is left, on the same host; taken anyway. */
	alive[3] = false;
	ck_assert_int_eq(ft_spare_plan_replace(&p, alive, hosts), 1);
	ck_assert_int_eq(p.holder[3], 6);
	ck_assert_uint_eq(ft_spare_plan_spares_left(&p, alive), 0);
	/* Rank 0 dies with no spare left: refused, the plan unchanged. */
	alive[0] = false;
	ck_assert_int_eq(ft_spare_plan_replace(&p, alive, hosts), -ENOSPC);
	ck_assert_int_eq(p.holder[0], 0);
	ck_assert_uint_eq(p.replaced, 3);
	ft_spare_plan_fini(&p);
}
END_TEST

/* A dead spare is never picked; a spare that took a rank and then died
 * is replaced like any program rank's process. Two deaths at once take
 * two spares, lowest rank first. */
START_TEST(test_dead_spares)
{
	struct ft_spare_plan p;
	bool alive[7] = { 1, 1, 1, 1, 1, 0, 1 };

	ft_spare_plan_init(&p, 4, 3);
	ck_assert_uint_eq(ft_spare_plan_spares_left(&p, alive), 2);
	alive[0] = alive[3] = false;
	ck_assert_int_eq(ft_spare_plan_replace(&p, alive, hosts), 2);
	ck_assert_int_eq(p.holder[0], 6); /* rank 0 on host 1: 6 is on host 2 */
	ck_assert_int_eq(p.holder[3], 4); /* rank 3 on host 2: 4 is on host 1 */
	alive[6] = false;
	ck_assert_int_eq(ft_spare_plan_replace(&p, alive, hosts), -ENOSPC);
	ck_assert_int_eq(p.holder[0], 6);
	ft_spare_plan_fini(&p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("spare_plan");
	TCase *tc = tcase_create("plan");
	tcase_add_test(tc, test_start);
	tcase_add_test(tc, test_other_host_first);
	tcase_add_test(tc, test_dead_spares);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
