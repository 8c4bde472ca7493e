/* check_inject.c: unit tests of src/inject.c, the FTSHIM_INJECT language:
 * every documented form of rank=, at=, how= and seed=, several clauses,
 * and the fields they give; malformed input of every kind, which must give
 * -EINVAL and one error line naming the clause and the wrong part (also
 * when the text holds control characters); ft_inject_check_ranks against
 * the job's size; the victims (lists as written, random:K distinct, in
 * range, reproducible per seed, about uniform; host:N) and the plan of
 * picked and unpicked ranks; random times that accumulate in victim order,
 * are reproducible, and whose mean gap matches exp: and weibull:; the
 * signal names both ways; ft_inject_describe_how, whose output parses
 * back; and ft_inject_free, also after a failed parse (clean under
 * AddressSanitizer). */
#include "ftshim_config.h"

#include <check.h>

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/inject.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MS UINT64_C(1000000)
#define SEC UINT64_C(1000000000)

static const char *const calls[] = { "MPI_Allreduce", "MPI_Barrier", "MPI_Send", "MPI_Recv" };

/* "1 4 5 6" */
static const char *list_str(const uint32_t *r, uint32_t n)
{
	static char buf[256];
	size_t used = 0;

	buf[0] = '\0';
	for (uint32_t i = 0; i < n && used < sizeof buf; i++)
		used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%u", i ? " " : "", r[i]);
	return buf;
}

static void parse_ok(const char *text, struct ft_inject_spec *spec)
{
	char err[512] = "";

	ck_assert_msg(ft_inject_parse(text, calls, ARRAY_SIZE(calls), spec, err, sizeof err) == 0,
		      "'%s' did not parse: %s", text, err);
	ck_assert_uint_ge(spec->n, 1);
}

/* Parse one clause and keep a copy of it (the spec is freed). */
static struct ft_inject_clause one(const char *text)
{
	struct ft_inject_spec spec;
	struct ft_inject_clause c;

	parse_ok(text, &spec);
	ck_assert_uint_eq(spec.n, 1);
	c = spec.clauses[0];
	c.ranks = NULL;
	ft_inject_free(&spec);
	return c;
}

/* rc must be -EINVAL, and err one line with want (and want2, if not NULL). */
static void assert_err(int rc, const char *err, const char *text, const char *want,
		       const char *want2)
{
	ck_assert_msg(rc == -EINVAL, "'%s' passed", text);
	ck_assert_msg(!strchr(err, '\n') && strncmp(err, "FTSHIM_INJECT", 13) == 0 &&
			      strstr(err, want) && (!want2 || strstr(err, want2)),
		      "'%s': no one line with '%s', '%s': %s", text, want, want2 ? want2 : "", err);
}

static void expect_err(const char *text, const char *want, const char *want2)
{
	struct ft_inject_spec spec;
	char err[512] = "";

	assert_err(ft_inject_parse(text, calls, ARRAY_SIZE(calls), &spec, err, sizeof err), err,
		   text, want, want2);
	/* A failed parse leaves an empty spec, which may be freed again. */
	ck_assert_uint_eq(spec.n, 0);
	ck_assert_ptr_null(spec.clauses);
	ft_inject_free(&spec);
}

START_TEST(test_parse_ranks_forms)
{
	static const char *const lists[][2] = {
		{ "rank=3 at=time:1s", "3" },	      { "rank=1,5,7 at=time:1s", "1 5 7" },
		{ "rank=2-4 at=time:1s", "2 3 4" },    { "rank=1,4-6 at=time:1s", "1 4 5 6" },
		{ "rank=0-0,9 at=time:1s", "0 9" },
	};
	struct ft_inject_spec spec;

	for (size_t i = 0; i < ARRAY_SIZE(lists); i++) {
		parse_ok(lists[i][0], &spec);
		ck_assert_int_eq(spec.clauses[0].ranks_kind, FT_RANKS_LIST);
		struct ft_inject_clause *c = &spec.clauses[0];
		ck_assert_str_eq(list_str(c->ranks, c->nranks), lists[i][1]);
		ft_inject_free(&spec);
	}
	struct ft_inject_clause c = one("rank=random:3 at=time:1s");
	ck_assert_int_eq(c.ranks_kind, FT_RANKS_RANDOM);
	ck_assert_uint_eq(c.count, 3);
	ck_assert_uint_eq(c.nranks, 0);
	c = one("rank=host:5 at=time:1s");
	ck_assert_int_eq(c.ranks_kind, FT_RANKS_HOST);
	ck_assert_uint_eq(c.host_of, 5);
}
END_TEST

