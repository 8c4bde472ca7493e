/* check_log.c: unit tests of src/log.c, ftshim's logger. They check
 * ft_log_expand_path (%r, %p, %h, %%, unknown sequences, a buffer too
 * small), ft_log_format with a fake clock (the exact line
 * "ftshim[RANK] +S.UUUUUU level: message\n", the "?" of an unknown rank,
 * cutting an over-long line to FT_LOG_LINE_MAX-1 characters ending in
 * "...\n"), ft_log_enabled against the level, ft_log end to end through a
 * pipe (only lines at or above the level arrive, one write per line, the
 * logger owns and closes its fd), and ft_log_open_file (a file is created
 * and appended to; a path in a missing directory fails with a message
 * naming "open"). */
#include "ftshim_config.h"

#include <check.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/clock.h"
#include "src/log.h"

#define SEC UINT64_C(1000000000)

static uint64_t fake_now;

static uint64_t fake_clock(void)
{
	return fake_now;
}

static size_t format_line(char *buf, size_t buflen, enum ft_log_level level, const char *fmt, ...)
	FT_PRINTF(4, 5);

static size_t format_line(char *buf, size_t buflen, enum ft_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	size_t len = ft_log_format(buf, buflen, level, fmt, ap);
	va_end(ap);
	return len;
}

/* Put the logger back as a fresh process has it. */
static void reset_logger(void)
{
	ft_log_set_fd(2);
	ft_log_set_level(FT_LOG_INFO);
	ft_log_set_rank(-1);
	ft_log_set_origin(0);
	ft_clock_set_source(NULL);
}

/* Read fd to EOF into buf (NUL-terminated); returns the length. */
static size_t read_all(int fd, char *buf, size_t buflen)
{
	size_t used = 0;

	for (;;) {
		ck_assert_uint_lt(used, buflen - 1);
		ssize_t n = read(fd, buf + used, buflen - 1 - used);
		if (n < 0 && errno == EINTR)
			continue;
		ck_assert_int_ge(n, 0);
		if (n == 0)
			break;
		used += (size_t)n;
	}
	buf[used] = '\0';
	return used;
}

static size_t count_char(const char *s, char c)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == c;
	return n;
}

static bool fd_is_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1 || errno != EBADF;
}

/* --- ft_log_expand_path -------------------------------------------------- */

