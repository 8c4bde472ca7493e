/* check_shadow_files.c: unit tests of src/shadow_files.c in a fresh
 * directory: a replica's writes go to its copies and leave the real files
 * as they were; it reads back what it wrote and does not see what it
 * deleted; renames move copies or copy real files; a promotion makes the
 * copies the files and deletes what was deleted; a discard leaves the
 * real files alone; one file is one key however it is spelled. */
#include "ftshim_config.h"

#include <check.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/shadow_files.h"

static char dir[] = "/tmp/check_shadow_XXXXXX";
static char cwd_before[PATH_MAX];

static void setup(void)
{
	strcpy(dir, "/tmp/check_shadow_XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_ptr_nonnull(getcwd(cwd_before, sizeof cwd_before));
	ck_assert_int_eq(chdir(dir), 0);
}

static void teardown(void)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.' || (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")))
			unlink(de->d_name);
	if (d)
		closedir(d);
	ck_assert_int_eq(chdir(cwd_before), 0);
	rmdir(dir);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* The file's content, or "(none)". */
static const char *get(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");

	if (!f)
		return "(none)";
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* What a program's open(path, flags) writes, through the table. */
static void write_via(struct ft_shadow_files *s, const char *path, int flags, const char *text)
{
	char out[PATH_MAX];
	int rc = ft_shadow_open(s, AT_FDCWD, path, flags, out, sizeof out);
	ck_assert_int_eq(rc, FT_SHADOW_USE);
	int fd = open(out, flags, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (int)strlen(text));
	close(fd);
}

/* How many names in the directory start with .ftshim-. */
static int copies_left(void)
{
	DIR *d = opendir(".");
	struct dirent *de;
	int n = 0;

	while ((de = readdir(d)))
		n += strncmp(de->d_name, ".ftshim-", 8) == 0;
	closedir(d);
	return n;
}

START_TEST(test_writes_go_to_copies)
{
	struct ft_shadow_files s;
	char out[PATH_MAX];

	ck_assert_int_eq(ft_shadow_init(&s, 3), 0);
	/* A new file: made as the copy, the real path untouched. */
	write_via(&s, "new.txt", O_WRONLY | O_CREAT | O_TRUNC, "replica");
	ck_assert_str_eq(get(".ftshim-r3.new.txt"), "replica");
	ck_assert_str_eq(get("new.txt"), "(none)");
	ck_assert_int_eq(ft_shadow_look(&s, AT_FDCWD, "new.txt", out, sizeof out), FT_SHADOW_USE);
	ck_assert_str_eq(get(out), "replica");
	/* Reading an input nobody wrote: the real file. */
	put("input.txt", "input");
	ck_assert_int_eq(ft_shadow_open(&s, AT_FDCWD, "input.txt", O_RDONLY, out, sizeof out), FT_SHADOW_PASS);
	ck_assert_int_eq(ft_shadow_look(&s, AT_FDCWD, "input.txt", out, sizeof out), FT_SHADOW_PASS);
	/* Opened to update (Fortran's default): copied first, then written. */
	write_via(&s, "input.txt", O_WRONLY | O_APPEND, "+more");
	ck_assert_str_eq(get("input.txt"), "input");
	ck_assert_str_eq(get(".ftshim-r3.input.txt"), "input+more");
	/* Truncated: no copy needed, the real file stays. */
	put("old.txt", "primary's");
	write_via(&s, "old.txt", O_WRONLY | O_CREAT | O_TRUNC, "mine");
	ck_assert_str_eq(get("old.txt"), "primary's");
	ck_assert_str_eq(get(".ftshim-r3.old.txt"), "mine");
	/* Exclusive creation of a file that exists fails as it would. */
	put("there.txt", "x");
	ck_assert_int_eq(ft_shadow_open(&s, AT_FDCWD, "there.txt", O_WRONLY | O_CREAT | O_EXCL, out, sizeof out),
			 -EEXIST);
	/* A file opened in a directory that does not exist: the real call. */
	ck_assert_int_eq(ft_shadow_open(&s, AT_FDCWD, "nodir/f", O_WRONLY | O_CREAT, out, sizeof out),
			 FT_SHADOW_PASS);
	ft_shadow_discard(&s);
	ck_assert_int_eq(copies_left(), 0);
	ck_assert_str_eq(get("input.txt"), "input");
	ck_assert_str_eq(get("old.txt"), "primary's");
	ft_shadow_fini(&s);
}
END_TEST

START_TEST(test_unlink_and_rename)
{
	struct ft_shadow_files s;
	char out[PATH_MAX];

	ck_assert_int_eq(ft_shadow_init(&s, 0), 0);
	/* The primary's file, deleted here: absent here, there for it. */
	put("b.txt", "primary");
	ck_assert_int_eq(ft_shadow_unlink(&s, AT_FDCWD, "b.txt"), FT_SHADOW_DONE);
	ck_assert_str_eq(get("b.txt"), "primary");
	ck_assert_int_eq(ft_shadow_look(&s, AT_FDCWD, "b.txt", out, sizeof out), -ENOENT);
	ck_assert_int_eq(ft_shadow_open(&s, AT_FDCWD, "b.txt", O_RDONLY, out, sizeof out), -ENOENT);
	ck_assert_int_eq(ft_shadow_unlink(&s, AT_FDCWD, "b.txt"), -ENOENT);
	/* ... and made again. */
	write_via(&s, "b.txt", O_WRONLY | O_CREAT | O_TRUNC, "again");
	ck_assert_str_eq(get(".ftshim-r0.b.txt"), "again");
	/* A missing file: the real call fails as it would. */
	ck_assert_int_eq(ft_shadow_unlink(&s, AT_FDCWD, "missing.txt"), FT_SHADOW_PASS);
	/* A copy deleted. */
	write_via(&s, "tmp.txt", O_WRONLY | O_CREAT, "t");
	ck_assert_int_eq(ft_shadow_unlink(&s, AT_FDCWD, "tmp.txt"), FT_SHADOW_DONE);
	ck_assert_str_eq(get(".ftshim-r0.tmp.txt"), "(none)");
	/* Write then rename over (a checkpoint's pattern): the copy moves. */
	put("ckpt", "primary's ckpt");
	write_via(&s, "ckpt.new", O_WRONLY | O_CREAT | O_TRUNC, "replica's ckpt");
	ck_assert_int_eq(ft_shadow_rename(&s, AT_FDCWD, "ckpt.new", AT_FDCWD, "ckpt"), FT_SHADOW_DONE);
	ck_assert_str_eq(get("ckpt"), "primary's ckpt");
	ck_assert_str_eq(get(".ftshim-r0.ckpt"), "replica's ckpt");
	ck_assert_int_eq(ft_shadow_look(&s, AT_FDCWD, "ckpt.new", out, sizeof out), -ENOENT);
	/* A real file renamed: its content copied, the real one left. */
	put("d.txt", "dee");
	ck_assert_int_eq(ft_shadow_rename(&s, AT_FDCWD, "d.txt", AT_FDCWD, "e.txt"), FT_SHADOW_DONE);
	ck_assert_str_eq(get("d.txt"), "dee");
	ck_assert_str_eq(get("e.txt"), "(none)");
	ck_assert_str_eq(get(".ftshim-r0.e.txt"), "dee");
	ck_assert_int_eq(ft_shadow_rename(&s, AT_FDCWD, "d.txt", AT_FDCWD, "f.txt"), -ENOENT);

	/* Promoted: the files are the replica's. */
	ck_assert_uint_eq(ft_shadow_promote(&s, NULL), 0);
	ck_assert_str_eq(get("b.txt"), "again");
	ck_assert_str_eq(get("ckpt"), "replica's ckpt");
	ck_assert_str_eq(get("ckpt.new"), "(none)");
	ck_assert_str_eq(get("d.txt"), "(none)");
	ck_assert_str_eq(get("e.txt"), "dee");
	ck_assert_str_eq(get("tmp.txt"), "(none)");
	ck_assert_int_eq(copies_left(), 0);
	/* The table is empty: everything is the real call again. */
	ck_assert_int_eq(ft_shadow_look(&s, AT_FDCWD, "b.txt", out, sizeof out), FT_SHADOW_PASS);
	ft_shadow_fini(&s);
}
END_TEST

START_TEST(test_keys)
{
	char a[PATH_MAX], b[PATH_MAX], c[PATH_MAX], want[PATH_MAX + 16];
	char real[PATH_MAX];

	ck_assert_int_eq(mkdir("sub", 0755), 0);
	ck_assert_int_eq(symlink("sub", "link"), 0);
	ck_assert_ptr_nonnull(realpath(".", real));
	snprintf(want, sizeof want, "%s/sub/f", real);
	ck_assert_int_eq(ft_shadow_key(AT_FDCWD, "sub/f", a, sizeof a), 0);
	ck_assert_int_eq(ft_shadow_key(AT_FDCWD, "./sub/../sub//f", b, sizeof b), 0);
	ck_assert_int_eq(ft_shadow_key(AT_FDCWD, "link/f", c, sizeof c), 0);
	ck_assert_str_eq(a, want);
	ck_assert_str_eq(b, want);
	ck_assert_str_eq(c, want);
	int fd = open("sub", O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ft_shadow_key(fd, "f", c, sizeof c), 0);
	ck_assert_str_eq(c, want);
	close(fd);
	snprintf(want, sizeof want, "%s/f", real);
	ck_assert_int_eq(ft_shadow_key(AT_FDCWD, want, c, sizeof c), 0);
	ck_assert_str_eq(c, want);
	/* Not eligible: the system's trees, directories, missing parents. */
	ck_assert_int_eq(ft_shadow_key(AT_FDCWD, "/proc/self/status", c, sizeof c), -EPERM);
	ck_assert_int_eq(ft_shadow_key(AT_FDCWD, "/dev/null", c, sizeof c), -EPERM);
	ck_assert_int_eq(ft_shadow_key(AT_FDCWD, "sub/", c, sizeof c), -EISDIR);
	ck_assert_int_eq(ft_shadow_key(AT_FDCWD, "sub/..", c, sizeof c), -EISDIR);
	ck_assert_int_eq(ft_shadow_key(AT_FDCWD, "nodir/f", c, sizeof c), -ENOENT);
	ck_assert_int_eq(ft_shadow_key(AT_FDCWD, "", c, sizeof c), -ENOENT);
	unlink("link");
	rmdir("sub");
}
END_TEST

START_TEST(test_long_name_and_many)
{
	struct ft_shadow_files s;
	char name[NAME_MAX + 1], out[PATH_MAX];

	ck_assert_int_eq(ft_shadow_init(&s, 12), 0);
	memset(name, 'n', NAME_MAX);
	name[NAME_MAX] = '\0';
	ck_assert_int_eq(ft_shadow_open(&s, AT_FDCWD, name, O_WRONLY | O_CREAT, out, sizeof out), FT_SHADOW_USE);
	ck_assert_uint_le(strlen(strrchr(out, '/') + 1), NAME_MAX);
	ck_assert_ptr_nonnull(strstr(out, "/.ftshim-r12."));
	/* Enough files to grow the table; each still found. */
	for (int i = 0; i < 500; i++) {
		char p[32];
		snprintf(p, sizeof p, "f%d", i);
		ck_assert_int_eq(ft_shadow_open(&s, AT_FDCWD, p, O_WRONLY | O_CREAT, out, sizeof out), FT_SHADOW_USE);
	}
	for (int i = 0; i < 500; i++) {
		char p[32], want[48];
		snprintf(p, sizeof p, "f%d", i);
		snprintf(want, sizeof want, "/.ftshim-r12.f%d", i);
		ck_assert_int_eq(ft_shadow_look(&s, AT_FDCWD, p, out, sizeof out), FT_SHADOW_USE);
		ck_assert_str_eq(strrchr(out, '/'), want);
	}
	ck_assert_uint_eq(s.count, 501);
	ft_shadow_fini(&s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("shadow_files");
	TCase *tc = tcase_create("files");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_writes_go_to_copies);
	tcase_add_test(tc, test_unlink_and_rename);
	tcase_add_test(tc, test_keys);
	tcase_add_test(tc, test_long_name_and_many);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
