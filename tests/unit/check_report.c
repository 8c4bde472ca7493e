/* check_report.c: unit tests of src/events.c and src/report.c, the record
 * of what happened and the job report made from it. They check JSON
 * escaping (quotes, backslashes, control characters, truncation), the
 * exact event lines (time since the origin, rank, kind, members), the
 * bound on the record and its "dropped" line, and a report built from a
 * run directory written by hand: report.json's lists (failed, finished,
 * missing ranks), the failure's time taken from its injection, when every
 * rank knew it, the injection turned into an event, the events copied,
 * and the summary line, for a job with one failure, with none, with one
 * never injected (its detector's estimate then), one whose supervisor
 * recorded its death by signal, with a thousand events,
 * and without a run directory; the files another host sent (read from
 * hosts/HOST/, counted once), hosts lost whole or missing, and how a
 * rank's events are cut to the bound a host sends. */
#include "ftshim_config.h"

#include <check.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/events.h"
#include "src/report.h"

#define SEC UINT64_C(1000000000)
#define ORIGIN (UINT64_C(1795300000) * SEC)

/* The lines ft_events_write writes, read back through a temporary file. */
static char *written(void)
{
	FILE *f = tmpfile();
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(ft_events_write(fileno(f)), 0);
	long len = ftell(f);
	ck_assert_int_ge(len, 0);
	char *text = calloc(1, (size_t)len + 1);
	rewind(f);
	ck_assert_uint_eq(fread(text, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	return text;
}

START_TEST(test_json_escape)
{
	char out[64];

	ck_assert_str_eq(ft_json_escape("plain", out, sizeof out), "plain");
	ck_assert_str_eq(ft_json_escape("say \"hi\" \\ there", out, sizeof out), "say \\\"hi\\\" \\\\ there");
	ck_assert_str_eq(ft_json_escape("a\nb\tc\x01", out, sizeof out), "a\\u000ab\\u0009c\\u0001");
	/* Truncated whole: never half an escape. */
	ck_assert_str_eq(ft_json_escape("ab\"cd", out, 4), "ab");
	ck_assert_str_eq(ft_json_escape("abc", out, 1), "");
}
END_TEST

START_TEST(test_event_lines)
{
	char esc[64];

	ft_events_start(2, ORIGIN);
	ft_events_add(ORIGIN + 3 * SEC / 2, "revoke", ",\"comm\":\"%016llx\",\"by\":%u", 0xabcdULL, 1u);
	ft_events_add(ORIGIN + 2 * SEC, "finalize", NULL);
	ft_events_add(ORIGIN + 2 * SEC + 250000, "error", ",\"site\":\"%s\"",
		      ft_json_escape("f (\"x\".c:1)", esc, sizeof esc));
	/* Before the origin (a clock stepped back): time 0. */
	ft_events_add(ORIGIN - SEC, "agree", ",\"flag\":%d", 1);
	ck_assert_uint_eq(ft_events_count(), 4);
	ck_assert_uint_eq(ft_events_dropped(), 0);
	char *text = written();
	ck_assert_str_eq(text, "{\"t\":1.500000,\"rank\":2,\"kind\":\"revoke\",\"comm\":\"000000000000abcd\",\"by\":1}\n"
			       "{\"t\":2.000000,\"rank\":2,\"kind\":\"finalize\"}\n"
			       "{\"t\":2.000250,\"rank\":2,\"kind\":\"error\",\"site\":\"f (\\\"x\\\".c:1)\"}\n"
			       "{\"t\":0.000000,\"rank\":2,\"kind\":\"agree\",\"flag\":1}\n");
	free(text);
	/* Starting again forgets. */
	ft_events_start(5, ORIGIN);
	ck_assert_uint_eq(ft_events_count(), 0);
	text = written();
	ck_assert_str_eq(text, "");
	free(text);
	ft_events_stop();
}
END_TEST

START_TEST(test_event_bounds)
{
	char big[FT_EVENT_LINE_MAX * 2];

	ft_events_start(0, ORIGIN);
	/* A line too long keeps its time, rank and kind, and says so. */
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	ft_events_add(ORIGIN, "error", ",\"site\":\"%s\"", big);
	for (int i = 1; i < FT_EVENTS_MAX + 5; i++)
		ft_events_add(ORIGIN + (uint64_t)i, "agree", NULL);
	ck_assert_uint_eq(ft_events_count(), FT_EVENTS_MAX);
	ck_assert_uint_eq(ft_events_dropped(), 5);
	char *text = written();
	ck_assert(strncmp(text, "{\"t\":0.000000,\"rank\":0,\"kind\":\"error\",\"truncated\":true}\n", 56) == 0);
	ck_assert_ptr_nonnull(strstr(text, "{\"t\":0,\"rank\":0,\"kind\":\"dropped\",\"count\":5}\n"));
	free(text);
	ft_events_stop();
	ck_assert_uint_eq(ft_events_count(), 0);
}
END_TEST

/* A run directory written by hand. */
static char jobdir[64];

static void write_text(const char *name, const char *text)
{
	char path[128];
	snprintf(path, sizeof path, "%s/%s", jobdir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static char *read_text(const char *name)
{
	char path[128];
	snprintf(path, sizeof path, "%s/%s", jobdir, name);
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	char *text = calloc(1, 1 << 20);
	size_t n = fread(text, 1, (1 << 20) - 1, f);
	text[n] = '\0';
	fclose(f);
	return text;
}

static void make_jobdir(void)
{
	snprintf(jobdir, sizeof jobdir, "/tmp/check_report.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(jobdir));
}

static void remove_jobdir(void)
{
	char cmd[160];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", jobdir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Four ranks on two hosts; rank 2 failed (seen by rank 1, learned by the
 * reporting rank 0 at 1.015 s); rank 3 ran on the other host, so its
 * events are not here. */
static struct ft_report_rank ranks[4];

static struct ft_report_input input(void)
{
	ranks[0] = (struct ft_report_rank){ .host = "a" };
	ranks[1] = (struct ft_report_rank){ .host = "a" };
	ranks[2] = (struct ft_report_rank){ .host = "a", .failed = true, .detection = "crash", .detector = 1,
					    .failed_unix_ns = ORIGIN + 1002 * SEC / 1000,
					    .learned_unix_ns = ORIGIN + 1015 * SEC / 1000 };
	ranks[3] = (struct ft_report_rank){ .host = "b\"" };
	return (struct ft_report_input){ .jobdir = jobdir, .job_id = "0123456789ab", .program = "/bin/app",
					 .nprocs = 4, .self = 0, .origin_unix_ns = ORIGIN,
					 .end_unix_ns = ORIGIN + 3 * SEC, .ranks = ranks };
}

START_TEST(test_report_one_failure)
{
	char summary[512];

	make_jobdir();
	write_text("events.0.jsonl", "{\"t\":1.015000,\"rank\":0,\"kind\":\"notification\",\"failed\":2,\"how\":\"crash\"}\n"
				     "{\"t\":2.900000,\"rank\":0,\"kind\":\"finalize\"}\n");
	write_text("events.1.jsonl", "{\"t\":1.002000,\"rank\":1,\"kind\":\"detection\",\"failed\":2,\"how\":\"crash\"}\n"
				     "{\"t\":1.020000,\"rank\":1,\"kind\":\"notification\",\"failed\":2}\n"
				     "not json: ignored\n");
	char inj[256];
	snprintf(inj, sizeof inj,
		 "time=%llu.000000 since_start=1.0 rank=2 host=a pid=7 how=SIGKILL by=FTSHIM_INJECT "
		 "trigger=\"at point phase 1\" clause=\"rank=2 at=point:phase:1\"\n",
		 (unsigned long long)(ORIGIN / SEC + 1));
	write_text("injections", inj);
	struct ft_report_input in = input();
	ck_assert_int_eq(ft_report_write(&in, summary, sizeof summary), 0);
	/* Failed at its injection (1 s); rank 1 knew last, at 1.020 s. */
	ck_assert_str_eq(summary, "ftshim: 1 failure (rank 2 SIGKILL at 1.00 s); detected in 20 ms; 3 of 4 ranks finished");
	char *r = read_text("report.json");
	ck_assert_ptr_nonnull(strstr(r, "\"ftshim_report\": 1,"));
	ck_assert_ptr_nonnull(strstr(r, "\"job\": \"0123456789ab\""));
	ck_assert_ptr_nonnull(strstr(r, "\"ranks\": 4,"));
	ck_assert_ptr_nonnull(strstr(r, "\"end_s\": 3.000000,"));
	ck_assert_ptr_nonnull(strstr(r, "\"hosts\": [\"a\", \"a\", \"a\", \"b\\\"\"]"));
	ck_assert_ptr_nonnull(strstr(r, "\"failed\": [2],"));
	ck_assert_ptr_nonnull(strstr(r, "\"finished\": [0, 1, 3],"));
	ck_assert_ptr_nonnull(strstr(r, "\"missing_ranks\": [3],"));
	ck_assert_ptr_nonnull(strstr(r, "{\"rank\": 2, \"host\": \"a\", \"how\": \"SIGKILL\", \"failed_s\": 1.000000, "
					"\"detection\": \"crash\", \"detected_by\": 1, \"detected_s\": 1.002000, "
					"\"all_knew_s\": 1.020000, \"injected\": true}"));
	ck_assert_ptr_nonnull(strstr(r, "{\"t\":1.000000,\"rank\":2,\"kind\":\"injection\",\"how\":\"SIGKILL\","
					"\"by\":\"FTSHIM_INJECT \\\"rank=2 at=point:phase:1\\\"\",\"trigger\":\"at point phase 1\"}"));
	ck_assert_ptr_nonnull(strstr(r, "{\"t\":2.900000,\"rank\":0,\"kind\":\"finalize\"}"));
	ck_assert_ptr_null(strstr(r, "not json"));
	/* Five events: three lines of rank 0 and 1 each but the junk, and
	 * the injection. */
	int n = 0;
	for (const char *p = r; (p = strstr(p, "{\"t\":")) != NULL; p++)
		n++;
	ck_assert_int_eq(n, 5);
	free(r);
	remove_jobdir();
}
END_TEST

/* Paused (0.5 s), then killed (1 s): the failure is the kill; a pause
 * alone is the failure only when nothing else ended the process. */
START_TEST(test_report_pause_then_kill)
{
	char summary[512], inj[512];

	make_jobdir();
	unsigned long long t0 = (unsigned long long)(ORIGIN / SEC);
	snprintf(inj, sizeof inj,
		 "time=%llu.500000 rank=2 host=a pid=7 how=pause:2s by=FTSHIM_INJECT\n"
		 "time=%llu.000000 rank=2 host=a pid=7 how=SIGKILL by=FTSHIM_INJECT\n",
		 t0, t0 + 1);
	write_text("injections", inj);
	struct ft_report_input in = input();
	ck_assert_int_eq(ft_report_write(&in, summary, sizeof summary), 0);
	ck_assert_str_eq(summary, "ftshim: 1 failure (rank 2 SIGKILL at 1.00 s); detected in 15 ms; 3 of 4 ranks finished");
	snprintf(inj, sizeof inj, "time=%llu.500000 rank=2 host=a pid=7 how=pause:2s by=FTSHIM_INJECT\n", t0);
	write_text("injections", inj);
	ck_assert_int_eq(ft_report_write(&in, summary, sizeof summary), 0);
	ck_assert_str_eq(summary, "ftshim: 1 failure (rank 2 pause:2s at 0.50 s); detected in 515 ms; 3 of 4 ranks finished");
	remove_jobdir();
}
END_TEST

START_TEST(test_report_not_injected)
{
	char summary[512];

	make_jobdir();
	write_text("events.0.jsonl", "{\"t\":1.015000,\"rank\":0,\"kind\":\"notification\",\"failed\":2}\n");
	struct ft_report_input in = input();
	ck_assert_int_eq(ft_report_write(&in, summary, sizeof summary), 0);
	/* The detector's estimate (1.002 s) and what it saw it as. */
	ck_assert_str_eq(summary, "ftshim: 1 failure (rank 2 crash at 1.00 s); detected in 13 ms; 3 of 4 ranks finished");
	char *r = read_text("report.json");
	ck_assert_ptr_nonnull(strstr(r, "\"injected\": false}"));
	ck_assert_ptr_nonnull(strstr(r, "\"missing_ranks\": [1, 3],"));
	free(r);
	remove_jobdir();
}
END_TEST

/* Replicated (FTSHIM_REPLICAS), as the report sees it: rank 2's primary
 * failed and its replica, job rank 3, carried on; job rank 1, rank 0's
 * replica, failed too, and rank 0 went on alone. */
START_TEST(test_report_replicas)
{
	char summary[512];

	make_jobdir();
	struct ft_report_input in = input();
	ranks[1] = (struct ft_report_rank){ .host = "a", .failed = true, .detection = "crash", .detector = 0,
					    .failed_unix_ns = ORIGIN + 2 * SEC,
					    .learned_unix_ns = ORIGIN + 2 * SEC + SEC / 100, .replica = true,
					    .replica_of = 0, .copy_lived = true, .copy = 0 };
	ranks[2].copy_lived = true;
	ranks[2].copy = 3;
	ck_assert_int_eq(ft_report_write(&in, summary, sizeof summary), 0);
	ck_assert_str_eq(summary, "ftshim: 2 failures (rank 0's replica (process 1) crash at 2.00 s, rank 2 crash "
				  "at 1.00 s (replica process 3 promoted)); detected in 10.0 ms / 13 ms; 2 of 4 ranks finished");
	char *r = read_text("report.json");
	ck_assert_ptr_nonnull(strstr(r, "\"injected\": false, \"replica_of\": 0, \"carried_on_by\": 0}"));
	ck_assert_ptr_nonnull(strstr(r, "{\"rank\": 2, \"host\": \"a\", \"how\": \"crash\", \"failed_s\": 1.002000, "));
	ck_assert_ptr_nonnull(strstr(r, "\"injected\": false, \"carried_on_by\": 3}"));
	free(r);
	remove_jobdir();
}
END_TEST

START_TEST(test_report_death_recorded)
{
	char summary[512], line[256];

	make_jobdir();
	write_text("events.0.jsonl", "{\"t\":1.015000,\"rank\":0,\"kind\":\"notification\",\"failed\":2}\n");
	/* No injection, but its supervisor saw it die of SIGSEGV at 1.001 s. */
	snprintf(line, sizeof line, "time=%llu.001000 rank=2 host=a pid=7 how=SIGSEGV by=supervisor\n",
		 (unsigned long long)(ORIGIN / SEC + 1));
	write_text("deaths", line);
	struct ft_report_input in = input();
	ck_assert_int_eq(ft_report_write(&in, summary, sizeof summary), 0);
	ck_assert_str_eq(summary, "ftshim: 1 failure (rank 2 SIGSEGV at 1.00 s); detected in 14 ms; 3 of 4 ranks finished");
	char *r = read_text("report.json");
	ck_assert_ptr_nonnull(strstr(r, "\"how\": \"SIGSEGV\", \"failed_s\": 1.001000,"));
	ck_assert_ptr_nonnull(strstr(r, "{\"t\":1.001000,\"rank\":2,\"kind\":\"death\",\"how\":\"SIGSEGV\",\"by\":\"supervisor\"}"));
	ck_assert_ptr_nonnull(strstr(r, "\"injected\": false}"));
	free(r);
	/* Its supervisor wrote once it had reaped it: a detection before
	 * that (its sockets closed at once) is the better time. */
	write_text("events.1.jsonl", "{\"t\":1.000500,\"rank\":1,\"kind\":\"detection\",\"failed\":2}\n");
	ck_assert_int_eq(ft_report_write(&in, summary, sizeof summary), 0);
	ck_assert_str_eq(summary, "ftshim: 1 failure (rank 2 SIGSEGV at 1.00 s); detected in 14 ms; 3 of 4 ranks finished");
	r = read_text("report.json");
	ck_assert_ptr_nonnull(strstr(r, "\"how\": \"SIGSEGV\", \"failed_s\": 1.000500,"));
	free(r);
	remove_jobdir();
}
END_TEST

START_TEST(test_report_no_failure)
{
	char summary[512];

	make_jobdir();
	struct ft_report_input in = input();
	ranks[2].failed = false;
	ck_assert_int_eq(ft_report_write(&in, summary, sizeof summary), 0);
	ck_assert_str_eq(summary, "ftshim: no failures; 4 of 4 ranks finished");
	char *r = read_text("report.json");
	ck_assert_ptr_nonnull(strstr(r, "\"failed\": [],"));
	ck_assert_ptr_nonnull(strstr(r, "\"failures\": [\n\n  ],"));
	free(r);
	remove_jobdir();
}
END_TEST

/* FTSHIM_READMIT: a rank failed and taken back is listed and said. */
START_TEST(test_report_readmitted)
{
	char summary[512];

	make_jobdir();
	struct ft_report_input in = input();
	ranks[2].failed = false;
	ranks[2].readmitted = true;
	ck_assert_int_eq(ft_report_write(&in, summary, sizeof summary), 0);
	ck_assert_str_eq(summary, "ftshim: no failures (re-admitted after a failure: rank 2); 4 of 4 ranks finished");
	char *r = read_text("report.json");
	ck_assert_ptr_nonnull(strstr(r, "\"failed\": [],"));
	ck_assert_ptr_nonnull(strstr(r, "\"readmitted\": [2],"));
	free(r);
	ranks[2].readmitted = false;
	remove_jobdir();
}
END_TEST

START_TEST(test_report_many_events)
{
	char summary[512], path[128];

	make_jobdir();
	snprintf(path, sizeof path, "%s/events.0.jsonl", jobdir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < 1000; i++)
		fprintf(f, "{\"t\":%d.000000,\"rank\":0,\"kind\":\"agree\",\"flag\":1}\n", i);
	fclose(f);
	struct ft_report_input in = input();
	ck_assert_int_eq(ft_report_write(&in, summary, sizeof summary), 0);
	char *r = read_text("report.json");
	int n = 0;
	for (const char *p = r; (p = strstr(p, "\"kind\":\"agree\"")) != NULL; p++)
		n++;
	ck_assert_int_eq(n, 1000);
	ck_assert_ptr_nonnull(strstr(r, "{\"t\":999.000000,\"rank\":0,\"kind\":\"agree\",\"flag\":1}\n  ]\n}\n"));
	free(r);
	remove_jobdir();
}
END_TEST

/* Another host's files, sent at the end of the job (ft_report_store):
 * rank 3's events and its host's deaths record are read from
 * hosts/HOST/; a file the job directory has too (a run directory the
 * hosts share) counts once; a name with a slash is refused. */
START_TEST(test_report_other_host)
{
	char summary[512], line[256];

	make_jobdir();
	write_text("events.0.jsonl", "{\"t\":1.015000,\"rank\":0,\"kind\":\"notification\",\"failed\":2}\n");
	write_text("events.1.jsonl", "{\"t\":1.016000,\"rank\":1,\"kind\":\"notification\",\"failed\":2}\n");
	snprintf(line, sizeof line, "time=%llu.001000 rank=2 host=a pid=7 how=SIGSEGV by=supervisor\n",
		 (unsigned long long)(ORIGIN / SEC + 1));
	write_text("deaths", line);
	const char *ev3 = "{\"t\":1.030000,\"rank\":3,\"kind\":\"notification\",\"failed\":2}\n"
			  "{\"t\":2.000000,\"rank\":3,\"kind\":\"finalize\"}\n";
	ck_assert_int_eq(ft_report_store(jobdir, "b\"", "events.3.jsonl", ev3, strlen(ev3)), 0);
	ck_assert_int_eq(ft_report_store(jobdir, "b\"", "deaths", line, strlen(line)), 0);
	/* Rank 1's events, here already: the copy is not read. */
	ck_assert_int_eq(ft_report_store(jobdir, "b\"", "events.1.jsonl", ev3, strlen(ev3)), 0);
	ck_assert_int_eq(ft_report_store(jobdir, "b\"", "../x", "", 0), -EINVAL);
	ck_assert_int_eq(ft_report_store(jobdir, "b\"", ".hidden", "", 0), -EINVAL);
	/* A host name is a directory name, slashes and all. */
	ck_assert_int_eq(ft_report_store(jobdir, "../up", "deaths", "", 0), 0);
	char path[160];
	snprintf(path, sizeof path, "%s/hosts/_._up/deaths", jobdir);
	ck_assert_int_eq(access(path, F_OK), 0);
	struct ft_report_input in = input();
	ck_assert_int_eq(ft_report_write(&in, summary, sizeof summary), 0);
	/* Rank 3 knew last, at 1.030 s. */
	ck_assert_str_eq(summary, "ftshim: 1 failure (rank 2 SIGSEGV at 1.00 s); detected in 29 ms; 3 of 4 ranks finished");
	char *r = read_text("report.json");
	ck_assert_ptr_nonnull(strstr(r, "\"missing_ranks\": [],"));
	ck_assert_ptr_nonnull(strstr(r, "{\"t\":2.000000,\"rank\":3,\"kind\":\"finalize\"}"));
	int deaths = 0, finalizes = 0;
	for (const char *p = r; (p = strstr(p, "\"kind\":\"death\"")) != NULL; p++)
		deaths++;
	for (const char *p = r; (p = strstr(p, "\"kind\":\"finalize\"")) != NULL; p++)
		finalizes++;
	ck_assert_int_eq(deaths, 1);
	ck_assert_int_eq(finalizes, 1);
	free(r);
	remove_jobdir();
}
END_TEST

/* A host whose ranks all failed is one item of the summary; a host whose
 * files did not come is named, with why. */
START_TEST(test_report_hosts_lost_and_missing)
{
	char summary[1024];

	make_jobdir();
	write_text("events.0.jsonl", "{\"t\":1.015000,\"rank\":0,\"kind\":\"notification\",\"failed\":2}\n");
	struct ft_report_rank six[6];
	const char *hosts[6] = { "a", "a", "b", "b", "c", "c" };
	for (int r = 0; r < 6; r++)
		six[r] = (struct ft_report_rank){ .host = hosts[r] };
	for (int r = 2; r < 4; r++)
		six[r] = (struct ft_report_rank){ .host = "b", .failed = true, .detection = "crash", .detector = 0,
						  .failed_unix_ns = ORIGIN + (uint64_t)r * SEC,
						  .learned_unix_ns = ORIGIN + (uint64_t)r * SEC + SEC / 100 };
	struct ft_report_host missing = { .name = "c", .why = "nothing came from rank 4" };
	struct ft_report_input in = input();
	in.ranks = six;
	in.nprocs = 6;
	in.missing_hosts = &missing;
	in.nmissing_hosts = 1;
	ck_assert_int_eq(ft_report_write(&in, summary, sizeof summary), 0);
	ck_assert_str_eq(summary, "ftshim: 2 failures (host b lost (ranks 2, 3 crash at 2.00 s)); detected in 10.0 ms; "
				  "4 of 6 ranks finished; events missing from host c (nothing came from rank 4)");
	char *r = read_text("report.json");
	ck_assert_ptr_nonnull(strstr(r, "\"lost_hosts\": [{\"host\": \"b\", \"ranks\": [2, 3]}],"));
	ck_assert_ptr_nonnull(strstr(r, "\"missing_hosts\": [{\"host\": \"c\", \"why\": \"nothing came from rank 4\"}],"));
	ck_assert_ptr_nonnull(strstr(r, "\"missing_ranks\": [1, 4, 5],"));
	free(r);
	/* Different causes: the host's item names none. One host alone is
	 * never "lost". */
	six[3].detection = "heartbeat timeout";
	ck_assert_int_eq(ft_report_write(&in, summary, sizeof summary), 0);
	ck_assert_ptr_nonnull(strstr(summary, "(host b lost (ranks 2, 3 at 2.00 s))"));
	for (int k = 0; k < 6; k++)
		six[k].host = "a";
	in.nmissing_hosts = 0;
	ck_assert_int_eq(ft_report_write(&in, summary, sizeof summary), 0);
	ck_assert_ptr_nonnull(strstr(summary, "(rank 2 crash at 2.00 s, rank 3 heartbeat timeout at 3.00 s)"));
	remove_jobdir();
}
END_TEST

/* What a host sends of a rank's events: all of it when it fits; else its
 * first lines, its last, and how many were left out (with what the
 * record itself had dropped). */
START_TEST(test_cap_events)
{
	char text[4096], out[4096];
	size_t len = 0;

	for (int i = 0; i < 40; i++)
		len += (size_t)snprintf(text + len, sizeof text - len, "{\"t\":%d.000000,\"rank\":7,\"kind\":\"agree\"}\n", i);
	len += (size_t)snprintf(text + len, sizeof text - len, "{\"t\":41.000000,\"rank\":7,\"kind\":\"finalize\"}\n");
	ck_assert_uint_eq(ft_report_cap_events(text, len, sizeof out, 7, out), len);
	ck_assert(memcmp(out, text, len) == 0);
	size_t n = ft_report_cap_events(text, len, 600, 7, out);
	ck_assert_uint_le(n, 600);
	out[n] = '\0';
	ck_assert(strncmp(out, "{\"t\":0.000000,\"rank\":7,\"kind\":\"agree\"}\n", 38) == 0);
	int kept = 0;
	for (const char *p = out; (p = strstr(p, "\"agree\"")) != NULL; p++)
		kept++;
	char tail[160];
	snprintf(tail, sizeof tail, "{\"t\":41.000000,\"rank\":7,\"kind\":\"finalize\"}\n"
				    "{\"t\":0,\"rank\":7,\"kind\":\"dropped\",\"count\":%d}\n", 40 - kept);
	ck_assert_int_gt(kept, 0);
	ck_assert_int_lt(kept, 40);
	ck_assert_str_eq(out + n - strlen(tail), tail);
	/* The record's own "dropped" line is folded in. */
	len += (size_t)snprintf(text + len, sizeof text - len, "{\"t\":0,\"rank\":7,\"kind\":\"dropped\",\"count\":5}\n");
	n = ft_report_cap_events(text, len, 600, 7, out);
	out[n] = '\0';
	snprintf(tail, sizeof tail, "{\"t\":41.000000,\"rank\":7,\"kind\":\"finalize\"}\n"
				    "{\"t\":0,\"rank\":7,\"kind\":\"dropped\",\"count\":%d}\n", 40 - kept + 5);
	ck_assert_str_eq(out + n - strlen(tail), tail);
	/* Too small for the last line: nothing. */
	ck_assert_uint_eq(ft_report_cap_events(text, len, 100, 7, out), 0);
	/* Empty. */
	ck_assert_uint_eq(ft_report_cap_events("", 0, 600, 7, out), 0);
}
END_TEST

START_TEST(test_report_no_rundir)
{
	char summary[512];

	snprintf(jobdir, sizeof jobdir, "/nonexistent/ftshim-check");
	struct ft_report_input in = input();
	ck_assert_int_lt(ft_report_write(&in, summary, sizeof summary), 0);
	/* The summary is still made, from what this rank knows. */
	ck_assert_str_eq(summary, "ftshim: 1 failure (rank 2 crash at 1.00 s); detected in 13 ms; 3 of 4 ranks finished");
}
END_TEST

static Suite *report_suite(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("events");

	tcase_add_test(tc, test_json_escape);
	tcase_add_test(tc, test_event_lines);
	tcase_add_test(tc, test_event_bounds);
	suite_add_tcase(s, tc);
	tc = tcase_create("report");
	tcase_add_test(tc, test_report_one_failure);
	tcase_add_test(tc, test_report_not_injected);
	tcase_add_test(tc, test_report_pause_then_kill);
	tcase_add_test(tc, test_report_death_recorded);
	tcase_add_test(tc, test_report_replicas);
	tcase_add_test(tc, test_report_no_failure);
	tcase_add_test(tc, test_report_readmitted);
	tcase_add_test(tc, test_report_many_events);
	tcase_add_test(tc, test_report_other_host);
	tcase_add_test(tc, test_report_hosts_lost_and_missing);
	tcase_add_test(tc, test_cap_events);
	tcase_add_test(tc, test_report_no_rundir);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(report_suite());

	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