START_TEST(test_parse_at_forms)
{
	struct ft_inject_clause c = one("rank=0 at=call:MPI_Allreduce:10");
	ck_assert_int_eq(c.when, FT_AT_CALL);
	ck_assert_str_eq(c.name, "MPI_Allreduce");
	ck_assert_int_eq(c.nth, 10);
	c = one("rank=0 at=time:2.5s");
	ck_assert_int_eq(c.when, FT_AT_TIME);
	ck_assert_uint_eq(c.at_ns, 2500 * MS);
	ck_assert_uint_eq(one("rank=0 at=time:300ms").at_ns, 300 * MS);
	ck_assert_uint_eq(one("rank=0 at=time:250").at_ns, 250 * MS); /* a bare number: ms */
	ck_assert_uint_eq(one("rank=0 at=time:500us").at_ns, 500000);
	c = one("rank=0 at=point:iteration:50");
	ck_assert_int_eq(c.when, FT_AT_POINT);
	ck_assert_str_eq(c.name, "iteration");
	ck_assert_int_eq(c.nth, 50);
	ck_assert_int_eq(one("rank=0 at=point:step:-3").nth, -3);
	c = one("rank=0 at=exp:100ms");
	ck_assert_int_eq(c.when, FT_AT_EXP);
	ck_assert_uint_eq(c.scale_ns, 100 * MS);
	c = one("rank=0 at=weibull:10s:0.7");
	ck_assert_int_eq(c.when, FT_AT_WEIBULL);
	ck_assert_uint_eq(c.scale_ns, 10 * SEC);
	ck_assert_double_eq_tol(c.shape, 0.7, 1e-12);
}
END_TEST

START_TEST(test_parse_how_forms)
{
	/* Each how=, what it parses to, and how ft_inject_describe_how puts it. */
	static const struct {
		const char *how;
		enum ft_inject_how kind;
		uint64_t value; /* sig, exit_code or pause_ns */
		const char *desc;
	} cases[] = {
		{ "", FT_DO_SIGNAL, SIGKILL, "SIGKILL" },
		{ "how=sigkill", FT_DO_SIGNAL, SIGKILL, "SIGKILL" },
		{ "how=sigsegv", FT_DO_SIGNAL, SIGSEGV, "SIGSEGV" },
		{ "how=sigterm", FT_DO_SIGNAL, SIGTERM, "SIGTERM" },
		{ "how=sigabrt", FT_DO_SIGNAL, SIGABRT, "SIGABRT" },
		{ "how=signal:15", FT_DO_SIGNAL, SIGTERM, "SIGTERM" },
		{ "how=signal:usr1", FT_DO_SIGNAL, SIGUSR1, "SIGUSR1" },
		{ "how=signal:SIGHUP", FT_DO_SIGNAL, SIGHUP, "SIGHUP" },
		{ "how=signal:40", FT_DO_SIGNAL, 40, "signal 40" },
		{ "how=exit", FT_DO_EXIT, 1, "exit:1" },
		{ "how=exit:4", FT_DO_EXIT, 4, "exit:4" },
		{ "how=exit:255", FT_DO_EXIT, 255, "exit:255" },
		{ "how=abort", FT_DO_ABORT, 0, "abort" },
		{ "how=pause:3s", FT_DO_PAUSE, 3 * SEC, "pause:3s" },
		{ "how=pause:1500ms", FT_DO_PAUSE, 1500 * MS, "pause:1.5s" },
		{ "how=pause:250ms", FT_DO_PAUSE, 250 * MS, "pause:250ms" },
	};
	char text[128], out[64];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		snprintf(text, sizeof text, "rank=0 at=time:1s %s", cases[i].how);
		struct ft_inject_clause c = one(text);
		ck_assert_int_eq(c.how, cases[i].kind);
		if (c.how == FT_DO_SIGNAL)
			ck_assert_uint_eq((uint64_t)c.sig, cases[i].value);
		else if (c.how == FT_DO_EXIT)
			ck_assert_uint_eq((uint64_t)c.exit_code, cases[i].value);
		else if (c.how == FT_DO_PAUSE)
			ck_assert_uint_eq(c.pause_ns, cases[i].value);
		ft_inject_describe_how(&c, out, sizeof out);
		ck_assert_str_eq(out, cases[i].desc);
		if (c.sig == 40)
			continue;
		/* The description parses back to the same action. */
		snprintf(text, sizeof text, "rank=0 at=time:1s how=%s", out);
		struct ft_inject_clause back = one(text);
		ck_assert_int_eq(back.how, c.how);
		ck_assert_int_eq(back.sig, c.sig);
		ck_assert_int_eq(back.exit_code, c.exit_code);
		ck_assert_uint_eq(back.pause_ns, c.pause_ns);
	}
}
END_TEST

