/* check_config.c: unit tests of src/config.c, the parser of the FTSHIM_*
 * environment variables. They check the table (every default parses, the
 * defaults land in struct ft_config, the FTSHIM_LOG keywords are the
 * logger's level names), ft_config_load on hand-built envp arrays (valid
 * values, invalid and empty values, unknown FTSHIM_ names near a known
 * one (an error with a "did you mean") and far from all (no error; listed
 * by ft_config_unknown), other variables ignored, FTSHIM_DISABLE
 * short-circuiting everything else), the one-line error format (variable,
 * value, "accepted", never a newline), and the value parsers for each type
 * through ft_config_parse_value with locally built DURATION and UINT
 * variables (units, fractions, ranges, overflow), plus
 * ft_config_format_duration and ft_config_describe_accepted. */
#include "ftshim_config.h"

#include <check.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/config.h"
#include "src/log.h"

#define MS UINT64_C(1000000)
#define US UINT64_C(1000)
#define SEC UINT64_C(1000000000)

/* A duration variable shaped like a real one: 1ms to 10s. */
static const struct ft_config_var dur_var = {
	.name = "FTSHIM_TEST_PERIOD", .type = FT_CV_DURATION, .def = "100ms",
	.min = 1 * MS, .max = 10 * SEC, .keywords = NULL, .help = "test", .offset = 0,
};

/* A duration variable with a wide range, to test the units and fractions
 * below 1ms without the range getting in the way. */
static const struct ft_config_var wide_dur_var = {
	.name = "FTSHIM_TEST_WIDE", .type = FT_CV_DURATION, .def = "1ns",
	.min = 1, .max = 1000 * SEC, .keywords = NULL, .help = "test", .offset = 0,
};

static const struct ft_config_var uint_var = {
	.name = "FTSHIM_TEST_COUNT", .type = FT_CV_UINT, .def = "7",
	.min = 1, .max = 100, .keywords = NULL, .help = "test", .offset = 0,
};

static const struct ft_config_var *table_var(const char *name)
{
	for (size_t i = 0; i < ft_config_var_count; i++)
		if (strcmp(ft_config_vars[i].name, name) == 0)
			return &ft_config_vars[i];
	return NULL;
}

/* ft_config_load on envp; checks the invariants of every call: err is a
 * string, empty on success, one line without a newline on failure. */
static int load(struct ft_config *cfg, char *const *envp, char *err, size_t errlen)
{
	memset(err, 'Z', errlen);
	err[errlen - 1] = '\0';
	int rc = ft_config_load(cfg, envp, err, errlen);

	ck_assert_msg(memchr(err, '\0', errlen) != NULL, "err not terminated");
	ck_assert_msg(strchr(err, '\n') == NULL, "err contains a newline: '%s'", err);
	ck_assert_msg(strchr(err, '\r') == NULL, "err contains a carriage return: '%s'", err);
	if (rc == 0)
		ck_assert_str_eq(err, "");
	else
		ck_assert_msg(err[0] != '\0', "rc %d but err is empty", rc);
	return rc;
}

static void assert_contains(const char *haystack, const char *needle)
{
	ck_assert_msg(strstr(haystack, needle) != NULL, "'%s' does not contain '%s'", haystack,
		      needle);
}

static void assert_lacks(const char *haystack, const char *needle)
{
	ck_assert_msg(strstr(haystack, needle) == NULL, "'%s' should not contain '%s'", haystack,
		      needle);
}

/* Parse a duration; returns rc and stores the value in *ns on success. */
static int parse_dur(const struct ft_config_var *var, const char *value, uint64_t *ns, char *why,
		     size_t whylen)
{
	*ns = UINT64_C(0xdeadbeef);
	return ft_config_parse_value(var, value, ns, why, whylen);
}

static void assert_dur_ok(const struct ft_config_var *var, const char *value, uint64_t expect)
{
	char why[128];
	uint64_t ns;
	int rc = parse_dur(var, value, &ns, why, sizeof why);

	ck_assert_msg(rc == 0, "'%s' rejected (%d: %s)", value, rc, why);
	ck_assert_msg(ns == expect, "'%s' parsed as %llu ns, expected %llu", value,
		      (unsigned long long)ns, (unsigned long long)expect);
}

static void assert_dur_bad(const struct ft_config_var *var, const char *value)
{
	char why[128];
	uint64_t ns;
	int rc = parse_dur(var, value, &ns, why, sizeof why);

	ck_assert_msg(rc == -EINVAL, "'%s' accepted as %llu ns (rc %d)", value,
		      (unsigned long long)ns, rc);
	ck_assert_msg(why[0] != '\0', "'%s' rejected without a reason", value);
}

