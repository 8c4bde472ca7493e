/* check_ckpt_disk.c: unit tests for src/ckpt_disk.c, in a scratch
 * directory. The directory's check (made when missing, refused when a
 * file or not makeable, each with its line). Copies written in the
 * background, listed latest first and read back whole; each rank keeps
 * its latest two files; another job's and another rank's files are
 * never listed or removed. A restore's removal of abandoned files (later
 * counts, the same count of another epoch, a dead writer's temporary
 * file), a write in flight meanwhile leaving no file after it, and a write into a
 * directory gone reported as an error. */
#include "ftshim_config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "src/ckpt_disk.h"
#include "src/clock.h"
#include "src/common.h"

static char dir[256], err[512];

static void setup(void)
{
	snprintf(dir, sizeof dir, "%s/ftshim-check-ckpt-disk-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[300];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static bool exists(const char *name)
{
	char path[512];

	snprintf(path, sizeof path, "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static void touch(const char *name)
{
	char path[512];

	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("x", f);
	fclose(f);
}

static struct ft_ckpt_blob *blob_of(uint64_t len, unsigned char fill)
{
	struct ft_ckpt_blob *b = ft_ckpt_blob_new(len);

	ck_assert_ptr_nonnull(b);
	memset(b->data, fill, (size_t)len);
	return b;
}

/* Wait for the write in flight to end; its outcome. */
static struct ft_ckpt_disk_result await_write(struct ft_ckpt_disk *d)
{
	struct ft_ckpt_disk_result res = { 0 };
	bool fresh = false;
	uint64_t end = ft_clock_now() + 20 * FT_NSEC_PER_SEC;

	while (!ft_ckpt_disk_done(d, &res, &fresh) && ft_clock_now() < end) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	ck_assert(fresh);
	return res;
}

static void write_one(struct ft_ckpt_disk *d, uint32_t owner, uint64_t count, uint32_t epoch, unsigned char fill)
{
	struct ft_ckpt_blob *b = blob_of(1000, fill);

	ck_assert_int_eq(ft_ckpt_disk_write(d, owner, (struct ft_ckpt_tag){ count, epoch }, b), 0);
	ft_ckpt_blob_unref(b);
	ck_assert_int_eq(await_write(d).err, 0);
}

START_TEST(test_check_dir)
{
	char path[512];

	/* Missing: made. */
	snprintf(path, sizeof path, "%s/made", dir);
	ck_assert_int_eq(ft_ckpt_disk_check_dir(path, err, sizeof err), 0);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	/* A file. */
	touch("plain");
	snprintf(path, sizeof path, "%s/plain", dir);
	ck_assert_int_eq(ft_ckpt_disk_check_dir(path, err, sizeof err), -ENOTDIR);
	ck_assert_ptr_nonnull(strstr(err, "plain: not a directory; accepted: a directory this process can write in"));
	/* Two levels missing: not made. */
	snprintf(path, sizeof path, "%s/a/b", dir);
	ck_assert_int_eq(ft_ckpt_disk_check_dir(path, err, sizeof err), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "a/b: missing, and it cannot be made (No such file or directory); accepted:"));
	ck_assert_int_eq(ft_ckpt_disk_check_dir("", err, sizeof err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "FTSHIM_CKPT_DIR=: empty"));
}
END_TEST

START_TEST(test_write_list_read)
{
	struct ft_ckpt_disk *d;
	struct ft_ckpt_tag tags[4];

	ck_assert_int_eq(ft_ckpt_disk_open(&d, dir, "abc123", err, sizeof err), 0);
	ck_assert_uint_eq(ft_ckpt_disk_list(d, 1, tags, 4), 0);
	/* A large one, written while another is refused as busy. */
	struct ft_ckpt_blob *big = blob_of((uint64_t)8 << 20, 0x5a);
	ck_assert_int_eq(ft_ckpt_disk_write(d, 1, (struct ft_ckpt_tag){ 1, 0 }, big), 0);
	ck_assert_int_eq(ft_ckpt_disk_write(d, 1, (struct ft_ckpt_tag){ 2, 0 }, big), -EBUSY);
	struct ft_ckpt_disk_result res = await_write(d);
	ck_assert_int_eq(res.err, 0);
	ck_assert_uint_eq(res.bytes, (uint64_t)8 << 20);
	ck_assert_uint_eq(res.tag.count, 1);
	ck_assert(exists("ftshim-abc123-r1-1-0.ckpt"));
	/* The writer dropped its reference before saying it was done. */
	ck_assert_uint_eq(atomic_load(&big->refs), 1);
	bool fresh = true;
	ck_assert(ft_ckpt_disk_done(d, &res, &fresh));
	ck_assert(!fresh);
	struct ft_ckpt_blob *back = ft_ckpt_disk_read(d, 1, (struct ft_ckpt_tag){ 1, 0 }, err, sizeof err);
	ck_assert_ptr_nonnull(back);
	ck_assert_uint_eq(back->len, big->len);
	ck_assert_int_eq(memcmp(back->data, big->data, (size_t)big->len), 0);
	ft_ckpt_blob_unref(back);
	ft_ckpt_blob_unref(big);
	/* Latest two kept, listed latest first; others' files untouched. */
	touch("ftshim-other1-r1-9-0.ckpt");
	touch("ftshim-abc123-r10-9-0.ckpt");
	touch("ftshim-abc123-r1-x-0.ckpt");
	write_one(d, 1, 2, 0, 2);
	write_one(d, 1, 3, 1, 3);
	ck_assert_uint_eq(ft_ckpt_disk_list(d, 1, tags, 4), 2);
	ck_assert_uint_eq(tags[0].count, 3);
	ck_assert_uint_eq(tags[0].epoch, 1);
	ck_assert_uint_eq(tags[1].count, 2);
	ck_assert(!exists("ftshim-abc123-r1-1-0.ckpt"));
	ck_assert(exists("ftshim-other1-r1-9-0.ckpt"));
	ck_assert(exists("ftshim-abc123-r10-9-0.ckpt"));
	ck_assert_uint_eq(ft_ckpt_disk_list(d, 10, tags, 4), 1);
	/* At most max listed. */
	ck_assert_uint_eq(ft_ckpt_disk_list(d, 1, tags, 1), 1);
	ck_assert_uint_eq(tags[0].count, 3);
	/* A file that is not there. */
	ck_assert_ptr_null(ft_ckpt_disk_read(d, 1, (struct ft_ckpt_tag){ 7, 0 }, err, sizeof err));
	ck_assert_ptr_nonnull(strstr(err, "ftshim-abc123-r1-7-0.ckpt: No such file or directory"));
	ft_ckpt_disk_close(d);
}
END_TEST

START_TEST(test_drop_abandoned)
{
	struct ft_ckpt_disk *d;
	struct ft_ckpt_tag tags[4];

	ck_assert_int_eq(ft_ckpt_disk_open(&d, dir, "abc123", err, sizeof err), 0);
	write_one(d, 2, 4, 0, 4);
	write_one(d, 2, 5, 0, 5);
	/* A dead writer's temporary file, and a live one's (ours). */
	touch(".ftshim-abc123-r2-999999999.tmp");
	char own[64];
	snprintf(own, sizeof own, ".ftshim-abc123-r2-%ld.tmp", (long)getpid());
	touch(own);
	/* Back to 4 of epoch 0: 5 goes, 4 stays. */
	ft_ckpt_disk_drop_abandoned(d, 2, (struct ft_ckpt_tag){ 4, 0 });
	ck_assert_uint_eq(ft_ckpt_disk_list(d, 2, tags, 4), 1);
	ck_assert_uint_eq(tags[0].count, 4);
	ck_assert(!exists(".ftshim-abc123-r2-999999999.tmp"));
	ck_assert(exists(own));
	/* Back to 4 of epoch 1: 4 of epoch 0 goes. */
	ft_ckpt_disk_drop_abandoned(d, 2, (struct ft_ckpt_tag){ 4, 1 });
	ck_assert_uint_eq(ft_ckpt_disk_list(d, 2, tags, 4), 0);
	/* A write in flight when the restore comes leaves no file. */
	struct ft_ckpt_blob *big = blob_of((uint64_t)32 << 20, 6);
	ck_assert_int_eq(ft_ckpt_disk_write(d, 2, (struct ft_ckpt_tag){ 6, 1 }, big), 0);
	ft_ckpt_disk_drop_abandoned(d, 2, (struct ft_ckpt_tag){ 0, 0 });
	struct ft_ckpt_disk_result res = await_write(d);
	/* Renamed before the restore (then removed by it) or cancelled. */
	ck_assert(res.err == -ECANCELED || res.err == 0);
	ck_assert_uint_eq(ft_ckpt_disk_list(d, 2, tags, 4), 0);
	/* Written after the restore: kept. */
	write_one(d, 2, 1, 2, 1);
	ck_assert_uint_eq(ft_ckpt_disk_list(d, 2, tags, 4), 1);
	ft_ckpt_blob_unref(big);
	ft_ckpt_disk_close(d);
}
END_TEST

START_TEST(test_write_fails)
{
	struct ft_ckpt_disk *d;
	char sub[300];

	snprintf(sub, sizeof sub, "%s/gone", dir);
	ck_assert_int_eq(ft_ckpt_disk_open(&d, sub, "abc123", err, sizeof err), 0);
	ck_assert_int_eq(rmdir(sub), 0);
	struct ft_ckpt_blob *b = blob_of(100, 1);
	ck_assert_int_eq(ft_ckpt_disk_write(d, 0, (struct ft_ckpt_tag){ 1, 0 }, b), 0);
	ck_assert_int_eq(await_write(d).err, -ENOENT);
	ft_ckpt_blob_unref(b);
	/* A job id that cannot be part of a file name. */
	struct ft_ckpt_disk *bad;
	ck_assert_int_eq(ft_ckpt_disk_open(&bad, dir, "../x", err, sizeof err), -EINVAL);
	ck_assert_ptr_null(bad);
	ft_ckpt_disk_close(d);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ckpt_disk");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_check_dir);
	tcase_add_test(tc, test_write_list_read);
	tcase_add_test(tc, test_drop_abandoned);
	tcase_add_test(tc, test_write_fails);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());

	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