START_TEST(test_parse_seed_and_clauses)
{
	static const char *const texts[] = {
		"rank=3 at=call:MPI_Allreduce:10", "rank=1-2 at=point:iteration:50 how=exit:4",
		"rank=0 at=time:2s how=sigsegv", "rank=random:3   at=weibull:10s:0.7 seed=42",
		"rank=2 at=time:1s\thow=pause:3s",
	};
	struct ft_inject_spec spec;

	ck_assert_uint_eq(one("rank=0 at=time:1s").seed, 1);
	ck_assert_uint_eq(one("rank=0 at=time:1s seed=42").seed, 42);
	ck_assert_uint_eq(one("seed=0 at=time:1s rank=0").seed, 0); /* any order */
	/* The man page's examples, as one text with blanks around ';' and
	 * between fields, and an empty clause at the end. */
	parse_ok("  rank=3 at=call:MPI_Allreduce:10 ;rank=1-2 at=point:iteration:50 how=exit:4; "
		 "rank=0 at=time:2s how=sigsegv;\trank=random:3   at=weibull:10s:0.7 seed=42 ; "
		 "rank=2 at=time:1s\thow=pause:3s ;",
		 &spec);
	ck_assert_uint_eq(spec.n, 5);
	for (uint32_t i = 0; i < spec.n; i++)
		ck_assert_str_eq(spec.clauses[i].text, texts[i]);
	ck_assert_str_eq(list_str(spec.clauses[1].ranks, spec.clauses[1].nranks), "1 2");
	ck_assert_int_eq(spec.clauses[1].exit_code, 4);
	ck_assert_int_eq(spec.clauses[2].sig, SIGSEGV);
	ck_assert_uint_eq(spec.clauses[3].seed, 42);
	ck_assert_uint_eq(spec.clauses[4].pause_ns, 3 * SEC);
	ft_inject_free(&spec);
	ck_assert_uint_eq(spec.n, 0);
	ck_assert_ptr_null(spec.clauses);
	ft_inject_free(&spec); /* twice is harmless */
}
END_TEST

