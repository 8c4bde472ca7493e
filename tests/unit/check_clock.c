/* check_clock.c: unit tests of src/clock.c, ftshim's one clock. They check
 * that ft_clock_now reads CLOCK_MONOTONIC in nanoseconds (it agrees with a
 * direct clock_gettime, never goes backwards and advances across a sleep),
 * that ft_clock_set_source replaces it with a fake function whose value
 * ft_clock_now then returns, and that ft_clock_set_source(NULL) brings the
 * real clock back. */
#include "ftshim_config.h"

#include <check.h>

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "src/clock.h"

#define NSEC_PER_SEC 1000000000ull
#define NSEC_PER_MSEC 1000000ull

static uint64_t direct_monotonic(void)
{
	struct timespec ts;

	ck_assert_int_eq(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / NSEC_PER_SEC),
			       .tv_nsec = (long)(ns % NSEC_PER_SEC) };

	while (nanosleep(&ts, &ts) != 0)
		;
}

static uint64_t fake_value;

static uint64_t fake_clock(void)
{
	return fake_value;
}

static uint64_t other_fake_clock(void)
{
	return 777;
}

START_TEST(test_real_clock_is_monotonic_ns)
{
	/* Sandwiched between two direct readings of CLOCK_MONOTONIC. */
	uint64_t before = direct_monotonic();
	uint64_t now = ft_clock_now();
	uint64_t after = direct_monotonic();

	ck_assert_uint_le(before, now);
	ck_assert_uint_le(now, after);
	ck_assert_uint_gt(now, 0);
}
END_TEST

START_TEST(test_never_goes_backwards)
{
	uint64_t prev = ft_clock_now();

	for (int i = 0; i < 100000; i++) {
		uint64_t now = ft_clock_now();
		ck_assert_uint_ge(now, prev);
		prev = now;
	}
}
END_TEST

START_TEST(test_advances_across_sleep)
{
	uint64_t t0 = ft_clock_now();

	sleep_ns(5 * NSEC_PER_MSEC);
	uint64_t t1 = ft_clock_now();
	/* At least the 5 ms slept (so the unit is ns, not us or ms), and not
	 * absurdly more (so it is not scaled up either). */
	ck_assert_uint_ge(t1 - t0, 5 * NSEC_PER_MSEC);
	ck_assert_uint_lt(t1 - t0, 2 * NSEC_PER_SEC);
}
END_TEST

START_TEST(test_fake_source_is_used)
{
	fake_value = 42;
	ft_clock_set_source(fake_clock);
	ck_assert_uint_eq(ft_clock_now(), 42);
	ck_assert_uint_eq(ft_clock_now(), 42);

	/* The fake is called on every read, not sampled once. */
	fake_value = UINT64_C(123456789012);
	ck_assert_uint_eq(ft_clock_now(), UINT64_C(123456789012));

	/* A fake may even go backwards; the clock passes it through. */
	fake_value = 5;
	ck_assert_uint_eq(ft_clock_now(), 5);

	/* Replacing one fake with another. */
	ft_clock_set_source(other_fake_clock);
	ck_assert_uint_eq(ft_clock_now(), 777);

	ft_clock_set_source(NULL);
}
END_TEST

START_TEST(test_null_restores_real_clock)
{
	fake_value = 1;
	ft_clock_set_source(fake_clock);
	ck_assert_uint_eq(ft_clock_now(), 1);

	ft_clock_set_source(NULL);
	uint64_t before = direct_monotonic();
	uint64_t now = ft_clock_now();
	uint64_t after = direct_monotonic();
	ck_assert_uint_le(before, now);
	ck_assert_uint_le(now, after);

	/* And it is live again: it moves across a sleep. */
	sleep_ns(2 * NSEC_PER_MSEC);
	ck_assert_uint_ge(ft_clock_now() - now, 2 * NSEC_PER_MSEC);
}
END_TEST

static Suite *clock_suite(void)
{
	Suite *s = suite_create("clock");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_real_clock_is_monotonic_ns);
	tcase_add_test(tc, test_never_goes_backwards);
	tcase_add_test(tc, test_advances_across_sleep);
	tcase_add_test(tc, test_fake_source_is_used);
	tcase_add_test(tc, test_null_restores_real_clock);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(clock_suite());

	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
