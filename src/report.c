/* report.c: report.json and the summary line (see report.h). The events
 * files hold finished JSON lines, so they are copied, not parsed; only
 * each line's fixed prefix (time, rank, kind, and the failed rank of a
 * detection or notification) is read, to know when every rank knew of
 * each failure. The injections file, and the deaths file that the ranks'
 * supervisors append to under Hydra, are key=value lines, turned into
 * injection and death events. They are read from the job directory and
 * from each hosts/HOST/ below it, where the files other hosts sent are
 * kept; a rank's events are taken from the first place that has them and
 * a record line once (a run directory several hosts share has them
 * twice). */
#include "ftshim_config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/events.h"
#include "src/fdio.h"
#include "src/hash.h"
#include "src/report.h"

/* A growing string. buf_printf is for short pieces (up to 2 KiB). */
struct buf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void buf_add(struct buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

__attribute__((format(printf, 2, 3))) static void buf_printf(struct buf *b, const char *fmt, ...)
{
	char tmp[2048];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n > 0)
		buf_add(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* What is learned about each rank from the files. */
struct rank_facts {
	bool has_events;  /* its events file is here */
	double knew_max;  /* the latest time a rank here learned it failed; -1 */
	double detected;  /* when its detector saw it; -1 */
	double injected;  /* its first recorded injection; -1 */
	char inj_how[32]; /* how it was injected */
	double died;      /* its death by signal, as its supervisor saw it; -1 */
	char death_how[32];
};

static double since(uint64_t at, uint64_t origin)
{
	return at > origin ? (double)(at - origin) / 1e9 : 0.0;
}

/* One line of an events file: copy it into events, note what it says. */
static void take_event_line(const char *line, struct rank_facts *facts, uint32_t nprocs, struct buf *events)
{
	double t;
	unsigned rank, failed;
	char kind[32];
	int n = 0;

	if (line[0] != '{')
		return;
	if (events->len)
		buf_printf(events, ",\n    ");
	else
		buf_printf(events, "    ");
	buf_add(events, line, strlen(line));
	if (sscanf(line, "{\"t\":%lf,\"rank\":%u,\"kind\":\"%31[^\"]\"%n", &t, &rank, kind, &n) != 3 || !n)
		return;
	bool detection = strcmp(kind, "detection") == 0;
	if (!detection && strcmp(kind, "notification") != 0)
		return;
	if (sscanf(line + n, ",\"failed\":%u", &failed) != 1 || failed >= nprocs)
		return;
	if (t > facts[failed].knew_max)
		facts[failed].knew_max = t;
	if (detection && (facts[failed].detected < 0 || t < facts[failed].detected))
		facts[failed].detected = t;
}

static void read_events(const char *jobdir, struct rank_facts *facts, uint32_t nprocs, struct buf *events)
{
	DIR *dir = opendir(jobdir);
	struct dirent *de;

	if (!dir)
		return;
	while ((de = readdir(dir)) != NULL) {
		unsigned rank;
		int n = 0;
		if (sscanf(de->d_name, "events.%u.jsonl%n", &rank, &n) != 1 || de->d_name[n] || rank >= nprocs ||
		    facts[rank].has_events)
			continue;
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/%s", jobdir, de->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		facts[rank].has_events = true;
		char line[FT_EVENT_LINE_MAX + 2];
		while (fgets(line, sizeof line, f)) {
			line[strcspn(line, "\n")] = '\0';
			take_event_line(line, facts, nprocs, events);
		}
		fclose(f);
	}
	closedir(dir);
}

/* The value of key in an injections line (key=value or key="quoted"),
 * unescaped, or "" when absent. */
static void field(const char *line, const char *key, char *out, size_t outlen)
{
	size_t klen = strlen(key), n = 0;
	const char *p = line;

	out[0] = '\0';
	while ((p = strstr(p, key)) != NULL) {
		if ((p == line || p[-1] == ' ') && p[klen] == '=')
			break;
		p += klen;
	}
	if (!p || !outlen)
		return;
	p += klen + 1;
	if (*p == '"') {
		for (p++; *p && *p != '"' && n + 1 < outlen; p++) {
			if (*p == '\\' && p[1])
				p++;
			out[n++] = *p;
		}
	} else {
		for (; *p && *p != ' ' && n + 1 < outlen; p++)
			out[n++] = *p;
	}
	out[n] = '\0';
}

/* The record lines taken so far, by hash: the same line in two places
 * counts once. */
struct line_set {
	uint64_t *h;
	size_t n, cap;
};

static uint64_t line_hash(const char *line)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (const unsigned char *p = (const unsigned char *)line; *p; p++)
		h = (h ^ *p) * UINT64_C(0x100000001b3);
	return ft_mix64(h);
}

/* Whether line is new (and now taken). */
static bool line_set_add(struct line_set *set, const char *line)
{
	uint64_t h = line_hash(line);

	for (size_t i = 0; i < set->n; i++)
		if (set->h[i] == h)
			return false;
	if (set->n == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 64;
		uint64_t *grown = realloc(set->h, cap * sizeof *grown);
		if (!grown)
			return true;
		set->h = grown;
		set->cap = cap;
	}
	set->h[set->n++] = h;
	return true;
}

static bool is_pause(const char *how)
{
	return strncmp(how, "pause", 5) == 0;
}

/* The "injections" file (kind "injection") or the "deaths" file that
 * supervisors append to (kind "death"): key=value lines. */
static void read_records(const char *jobdir, const char *file, const char *kind, uint64_t origin,
			 struct rank_facts *facts, uint32_t nprocs, struct line_set *seen, struct buf *events)
{
	char path[PATH_MAX], line[2048];
	bool deaths = strcmp(kind, "death") == 0;

	snprintf(path, sizeof path, "%s/%s", jobdir, file);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		char time_s[64], rank_s[16], how[32], by[64], trigger[256], clause[512];
		char e_by[1024], e_trigger[512], e_how[64];
		line[strcspn(line, "\n")] = '\0';
		if (!line_set_add(seen, line))
			continue;
		field(line, "time", time_s, sizeof time_s);
		field(line, "rank", rank_s, sizeof rank_s);
		field(line, "how", how, sizeof how);
		field(line, "by", by, sizeof by);
		field(line, "trigger", trigger, sizeof trigger);
		field(line, "clause", clause, sizeof clause);
		char *end;
		double when = strtod(time_s, &end);
		unsigned long rank = strtoul(rank_s, NULL, 10);
		if (end == time_s || !rank_s[0] || rank >= nprocs)
			continue;
		double origin_s = (double)origin / 1e9;
		double t = when > origin_s ? when - origin_s : 0.0;
		struct rank_facts *r = &facts[rank];
		/* The failure is its first injection that ends the process: a
		 * pause only if nothing else did (a pause that outlived the
		 * heartbeat timeout). */
		double *first = deaths ? &r->died : &r->injected;
		bool was_pause = !deaths && *first >= 0 && is_pause(r->inj_how);
		bool pause = !deaths && is_pause(how);
		if (*first < 0 || (was_pause && !pause) || (was_pause == pause && t < *first)) {
			*first = t;
			snprintf(deaths ? r->death_how : r->inj_how, sizeof r->inj_how, "%s", how);
		}
		char by_text[700];
		if (clause[0])
			snprintf(by_text, sizeof by_text, "%s \"%s\"", by, clause);
		else
			snprintf(by_text, sizeof by_text, "%s", by);
		char ev[FT_EVENT_LINE_MAX * 3];
		if (deaths)
			snprintf(ev, sizeof ev, "{\"t\":%.6f,\"rank\":%lu,\"kind\":\"death\",\"how\":\"%s\",\"by\":\"%s\"}",
				 t, rank, ft_json_escape(how, e_how, sizeof e_how),
				 ft_json_escape(by_text, e_by, sizeof e_by));
		else
			snprintf(ev, sizeof ev,
				 "{\"t\":%.6f,\"rank\":%lu,\"kind\":\"injection\",\"how\":\"%s\",\"by\":\"%s\",\"trigger\":\"%s\"}",
				 t, rank, ft_json_escape(how, e_how, sizeof e_how), ft_json_escape(by_text, e_by, sizeof e_by),
				 ft_json_escape(trigger, e_trigger, sizeof e_trigger));
		take_event_line(ev, facts, nprocs, events);
	}
	fclose(f);
}