START_TEST(test_errors)
{
	static const char *const cases[][3] = {
		/* fields and clauses */
		{ "at=time:1s", "rank= is missing", "clause 1 \"at=time:1s\"" },
		{ "rank=1", "at= is missing", NULL },
		{ "rank=1 at=time:1s colour=red", "unknown field 'colour='", "copy=" },
		{ "rank=1 at=time:1s copy=spare", "copy=spare", "primary, replica or both" },
		{ "rank=1 at=time:1s copy=both copy=both", "copy= is given twice", NULL },
		{ "rank=1 at=time:1s kill", "'kill' is not a field", NULL },
		{ "rank=1 rank=2 at=time:1s", "rank= is given twice", NULL },
		{ "rank=1 at=time:1s; rank=2 at=soon", "clause 2 \"rank=2 at=soon\"", "at=soon" },
		{ "", "FTSHIM_INJECT is empty", NULL },
		{ " ;  ; ", "FTSHIM_INJECT is empty", NULL },
		{ "rank=1 at=time:1s seed=abc", "seed=abc: not a number", NULL },
		/* rank= */
		{ "rank=4-2 at=time:1s", "'4-2' is not a range", NULL },
		{ "rank=2- at=time:1s", "'2-' is not a range", NULL },
		{ "rank=-1 at=time:1s", "'-1' is not a range", NULL },
		{ "rank=x at=time:1s", "'x' is not a rank", "rank=x" },
		{ "rank=1,,2 at=time:1s", "'' is not a rank", NULL },
		{ "rank= at=time:1s", "rank= is empty", NULL },
		{ "rank=random:0 at=time:1s", "rank=random:0", "at least 1" },
		{ "rank=host: at=time:1s", "rank=host:", "host needs" },
		{ "rank=0-99999999 at=time:1s", "too many ranks", NULL },
		/* at= */
		{ "rank=1 at=soon", "at=soon", "accepted: call:" },
		{ "rank=1 at=later:5s", "at=later:5s", "accepted: call:" },
		{ "rank=1 at=call:MPI_Allgood:3", "does not wrap an MPI function 'MPI_Allgood'" },
		{ "rank=1 at=call:MPI_Allreduc:3", "'MPI_Allreduc'", "did you mean MPI_Allreduce" },
		{ "rank=1 at=call:MPI_Allreduce:0", "at=call:MPI_Allreduce:0", "at least 1" },
		{ "rank=1 at=call:MPI_Allreduce", "at=call:MPI_Allreduce", "call number" },
		{ "rank=1 at=call::3", "at=call::3", "MPI function name" },
		{ "rank=1 at=time:soon", "at=time: 'soon'", "not a duration" },
		{ "rank=1 at=time:5h", "at=time: '5h'", "unknown unit 'h'" },
		{ "rank=1 at=point:iteration", "at=point:iteration", "point name and a value" },
		{ "rank=1 at=exp:0s", "at=exp:0s", "more than 0" },
		{ "rank=1 at=exp:fast", "at=exp: 'fast'", NULL },
		{ "rank=1 at=weibull:10s", "at=weibull:10s", "a scale and a shape" },
		{ "rank=1 at=weibull:10s:0", "at=weibull:10s:0", "shape" },
		{ "rank=1 at=weibull:10s:101", "at=weibull:10s:101", "100" },
		{ "rank=1 at=weibull:0s:1", "at=weibull:0s:1", "scale above 0" },
		{ "rank=1 at=weibull:x:1", "at=weibull: 'x'", NULL },
		/* how= */
		{ "rank=1 at=time:1s how=sigfoo", "how=sigfoo", "accepted: sigkill" },
		{ "rank=1 at=time:1s how=sigstop", "how=sigstop", NULL },
		{ "rank=1 at=time:1s how=signal:FOO", "unknown signal 'FOO'", NULL },
		{ "rank=1 at=time:1s how=signal:STOP", "unknown signal 'STOP'", "pause:DURATION" },
		{ "rank=1 at=time:1s how=signal:0", "unknown signal '0'", NULL },
		{ "rank=1 at=time:1s how=exit:256", "how=exit:256", "0 to 255" },
		{ "rank=1 at=time:1s how=pause:0s", "how=pause:0s", "longer than 0" },
		{ "rank=1 at=time:1s how=explode", "how=explode", "accepted: sigkill" },
		/* the text comes from the environment: control characters too */
		{ "rank=1\nat=time:1s", "clause 1", "'1?at=time:1s' is not a rank" },
		{ "rank=1 at=time:1s how=ex\nit", "how=ex?it", NULL },
		{ "rank=1 at=time:1s; rank=2 at=time:1s\r\nfoo", "clause 2", "1s??foo" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		expect_err(cases[i][0], cases[i][1], cases[i][2]);
}
END_TEST

START_TEST(test_check_ranks)
{
	static const struct {
		const char *text;
		uint32_t nprocs, nspawnable;
		const char *want, *want2;
	} cases[] = {
		{ "rank=0,7 at=time:1s; rank=random:8 at=exp:1s", 8, 0, NULL, NULL },
		{ "rank=host:7 at=time:1s", 8, 0, NULL, NULL },
		{ "rank=host:0 at=time:1s", 1, 0, NULL, NULL },
		{ "rank=1,8 at=time:1s", 8, 0, "rank 8 does not exist", "ranks 0 to 7" },
		{ "rank=1 at=time:1s; rank=2-9 at=time:1s", 8, 0, "clause 2", "rank 8 does not" },
		{ "rank=random:9 at=time:1s", 8, 0, "random:9", "the job has only 8 ranks" },
		{ "rank=host:8 at=time:1s", 8, 0, "host:8: rank 8 does not exist", "ranks 0 to 7" },
		{ "rank=1 at=time:1s", 1, 0, "rank 1 does not exist", "ranks 0 to 0" },
		/* Spawned processes: named as such only. */
		{ "rank=spawned:0,5 at=point:step:3", 4, 6, NULL, NULL },
		{ "rank=spawned:6 at=time:1s", 4, 6, "spawned:6: the job may spawn 6", "spawned:0 to spawned:5" },
		{ "rank=spawned:0 at=time:1s", 4, 0, "spawned:0: the job may spawn no process", NULL },
		{ "rank=4 at=time:1s", 4, 6, "rank 4 does not exist", "ranks 0 to 3" },
		{ "rank=random:5 at=time:1s", 4, 6, "random:5", "the job has only 4 ranks" },
	};
	struct ft_inject_spec spec;
	char err[512];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		parse_ok(cases[i].text, &spec);
		strcpy(err, "");
		int rc = ft_inject_check_ranks(&spec, cases[i].nprocs, cases[i].nspawnable, NULL, err,
					       sizeof err);
		ft_inject_free(&spec);
		if (cases[i].want)
			assert_err(rc, err, cases[i].text, cases[i].want, cases[i].want2);
		else
			ck_assert_msg(rc == 0, "'%s': %s", cases[i].text, err);
	}
}
END_TEST

START_TEST(test_victims_list_and_host)
{
	static const uint64_t hosts[] = { 10, 20, 10, 30, 20, 10 };
	uint32_t out[16], list[] = { 7, 1, 4, 5 };
	struct ft_inject_clause c = one("rank=0 at=time:1s");

	c.ranks = list;
	c.nranks = 4;
	ck_assert_str_eq(list_str(out, ft_inject_victims(&c, 8, NULL, NULL, out, 16)), "7 1 4 5");
	ck_assert_str_eq(list_str(out, ft_inject_victims(&c, 6, NULL, NULL, out, 16)), "1 4 5"); /* 7 */
	ck_assert_str_eq(list_str(out, ft_inject_victims(&c, 8, NULL, NULL, out, 2)), "7 1");	   /* max */
	c = one("rank=host:2 at=time:1s");
	ck_assert_str_eq(list_str(out, ft_inject_victims(&c, 6, hosts, NULL, out, 16)), "0 2 5");
	c.host_of = 4;
	ck_assert_str_eq(list_str(out, ft_inject_victims(&c, 6, hosts, NULL, out, 16)), "1 4");
	c.host_of = 3;
	ck_assert_str_eq(list_str(out, ft_inject_victims(&c, 6, hosts, NULL, out, 16)), "3");
	c.host_of = 6;
	ck_assert_uint_eq(ft_inject_victims(&c, 6, hosts, NULL, out, 16), 0);
}
END_TEST

START_TEST(test_victims_random)
{
	static const uint32_t sizes[][2] = { { 1, 1 },	   { 7, 3 },	 { 100, 3 },
					     { 100, 100 }, { 1000, 40 } };
	uint32_t a[1000], b[1000], hits[4] = { 0 };
	struct ft_inject_clause c = one("rank=random:1 at=time:1s");

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		uint32_t np = sizes[i][0], k = c.count = sizes[i][1];
		for (c.seed = 1; c.seed <= 30; c.seed++) {
			bool seen[1000] = { false };
			ck_assert_uint_eq(ft_inject_victims(&c, np, NULL, NULL, a, np), k);
			ck_assert_uint_eq(ft_inject_victims(&c, np, NULL, NULL, b, np), k);
			ck_assert_mem_eq(a, b, k * sizeof a[0]); /* the same seed, the same ranks */
			for (uint32_t j = 0; j < k; j++) {
				ck_assert_msg(a[j] < np && !seen[a[j]], "%u of %u", a[j], np);
				seen[a[j]] = true;
			}
		}
	}
	c.count = 3; /* another seed, other ranks */
	c.seed = 1;
	ft_inject_victims(&c, 100, NULL, NULL, a, 100);
	c.seed = 2;
	ft_inject_victims(&c, 100, NULL, NULL, b, 100);
	ck_assert_int_ne(memcmp(a, b, 3 * sizeof a[0]), 0);
	c.count = 10; /* more than the job has: all of it */
	ck_assert_uint_eq(ft_inject_victims(&c, 4, NULL, NULL, a, 100), 4);
	/* random:1 of 4 over 4000 seeds: each rank about 1000 times (sd 27). */
	for (c.count = 1, c.seed = 1; c.seed <= 4000; c.seed++) {
		ck_assert_uint_eq(ft_inject_victims(&c, 4, NULL, NULL, a, 1), 1);
		hits[a[0]]++;
	}
	for (int r = 0; r < 4; r++)
		ck_assert_msg(hits[r] > 850 && hits[r] < 1150, "rank %d: %u of 4000", r, hits[r]);
}
END_TEST

