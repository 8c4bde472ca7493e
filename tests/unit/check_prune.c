/* check_prune.c: unit tests of src/prune.c. In a run directory made by
 * hand, an old job whose ranks here have exited is removed; a recent one,
 * an old one with a rank still running here (this very process), an old
 * one whose running rank is on another host (removed), one whose pid was
 * reused by another process (removed), a directory not named like a job
 * id, and one holding a subdirectory are handled as prune.h says. Also
 * ft_process_start_ticks of this process and of no process, and
 * ft_process_state of this process (running), of a stopped child, of a
 * child that ended (a zombie until reaped, then gone) and of a wrong
 * start time. */
#include "ftshim_config.h"

#include <check.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/prune.h"

#define DAY 86400
static char base[64];

/* base/name, with a "ranks" file holding ranks_text (NULL: none), and
 * the directory's time set to now - age_s. */
static void make_job(const char *name, const char *ranks_text, time_t now, time_t age_s)
{
	char path[256];

	snprintf(path, sizeof path, "%s/%s", base, name);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	if (ranks_text) {
		snprintf(path, sizeof path, "%s/%s/ranks", base, name);
		FILE *f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		fputs(ranks_text, f);
		fclose(f);
		snprintf(path, sizeof path, "%s/%s/report.json", base, name);
		f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		fputs("{}\n", f);
		fclose(f);
	}
	snprintf(path, sizeof path, "%s/%s", base, name);
	struct timespec times[2] = { { now - age_s, 0 }, { now - age_s, 0 } };
	ck_assert_int_eq(utimensat(AT_FDCWD, path, times, 0), 0);
}

static bool exists(const char *name)
{
	char path[256];

	snprintf(path, sizeof path, "%s/%s", base, name);
	return access(path, F_OK) == 0;
}

START_TEST(test_start_ticks)
{
	ck_assert_uint_gt(ft_process_start_ticks(getpid()), 0);
	ck_assert_uint_eq(ft_process_start_ticks(getpid()), ft_process_start_ticks(getpid()));
	/* Beyond pid_max on Linux (4194304 at most). */
	ck_assert_uint_eq(ft_process_start_ticks(99999999), 0);
}
END_TEST

START_TEST(test_process_state)
{
	uint64_t ticks = ft_process_start_ticks(getpid());

	ck_assert_int_eq(ft_process_state(getpid(), ticks), 'R');
	ck_assert_int_eq(ft_process_state(getpid(), ticks + 1), 0);
	pid_t child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		raise(SIGSTOP);
		_exit(0);
	}
	int status;
	ck_assert_int_eq(waitpid(child, &status, WUNTRACED), child);
	ck_assert(WIFSTOPPED(status));
	uint64_t cticks = ft_process_start_ticks(child);
	ck_assert_int_eq(ft_process_state(child, cticks), 'T');
	kill(child, SIGKILL);
	ck_assert_int_eq(waitid(P_PID, (id_t)child, NULL, WEXITED | WNOWAIT), 0);
	ck_assert_int_eq(ft_process_state(child, cticks), 'Z');
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert_int_eq(ft_process_state(child, cticks), 0);
}
END_TEST

START_TEST(test_process_pidfd)
{
	pid_t child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	uint64_t cticks = ft_process_start_ticks(child);
	int fd = ft_process_pidfd(child, cticks);
	ck_assert_int_ge(fd, 0);
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ck_assert_int_eq(poll(&p, 1, 0), 0);
	/* Another start time: not that process. */
	ck_assert_int_eq(ft_process_pidfd(child, cticks + 1), -ESRCH);
	kill(child, SIGKILL);
	/* Readable once it has ended, reaped or not. */
	ck_assert_int_eq(poll(&p, 1, 5000), 1);
	int status;
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	close(fd);
	ck_assert_int_eq(ft_process_pidfd(child, cticks), -ESRCH);
	ck_assert_int_eq(ft_process_pidfd(0, 0), -EINVAL);
}
END_TEST

START_TEST(test_prune)
{
	char me[128], reused[128], elsewhere[128], sub[300];
	time_t now = time(NULL);
	unsigned long long ticks = (unsigned long long)ft_process_start_ticks(getpid());

	snprintf(base, sizeof base, "/tmp/check_prune.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(base));
	snprintf(me, sizeof me, "0 hosta 1 0\n1 hosta %ld %llu\n", (long)getpid(), ticks);
	snprintf(reused, sizeof reused, "0 hosta %ld %llu\n", (long)getpid(), ticks + 1);
	snprintf(elsewhere, sizeof elsewhere, "0 hostb %ld %llu\n", (long)getpid(), ticks);

	make_job("0123456789ab", "0 hosta 99999999 5\n", now, 8 * DAY); /* old, exited: goes */
	make_job("00000000000a", "0 hosta 99999999 5\n", now, 2 * DAY); /* recent: stays */
	make_job("00000000000b", me, now, 30 * DAY);                    /* still running here */
	make_job("00000000000c", reused, now, 30 * DAY);                /* pid reused: goes */
	make_job("00000000000d", elsewhere, now, 30 * DAY);             /* runs elsewhere: goes */
	make_job("00000000000e", NULL, now, 30 * DAY);                  /* empty: goes */
	make_job("not-a-job-id", NULL, now, 30 * DAY);                  /* not ours */
	make_job("0123456789AB", NULL, now, 30 * DAY);                  /* upper case: not ours */
	make_job("00000000000f", NULL, now, 30 * DAY);
	snprintf(sub, sizeof sub, "%s/00000000000f/inner", base);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	struct timespec old[2] = { { now - 30 * DAY, 0 }, { now - 30 * DAY, 0 } };
	snprintf(sub, sizeof sub, "%s/00000000000f", base);
	ck_assert_int_eq(utimensat(AT_FDCWD, sub, old, 0), 0); /* holds a directory: stays */

	ck_assert_uint_eq(ft_rundir_prune(base, "hosta", now, 7 * DAY), 4);
	ck_assert(!exists("0123456789ab"));
	ck_assert(exists("00000000000a"));
	ck_assert(exists("00000000000b"));
	ck_assert(!exists("00000000000c"));
	ck_assert(!exists("00000000000d"));
	ck_assert(!exists("00000000000e"));
	ck_assert(exists("not-a-job-id"));
	ck_assert(exists("0123456789AB"));
	ck_assert(exists("00000000000f/inner"));
	/* Nothing more to do the second time; a missing base is no error. */
	ck_assert_uint_eq(ft_rundir_prune(base, "hosta", now, 7 * DAY), 0);
	ck_assert_uint_eq(ft_rundir_prune("/nonexistent/check_prune", "hosta", now, 0), 0);

	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("prune");
	TCase *tc = tcase_create("prune");

	tcase_add_test(tc, test_start_ticks);
	tcase_add_test(tc, test_process_state);
	tcase_add_test(tc, test_process_pidfd);
	tcase_add_test(tc, test_prune);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
