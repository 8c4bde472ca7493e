/* check_fdio.c: unit tests of src/fdio.c on a socket pair: a whole write
 * arrives whole; a read takes exactly what it asks, or discards it; the
 * other end's close and silence are errors, the last after the deadline;
 * a bad descriptor is its errno. */
#include "ftshim_config.h"

#include <check.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "src/clock.h"
#include "src/common.h"
#include "src/fdio.h"

static int sv[2];

static uint64_t in_ms(uint64_t ms)
{
	return ft_clock_now() + ms * FT_NSEC_PER_MSEC;
}

START_TEST(test_write_then_read)
{
	char big[100000], got[100000];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (char)(i * 7);
	/* More than the socket's buffer: the write waits for the reader. */
	if (fork() == 0) {
		_exit(ft_write_all(sv[0], big, sizeof big) == 0 ? 0 : 1);
	}
	ck_assert_int_eq(ft_read_by(sv[1], got, 10, in_ms(2000)), 0);
	ck_assert_int_eq(ft_read_by(sv[1], NULL, 1000, in_ms(2000)), 0); /* discarded */
	ck_assert_int_eq(ft_read_by(sv[1], got + 1010, sizeof got - 1010, in_ms(5000)), 0);
	ck_assert_mem_eq(got, big, 10);
	ck_assert_mem_eq(got + 1010, big + 1010, sizeof got - 1010);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

START_TEST(test_closed_and_silent)
{
	char b[8];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(ft_write_all(sv[0], "abc", 3), 0);
	uint64_t t0 = ft_clock_now();
	ck_assert_int_eq(ft_read_by(sv[1], b, 4, in_ms(50)), -ETIMEDOUT);
	ck_assert_uint_ge(ft_clock_now() - t0, 50 * FT_NSEC_PER_MSEC);
	close(sv[0]);
	ck_assert_int_eq(ft_read_by(sv[1], b, 1, in_ms(1000)), -EPROTO);
	close(sv[1]);
	ck_assert_int_eq(ft_write_all(-1, "x", 1), -EBADF);
	ck_assert_int_eq(ft_read_by(-1, b, 1, in_ms(10)), -ETIMEDOUT);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fdio");
	TCase *tc = tcase_create("io");

	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_write_then_read);
	tcase_add_test(tc, test_closed_and_silent);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