START_TEST(test_expand_rank)
{
	char out[256];

	ck_assert_int_eq(ft_log_expand_path("/tmp/x.%r", 3, out, sizeof out), 0);
	ck_assert_str_eq(out, "/tmp/x.3");
	ck_assert_int_eq(ft_log_expand_path("/tmp/%r/x.%r.log", 1234, out, sizeof out), 0);
	ck_assert_str_eq(out, "/tmp/1234/x.1234.log");
	ck_assert_int_eq(ft_log_expand_path("plain", 3, out, sizeof out), 0);
	ck_assert_str_eq(out, "plain");
	ck_assert_int_eq(ft_log_expand_path("", 3, out, sizeof out), 0);
	ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(test_expand_percent)
{
	char out[256];

	ck_assert_int_eq(ft_log_expand_path("%%", 0, out, sizeof out), 0);
	ck_assert_str_eq(out, "%");
	ck_assert_int_eq(ft_log_expand_path("a%%b%%%%c", 0, out, sizeof out), 0);
	ck_assert_str_eq(out, "a%b%%c");
	/* %%r is a percent sign then an r, not a rank. */
	ck_assert_int_eq(ft_log_expand_path("x%%r", 9, out, sizeof out), 0);
	ck_assert_str_eq(out, "x%r");
}
END_TEST

START_TEST(test_expand_pid_and_host)
{
	char out[512], expect[512], host[256];

	ck_assert_int_eq(ft_log_expand_path("%p", 0, out, sizeof out), 0);
	snprintf(expect, sizeof expect, "%ld", (long)getpid());
	ck_assert_str_eq(out, expect);

	ck_assert_int_eq(gethostname(host, sizeof host), 0);
	host[sizeof host - 1] = '\0';
	ck_assert_int_eq(ft_log_expand_path("%h", 0, out, sizeof out), 0);
	ck_assert_str_eq(out, host);

	ck_assert_int_eq(ft_log_expand_path("/var/log/%h-%p-%r.log", 5, out, sizeof out), 0);
	snprintf(expect, sizeof expect, "/var/log/%s-%ld-5.log", host, (long)getpid());
	ck_assert_str_eq(out, expect);
}
END_TEST

START_TEST(test_expand_bad_sequence)
{
	char out[256];

	ck_assert_int_eq(ft_log_expand_path("%q", 0, out, sizeof out), -EINVAL);
	ck_assert_int_eq(ft_log_expand_path("/tmp/x.%d", 0, out, sizeof out), -EINVAL);
	ck_assert_int_eq(ft_log_expand_path("/tmp/x.%R", 0, out, sizeof out), -EINVAL);
	/* A lone % at the end. */
	ck_assert_int_eq(ft_log_expand_path("/tmp/x.%", 0, out, sizeof out), -EINVAL);
}
END_TEST

START_TEST(test_expand_too_long)
{
	char out[16];

	/* "/tmp/x.3" is 8 characters: 9 bytes with the NUL. */
	memset(out, 'Q', sizeof out);
	ck_assert_int_eq(ft_log_expand_path("/tmp/x.%r", 3, out, 8), -ENAMETOOLONG);
	for (size_t i = 8; i < sizeof out; i++)
		ck_assert_int_eq(out[i], 'Q');
	ck_assert_int_eq(ft_log_expand_path("/tmp/x.%r", 3, out, 9), 0);
	ck_assert_str_eq(out, "/tmp/x.3");
	/* The expansion, not the template, is what must fit. */
	ck_assert_int_eq(ft_log_expand_path("%r", 123456789, out, 9), -ENAMETOOLONG);
	ck_assert_int_eq(ft_log_expand_path("%r", 12345678, out, 9), 0);
	ck_assert_str_eq(out, "12345678");
	ck_assert_int_eq(ft_log_expand_path("x", 0, out, 1), -ENAMETOOLONG);
}
END_TEST

/* --- ft_log_format ---------------------------------------------------------- */

START_TEST(test_format_exact_line)
{
	char buf[FT_LOG_LINE_MAX];
	const char *expect = "ftshim[5] +1.500000 warn: hello 42\n";

	fake_now = 1000 * SEC;
	ft_clock_set_source(fake_clock);
	ft_log_set_rank(5);
	ft_log_set_origin(fake_now - 1500000000u);

	size_t len = format_line(buf, sizeof buf, FT_LOG_WARN, "hello %d", 42);
	ck_assert_str_eq(buf, expect);
	ck_assert_uint_eq(len, strlen(expect));
	reset_logger();
}
END_TEST

START_TEST(test_format_unknown_rank)
{
	char buf[FT_LOG_LINE_MAX];

	fake_now = 1000 * SEC;
	ft_clock_set_source(fake_clock);
	ft_log_set_rank(-1);
	ft_log_set_origin(fake_now - 1500000000u);
	format_line(buf, sizeof buf, FT_LOG_WARN, "hello %d", 42);
	ck_assert_str_eq(buf, "ftshim[?] +1.500000 warn: hello 42\n");
	reset_logger();
}
END_TEST

START_TEST(test_format_times_and_levels)
{
	char buf[FT_LOG_LINE_MAX];

	fake_now = 500 * SEC;
	ft_clock_set_source(fake_clock);
	ft_log_set_rank(0);
	/* Microseconds, truncated: 2.001234567 s prints as 2.001234. */
	ft_log_set_origin(fake_now - (2 * SEC + 1234567));
	format_line(buf, sizeof buf, FT_LOG_ERROR, "x");
	ck_assert_str_eq(buf, "ftshim[0] +2.001234 error: x\n");

	ft_log_set_origin(fake_now - 123 * SEC);
	format_line(buf, sizeof buf, FT_LOG_INFO, "%s=%u", "n", 7u);
	ck_assert_str_eq(buf, "ftshim[0] +123.000000 info: n=7\n");

	/* Before the origin is set, times are 0. */
	ft_log_set_origin(0);
	format_line(buf, sizeof buf, FT_LOG_DEBUG, "y");
	ck_assert_str_eq(buf, "ftshim[0] +0.000000 debug: y\n");

	ft_log_set_origin(fake_now - 1);
	ft_log_set_rank(65535);
	format_line(buf, sizeof buf, FT_LOG_TRACE, "z");
	ck_assert_str_eq(buf, "ftshim[65535] +0.000000 trace: z\n");
	reset_logger();
}
END_TEST

START_TEST(test_format_long_line_is_cut)
{
	static char msg[4 * FT_LOG_LINE_MAX];
	char buf[FT_LOG_LINE_MAX];
	const char *prefix = "ftshim[5] +1.500000 warn: ";

	fake_now = 1000 * SEC;
	ft_clock_set_source(fake_clock);
	ft_log_set_rank(5);
	ft_log_set_origin(fake_now - 1500000000u);
	memset(msg, 'm', sizeof msg - 1);
	msg[sizeof msg - 1] = '\0';

	memset(buf, 'Q', sizeof buf);
	size_t len = format_line(buf, sizeof buf, FT_LOG_WARN, "%s", msg);
	ck_assert_uint_eq(len, FT_LOG_LINE_MAX - 1);
	ck_assert_uint_eq(strlen(buf), FT_LOG_LINE_MAX - 1);
	ck_assert_int_eq(strncmp(buf, prefix, strlen(prefix)), 0);
	ck_assert_str_eq(buf + len - 4, "...\n");
	ck_assert_int_eq(buf[len - 5], 'm');
	ck_assert_uint_eq(count_char(buf, '\n'), 1);
	reset_logger();
}
END_TEST

START_TEST(test_format_line_that_just_fits)
{
	/* A line of exactly FT_LOG_LINE_MAX-1 characters with its newline is
	 * not cut. */
	static char msg[FT_LOG_LINE_MAX];
	char buf[FT_LOG_LINE_MAX];
	const char *prefix = "ftshim[5] +1.500000 warn: ";
	size_t mlen = FT_LOG_LINE_MAX - 2 - strlen(prefix);

	fake_now = 1000 * SEC;
	ft_clock_set_source(fake_clock);
	ft_log_set_rank(5);
	ft_log_set_origin(fake_now - 1500000000u);
	memset(msg, 'a', mlen);
	msg[mlen] = '\0';
	size_t len = format_line(buf, sizeof buf, FT_LOG_WARN, "%s", msg);
	ck_assert_uint_eq(len, FT_LOG_LINE_MAX - 1);
	ck_assert_str_eq(buf + len - 4, "aaa\n");
	ck_assert_ptr_null(strstr(buf, "..."));
	reset_logger();
}
END_TEST

START_TEST(test_format_small_buffer)
{
	char buf[64];

	fake_now = 1000 * SEC;
	ft_clock_set_source(fake_clock);
	ft_log_set_rank(5);
	ft_log_set_origin(fake_now - 1500000000u);
	memset(buf, 'Q', sizeof buf);
	size_t len = format_line(buf, 32, FT_LOG_WARN, "hello %d", 42);
	ck_assert_uint_eq(len, 31);
	ck_assert_uint_eq(strlen(buf), 31);
	ck_assert_str_eq(buf + len - 4, "...\n");
	for (size_t i = 32; i < sizeof buf; i++)
		ck_assert_int_eq(buf[i], 'Q');
	reset_logger();
}
END_TEST

/* --- levels ----------------------------------------------------------------- */

START_TEST(test_enabled_obeys_level)
{
	ft_log_set_level(FT_LOG_WARN);
	ck_assert(ft_log_enabled(FT_LOG_ERROR));
	ck_assert(ft_log_enabled(FT_LOG_WARN));
	ck_assert(!ft_log_enabled(FT_LOG_INFO));
	ck_assert(!ft_log_enabled(FT_LOG_DEBUG));
	ck_assert(!ft_log_enabled(FT_LOG_TRACE));

	ft_log_set_level(FT_LOG_ERROR);
	ck_assert(ft_log_enabled(FT_LOG_ERROR));
	ck_assert(!ft_log_enabled(FT_LOG_WARN));

	ft_log_set_level(FT_LOG_TRACE);
	for (int l = 0; l < FT_LOG_LEVEL_COUNT; l++)
		ck_assert(ft_log_enabled((enum ft_log_level)l));

	ft_log_set_level(FT_LOG_INFO);
	ck_assert(ft_log_enabled(FT_LOG_INFO));
	ck_assert(!ft_log_enabled(FT_LOG_DEBUG));
}
END_TEST

START_TEST(test_level_names)
{
	ck_assert_str_eq(ft_log_level_names[FT_LOG_ERROR], "error");
	ck_assert_str_eq(ft_log_level_names[FT_LOG_WARN], "warn");
	ck_assert_str_eq(ft_log_level_names[FT_LOG_INFO], "info");
	ck_assert_str_eq(ft_log_level_names[FT_LOG_DEBUG], "debug");
	ck_assert_str_eq(ft_log_level_names[FT_LOG_TRACE], "trace");
	ck_assert_int_eq(FT_LOG_LEVEL_COUNT, 5);
}
END_TEST

/* --- ft_log end to end -------------------------------------------------------- */

START_TEST(test_log_to_pipe_filters)
{
	int p[2];
	char got[4096];

	ck_assert_int_eq(pipe(p), 0);
	ft_log_set_rank(2);
	ft_log_set_fd(p[1]);
	ft_log_set_level(FT_LOG_INFO);
	ft_info("first %s", "line");
	ft_debug("second %s", "line");
	/* Giving the logger fd 2 back closes p[1], so the read sees EOF. */
	ft_log_set_fd(2);
	ck_assert(!fd_is_open(p[1]));

	size_t n = read_all(p[0], got, sizeof got);
	close(p[0]);
	ck_assert_uint_gt(n, 0);
	ck_assert_uint_eq(count_char(got, '\n'), 1);
	ck_assert_int_eq(got[n - 1], '\n');
	ck_assert_int_eq(strncmp(got, "ftshim[2] +", strlen("ftshim[2] +")), 0);
	ck_assert_ptr_nonnull(strstr(got, " info: first line\n"));
	ck_assert_ptr_null(strstr(got, "second"));
	reset_logger();
}
END_TEST

START_TEST(test_log_level_change_takes_effect)
{
	int p[2];
	char got[4096];

	ck_assert_int_eq(pipe(p), 0);
	ft_log_set_fd(p[1]);
	ft_log_set_level(FT_LOG_ERROR);
	ft_warn("w1");
	ft_error("e1");
	ft_log_set_level(FT_LOG_TRACE);
	ft_trace("t1");
	ft_log_set_fd(2);

	read_all(p[0], got, sizeof got);
	close(p[0]);
	ck_assert_uint_eq(count_char(got, '\n'), 2);
	ck_assert_ptr_null(strstr(got, "w1"));
	ck_assert_ptr_nonnull(strstr(got, " error: e1\n"));
	ck_assert_ptr_nonnull(strstr(got, " trace: t1\n"));
	/* In the order logged. */
	ck_assert(strstr(got, "e1") < strstr(got, "t1"));
	reset_logger();
}
END_TEST

START_TEST(test_log_keeps_errno)
{
	int p[2];
	char got[256];

	ck_assert_int_eq(pipe(p), 0);
	ft_log_set_fd(p[1]);
	errno = EAGAIN;
	ft_log(FT_LOG_ERROR, "x");
	ck_assert_int_eq(errno, EAGAIN);
	ft_log_set_fd(2);
	read_all(p[0], got, sizeof got);
	close(p[0]);
	ck_assert_ptr_nonnull(strstr(got, " error: x\n"));

	/* A write that fails (the fd is read-only) leaves errno alone too. */
	int ro = open("/dev/null", O_RDONLY);
	ck_assert_int_ge(ro, 0);
	ft_log_set_fd(ro);
	errno = EAGAIN;
	ft_log(FT_LOG_ERROR, "y");
	ck_assert_int_eq(errno, EAGAIN);
	reset_logger();
}
END_TEST

START_TEST(test_set_fd_keeps_stderr_open)
{
	int p[2];

	ck_assert_int_eq(pipe(p), 0);
	/* Setting fd 2 when it is already the fd closes nothing. */
	ft_log_set_fd(2);
	ck_assert(fd_is_open(2));
	ft_log_set_fd(p[1]);
	ck_assert(fd_is_open(2));
	/* Setting the same fd again does not close it. */
	ft_log_set_fd(p[1]);
	ck_assert(fd_is_open(p[1]));
	ft_log_close();
	ck_assert(!fd_is_open(p[1]));
	ck_assert(fd_is_open(2));
	close(p[0]);
	reset_logger();
}
END_TEST

/* --- ft_log_open_file ----------------------------------------------------------- */

START_TEST(test_open_file_missing_dir)
{
	char err[512] = "";
	int fd = ft_log_open_file("/nonexistent-ftshim-test-dir/sub/log.%r", 4, err, sizeof err);

	ck_assert_int_lt(fd, 0);
	ck_assert_int_eq(fd, -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "open"));
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent-ftshim-test-dir/sub/log.4"));
	ck_assert_ptr_null(strchr(err, '\n'));
}
END_TEST