/* Everything in one directory. */
static void read_dir(const char *dir, const struct ft_report_input *in, struct rank_facts *facts,
		     struct line_set *seen, struct buf *events)
{
	read_events(dir, facts, in->nprocs, events);
	read_records(dir, "injections", "injection", in->origin_unix_ns, facts, in->nprocs, seen, events);
	read_records(dir, "deaths", "death", in->origin_unix_ns, facts, in->nprocs, seen, events);
}

/* The job directory first (this host's own files, whole), then what the
 * other hosts sent (hosts/HOST/). */
static void read_all(const struct ft_report_input *in, struct rank_facts *facts, struct buf *events)
{
	struct line_set seen = { 0 };
	char hosts[PATH_MAX];

	read_dir(in->jobdir, in, facts, &seen, events);
	snprintf(hosts, sizeof hosts, "%s/hosts", in->jobdir);
	DIR *dir = opendir(hosts);
	if (dir) {
		struct dirent *de;
		while ((de = readdir(dir)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			char sub[PATH_MAX + 256];
			snprintf(sub, sizeof sub, "%s/%s", hosts, de->d_name);
			read_dir(sub, in, facts, &seen, events);
		}
		closedir(dir);
	}
	free(seen.h);
}

int ft_write_file_atomically(const char *path, const char *text, size_t len)
{
	char tmp[PATH_MAX + 16];
	int rc = 0;

	snprintf(tmp, sizeof tmp, "%s.%ld", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	rc = ft_write_all(fd, text, len);
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc != 0)
		unlink(tmp);
	return rc;
}

/* A host name as a directory name: no path separators, no dot files. */
static void safe_name(const char *name, char *out, size_t len)
{
	size_t n = 0;

	for (const char *p = name; *p && n + 1 < len; p++) {
		out[n] = *p == '/' || (*p == '.' && n == 0) ? '_' : *p;
		n++;
	}
	if (n == 0 && len > 1)
		out[n++] = '_';
	out[n] = '\0';
}

int ft_report_store(const char *jobdir, const char *host, const char *name, const char *data, size_t len)
{
	char dir[PATH_MAX], safe[128], path[PATH_MAX + 160];

	if (!name[0] || strchr(name, '/') || name[0] == '.')
		return -EINVAL;
	safe_name(host, safe, sizeof safe);
	snprintf(dir, sizeof dir, "%s/hosts", jobdir);
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return -errno;
	snprintf(dir, sizeof dir, "%s/hosts/%s", jobdir, safe);
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return ft_write_file_atomically(path, data, len);
}

/* Where each line of text[0..len) starts and how long it is, for the
 * last line; and how many lines there are. */
static size_t last_line(const char *text, size_t len, size_t *start, size_t *n)
{
	size_t nlines = 0;

	*start = *n = 0;
	for (size_t i = 0; i < len;) {
		size_t e = i;
		while (e < len && text[e] != '\n')
			e++;
		nlines++;
		*start = i;
		*n = e - i;
		i = e + 1;
	}
	return nlines;
}

size_t ft_report_cap_events(const char *text, size_t len, size_t cap, uint32_t rank, char *out)
{
	size_t last_start, last_len, nlines = last_line(text, len, &last_start, &last_len);
	unsigned long long prior_dropped = 0;
	char line[FT_EVENT_LINE_MAX + 1], close;

	/* A "dropped" line at the end (the record's own bound) is folded
	 * into the new one. */
	if (nlines && last_len < sizeof line) {
		memcpy(line, text + last_start, last_len);
		line[last_len] = '\0';
		if (sscanf(line, "{\"t\":0,\"rank\":%*u,\"kind\":\"dropped\",\"count\":%llu%c", &prior_dropped,
			   &close) == 2 && close == '}') {
			len = last_start;
			nlines = last_line(text, len, &last_start, &last_len);
		} else {
			prior_dropped = 0;
		}
	}
	if (len <= cap && !prior_dropped) {
		memcpy(out, text, len);
		return len;
	}
	/* Room for the last line (the finalize) and the dropped line. */
	char dropped_line[FT_EVENT_DROPPED_MAX];
	size_t reserve = last_len + 1 + sizeof dropped_line, used = 0, kept = 0;
	if (reserve > cap)
		return 0;
	for (size_t i = 0; nlines && i < last_start;) {
		size_t e = i;
		while (e < len && text[e] != '\n')
			e++;
		if (used + (e - i) + 1 + reserve > cap)
			break;
		memcpy(out + used, text + i, e - i);
		used += e - i;
		out[used++] = '\n';
		kept++;
		i = e + 1;
	}
	if (nlines) {
		memcpy(out + used, text + last_start, last_len);
		used += last_len;
		out[used++] = '\n';
		kept++;
	}
	size_t n = ft_events_dropped_line(rank, (uint64_t)(nlines - kept) + prior_dropped, dropped_line);
	memcpy(out + used, dropped_line, n);
	return used + n;
}

/* A list of ranks as JSON. */
static void rank_list(struct buf *b, const struct ft_report_input *in, bool failed)
{
	bool first = true;

	buf_printf(b, "[");
	for (uint32_t r = 0; r < in->nprocs; r++) {
		if (in->ranks[r].failed != failed)
			continue;
		buf_printf(b, "%s%u", first ? "" : ", ", r);
		first = false;
	}
	buf_printf(b, "]");
}

void ft_format_duration(double s, char *out, size_t len)
{
	if (s < 0.01)
		snprintf(out, len, "%.1f ms", s * 1e3);
	else if (s < 1.0)
		snprintf(out, len, "%.0f ms", s * 1e3);
	else
		snprintf(out, len, "%.2f s", s);
}

/* What the report says of each failed rank. */
struct failure {
	double failed_s, all_knew_s;
	const char *how;
};

/* The host of rank r ("?" if unknown). */
static const char *host_of(const struct ft_report_input *in, uint32_t r)
{
	return in->ranks[r].host && in->ranks[r].host[0] ? in->ranks[r].host : "?";
}

/* The job's hosts, by name: each rank's host is named by its lowest
 * rank (leader); lost, at a leader: the job ran on several hosts and
 * every rank of this one failed. */
struct hosts {
	uint32_t *leader;
	bool *lost;
};

static int hosts_group(struct hosts *h, const struct ft_report_input *in)
{
	uint32_t nleaders = 0, *leaders = calloc(in->nprocs ? in->nprocs : 1, sizeof *leaders);

	h->leader = calloc(in->nprocs ? in->nprocs : 1, sizeof *h->leader);
	h->lost = calloc(in->nprocs ? in->nprocs : 1, sizeof *h->lost);
	if (!leaders || !h->leader || !h->lost) {
		free(leaders);
		return -ENOMEM;
	}
	for (uint32_t r = 0; r < in->nprocs; r++) {
		uint32_t i = 0;
		while (i < nleaders && strcmp(host_of(in, leaders[i]), host_of(in, r)) != 0)
			i++;
		if (i == nleaders) {
			leaders[nleaders++] = r;
			h->lost[r] = true;
		}
		h->leader[r] = leaders[i];
		h->lost[leaders[i]] &= in->ranks[r].failed;
	}
	if (nleaders < 2)
		memset(h->lost, 0, in->nprocs * sizeof *h->lost);
	free(leaders);
	return 0;
}

static bool host_lost(const struct hosts *h, uint32_t r)
{
	return h->lost[h->leader[r]];
}

/* The ranks of r's host, ", "-separated (a JSON list's inside). */
static void host_ranks(struct buf *b, const struct ft_report_input *in, const struct hosts *h, uint32_t r)
{
	bool first = true;

	for (uint32_t q = h->leader[r]; q < in->nprocs; q++) {
		if (h->leader[q] != h->leader[r])
			continue;
		buf_printf(b, "%s%u", first ? "" : ", ", q);
		first = false;
	}
}

/* One item of the summary's list: a rank, or a whole host lost (its
 * ranks, their common cause, the first failure). Returns the largest
 * delay until everyone knew, for the "detected in" list. */
static double summary_item(struct buf *listed, const struct ft_report_input *in, const struct hosts *h,
			   const struct failure *fl, uint32_t r)
{
	const struct ft_report_rank *k = &in->ranks[r];
	char name[64], carried[64] = "";

	if (host_lost(h, r)) {
		double first = fl[r].failed_s, worst = 0;
		bool same_how = true;
		for (uint32_t q = r; q < in->nprocs; q++) {
			if (h->leader[q] != h->leader[r])
				continue;
			if (fl[q].failed_s < first)
				first = fl[q].failed_s;
			if (fl[q].all_knew_s - fl[q].failed_s > worst)
				worst = fl[q].all_knew_s - fl[q].failed_s;
			same_how &= strcmp(fl[q].how, fl[r].how) == 0;
		}
		buf_printf(listed, "host %s lost (ranks ", host_of(in, r));
		host_ranks(listed, in, h, r);
		buf_printf(listed, "%s%s at %.2f s)", same_how ? " " : "", same_how ? fl[r].how : "", first);
		return worst;
	}
	if (k->replica)
		snprintf(name, sizeof name, "rank %u's replica (process %u)", k->replica_of, r);
	else if (k->spare)
		snprintf(name, sizeof name, "spare %u (process %u)", k->spare_index, r);
	else
		snprintf(name, sizeof name, "rank %u", r);
	if (k->copy_lived && !k->replica)
		snprintf(carried, sizeof carried, " (replica process %u promoted)", k->copy);
	buf_printf(listed, "%s %s at %.2f s%s", name, fl[r].how, fl[r].failed_s, carried);
	return fl[r].all_knew_s > fl[r].failed_s ? fl[r].all_knew_s - fl[r].failed_s : 0.0;
}

int ft_report_write(const struct ft_report_input *in, char *summary, size_t summary_len)
{
	struct rank_facts *facts = calloc(in->nprocs ? in->nprocs : 1, sizeof *facts);
	struct failure *fl = calloc(in->nprocs ? in->nprocs : 1, sizeof *fl);
	struct hosts hosts = { 0 };
	struct buf events = { 0 }, out = { 0 }, failures = { 0 }, listed = { 0 }, delays = { 0 };
	char esc[PATH_MAX * 2];
	uint32_t nfailed = 0;
	int rc;

	if (!facts || !fl || hosts_group(&hosts, in) != 0) {
		free(facts);
		free(fl);
		free(hosts.leader);
		free(hosts.lost);
		snprintf(summary, summary_len, "ftshim: out of memory for the report");
		return -ENOMEM;
	}
	for (uint32_t r = 0; r < in->nprocs; r++)
		facts[r].knew_max = facts[r].detected = facts[r].injected = facts[r].died = -1;
	read_all(in, facts, &events);

	for (uint32_t r = 0; r < in->nprocs; r++) {
		const struct ft_report_rank *k = &in->ranks[r];
		struct rank_facts *f = &facts[r];
		if (!k->failed)
			continue;
		/* The best time known: the injection, the supervisor's record of
		 * the death (written once it has reaped the rank: never later
		 * than its first detection, which the closed sockets allow),
		 * the detector's estimate, when this rank learned it. */
		double died = f->died >= 0 && f->detected >= 0 && f->detected < f->died ? f->detected : f->died;
		double failed_s = f->injected >= 0 ? f->injected
				  : died >= 0 ? died
				  : k->failed_unix_ns ? since(k->failed_unix_ns, in->origin_unix_ns)
				  : since(k->learned_unix_ns, in->origin_unix_ns);
		double learned_s = since(k->learned_unix_ns, in->origin_unix_ns);
		double all_knew = f->knew_max > learned_s ? f->knew_max : learned_s;
		const char *how = f->injected >= 0 && f->inj_how[0] ? f->inj_how
				  : f->died >= 0 && f->death_how[0] ? f->death_how
				  : k->detection ? k->detection : "unknown";
		fl[r] = (struct failure){ .failed_s = failed_s, .all_knew_s = all_knew, .how = how };
		char e_how[64], e_host[160], e_det[64], copies[64] = "";
		if (k->replica)
			snprintf(copies, sizeof copies, ", \"replica_of\": %u", k->replica_of);
		if (k->spare)
			snprintf(copies, sizeof copies, ", \"spare\": %u", k->spare_index);
		if (k->copy_lived)
			snprintf(copies + strlen(copies), sizeof copies - strlen(copies),
				 ", \"carried_on_by\": %u", k->copy);
		buf_printf(&failures,
			   "%s    {\"rank\": %u, \"host\": \"%s\", \"how\": \"%s\", \"failed_s\": %.6f, "
			   "\"detection\": \"%s\", \"detected_by\": %u, \"detected_s\": %.6f, \"all_knew_s\": %.6f, "
			   "\"injected\": %s%s}",
			   nfailed ? ",\n" : "", r, ft_json_escape(host_of(in, r), e_host, sizeof e_host),
			   ft_json_escape(how, e_how, sizeof e_how), failed_s,
			   ft_json_escape(k->detection ? k->detection : "unknown", e_det, sizeof e_det), k->detector,
			   f->detected >= 0 ? f->detected : learned_s, all_knew, f->injected >= 0 ? "true" : "false",
			   copies);
		nfailed++;
	}
	/* The summary lists each failure, a whole host lost as one. */
	uint32_t nitems = 0;
	for (uint32_t r = 0; r < in->nprocs; r++) {
		if (!in->ranks[r].failed || (host_lost(&hosts, r) && hosts.leader[r] != r))
			continue;
		if (nitems == 8) {
			buf_printf(&listed, ", ...");
			buf_printf(&delays, " / ...");
		}
		if (nitems++ >= 8)
			continue;
		if (nitems > 1)
			buf_printf(&listed, ", ");
		char d[32];
		ft_format_duration(summary_item(&listed, in, &hosts, fl, r), d, sizeof d);
		buf_printf(&delays, "%s%s", nitems > 1 ? " / " : "", d);
	}

	buf_printf(&out, "{\n  \"ftshim_report\": 1,\n  \"job\": \"%s\",\n",
		   ft_json_escape(in->job_id ? in->job_id : "", esc, sizeof esc));
	buf_printf(&out, "  \"program\": \"%s\",\n  \"ranks\": %u,\n  \"reported_by\": %u,\n",
		   ft_json_escape(in->program ? in->program : "", esc, sizeof esc), in->nprocs, in->self);
	buf_printf(&out, "  \"start_unix\": %.6f,\n  \"end_s\": %.6f,\n  \"hosts\": [",
		   (double)in->origin_unix_ns / 1e9, since(in->end_unix_ns, in->origin_unix_ns));
	for (uint32_t r = 0; r < in->nprocs; r++) {
		char e_host[160];
		buf_printf(&out, "%s\"%s\"", r ? ", " : "", ft_json_escape(host_of(in, r), e_host, sizeof e_host));
	}
	buf_printf(&out, "%s", "],\n  \"failed\": ");
	rank_list(&out, in, true);
	buf_printf(&out, "%s", ",\n  \"finished\": ");
	rank_list(&out, in, false);
	/* Taken back after a failure (FTSHIM_READMIT): alive, and finished. */
	struct buf back = { 0 };
	uint32_t nback = 0;
	buf_printf(&out, "%s", ",\n  \"readmitted\": [");
	for (uint32_t r = 0; r < in->nprocs; r++) {
		if (!in->ranks[r].readmitted || in->ranks[r].failed)
			continue;
		buf_printf(&out, "%s%u", nback ? ", " : "", r);
		buf_printf(&back, "%s%u", nback ? ", " : "", r);
		nback++;
	}
	buf_printf(&out, "%s", "]");
	buf_printf(&out, "%s", ",\n  \"missing_ranks\": [");
	bool first = true;
	for (uint32_t r = 0; r < in->nprocs; r++) {
		if (in->ranks[r].failed || facts[r].has_events)
			continue;
		buf_printf(&out, "%s%u", first ? "" : ", ", r);
		first = false;
	}
	/* Hosts whose ranks all failed, and hosts whose files did not come. */
	buf_printf(&out, "],\n  \"lost_hosts\": [");
	first = true;
	for (uint32_t r = 0; r < in->nprocs; r++) {
		char e_host[160];
		if (!host_lost(&hosts, r) || hosts.leader[r] != r)
			continue;
		buf_printf(&out, "%s{\"host\": \"%s\", \"ranks\": [", first ? "" : ", ",
			   ft_json_escape(host_of(in, r), e_host, sizeof e_host));
		host_ranks(&out, in, &hosts, r);
		buf_printf(&out, "]}");
		first = false;
	}
	buf_printf(&out, "],\n  \"missing_hosts\": [");
	struct buf gaps = { 0 };
	for (uint32_t i = 0; i < in->nmissing_hosts; i++) {
		const struct ft_report_host *h = &in->missing_hosts[i];
		char e_host[160], e_why[512];
		buf_printf(&out, "%s{\"host\": \"%s\", \"why\": \"%s\"}", i ? ", " : "",
			   ft_json_escape(h->name, e_host, sizeof e_host), ft_json_escape(h->why, e_why, sizeof e_why));
		if (i < 4)
			buf_printf(&gaps, "%s%s (%s)", i ? ", " : "", h->name, h->why);
		else if (i == 4)
			buf_printf(&gaps, ", ...");
	}
	/* The lists can be long: added whole, not through buf_printf. */
	buf_printf(&out, "],\n  \"failures\": [\n");
	if (failures.p)
		buf_add(&out, failures.p, failures.len);
	buf_printf(&out, "\n  ],\n  \"events\": [\n");
	if (events.p)
		buf_add(&out, events.p, events.len);
	buf_printf(&out, "\n  ]\n}\n");

	uint32_t finished = in->nprocs - nfailed;
	char readmitted[96] = "", missing[600] = "";
	if (nback)
		snprintf(readmitted, sizeof readmitted, " (re-admitted after a failure: rank%s %s)",
			 nback == 1 ? "" : "s", back.p ? back.p : "");
	if (in->nmissing_hosts)
		snprintf(missing, sizeof missing, "; events missing from host%s %s", in->nmissing_hosts == 1 ? "" : "s",
			 gaps.p ? gaps.p : "");
	if (nfailed == 0)
		snprintf(summary, summary_len, "ftshim: no failures%s; %u of %u ranks finished%s", readmitted,
			 finished, in->nprocs, missing);
	else
		snprintf(summary, summary_len, "ftshim: %u failure%s (%s)%s; detected in %s; %u of %u ranks finished%s",
			 nfailed, nfailed == 1 ? "" : "s", listed.p ? listed.p : "", readmitted,
			 delays.p ? delays.p : "", finished, in->nprocs, missing);

	if (out.oom || events.oom || failures.oom || back.oom || gaps.oom) {
		rc = -ENOMEM;
	} else {
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/report.json", in->jobdir);
		rc = ft_write_file_atomically(path, out.p, out.len);
	}
	free(out.p);
	free(back.p);
	free(gaps.p);
	free(events.p);
	free(failures.p);
	free(listed.p);
	free(delays.p);
	free(facts);
	free(fl);
	free(hosts.leader);
	free(hosts.lost);
	return rc;
}