/* --- the table and the defaults ------------------------------------------- */

START_TEST(test_table_names)
{
	ck_assert_uint_ge(ft_config_var_count, 3);
	ck_assert_ptr_nonnull(table_var("FTSHIM_DISABLE"));
	ck_assert_ptr_nonnull(table_var("FTSHIM_LOG"));
	ck_assert_ptr_nonnull(table_var("FTSHIM_LOG_FILE"));
	ck_assert_int_eq(table_var("FTSHIM_DISABLE")->type, FT_CV_BOOL);
	ck_assert_int_eq(table_var("FTSHIM_LOG")->type, FT_CV_ENUM);
	ck_assert_int_eq(table_var("FTSHIM_LOG_FILE")->type, FT_CV_STRING);
	for (size_t i = 0; i < ft_config_var_count; i++) {
		const struct ft_config_var *v = &ft_config_vars[i];
		ck_assert_msg(strncmp(v->name, FT_CONFIG_PREFIX, strlen(FT_CONFIG_PREFIX)) == 0,
			      "%s lacks the prefix", v->name);
		ck_assert_ptr_nonnull(v->def);
		ck_assert_ptr_nonnull(v->help);
		ck_assert_msg(v->help[0] != '\0', "%s has no help", v->name);
		ck_assert_msg((v->type == FT_CV_ENUM) == (v->keywords != NULL),
			      "%s: keywords iff ENUM", v->name);
		ck_assert_uint_lt(v->offset, sizeof(struct ft_config));
		for (size_t j = 0; j < i; j++)
			ck_assert_str_ne(v->name, ft_config_vars[j].name);
	}
}
END_TEST

START_TEST(test_every_default_parses)
{
	for (size_t i = 0; i < ft_config_var_count; i++) {
		const struct ft_config_var *v = &ft_config_vars[i];
		union {
			bool b;
			uint64_t u;
			int e;
			const char *s;
		} val;
		char why[128];

		memset(&val, 0, sizeof val);
		int rc = ft_config_parse_value(v, v->def, &val, why, sizeof why);
		ck_assert_msg(rc == 0, "default '%s' of %s does not parse: %s", v->def, v->name,
			      why);
		if (v->type == FT_CV_UINT || v->type == FT_CV_DURATION) {
			ck_assert_uint_ge(val.u, v->min);
			ck_assert_uint_le(val.u, v->max);
		}
	}
}
END_TEST

START_TEST(test_defaults)
{
	struct ft_config cfg;

	memset(&cfg, 0xab, sizeof cfg);
	ft_config_defaults(&cfg);
	ck_assert(cfg.disable == false);
	ck_assert_int_eq(cfg.log_level, 2);
	ck_assert_int_eq(cfg.log_level, FT_LOG_INFO);
	ck_assert_ptr_nonnull(cfg.log_file);
	ck_assert_str_eq(cfg.log_file, "");
}
END_TEST

START_TEST(test_log_keywords_are_level_names)
{
	/* FTSHIM_LOG's keyword index is used as an enum ft_log_level. */
	char joined[256] = "";

	for (int l = 0; l < FT_LOG_LEVEL_COUNT; l++) {
		if (l)
			strcat(joined, "|");
		strcat(joined, ft_log_level_names[l]);
	}
	ck_assert_str_eq(table_var("FTSHIM_LOG")->keywords, joined);
}
END_TEST

/* --- ft_config_load: valid values ------------------------------------------ */

START_TEST(test_load_empty_env)
{
	struct ft_config cfg;
	char err[FT_CONFIG_ERR_MAX];
	char *envp[] = { NULL };

	ck_assert_int_eq(load(&cfg, envp, err, sizeof err), 0);
	ck_assert(!cfg.disable);
	ck_assert_int_eq(cfg.log_level, FT_LOG_INFO);
	ck_assert_str_eq(cfg.log_file, "");
}
END_TEST