START_TEST(test_open_file_bad_template)
{
	char err[512] = "";

	ck_assert_int_eq(ft_log_open_file("/tmp/x.%q", 0, err, sizeof err), -EINVAL);
	ck_assert(err[0] != '\0');
	ck_assert_ptr_nonnull(strstr(err, "%r"));
}
END_TEST

START_TEST(test_open_file_writes_and_appends)
{
	char dir[] = "/tmp/check_log.XXXXXX";
	char tmpl[256], path[256], err[512] = "", got[4096];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(tmpl, sizeof tmpl, "%s/log.%%r", dir);
	snprintf(path, sizeof path, "%s/log.7", dir);

	ft_log_set_rank(7);
	for (int round = 0; round < 2; round++) {
		int fd = ft_log_open_file(tmpl, 7, err, sizeof err);
		ck_assert_msg(fd >= 0, "open failed: %s", err);
		ft_log_set_fd(fd);
		ft_log(FT_LOG_WARN, "round %d", round);
		ft_log_close();
		ck_assert(!fd_is_open(fd));
	}

	int rfd = open(path, O_RDONLY);
	ck_assert_int_ge(rfd, 0);
	read_all(rfd, got, sizeof got);
	close(rfd);
	ck_assert_uint_eq(count_char(got, '\n'), 2);
	ck_assert_ptr_nonnull(strstr(got, "ftshim[7] "));
	ck_assert_ptr_nonnull(strstr(got, " warn: round 0\n"));
	ck_assert_ptr_nonnull(strstr(got, " warn: round 1\n"));
	ck_assert(strstr(got, "round 0") < strstr(got, "round 1"));

	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(rmdir(dir), 0);
	reset_logger();
}
END_TEST

