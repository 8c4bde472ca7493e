/* check_callsite.c: unit tests of src/callsite.c, which names the
 * application's call site of an MPI call. The test program is a single
 * object, so the exact answers are checked through ft_callsite_skip: a
 * function of this file describes its own call (name and line, or
 * name+offset and object without libdw), one level and two levels up,
 * from several threads at once, and across a dlopen and dlclose that make
 * the cached libdw session stale. ft_callsite is checked on what is
 * certain for any program: skipping this program's object, whether named
 * by an address in it or by a substring of its path, lands on the same
 * frame (main's caller, in libc); also skipping libc leaves no frame
 * ("unknown", -1); an address in no object or an empty substring skips
 * nothing. And the degraded outputs: "unknown" past the top of the stack,
 * truncation to a short buffer, nothing written for outlen 0. C++ names
 * are demangled once the process has the C++ runtime (this C program
 * loads it with dlopen), and shown as they are before. */
#include "ftshim_config.h"

#include <check.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/callsite.h"

/* The functions whose frames are described must stay real frames under
 * -O2: not inlined, not cloned under another symbol name (GCC's
 * known_caller.constprop.0), not left by a tail call (keep_frame after
 * each call). */
#if defined(__GNUC__) && !defined(__clang__)
#define REAL_FRAME __attribute__((noipa))
#else
#define REAL_FRAME __attribute__((noinline))
#endif

/* A side effect the compiler must keep, after the call it keeps a frame
 * for. Atomic because the threads test runs it concurrently; relaxed
 * because nothing reads it. */
static atomic_int frames_kept;

static void keep_frame(void)
{
	atomic_fetch_add_explicit(&frames_kept, 1, memory_order_relaxed);
}

/* One request to describe a call site, and what came back. */
struct call {
	bool by_object;               /* ft_callsite, else ft_callsite_skip */
	unsigned skip;                /* for ft_callsite_skip */
	const void *inside;           /* for ft_callsite */
	const char *const *also_skip; /* for ft_callsite */
	char *out;
	size_t outlen;
	int line; /* the line of the call to ft_callsite or ft_callsite_skip */
	int rc;
};

REAL_FRAME void known_caller(struct call *c);
REAL_FRAME int known_middle(struct call *c);
REAL_FRAME int known_outer(struct call *c);

/* Each __LINE__ must stay on the line of its call. */
/* clang-format off */
void known_caller(struct call *c)
{
	if (c->by_object) {
		c->line = __LINE__; c->rc = ft_callsite(c->inside, c->also_skip, c->out, c->outlen);
	} else {
		c->line = __LINE__; c->rc = ft_callsite_skip(c->skip, c->out, c->outlen);
	}
	keep_frame();
}

/* known_middle and known_outer return the line of their call. */
int known_middle(struct call *c)
{
	int line = __LINE__; known_caller(c);
	keep_frame();
	return line;
}

int known_outer(struct call *c)
{
	int line = __LINE__; known_middle(c);
	keep_frame();
	return line;
}
/* clang-format on */

/* got describes a frame of fn, in this file, at line. */
static void assert_frame(const char *got, const char *fn, int line)
{
#ifdef HAVE_LIBDW
	char want[128];

	snprintf(want, sizeof want, "%s (check_callsite.c:%d)", fn, line);
	ck_assert_str_eq(got, want);
#else
	/* Without libdw: "fn+0x1c (/path/to/tests/unit/check_callsite)". */
	char prefix[128];
	size_t n = strlen(got);

	snprintf(prefix, sizeof prefix, "%s+0x", fn);
	ck_assert_msg(strncmp(got, prefix, strlen(prefix)) == 0, "got '%s', want '%s...'", got,
		      prefix);
	ck_assert_msg(n > 0 && got[n - 1] == ')' && strstr(got, "check_callsite)"),
		      "got '%s', want the test program's path", got);
	(void)line;
#endif
}

START_TEST(test_skip_names_caller)
{
	char out[256];
	struct call c = { .skip = 0, .out = out, .outlen = sizeof out };

	known_caller(&c);
	ck_assert_int_eq(c.rc, 0);
	assert_frame(out, "known_caller", c.line);
}
END_TEST

START_TEST(test_skip_levels)
{
	char out[256];
	struct call c = { .skip = 1, .out = out, .outlen = sizeof out };
	int line;

	/* One up from known_caller: its call in known_middle. */
	line = known_middle(&c);
	ck_assert_int_eq(c.rc, 0);
	assert_frame(out, "known_middle", line);

	/* Two up: known_outer's call of known_middle. */
	c.skip = 2;
	line = known_outer(&c);
	ck_assert_int_eq(c.rc, 0);
	assert_frame(out, "known_outer", line);
}
END_TEST