/* The plan of rank self as "CLAUSE:WHEN@MS ...", WHEN c(all), t(ime) or p(oint). */
static const char *plan_str(const struct ft_inject_spec *spec, uint32_t np, uint32_t self,
			    const uint64_t *hosts, uint32_t max)
{
	static char buf[256];
	struct ft_inject_action act[8];
	uint32_t n = ft_inject_plan(spec, np, self, hosts, NULL, act, max);
	size_t used = 0;

	buf[0] = '\0';
	for (const struct ft_inject_action *a = act; a < act + n && used < sizeof buf; a++)
		used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%d:%c@%llu",
					 a > act ? " " : "", (int)(a->clause - spec->clauses),
					 "ctpEW"[a->when], (unsigned long long)(a->at_ns / MS));
	return buf;
}

START_TEST(test_plan_picked_or_not)
{
	static const uint64_t hosts[] = { 1, 2, 1, 2 };
	struct ft_inject_spec spec;
	uint32_t v[8];

	parse_ok("rank=2 at=call:MPI_Barrier:10; rank=1,2 at=time:2.5s how=exit:3; "
		 "rank=0 at=point:iteration:50; rank=host:3 at=time:1s",
		 &spec);
	ck_assert_str_eq(plan_str(&spec, 4, 0, hosts, 8), "2:p@0");
	ck_assert_str_eq(plan_str(&spec, 4, 1, hosts, 8), "1:t@2500 3:t@1000");
	ck_assert_str_eq(plan_str(&spec, 4, 2, hosts, 8), "0:c@0 1:t@2500");
	ck_assert_str_eq(plan_str(&spec, 4, 2, hosts, 1), "0:c@0"); /* at most max */
	ck_assert_str_eq(plan_str(&spec, 4, 3, hosts, 8), "3:t@1000");
	ck_assert_str_eq(plan_str(&spec, 5, 4, (const uint64_t[]){ 1, 2, 1, 2, 3 }, 8), "");
	ft_inject_free(&spec);
	parse_ok("rank=random:2 at=time:1s seed=9", &spec);
	ck_assert_uint_eq(ft_inject_victims(&spec.clauses[0], 8, NULL, NULL, v, 8), 2);
	for (uint32_t r = 0; r < 8; r++)
		ck_assert_str_eq(plan_str(&spec, 8, r, NULL, 8),
				 r == v[0] || r == v[1] ? "0:t@1000" : "");
	ft_inject_free(&spec);
}
END_TEST