START_TEST(test_log_to_tempfile)
{
	char path[] = "/tmp/check_log_file.XXXXXX";
	char got[4096];
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	int rfd = open(path, O_RDONLY);
	ck_assert_int_ge(rfd, 0);
	unlink(path);

	ft_log_set_fd(fd);
	ft_log_set_level(FT_LOG_INFO);
	ft_info("kept %d", 1);
	ft_debug("dropped %d", 2);
	ft_log_set_fd(2);

	read_all(rfd, got, sizeof got);
	close(rfd);
	ck_assert_uint_eq(count_char(got, '\n'), 1);
	ck_assert_int_eq(got[strlen(got) - 1], '\n');
	ck_assert_ptr_nonnull(strstr(got, " info: kept 1\n"));
	reset_logger();
}
END_TEST

static Suite *log_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc_path = tcase_create("path");
	TCase *tc_format = tcase_create("format");
	TCase *tc_log = tcase_create("log");

	tcase_add_test(tc_path, test_expand_rank);
	tcase_add_test(tc_path, test_expand_percent);
	tcase_add_test(tc_path, test_expand_pid_and_host);
	tcase_add_test(tc_path, test_expand_bad_sequence);
	tcase_add_test(tc_path, test_expand_too_long);
	tcase_add_test(tc_path, test_open_file_missing_dir);
	tcase_add_test(tc_path, test_open_file_bad_template);
	tcase_add_test(tc_path, test_open_file_writes_and_appends);
	suite_add_tcase(s, tc_path);

	tcase_add_test(tc_format, test_format_exact_line);
	tcase_add_test(tc_format, test_format_unknown_rank);
	tcase_add_test(tc_format, test_format_times_and_levels);
	tcase_add_test(tc_format, test_format_long_line_is_cut);
	tcase_add_test(tc_format, test_format_line_that_just_fits);
	tcase_add_test(tc_format, test_format_small_buffer);
	suite_add_tcase(s, tc_format);

	tcase_add_test(tc_log, test_enabled_obeys_level);
	tcase_add_test(tc_log, test_level_names);
	tcase_add_test(tc_log, test_log_to_pipe_filters);
	tcase_add_test(tc_log, test_log_level_change_takes_effect);
	tcase_add_test(tc_log, test_log_keeps_errno);
	tcase_add_test(tc_log, test_set_fd_keeps_stderr_open);
	tcase_add_test(tc_log, test_log_to_tempfile);
	suite_add_tcase(s, tc_log);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(log_suite());

	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