START_TEST(test_skip_past_top)
{
	char out[64];
	struct call c = { .skip = 100000, .out = out, .outlen = sizeof out };

	known_caller(&c);
	ck_assert_int_eq(c.rc, -1);
	ck_assert_str_eq(out, "unknown");

	/* Truncated like any other answer. */
	c.outlen = 4;
	known_caller(&c);
	ck_assert_int_eq(c.rc, -1);
	ck_assert_str_eq(out, "unk");
}
END_TEST

START_TEST(test_truncation)
{
	char out[32];
	struct call c = { .skip = 0, .out = out, .outlen = 8 };

	memset(out, 'x', sizeof out);
	known_caller(&c);
	ck_assert_int_eq(c.rc, 0);
	ck_assert_str_eq(out, "known_c");
	for (size_t i = 8; i < sizeof out; i++)
		ck_assert_int_eq(out[i], 'x');

	c.outlen = 1;
	known_caller(&c);
	ck_assert_int_eq(c.rc, 0);
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(out[1], 'n'); /* left from the call before */
}
END_TEST

START_TEST(test_outlen_zero)
{
	char out[16];
	struct call c = { .skip = 0, .out = out, .outlen = 0 };

	memset(out, 'x', sizeof out);
	known_caller(&c);
	ck_assert_int_eq(c.rc, 0);
	for (size_t i = 0; i < sizeof out; i++)
		ck_assert_int_eq(out[i], 'x');

	/* Not even out is looked at. */
	c.out = NULL;
	known_caller(&c);
	ck_assert_int_eq(c.rc, 0);
	c.skip = 100000;
	known_caller(&c);
	ck_assert_int_eq(c.rc, -1);
}
END_TEST

/* Every frame between the test and main is in this program or, where
 * Check is a shared library rather than -lcheck_pic, in libcheck; main is
 * called from libc. So skipping this program's object leaves a frame of
 * libcheck or libc. Which function that is, and whether it has a line,
 * depends on their debug information; that the two ways of skipping agree
 * does not. */
START_TEST(test_inside_skips_own_object)
{
	static const char *const by_path[] = { "check_callsite", NULL };
	char out[512], by_path_out[512];
	struct call c = { .by_object = true, .inside = (const void *)&known_caller,
			  .out = out, .outlen = sizeof out };

	known_caller(&c);
	ck_assert_int_eq(c.rc, 0);
	ck_assert_msg(strstr(out, "check_callsite") == NULL && strstr(out, "known_") == NULL,
		      "got '%s', a frame of the test program", out);
	if (strstr(out, " (/"))
		ck_assert_msg(strstr(out, "/libc.so") || strstr(out, "/libcheck"),
			      "got '%s', want a frame in libc or libcheck", out);

	c.inside = NULL;
	c.also_skip = by_path;
	c.out = by_path_out;
	known_caller(&c);
	ck_assert_int_eq(c.rc, 0);
	ck_assert_str_eq(by_path_out, out);
}
END_TEST

/* Above libc's frames is only _start, in this program again. */
START_TEST(test_inside_no_frame_left)
{
	static const char *const libc_and_check[] = { "libc.so", "libcheck", NULL };
	char out[64];
	struct call c = { .by_object = true, .inside = (const void *)&known_caller,
			  .also_skip = libc_and_check, .out = out, .outlen = sizeof out };

	known_caller(&c);
	ck_assert_int_eq(c.rc, -1);
	ck_assert_str_eq(out, "unknown");
}
END_TEST

START_TEST(test_inside_skips_nothing)
{
	static const char *const empty[] = { "", NULL };
	char out[256];
	struct call c = { .by_object = true, .inside = NULL, .out = out, .outlen = sizeof out };

	known_caller(&c);
	ck_assert_int_eq(c.rc, 0);
	assert_frame(out, "known_caller", c.line);

	/* An address in no object, and an empty substring, which would
	 * otherwise match every path. */
	c.inside = (const void *)16;
	c.also_skip = empty;
	known_caller(&c);
	ck_assert_int_eq(c.rc, 0);
	assert_frame(out, "known_caller", c.line);
}
END_TEST

#define THREADS 4
#define CALLS_PER_THREAD 50

static void *describe_repeatedly(void *arg)
{
	bool *ok = arg;
	char out[256], want[256];
	struct call c = { .skip = 0, .out = out, .outlen = sizeof out };

	known_caller(&c);
	snprintf(want, sizeof want, "%s", out);
	*ok = c.rc == 0 && strncmp(out, "known_caller", strlen("known_caller")) == 0;
	for (int i = 0; i < CALLS_PER_THREAD && *ok; i++) {
		known_caller(&c);
		*ok = c.rc == 0 && strcmp(out, want) == 0;
	}
	return NULL;
}