/* copy= in a replicated job: 4 program ranks, 0 and 2 with replicas (job
 * ranks 5 and 4), 6 processes. */
START_TEST(test_plan_copies)
{
	static const int32_t replica_of[4] = { 5, -1, 4, -1 };
	static const struct ft_inject_copies copies = { .n = 4, .replica_of = replica_of,
							 .variable = "FTSHIM_REPLICAS" };
	static const uint64_t hosts[] = { 1, 1, 2, 2, 1, 2 };
	struct ft_inject_spec spec;
	struct ft_inject_action act[8];
	char err[512];
	/* Which of the 6 processes die, as a string of 0/1. */
	char got[7];

	parse_ok("rank=0 at=time:1s; rank=2 at=time:2s copy=replica; rank=0,1 at=time:3s copy=both;"
		 " rank=host:3 at=time:4s; rank=host:0 at=time:5s copy=replica; rank=host:0 at=time:6s copy=both",
		 &spec);
	ck_assert_int_eq(ft_inject_check_ranks(&spec, 6, 0, &copies, err, sizeof err), 0);
	for (uint32_t ci = 0; ci < spec.n; ci++) {
		for (uint32_t p = 0; p < 6; p++) {
			uint32_t n = ft_inject_plan(&spec, 6, p, hosts, &copies, act, 8);
			got[p] = '0';
			for (uint32_t k = 0; k < n; k++)
				if (act[k].clause == &spec.clauses[ci])
					got[p] = '1';
		}
		got[6] = '\0';
		/* host: takes the hosts of the copies copy= names. */
		static const char *const want[] = { "100000", "000010", "110001", "001101", "001101", "111111" };
		ck_assert_msg(strcmp(got, want[ci]) == 0, "clause %u: %s, want %s", ci + 1, got, want[ci]);
	}
	ft_inject_free(&spec);

	const struct {
		const char *text;
		const struct ft_inject_copies *copies;
		const char *want, *want2;
	} bad[] = {
		{ "rank=4 at=time:1s", &copies, "rank 4 is not one of the program's ranks", "0 to 3" },
		{ "rank=1 at=time:1s copy=replica", &copies, "rank 1 has no replica", NULL },
		{ "rank=random:5 at=time:1s", &copies, "random:5", "only 4 ranks" },
		{ "rank=host:5 at=time:1s", &copies, "host:5 is not one of the program's ranks", NULL },
		{ "rank=host:1 at=time:1s copy=replica", &copies, "host:1 copy=replica: rank 1 has no replica",
		  NULL },
		{ "rank=1 at=time:1s copy=both", NULL, "copy=both: this job runs no replicas", NULL },
		{ "rank=spawned:0 at=time:1s copy=primary", &copies, "copy= does not apply", NULL },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		parse_ok(bad[i].text, &spec);
		int rc = ft_inject_check_ranks(&spec, 6, 2, bad[i].copies, err, sizeof err);
		ft_inject_free(&spec);
		assert_err(rc, err, bad[i].text, bad[i].want, bad[i].want2);
	}
	/* Without replicas copy=primary is what happens anyway. */
	parse_ok("rank=1 at=time:1s copy=primary", &spec);
	ck_assert_int_eq(ft_inject_check_ranks(&spec, 6, 0, NULL, err, sizeof err), 0);
	ft_inject_free(&spec);
}
END_TEST

/* Spares (FTSHIM_SPARES): 4 program ranks and 2 spares, job ranks 4 and
 * 5. spare:J names a spare; plain ranks and random: the program's. */