START_TEST(test_load_log_levels)
{
	static const struct {
		const char *entry;
		int level;
	} cases[] = {
		{ "FTSHIM_LOG=error", 0 }, { "FTSHIM_LOG=warn", 1 },  { "FTSHIM_LOG=info", 2 },
		{ "FTSHIM_LOG=debug", 3 }, { "FTSHIM_LOG=trace", 4 }, { "FTSHIM_LOG=DEBUG", 3 },
		{ "FTSHIM_LOG=DeBuG", 3 }, { "FTSHIM_LOG=Warn", 1 },  { "FTSHIM_LOG=TRACE", 4 },
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct ft_config cfg;
		char err[FT_CONFIG_ERR_MAX];
		char *envp[] = { "HOME=/root", (char *)cases[i].entry, "PATH=/bin", NULL };

		ck_assert_msg(load(&cfg, envp, err, sizeof err) == 0, "%s: %s", cases[i].entry,
			      err);
		ck_assert_msg(cfg.log_level == cases[i].level, "%s gave level %d", cases[i].entry,
			      cfg.log_level);
		ck_assert(!cfg.disable);
	}
}
END_TEST

START_TEST(test_load_disable_values)
{
	static const char *const yes[] = { "1", "yes", "true", "on", "YES", "True", "ON" };
	static const char *const no[] = { "0", "no", "false", "off", "NO", "False", "Off" };

	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
		struct ft_config cfg;
		char err[FT_CONFIG_ERR_MAX], entry[64];
		char *envp[] = { entry, NULL };

		snprintf(entry, sizeof entry, "FTSHIM_DISABLE=%s", yes[i]);
		ck_assert_msg(load(&cfg, envp, err, sizeof err) == 0, "%s: %s", entry, err);
		ck_assert_msg(cfg.disable, "%s did not disable", entry);
	}
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
		struct ft_config cfg;
		char err[FT_CONFIG_ERR_MAX], entry[64];
		char *envp[] = { entry, NULL };

		snprintf(entry, sizeof entry, "FTSHIM_DISABLE=%s", no[i]);
		ck_assert_msg(load(&cfg, envp, err, sizeof err) == 0, "%s: %s", entry, err);
		ck_assert_msg(!cfg.disable, "%s disabled", entry);
	}
}
END_TEST

START_TEST(test_load_several_and_strings)
{
	struct ft_config cfg;
	char err[FT_CONFIG_ERR_MAX];
	char *envp[] = { "FTSHIM_LOG_FILE=/tmp/ft.%r.log", "FTSHIM_DISABLE=no", "FTSHIM_LOG=trace",
			 NULL };

	ck_assert_int_eq(load(&cfg, envp, err, sizeof err), 0);
	ck_assert(!cfg.disable);
	ck_assert_int_eq(cfg.log_level, 4);
	ck_assert_str_eq(cfg.log_file, "/tmp/ft.%r.log");
	/* Strings point into envp. */
	ck_assert_ptr_eq(cfg.log_file, envp[0] + strlen("FTSHIM_LOG_FILE="));

	/* An empty string is a valid value for a STRING variable. */
	char *envp2[] = { "FTSHIM_LOG_FILE=", NULL };
	ck_assert_int_eq(load(&cfg, envp2, err, sizeof err), 0);
	ck_assert_str_eq(cfg.log_file, "");
}
END_TEST

START_TEST(test_load_ignores_other_variables)
{
	struct ft_config cfg;
	char err[FT_CONFIG_ERR_MAX];
	/* None of these is an FTSHIM_ variable, bad values or not. */
	char *envp[] = { "LOG=loud",	     "DISABLE=maybe",	  "FTSHIMLOG=loud",
			 "XFTSHIM_LOG=loud", "ftshim_log=loud",	  "MY_FTSHIM_DISABLE=1",
			 "PATH=/usr/bin",    "FTSHIM=1",	  NULL };

	ck_assert_int_eq(load(&cfg, envp, err, sizeof err), 0);
	ck_assert(!cfg.disable);
	ck_assert_int_eq(cfg.log_level, FT_LOG_INFO);
	ck_assert_str_eq(cfg.log_file, "");
}
END_TEST

/* --- ft_config_load: errors ------------------------------------------------- */

START_TEST(test_load_bad_log)
{
	struct ft_config cfg;
	char err[FT_CONFIG_ERR_MAX];
	char *envp[] = { "PATH=/bin", "FTSHIM_LOG=loud", NULL };

	ck_assert_int_eq(load(&cfg, envp, err, sizeof err), -EINVAL);
	assert_contains(err, "FTSHIM_LOG");
	assert_contains(err, "loud");
	assert_contains(err, "accepted");
	assert_contains(err, "error, warn, info, debug or trace");
	assert_lacks(err, "ftshim:");
}
END_TEST