/* Concurrent calls share the cached libdw session. */
START_TEST(test_threads)
{
	pthread_t threads[THREADS];
	bool ok[THREADS];

	for (int i = 0; i < THREADS; i++)
		ck_assert_int_eq(pthread_create(&threads[i], NULL, describe_repeatedly, &ok[i]), 0);
	for (int i = 0; i < THREADS; i++) {
		ck_assert_int_eq(pthread_join(threads[i], NULL), 0);
		ck_assert_msg(ok[i], "thread %d got a wrong call site", i);
	}
}
END_TEST

/* Loading and unloading an object makes the cached session stale; the
 * answers stay right. libanl is a stub every glibc ships and nothing here
 * links. */
START_TEST(test_dlopen_dlclose)
{
	char out[256];
	struct call c = { .skip = 0, .out = out, .outlen = sizeof out };

	known_caller(&c);
	assert_frame(out, "known_caller", c.line);

	void *handle = dlopen("libanl.so.1", RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(handle != NULL, "dlopen libanl.so.1: %s", dlerror());
	known_caller(&c);
	assert_frame(out, "known_caller", c.line);

	ck_assert_int_eq(dlclose(handle), 0);
	known_caller(&c);
	assert_frame(out, "known_caller", c.line);
}
END_TEST

/* Descriptions are cached by address: a first lookup into little room
 * leaves the whole description for the next one. */
START_TEST(test_cache_keeps_whole)
{
	char small[8], out[256];
	struct call c = { .skip = 0, .out = small, .outlen = sizeof small };

	known_caller(&c);
	ck_assert_int_eq(c.rc, 0);
	ck_assert_str_eq(small, "known_c");
	c.out = out;
	c.outlen = sizeof out;
	known_caller(&c);
	ck_assert_int_eq(c.rc, 0);
	assert_frame(out, "known_caller", c.line);
}
END_TEST

START_TEST(test_demangle)
{
	char out[128];
	const char *mangled = "_ZN4Foam8UPstream12waitRequestsEi";

	/* A C program without the C++ runtime: the name as it is. */
	if (!dlsym(RTLD_DEFAULT, "__cxa_demangle")) {
		ck_assert(!ft_demangle(mangled, out, sizeof out));
		ck_assert_str_eq(out, mangled);
	}
	void *cxx = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_GLOBAL);
	ck_assert_msg(cxx, "cannot load the C++ runtime: %s", dlerror());
	ck_assert(ft_demangle(mangled, out, sizeof out));
	ck_assert_str_eq(out, "Foam::UPstream::waitRequests(int)");
	/* Truncated, still terminated. */
	ck_assert(ft_demangle(mangled, out, 10));
	ck_assert_str_eq(out, "Foam::UPs");
	/* Not a mangled name, or a malformed one: as it is. */
	ck_assert(!ft_demangle("known_caller", out, sizeof out));
	ck_assert_str_eq(out, "known_caller");
	ck_assert(!ft_demangle("_Zx", out, sizeof out));
	ck_assert_str_eq(out, "_Zx");
	strcpy(out, "kept");
	ft_demangle(mangled, out, 0);
	ck_assert_str_eq(out, "kept");
}
END_TEST

static Suite *callsite_suite(void)
{
	Suite *s = suite_create("callsite");
	TCase *tc_skip = tcase_create("skip");
	TCase *tc_inside = tcase_create("inside");
	TCase *tc_cache = tcase_create("cache");

	tcase_add_test(tc_skip, test_skip_names_caller);
	tcase_add_test(tc_skip, test_skip_levels);
	tcase_add_test(tc_skip, test_skip_past_top);
	tcase_add_test(tc_skip, test_truncation);
	tcase_add_test(tc_skip, test_outlen_zero);
	suite_add_tcase(s, tc_skip);

	tcase_add_test(tc_inside, test_inside_skips_own_object);
	tcase_add_test(tc_inside, test_inside_no_frame_left);
	tcase_add_test(tc_inside, test_inside_skips_nothing);
	suite_add_tcase(s, tc_inside);

	TCase *tc_names = tcase_create("names");
	tcase_add_test(tc_names, test_demangle);
	suite_add_tcase(s, tc_names);

	tcase_add_test(tc_cache, test_threads);
	tcase_add_test(tc_cache, test_dlopen_dlclose);
	tcase_add_test(tc_cache, test_cache_keeps_whole);
	tcase_set_timeout(tc_cache, 60);
	suite_add_tcase(s, tc_cache);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(callsite_suite());

	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