START_TEST(test_check_spares)
{
	static const struct ft_inject_copies spares = { .n = 4, .nspares = 2, .variable = "FTSHIM_SPARES" };
	struct ft_inject_spec spec;
	uint32_t v[8];
	char err[512];

	parse_ok("rank=spare:0,1 at=time:1s; rank=3 at=time:1s; rank=random:4 at=time:1s", &spec);
	ck_assert_int_eq(ft_inject_check_ranks(&spec, 6, 0, &spares, err, sizeof err), 0);
	ck_assert(spec.clauses[0].spare);
	ck_assert_uint_eq(ft_inject_pool(&spec.clauses[2], 6, &spares), 4);
	ck_assert_uint_eq(ft_inject_victims(&spec.clauses[2], 4, NULL, &spares, v, 8), 4);
	for (int k = 0; k < 4; k++)
		ck_assert_uint_lt(v[k], 4);
	ck_assert(ft_inject_victim_is(&spec.clauses[1], &spares, 3, 3));
	ft_inject_free(&spec);

	const struct {
		const char *text;
		const struct ft_inject_copies *copies;
		const char *want, *want2;
	} bad[] = {
		{ "rank=spare:2 at=time:1s", &spares, "spare:2: the job has 2 spares (FTSHIM_SPARES)",
		  "spare:0 to spare:1" },
		{ "rank=spare:0 at=time:1s", NULL, "spare:0: this job has no spares", NULL },
		{ "rank=4 at=time:1s", &spares, "rank 4 is not one of the program's ranks: with FTSHIM_SPARES",
		  "spare:J names the spares" },
		{ "rank=random:5 at=time:1s", &spares, "random:5: the program has only 4 ranks (FTSHIM_SPARES)",
		  NULL },
		{ "rank=1 at=time:1s copy=replica", &spares, "copy=replica: this job runs no replicas", NULL },
		{ "rank=spare:0 at=time:1s copy=primary", &spares, "copy= does not apply to spare processes",
		  NULL },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		parse_ok(bad[i].text, &spec);
		int rc = ft_inject_check_ranks(&spec, 6, 0, bad[i].copies, err, sizeof err);
		ft_inject_free(&spec);
		assert_err(rc, err, bad[i].text, bad[i].want, bad[i].want2);
	}
}
END_TEST

/* The time at which each victim of the one clause of text dies, in victim
 * order; returns how many. */
static uint32_t victim_times(const char *text, uint32_t nprocs, uint64_t *t, uint32_t *v)
{
	struct ft_inject_spec spec;
	struct ft_inject_action act;

	parse_ok(text, &spec);
	uint32_t nv = ft_inject_victims(&spec.clauses[0], nprocs, NULL, NULL, v, nprocs);
	for (uint32_t k = 0; k < nv; k++) {
		ck_assert_uint_eq(ft_inject_plan(&spec, nprocs, v[k], NULL, NULL, &act, 1), 1);
		ck_assert_int_eq(act.when, FT_AT_TIME);
		ck_assert_ptr_eq(act.clause, &spec.clauses[0]);
		t[k] = act.at_ns;
	}
	ft_inject_free(&spec);
	return nv;
}

START_TEST(test_plan_random_times)
{
	static const char *const texts[] = {
		"rank=0-9 at=exp:100ms seed=7", "rank=random:6 at=exp:2s seed=3",
		"rank=9,2,5,0 at=weibull:10s:0.7 seed=42", "rank=random:10 at=weibull:1s:3",
	};
	uint64_t t[10], t2[10], t3[10];
	uint32_t v[10], v2[10];

	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		uint32_t n = victim_times(texts[i], 10, t, v);
		ck_assert_uint_ge(n, 4);
		ck_assert_uint_gt(t[0], 0);
		for (uint32_t k = 1; k < n; k++) /* the gaps accumulate */
			ck_assert_msg(t[k] > t[k - 1], "%s: victim %u at %llu, %llu", texts[i], k,
				      (unsigned long long)t[k], (unsigned long long)t[k - 1]);
		ck_assert_uint_eq(victim_times(texts[i], 10, t2, v2), n);
		ck_assert_mem_eq(v, v2, n * sizeof v[0]);
		ck_assert_mem_eq(t, t2, n * sizeof t[0]); /* reproducible */
	}
	victim_times("rank=0-9 at=exp:100ms seed=8", 10, t3, v2);
	victim_times("rank=0-9 at=exp:100ms seed=7", 10, t, v);
	ck_assert_int_ne(memcmp(t, t3, sizeof t), 0); /* another seed, other times */
}
END_TEST