START_TEST(test_load_bad_disable)
{
	struct ft_config cfg;
	char err[FT_CONFIG_ERR_MAX];
	char *envp[] = { "FTSHIM_DISABLE=maybe", NULL };

	ck_assert_int_eq(load(&cfg, envp, err, sizeof err), -EINVAL);
	assert_contains(err, "FTSHIM_DISABLE");
	assert_contains(err, "maybe");
	assert_contains(err, "accepted");
	assert_contains(err, "0 or 1");

	/* Near misses of the keywords are not booleans either. */
	static const char *const bad[] = { "2", "y", "n", "yess", "enable", " 1", "1 ", "-1" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char entry[64];
		char *envp2[] = { entry, NULL };

		snprintf(entry, sizeof entry, "FTSHIM_DISABLE=%s", bad[i]);
		ck_assert_msg(load(&cfg, envp2, err, sizeof err) == -EINVAL, "%s accepted", entry);
		assert_contains(err, "FTSHIM_DISABLE");
		assert_contains(err, "accepted");
	}
}
END_TEST

START_TEST(test_load_empty_values)
{
	struct ft_config cfg;
	char err[FT_CONFIG_ERR_MAX];
	char *envp[] = { "FTSHIM_LOG=", NULL };
	char *envp2[] = { "FTSHIM_DISABLE=", NULL };

	ck_assert_int_eq(load(&cfg, envp, err, sizeof err), -EINVAL);
	assert_contains(err, "FTSHIM_LOG");
	assert_contains(err, "accepted");
	ck_assert_int_eq(load(&cfg, envp2, err, sizeof err), -EINVAL);
	assert_contains(err, "FTSHIM_DISABLE");
	assert_contains(err, "accepted");
}
END_TEST

START_TEST(test_load_unknown_name_suggests)
{
	struct ft_config cfg;
	char err[FT_CONFIG_ERR_MAX];
	char *envp[] = { "FTSHIM_LGO=info", NULL };

	ck_assert_int_eq(load(&cfg, envp, err, sizeof err), -EINVAL);
	assert_contains(err, "FTSHIM_LGO");
	assert_contains(err, "unknown variable");
	assert_contains(err, "did you mean FTSHIM_LOG?");

	/* The closest name is suggested, not merely a close one. */
	char *envp2[] = { "FTSHIM_LOG_FIEL=/tmp/x", NULL };
	ck_assert_int_eq(load(&cfg, envp2, err, sizeof err), -EINVAL);
	assert_contains(err, "unknown variable");
	assert_contains(err, "did you mean FTSHIM_LOG_FILE?");

	char *envp3[] = { "FTSHIM_DISABEL=1", NULL };
	ck_assert_int_eq(load(&cfg, envp3, err, sizeof err), -EINVAL);
	assert_contains(err, "did you mean FTSHIM_DISABLE?");

	/* Up to three edits away is still a suggestion. */
	char *envp5[] = { "FTSHIM_LOGXYZ=1", NULL };
	ck_assert_int_eq(load(&cfg, envp5, err, sizeof err), -EINVAL);
	assert_contains(err, "did you mean FTSHIM_LOG?");

	/* A valid variable next to the unknown one does not hide it. */
	char *envp4[] = { "FTSHIM_LOG=debug", "FTSHIM_LGO=info", NULL };
	ck_assert_int_eq(load(&cfg, envp4, err, sizeof err), -EINVAL);
	assert_contains(err, "unknown variable");
}
END_TEST

