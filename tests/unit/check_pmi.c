/* check_pmi.c: unit tests of src/pmi.c against a fake Hydra proxy (the
 * other end of a socketpair): the finalize request is exactly the PMI-1
 * line, the acknowledgement is taken and nothing after it; a wrong answer,
 * a closed connection and silence are errors, the last after the timeout;
 * PMI_FD is read only when it is a plain number and not under Open MPI. */
#include "ftshim_config.h"

#include <check.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "src/clock.h"
#include "src/common.h"
#include "src/pmi.h"

static int sv[2]; /* sv[0]: the rank's end, sv[1]: the proxy's */

static void pair_open(void)
{
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
}

static void pair_close(void)
{
	close(sv[0]);
	close(sv[1]);
}

static void proxy_says(const char *s)
{
	ck_assert_int_eq(write(sv[1], s, strlen(s)), (ssize_t)strlen(s));
}

static void expect_request(void)
{
	char buf[64] = "";
	ssize_t n = read(sv[1], buf, sizeof buf - 1);

	ck_assert_int_eq(n, 13);
	ck_assert_str_eq(buf, "cmd=finalize\n");
}

START_TEST(test_acknowledged)
{
	pair_open();
	/* The answer may already wait, with something after it. */
	proxy_says("cmd=finalize_ack\nrest");
	ck_assert_int_eq(ft_pmi_finalize(sv[0], 1000), 0);
	expect_request();
	char rest[8] = "";
	ck_assert_int_eq(read(sv[0], rest, sizeof rest - 1), 4);
	ck_assert_str_eq(rest, "rest");
	pair_close();
}
END_TEST

START_TEST(test_wrong_answer)
{
	pair_open();
	proxy_says("cmd=barrier_out\n");
	ck_assert_int_eq(ft_pmi_finalize(sv[0], 1000), -EPROTO);
	pair_close();
}
END_TEST

START_TEST(test_closed)
{
	pair_open();
	proxy_says("cmd=fin");
	shutdown(sv[1], SHUT_WR);
	ck_assert_int_eq(ft_pmi_finalize(sv[0], 1000), -EPROTO);
	pair_close();
}
END_TEST

START_TEST(test_silence)
{
	pair_open();
	uint64_t t0 = ft_clock_now();
	ck_assert_int_eq(ft_pmi_finalize(sv[0], 50), -ETIMEDOUT);
	uint64_t took = ft_clock_now() - t0;
	ck_assert_uint_ge(took, 50 * FT_NSEC_PER_MSEC);
	ck_assert_uint_lt(took, 2000 * FT_NSEC_PER_MSEC);
	expect_request();
	pair_close();
}
END_TEST

START_TEST(test_bad_fd)
{
	ck_assert_int_eq(ft_pmi_finalize(-1, 10), -EBADF);
}
END_TEST

START_TEST(test_pmi_fd)
{
	unsetenv("OMPI_COMM_WORLD_RANK");
	unsetenv("PMI_FD");
	ck_assert_int_eq(ft_pmi_fd(), -1);
	setenv("PMI_FD", "7", 1);
	ck_assert_int_eq(ft_pmi_fd(), 7);
	const char *bad[] = { "", "x", "7x", "-1", "99999999999999999999", " 7" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		setenv("PMI_FD", bad[i], 1);
		ck_assert_int_eq(ft_pmi_fd(), -1);
	}
	setenv("PMI_FD", "7", 1);
	setenv("OMPI_COMM_WORLD_RANK", "0", 1);
	ck_assert_int_eq(ft_pmi_fd(), -1);
	unsetenv("OMPI_COMM_WORLD_RANK");
	unsetenv("PMI_FD");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pmi");
	TCase *tc = tcase_create("finalize");

	tcase_add_test(tc, test_acknowledged);
	tcase_add_test(tc, test_wrong_answer);
	tcase_add_test(tc, test_closed);
	tcase_add_test(tc, test_silence);
	tcase_add_test(tc, test_bad_fd);
	tcase_add_test(tc, test_pmi_fd);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