START_TEST(test_plan_time_means)
{
	enum { N = 2000 };
	static uint64_t t[N];
	static uint32_t v[N];
	char text[128];

	/* 2000 gaps in a row: mean within 10% (exp: 4.5 sd; weibull shape 2,
	 * mean 0.886 SCALE: 8 sd). */
	for (int seed = 1; seed <= 3; seed++) {
		snprintf(text, sizeof text, "rank=0-%d at=exp:100ms seed=%d", N - 1, seed);
		ck_assert_uint_eq(victim_times(text, N, t, v), N);
		double mean = (double)t[N - 1] / N;
		ck_assert_msg(fabs(mean - 100e6) < 10e6, "exp seed %d: mean %.0f ns", seed, mean);
		snprintf(text, sizeof text, "rank=0-%d at=weibull:1s:2 seed=%d", N - 1, seed);
		ck_assert_uint_eq(victim_times(text, N, t, v), N);
		mean = (double)t[N - 1] / N;
		ck_assert_msg(fabs(mean / (1e9 * tgamma(1.5)) - 1) < 0.1, "weibull: %.0f", mean);
	}
	/* One draw per seed, random:1 over 2000 seeds. */
	double sum = 0;
	for (int seed = 1; seed <= N; seed++) {
		snprintf(text, sizeof text, "rank=random:1 at=exp:100ms seed=%d", seed);
		ck_assert_uint_eq(victim_times(text, 4, t, v), 1);
		sum += (double)t[0];
	}
	ck_assert_msg(fabs(sum / N - 100e6) < 10e6, "mean over seeds %.0f ns", sum / N);
}
END_TEST

START_TEST(test_signal_names)
{
	static const char *const kill_names[] = { "SIGKILL", "KILL", "kill", "SigKill", "9" };
	static const char *const bad[] = { "", "SIG", "SIGFOO", "bogus", "0", "65", "-9", "9x" };
	int named = 0;

	for (size_t i = 0; i < ARRAY_SIZE(kill_names); i++)
		ck_assert_int_eq(ft_inject_signal_number(kill_names[i]), SIGKILL);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		ck_assert_msg(ft_inject_signal_number(bad[i]) == -1, "'%s' is a signal", bad[i]);
	ck_assert_int_eq(ft_inject_signal_number("segv"), SIGSEGV);
	ck_assert_int_eq(ft_inject_signal_number("64"), 64);
	ck_assert_str_eq(ft_inject_signal_name(SIGKILL), "SIGKILL");
	ck_assert_ptr_null(ft_inject_signal_name(0));
	ck_assert_ptr_null(ft_inject_signal_name(40));
	for (int sig = 1; sig < 32; sig++) { /* every name both ways */
		const char *name = ft_inject_signal_name(sig);
		named += name != NULL;
		ck_assert_int_eq(name ? ft_inject_signal_number(name) : sig, sig);
		ck_assert_int_eq(name ? ft_inject_signal_number(name + 3) : sig, sig);
	}
	ck_assert_int_ge(named, 15);
}
END_TEST

START_TEST(test_free_after_failure)
{
	/* The first clauses allocate rank lists; the last one fails. The
	 * spec comes back empty and nothing leaks (AddressSanitizer). */
	struct ft_inject_spec spec;
	char buf[64];

	expect_err("rank=1-100 at=time:1s; rank=1,2 at=exp:1s; rank=4 at=no:1", "clause 3", NULL);
	expect_err("rank=1-100 rank=2 at=time:1s", "given twice", NULL);
	expect_err("rank=0-9,x at=time:1s", "'x' is not a rank", NULL);
	/* A small err buffer is filled, terminated and not overrun. */
	memset(buf, 'G', sizeof buf);
	ck_assert_int_eq(ft_inject_parse("rank=x", calls, 1, &spec, buf, 16), -EINVAL);
	ck_assert_uint_eq(strlen(buf), 15);
	for (size_t i = 16; i < sizeof buf; i++)
		ck_assert_int_eq(buf[i], 'G');
}
END_TEST

static Suite *inject_suite(void)
{
	Suite *s = suite_create("inject");
	TCase *tc_parse = tcase_create("parse");
	TCase *tc_errors = tcase_create("errors");
	TCase *tc_plan = tcase_create("plan");

	tcase_add_test(tc_parse, test_parse_ranks_forms);
	tcase_add_test(tc_parse, test_parse_at_forms);
	tcase_add_test(tc_parse, test_parse_how_forms);
	tcase_add_test(tc_parse, test_parse_seed_and_clauses);
	tcase_add_test(tc_parse, test_signal_names);
	suite_add_tcase(s, tc_parse);

	tcase_add_test(tc_errors, test_errors);
	tcase_add_test(tc_errors, test_check_ranks);
	tcase_add_test(tc_errors, test_free_after_failure);
	suite_add_tcase(s, tc_errors);

	tcase_add_test(tc_plan, test_victims_list_and_host);
	tcase_add_test(tc_plan, test_victims_random);
	tcase_add_test(tc_plan, test_plan_picked_or_not);
	tcase_add_test(tc_plan, test_plan_random_times);
	tcase_add_test(tc_plan, test_plan_copies);
	tcase_add_test(tc_plan, test_check_spares);
	tcase_add_test(tc_plan, test_plan_time_means);
	tcase_set_timeout(tc_plan, 60);
	suite_add_tcase(s, tc_plan);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(inject_suite());

	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