START_TEST(test_load_unknown_name_far)
{
	struct ft_config cfg;
	char err[FT_CONFIG_ERR_MAX];
	char names[128];
	char *envp[] = { "FTSHIM_ZZZZZZZZZZ=1", NULL };

	/* Far from every name: no typo of one, not an error; listed. */
	ck_assert_int_eq(load(&cfg, envp, err, sizeof err), 0);
	ck_assert_int_eq(ft_config_unknown(envp, names, sizeof names), 1);
	ck_assert_str_eq(names, "FTSHIM_ZZZZZZZZZZ");

	/* Four edits from the nearest name (FTSHIM_LOG) is too far to guess;
	 * known names are not listed. */
	char *envp3[] = { "FTSHIM_LOGWXYZ=1", "FTSHIM_LOG=debug", "FTSHIM_QQQQQQQQ=2", NULL };
	ck_assert_msg(load(&cfg, envp3, err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(ft_config_unknown(envp3, names, sizeof names), 2);
	ck_assert_str_eq(names, "FTSHIM_LOGWXYZ, FTSHIM_QQQQQQQQ");

	/* The bare prefix is three edits from FTSHIM_LOG: a near miss. */
	char *envp4[] = { "FTSHIM_=1", NULL };
	ck_assert_int_eq(load(&cfg, envp4, err, sizeof err), -EINVAL);
	assert_contains(err, "unknown variable");

	/* A near miss beside far ones still stops the load. */
	char *envp2[] = { "FTSHIM_ZZZZZZZZZZ=1", "FTSHIM_LGO=debug", NULL };
	ck_assert_int_eq(load(&cfg, envp2, err, sizeof err), -EINVAL);
	assert_contains(err, "FTSHIM_LGO=debug: unknown variable (did you mean FTSHIM_LOG?)");

	/* Truncated to the room given, still terminated. */
	ck_assert_int_eq(ft_config_unknown(envp3, names, 10), 2);
	ck_assert_int_eq((int)strlen(names), 9);
}
END_TEST

START_TEST(test_load_disable_reads_nothing_else)
{
	struct ft_config cfg;
	char err[FT_CONFIG_ERR_MAX];
	char *envp[] = { "FTSHIM_LOG=loud", "FTSHIM_DISABLE=1", NULL };
	char *envp2[] = { "FTSHIM_DISABLE=yes", "FTSHIM_LGO=info", "FTSHIM_LOG=", NULL };

	ck_assert_int_eq(load(&cfg, envp, err, sizeof err), 0);
	ck_assert(cfg.disable);
	ck_assert_int_eq(load(&cfg, envp2, err, sizeof err), 0);
	ck_assert(cfg.disable);

	/* Not disabled: the bad value is an error again. */
	char *envp3[] = { "FTSHIM_LOG=loud", "FTSHIM_DISABLE=0", NULL };
	ck_assert_int_eq(load(&cfg, envp3, err, sizeof err), -EINVAL);
	assert_contains(err, "FTSHIM_LOG");
}
END_TEST

START_TEST(test_load_err_one_line_bad_value)
{
	/* A value may contain a newline (env values are arbitrary bytes); the
	 * error line must still be one line. load() asserts no '\n'. */
	struct ft_config cfg;
	char err[FT_CONFIG_ERR_MAX];
	char *envp[] = { "FTSHIM_LOG=lo\nud", NULL };

	ck_assert_int_eq(load(&cfg, envp, err, sizeof err), -EINVAL);
	assert_contains(err, "FTSHIM_LOG");
}
END_TEST

START_TEST(test_load_err_one_line_unknown_name)
{
	/* The same for the value of an unknown variable. */
	struct ft_config cfg;
	char err[FT_CONFIG_ERR_MAX];
	char *envp[] = { "FTSHIM_LGO=a\nb", NULL };

	ck_assert_int_eq(load(&cfg, envp, err, sizeof err), -EINVAL);
	assert_contains(err, "unknown variable");
}
END_TEST

START_TEST(test_load_err_truncates)
{
	/* A small err buffer is filled, terminated, and not overrun. */
	struct ft_config cfg;
	char buf[64];
	char *envp[] = { "FTSHIM_LOG=loud", NULL };

	memset(buf, 'G', sizeof buf);
	ck_assert_int_eq(ft_config_load(&cfg, envp, buf, 16), -EINVAL);
	ck_assert_uint_eq(strlen(buf), 15);
	for (size_t i = 16; i < sizeof buf; i++)
		ck_assert_int_eq(buf[i], 'G');
}
END_TEST

START_TEST(test_load_string_too_long)
{
	struct ft_config cfg;
	char err[FT_CONFIG_ERR_MAX];
	static char entry[8192];
	char *envp[] = { entry, NULL };
	size_t plen = strlen("FTSHIM_LOG_FILE=");

	memcpy(entry, "FTSHIM_LOG_FILE=", plen);
	memset(entry + plen, 'a', 4095);
	entry[plen + 4095] = '\0';
	ck_assert_int_eq(load(&cfg, envp, err, sizeof err), 0);
	ck_assert_uint_eq(strlen(cfg.log_file), 4095);

	memset(entry + plen, 'a', 4096);
	entry[plen + 4096] = '\0';
	ck_assert_int_eq(load(&cfg, envp, err, sizeof err), -EINVAL);
	assert_contains(err, "FTSHIM_LOG_FILE");
}
END_TEST

/* --- durations ---------------------------------------------------------------- */

START_TEST(test_duration_valid)
{
	assert_dur_ok(&dur_var, "100ms", 100 * MS);
	assert_dur_ok(&dur_var, "1.5s", 1500 * MS);
	assert_dur_ok(&dur_var, "100", 100 * MS); /* a bare number is ms */
	assert_dur_ok(&dur_var, "2.5", 2500 * US);
	assert_dur_ok(&dur_var, "1ms", 1 * MS);	  /* the minimum */
	assert_dur_ok(&dur_var, "10s", 10 * SEC); /* the maximum */
	assert_dur_ok(&dur_var, "10000ms", 10 * SEC);
	assert_dur_ok(&dur_var, "1000us", 1 * MS);
	assert_dur_ok(&dur_var, "2000000ns", 2 * MS);
	assert_dur_ok(&dur_var, "0.001s", 1 * MS);
	assert_dur_ok(&dur_var, "9.999999999s", 10 * SEC - 1);
	assert_dur_ok(&dur_var, "007ms", 7 * MS);

	assert_dur_ok(&wide_dur_var, "250us", 250 * US);
	assert_dur_ok(&wide_dur_var, "0.5ms", 500 * US);
	assert_dur_ok(&wide_dur_var, "1.5us", 1500);
	assert_dur_ok(&wide_dur_var, "7ns", 7);
	assert_dur_ok(&wide_dur_var, "0.000000001s", 1);
	assert_dur_ok(&wide_dur_var, "0.000001", 1); /* ms */
	assert_dur_ok(&wide_dur_var, "1000s", 1000 * SEC);
}
END_TEST

START_TEST(test_duration_range)
{
	char why[128];
	uint64_t ns;

	/* Below the minimum of 1ms, valid as durations. */
	ck_assert_int_eq(parse_dur(&dur_var, "250us", &ns, why, sizeof why), -EINVAL);
	assert_contains(why, "range");
	ck_assert_int_eq(parse_dur(&dur_var, "0.5ms", &ns, why, sizeof why), -EINVAL);
	assert_contains(why, "range");
	ck_assert_int_eq(parse_dur(&dur_var, "999999ns", &ns, why, sizeof why), -EINVAL);
	ck_assert_int_eq(parse_dur(&dur_var, "0", &ns, why, sizeof why), -EINVAL);
	ck_assert_int_eq(parse_dur(&dur_var, "0ms", &ns, why, sizeof why), -EINVAL);
	/* Above the maximum of 10s. */
	ck_assert_int_eq(parse_dur(&dur_var, "11s", &ns, why, sizeof why), -EINVAL);
	assert_contains(why, "range");
	ck_assert_int_eq(parse_dur(&dur_var, "10.000000001s", &ns, why, sizeof why), -EINVAL);
	ck_assert_int_eq(parse_dur(&dur_var, "10001", &ns, why, sizeof why), -EINVAL);
}
END_TEST

START_TEST(test_duration_invalid)
{
	static const char *const bad[] = {
		"abc", "10 ms", "-5ms", "+5ms", "1.ms", ".5s", "5m", "5min", "5h", "5sec", "5 ",
		" 5",  "5ms ",	"5mss", "1..5s", "1.5.5s", "ms",   "s",	   "1e3ms", "0x10ms",
	};

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_dur_bad(&dur_var, bad[i]);
		assert_dur_bad(&wide_dur_var, bad[i]);
	}
	/* Empty. */
	assert_dur_bad(&dur_var, "");

	char why[128];
	uint64_t ns;
	ck_assert_int_eq(parse_dur(&dur_var, "5m", &ns, why, sizeof why), -EINVAL);
	assert_contains(why, "unit");
}
END_TEST

START_TEST(test_duration_overflow)
{
	/* Larger than 2^64 ns: an error, no wrap-around, no crash. */
	assert_dur_bad(&dur_var, "99999999999999999999s");
	assert_dur_bad(&dur_var, "99999999999999999999");
	assert_dur_bad(&dur_var, "99999999999999999999ns");
	assert_dur_bad(&dur_var, "999999999999999999999999999999999999999999999ms");
	assert_dur_bad(&wide_dur_var, "18446744074s");	      /* > 2^64 ns */
	assert_dur_bad(&wide_dur_var, "18446744073709552ms"); /* > 2^64 ns */
}
END_TEST

START_TEST(test_duration_overflow_in_fraction)
{
	/* 18446744073.999999999 s is 18446744073999999999 ns, more than
	 * UINT64_MAX (18446744073709551615): an error. If the whole and the
	 * fraction are added without an overflow check the sum wraps to
	 * 290448383 ns (about 290ms), which is within 1ms..10s. */
	assert_dur_bad(&dur_var, "18446744073.999999999s");
	assert_dur_bad(&wide_dur_var, "18446744073.999999999s");
	assert_dur_bad(&wide_dur_var, "18446744073.8s");
}
END_TEST

START_TEST(test_duration_finer_than_ns)
{
	char why[128];
	uint64_t ns;

	assert_dur_bad(&dur_var, "0.0000000001s");
	assert_dur_bad(&wide_dur_var, "0.0000000001s");
	assert_dur_bad(&wide_dur_var, "1.0000000001s");
	assert_dur_bad(&wide_dur_var, "1.5ns");
	assert_dur_bad(&wide_dur_var, "0.0001us");
	assert_dur_bad(&wide_dur_var, "0.0000001"); /* 0.1 ns, bare ms */
	ck_assert_int_eq(parse_dur(&wide_dur_var, "0.0001us", &ns, why, sizeof why), -EINVAL);
	assert_contains(why, "nanosecond");
	/* Trailing zeros within the ns resolution are fine. */
	assert_dur_ok(&wide_dur_var, "1.500us", 1500);
	assert_dur_ok(&wide_dur_var, "2.000000000s", 2 * SEC);
}
END_TEST

/* --- unsigned integers ------------------------------------------------------- */

START_TEST(test_uint)
{
	char why[128];
	uint64_t v;

	v = 0;
	ck_assert_int_eq(ft_config_parse_value(&uint_var, "7", &v, why, sizeof why), 0);
	ck_assert_uint_eq(v, 7);
	ck_assert_int_eq(ft_config_parse_value(&uint_var, "1", &v, why, sizeof why), 0);
	ck_assert_uint_eq(v, 1);
	ck_assert_int_eq(ft_config_parse_value(&uint_var, "100", &v, why, sizeof why), 0);
	ck_assert_uint_eq(v, 100);

	ck_assert_int_eq(ft_config_parse_value(&uint_var, "0", &v, why, sizeof why), -EINVAL);
	assert_contains(why, "range");
	ck_assert_int_eq(ft_config_parse_value(&uint_var, "101", &v, why, sizeof why), -EINVAL);
	assert_contains(why, "range");
	ck_assert_int_eq(ft_config_parse_value(&uint_var, "99999999999999999999999", &v, why,
					       sizeof why),
			 -EINVAL);

	static const char *const bad[] = { "+7", "7x", "",    "-7",  " 7",
					   "7 ", "x",  "7.0", "0x7", "1e2" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		why[0] = '\0';
		int rc = ft_config_parse_value(&uint_var, bad[i], &v, why, sizeof why);
		ck_assert_msg(rc == -EINVAL, "'%s' accepted", bad[i]);
		ck_assert_msg(why[0] != '\0', "'%s' rejected without a reason", bad[i]);
	}
}
END_TEST

START_TEST(test_parse_bool_and_enum_directly)
{
	const struct ft_config_var *dis = table_var("FTSHIM_DISABLE");
	const struct ft_config_var *log = table_var("FTSHIM_LOG");
	char why[128];
	bool b = false;
	int e = -1;

	ck_assert_int_eq(ft_config_parse_value(dis, "on", &b, why, sizeof why), 0);
	ck_assert(b);
	ck_assert_int_eq(ft_config_parse_value(dis, "OFF", &b, why, sizeof why), 0);
	ck_assert(!b);
	ck_assert_int_eq(ft_config_parse_value(log, "trace", &e, why, sizeof why), 0);
	ck_assert_int_eq(e, 4);
	ck_assert_int_eq(ft_config_parse_value(log, "error", &e, why, sizeof why), 0);
	ck_assert_int_eq(e, 0);
	/* A keyword's prefix or extension is not the keyword. */
	ck_assert_int_eq(ft_config_parse_value(log, "deb", &e, why, sizeof why), -EINVAL);
	ck_assert_int_eq(ft_config_parse_value(log, "debugx", &e, why, sizeof why), -EINVAL);
	ck_assert_int_eq(ft_config_parse_value(log, "info|debug", &e, why, sizeof why), -EINVAL);
	ck_assert_int_eq(ft_config_parse_value(log, "|", &e, why, sizeof why), -EINVAL);
	ck_assert_int_eq(ft_config_parse_value(log, "", &e, why, sizeof why), -EINVAL);
	assert_contains(why, "empty");
}
END_TEST

/* --- formatting and descriptions ------------------------------------------- */

static void assert_format(uint64_t ns, const char *expect)
{
	char out[64];

	memset(out, 'Q', sizeof out);
	ft_config_format_duration(ns, out, sizeof out);
	ck_assert_msg(strcmp(out, expect) == 0, "%llu ns formatted as '%s', expected '%s'",
		      (unsigned long long)ns, out, expect);
}

START_TEST(test_format_duration)
{
	assert_format(100 * MS, "100ms");
	assert_format(2 * SEC, "2s");
	assert_format(1500 * MS, "1.5s");
	assert_format(250 * US, "250us");
	assert_format(7, "7ns");
	assert_format(1 * MS, "1ms");
	assert_format(10 * SEC, "10s");
	assert_format(1500 * US, "1.5ms");
	assert_format(1 * US, "1us");
	assert_format(0, "0s");
}
END_TEST

START_TEST(test_format_parse_round_trip)
{
	static const uint64_t values[] = {
		1,	   7,	      999,	 US,	      1500,	   250 * US, MS,
		1500 * US, 1250 * MS, 1500 * MS, 2 * SEC, 10 * SEC, 1234567,  123456789,
		SEC + 1,   999 * SEC, 3 * SEC + 300 * MS,
	};

	for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
		char out[64];

		ft_config_format_duration(values[i], out, sizeof out);
		assert_dur_ok(&wide_dur_var, out, values[i]);
	}
}
END_TEST

START_TEST(test_format_duration_small_buffer)
{
	char out[8];

	memset(out, 'Q', sizeof out);
	ft_config_format_duration(100 * MS, out, 4);
	ck_assert_str_eq(out, "100");
	ck_assert_int_eq(out[4], 'Q');
}
END_TEST

START_TEST(test_describe_accepted)
{
	char out[256];

	ft_config_describe_accepted(&dur_var, out, sizeof out);
	assert_contains(out, "1ms");
	assert_contains(out, "10s");
	assert_contains(out, "us");
	assert_contains(out, "ms");
	assert_contains(out, "duration");

	ft_config_describe_accepted(&uint_var, out, sizeof out);
	assert_contains(out, "1");
	assert_contains(out, "100");

	ft_config_describe_accepted(table_var("FTSHIM_LOG"), out, sizeof out);
	ck_assert_str_eq(out, "error, warn, info, debug or trace");

	ft_config_describe_accepted(table_var("FTSHIM_DISABLE"), out, sizeof out);
	assert_contains(out, "0 or 1");

	for (size_t i = 0; i < ft_config_var_count; i++) {
		ft_config_describe_accepted(&ft_config_vars[i], out, sizeof out);
		ck_assert_msg(out[0] != '\0', "%s: empty description", ft_config_vars[i].name);
		ck_assert_ptr_null(strchr(out, '\n'));
	}
}
END_TEST

static Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc_table = tcase_create("table");
	TCase *tc_load = tcase_create("load");
	TCase *tc_values = tcase_create("values");

	tcase_add_test(tc_table, test_table_names);
	tcase_add_test(tc_table, test_every_default_parses);
	tcase_add_test(tc_table, test_defaults);
	tcase_add_test(tc_table, test_log_keywords_are_level_names);
	suite_add_tcase(s, tc_table);

	tcase_add_test(tc_load, test_load_empty_env);
	tcase_add_test(tc_load, test_load_log_levels);
	tcase_add_test(tc_load, test_load_disable_values);
	tcase_add_test(tc_load, test_load_several_and_strings);
	tcase_add_test(tc_load, test_load_ignores_other_variables);
	tcase_add_test(tc_load, test_load_bad_log);
	tcase_add_test(tc_load, test_load_bad_disable);
	tcase_add_test(tc_load, test_load_empty_values);
	tcase_add_test(tc_load, test_load_unknown_name_suggests);
	tcase_add_test(tc_load, test_load_unknown_name_far);
	tcase_add_test(tc_load, test_load_disable_reads_nothing_else);
	tcase_add_test(tc_load, test_load_err_one_line_bad_value);
	tcase_add_test(tc_load, test_load_err_one_line_unknown_name);
	tcase_add_test(tc_load, test_load_err_truncates);
	tcase_add_test(tc_load, test_load_string_too_long);
	suite_add_tcase(s, tc_load);

	tcase_add_test(tc_values, test_duration_valid);
	tcase_add_test(tc_values, test_duration_range);
	tcase_add_test(tc_values, test_duration_invalid);
	tcase_add_test(tc_values, test_duration_overflow);
	tcase_add_test(tc_values, test_duration_overflow_in_fraction);
	tcase_add_test(tc_values, test_duration_finer_than_ns);
	tcase_add_test(tc_values, test_uint);
	tcase_add_test(tc_values, test_parse_bool_and_enum_directly);
	tcase_add_test(tc_values, test_format_duration);
	tcase_add_test(tc_values, test_format_parse_round_trip);
	tcase_add_test(tc_values, test_format_duration_small_buffer);
	tcase_add_test(tc_values, test_describe_accepted);
	suite_add_tcase(s, tc_values);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(config_suite());

	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
