/* inject.c: the FTSHIM_INJECT language (see inject.h): parsing, with one
 * error line that points at the wrong part, and the plan for one rank,
 * drawn from seeded generators so that every rank, and every run with the
 * same seed, makes the same choices. */
#include "ftshim_config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "src/common.h"
#include "src/config.h"
#include "src/hash.h"
#include "src/inject.h"

/* Ranges in a rank list may not expand beyond this. */
#define MAX_LISTED_RANKS (1u << 22)

static const struct {
	const char *name;
	int sig;
} signals[] = {
	{ "SIGHUP", SIGHUP },   { "SIGINT", SIGINT },   { "SIGQUIT", SIGQUIT }, { "SIGILL", SIGILL },
	{ "SIGTRAP", SIGTRAP }, { "SIGABRT", SIGABRT }, { "SIGBUS", SIGBUS },   { "SIGFPE", SIGFPE },
	{ "SIGKILL", SIGKILL }, { "SIGUSR1", SIGUSR1 }, { "SIGSEGV", SIGSEGV }, { "SIGUSR2", SIGUSR2 },
	{ "SIGPIPE", SIGPIPE }, { "SIGALRM", SIGALRM }, { "SIGTERM", SIGTERM }, { "SIGSTOP", SIGSTOP },
	{ "SIGXCPU", SIGXCPU }, { "SIGSYS", SIGSYS },
};

int ft_inject_signal_number(const char *name)
{
	char *end;
	long n = strtol(name, &end, 10);

	if (*name && !*end)
		return n > 0 && n < 65 ? (int)n : -1;
	for (size_t i = 0; i < FT_ARRAY_SIZE(signals); i++) {
		if (strcasecmp(name, signals[i].name) == 0 || strcasecmp(name, signals[i].name + 3) == 0)
			return signals[i].sig;
	}
	return -1;
}

const char *ft_inject_signal_name(int sig)
{
	for (size_t i = 0; i < FT_ARRAY_SIZE(signals); i++)
		if (signals[i].sig == sig)
			return signals[i].name;
	return NULL;
}

void ft_inject_describe_how(const struct ft_inject_clause *c, char *out, size_t outlen)
{
	char d[32];
	const char *name;

	switch (c->how) {
	case FT_DO_SIGNAL:
		name = ft_inject_signal_name(c->sig);
		if (name)
			snprintf(out, outlen, "%s", name);
		else
			snprintf(out, outlen, "signal %d", c->sig);
		break;
	case FT_DO_EXIT:
		snprintf(out, outlen, "exit:%d", c->exit_code);
		break;
	case FT_DO_ABORT:
		snprintf(out, outlen, "abort");
		break;
	case FT_DO_PAUSE:
		ft_config_format_duration(c->pause_ns, d, sizeof d);
		snprintf(out, outlen, "pause:%s", d);
		break;
	}
}

/* --- parsing ------------------------------------------------------------ */

struct parser {
	char *err;
	size_t errlen;
	uint32_t clause_no;
	const char *clause;
};

static int fail(struct parser *p, const char *fmt, ...) FT_PRINTF(2, 3);

static int fail(struct parser *p, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	snprintf(p->err, p->errlen, "FTSHIM_INJECT: clause %u \"%s\": %s", p->clause_no, p->clause, why);
	/* The text comes from the environment: keep the error one line. */
	for (size_t i = 0; i < p->errlen && p->err[i]; i++)
		if (iscntrl((unsigned char)p->err[i]) && p->err[i] != '\t')
			p->err[i] = '?';
	return -EINVAL;
}

/* A non-negative decimal integer, the whole of [s, s+len). */
static bool parse_uint(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 19)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return true;
}

static bool parse_int(const char *s, size_t len, int64_t *out)
{
	uint64_t v;
	bool neg = len > 0 && s[0] == '-';

	if (!parse_uint(s + neg, len - neg, &v) || v > INT64_MAX)
		return false;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return true;
}

static int add_rank(struct ft_inject_clause *c, uint32_t r, uint32_t *cap)
{
	if (c->nranks == *cap) {
		uint32_t ncap = *cap ? 2 * *cap : 8;
		uint32_t *n = realloc(c->ranks, ncap * sizeof *n);
		if (!n)
			return -ENOMEM;
		c->ranks = n;
		*cap = ncap;
	}
	c->ranks[c->nranks++] = r;
	return 0;
}

static int parse_ranks(struct parser *p, struct ft_inject_clause *c, const char *v)
{
	const char *accepted = "accepted: 3, 1,5,7, 2-4, random:K, host:N, spawned:LIST or spare:LIST";
	uint64_t a, b;
	uint32_t cap = 0;

	if (strncmp(v, "random:", 7) == 0) {
		if (!parse_uint(v + 7, strlen(v + 7), &a) || a == 0 || a > UINT32_MAX)
			return fail(p, "rank=%s: random needs a count of at least 1 (random:2)", v);
		c->ranks_kind = FT_RANKS_RANDOM;
		c->count = (uint32_t)a;
		return 0;
	}
	if (strncmp(v, "host:", 5) == 0) {
		if (!parse_uint(v + 5, strlen(v + 5), &a) || a >= UINT32_MAX)
			return fail(p, "rank=%s: host needs the rank of a process on that host (host:0)", v);
		c->ranks_kind = FT_RANKS_HOST;
		c->host_of = (uint32_t)a;
		return 0;
	}
	c->ranks_kind = FT_RANKS_LIST;
	const char *list = v;
	if (strncmp(v, "spawned:", 8) == 0) {
		c->spawned = true;
		list = v + 8;
	} else if (strncmp(v, "spare:", 6) == 0) {
		c->spare = true;
		list = v + 6;
	}
	for (const char *item = list; *item;) {
		size_t len = strcspn(item, ",");
		const char *dash = memchr(item, '-', len);
		if (dash) {
			if (!parse_uint(item, (size_t)(dash - item), &a) ||
			    !parse_uint(dash + 1, len - (size_t)(dash - item) - 1, &b) || a > b)
				return fail(p, "rank=%s: '%.*s' is not a range low-high; %s", v, (int)len, item, accepted);
		} else if (parse_uint(item, len, &a)) {
			b = a;
		} else {
			return fail(p, "rank=%s: '%.*s' is not a rank; %s", v, (int)len, item, accepted);
		}
		if (b >= UINT32_MAX || b - a + c->nranks >= MAX_LISTED_RANKS)
			return fail(p, "rank=%s: too many ranks", v);
		for (uint64_t r = a; r <= b; r++)
			if (add_rank(c, (uint32_t)r, &cap) != 0)
				return fail(p, "out of memory");
		item += len + (item[len] == ',');
	}
	if (c->nranks == 0)
		return fail(p, "rank= is empty; %s", accepted);
	return 0;
}

static int parse_duration_field(struct parser *p, const char *field, const char *text, uint64_t *ns)
{
	char why[64];

	if (ft_parse_duration(text, ns, why, sizeof why) != 0)
		return fail(p, "%s: '%s': %s; accepted: a duration with unit us, ms or s", field, text, why);
	return 0;
}

static int parse_when(struct parser *p, struct ft_inject_clause *c, const char *v,
		      const char *const *known, size_t nknown)
{
	const char *accepted = "accepted: call:FUNCTION:N, time:DURATION, point:NAME:N, exp:MEAN or "
			       "weibull:SCALE:SHAPE";
	const char *arg = strchr(v, ':');
	size_t kind = arg ? (size_t)(arg - v) : strlen(v);

	if (!arg)
		return fail(p, "at=%s: %s", v, accepted);
	arg++;
	if (kind == 4 && strncmp(v, "call", 4) == 0) {
		const char *colon = strrchr(arg, ':');
		size_t nlen = colon ? (size_t)(colon - arg) : 0;
		if (!colon || !parse_int(colon + 1, strlen(colon + 1), &c->nth) || c->nth < 1)
			return fail(p, "at=%s: needs a function and a call number of at least 1 (call:MPI_Allreduce:10)", v);
		if (nlen == 0 || nlen >= FT_INJECT_NAME_MAX)
			return fail(p, "at=%s: needs an MPI function name", v);
		size_t i;
		for (i = 0; i < nknown; i++)
			if (strlen(known[i]) == nlen && strncmp(known[i], arg, nlen) == 0)
				break;
		if (i == nknown) {
			const char *hint = ft_closest_word(arg, nlen, known, nknown, sizeof known[0]);
			if (hint)
				return fail(p, "at=%s: ftshim does not wrap an MPI function '%.*s' (did you mean %s?)",
					    v, (int)nlen, arg, hint);
			return fail(p, "at=%s: ftshim does not wrap an MPI function '%.*s'", v, (int)nlen, arg);
		}
		memcpy(c->name, arg, nlen);
		c->name[nlen] = '\0';
		c->when = FT_AT_CALL;
		return 0;
	}
	if (kind == 4 && strncmp(v, "time", 4) == 0) {
		c->when = FT_AT_TIME;
		return parse_duration_field(p, "at=time", arg, &c->at_ns);
	}
	if (kind == 5 && strncmp(v, "point", 5) == 0) {
		const char *colon = strrchr(arg, ':');
		size_t nlen = colon ? (size_t)(colon - arg) : 0;
		if (!colon || nlen == 0 || nlen >= FT_INJECT_NAME_MAX ||
		    !parse_int(colon + 1, strlen(colon + 1), &c->nth))
			return fail(p, "at=%s: needs a point name and a value (point:iteration:50)", v);
		memcpy(c->name, arg, nlen);
		c->name[nlen] = '\0';
		c->when = FT_AT_POINT;
		return 0;
	}
	if (kind == 3 && strncmp(v, "exp", 3) == 0) {
		c->when = FT_AT_EXP;
		if (parse_duration_field(p, "at=exp", arg, &c->scale_ns) != 0)
			return -EINVAL;
		return c->scale_ns ? 0 : fail(p, "at=%s: the mean must be more than 0", v);
	}
	if (kind == 7 && strncmp(v, "weibull", 7) == 0) {
		const char *colon = strchr(arg, ':');
		char scale[64], *end;
		size_t slen = colon ? (size_t)(colon - arg) : 0;
		if (!colon || slen == 0 || slen >= sizeof scale)
			return fail(p, "at=%s: needs a scale and a shape (weibull:10s:0.7)", v);
		memcpy(scale, arg, slen);
		scale[slen] = '\0';
		c->when = FT_AT_WEIBULL;
		if (parse_duration_field(p, "at=weibull", scale, &c->scale_ns) != 0)
			return -EINVAL;
		c->shape = strtod(colon + 1, &end);
		if (*end || !(c->shape > 0.0) || c->shape > 100.0 || c->scale_ns == 0)
			return fail(p, "at=%s: needs a scale above 0 and a shape from 0 (excluded) to 100", v);
		return 0;
	}
	return fail(p, "at=%s: %s", v, accepted);
}

static int parse_how(struct parser *p, struct ft_inject_clause *c, const char *v)
{
	const char *accepted = "accepted: sigkill, sigsegv, sigterm, sigabrt, signal:NAME, exit, exit:CODE, "
			       "abort or pause:DURATION";
	uint64_t code;

	c->how = FT_DO_SIGNAL;
	if (strncmp(v, "signal:", 7) == 0) {
		c->sig = ft_inject_signal_number(v + 7);
		if (c->sig < 0 || c->sig == SIGSTOP)
			return fail(p, "how=%s: unknown signal '%s' (SIGSTOP: use pause:DURATION)", v, v + 7);
		return 0;
	}
	if (strncasecmp(v, "sig", 3) == 0 && strchr(v, ':') == NULL) {
		c->sig = ft_inject_signal_number(v);
		if (c->sig < 0 || c->sig == SIGSTOP)
			return fail(p, "how=%s: %s", v, accepted);
		return 0;
	}
	if (strcmp(v, "exit") == 0) {
		c->how = FT_DO_EXIT;
		c->exit_code = 1;
		return 0;
	}
	if (strncmp(v, "exit:", 5) == 0) {
		if (!parse_uint(v + 5, strlen(v + 5), &code) || code > 255)
			return fail(p, "how=%s: the exit status must be 0 to 255", v);
		c->how = FT_DO_EXIT;
		c->exit_code = (int)code;
		return 0;
	}
	if (strcmp(v, "abort") == 0) {
		c->how = FT_DO_ABORT;
		return 0;
	}
	if (strncmp(v, "pause:", 6) == 0) {
		c->how = FT_DO_PAUSE;
		if (parse_duration_field(p, "how=pause", v + 6, &c->pause_ns) != 0)
			return -EINVAL;
		return c->pause_ns ? 0 : fail(p, "how=%s: the pause must be longer than 0", v);
	}
	return fail(p, "how=%s: %s", v, accepted);
}

static int parse_copy(struct parser *p, struct ft_inject_clause *c, const char *v)
{
	static const char *const names[] = {"primary", "replica", "both"};

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(v, names[i]) == 0) {
			c->copy = (enum ft_inject_copy)i;
			return 0;
		}
	return fail(p, "copy=%s: accepted: primary, replica or both", v);
}

static int parse_clause(struct parser *p, struct ft_inject_clause *c, char *text,
			const char *const *known, size_t nknown)
{
	bool seen_rank = false, seen_at = false, seen_how = false, seen_seed = false;
	bool *seen_copy = &c->copy_given;

	c->how = FT_DO_SIGNAL;
	c->sig = SIGKILL;
	c->seed = 1;
	for (char *save = NULL, *field = strtok_r(text, " \t", &save); field;
	     field = strtok_r(NULL, " \t", &save)) {
		char *eq = strchr(field, '=');
		const char *v = eq ? eq + 1 : "";
		bool *seen;
		int rc;
		if (!eq)
			return fail(p, "'%s' is not a field; accepted: rank=, at=, how=, seed=, copy=", field);
		*eq = '\0';
		if (strcmp(field, "rank") == 0) {
			seen = &seen_rank;
			rc = *seen ? 0 : parse_ranks(p, c, v);
		} else if (strcmp(field, "at") == 0) {
			seen = &seen_at;
			rc = *seen ? 0 : parse_when(p, c, v, known, nknown);
		} else if (strcmp(field, "how") == 0) {
			seen = &seen_how;
			rc = *seen ? 0 : parse_how(p, c, v);
		} else if (strcmp(field, "seed") == 0) {
			seen = &seen_seed;
			rc = *seen ? 0 : (parse_uint(v, strlen(v), &c->seed) ? 0 : fail(p, "seed=%s: not a number", v));
		} else if (strcmp(field, "copy") == 0) {
			seen = seen_copy;
			rc = *seen ? 0 : parse_copy(p, c, v);
		} else {
			return fail(p, "unknown field '%s='; accepted: rank=, at=, how=, seed=, copy=", field);
		}
		if (*seen)
			return fail(p, "%s= is given twice", field);
		if (rc != 0)
			return rc;
		*seen = true;
	}
	if (!seen_rank)
		return fail(p, "rank= is missing (which ranks to kill)");
	if (!seen_at)
		return fail(p, "at= is missing (when to kill them)");
	return 0;
}

int ft_inject_parse(const char *text, const char *const *known_calls, size_t nknown,
		    struct ft_inject_spec *spec, char *err, size_t errlen)
{
	struct parser p = { .err = err, .errlen = errlen };
	char *copy = strdup(text), *save = NULL;
	int rc = 0;

	memset(spec, 0, sizeof *spec);
	if (!copy) {
		snprintf(err, errlen, "FTSHIM_INJECT: out of memory");
		return -ENOMEM;
	}
	for (char *clause = strtok_r(copy, ";", &save); clause; clause = strtok_r(NULL, ";", &save)) {
		while (isspace((unsigned char)*clause))
			clause++;
		size_t len = strlen(clause);
		while (len && isspace((unsigned char)clause[len - 1]))
			clause[--len] = '\0';
		if (len == 0)
			continue;
		struct ft_inject_clause *cs = realloc(spec->clauses, (spec->n + 1) * sizeof *cs);
		if (!cs) {
			rc = -ENOMEM;
			snprintf(err, errlen, "FTSHIM_INJECT: out of memory");
			break;
		}
		spec->clauses = cs;
		struct ft_inject_clause *c = &spec->clauses[spec->n++];
		memset(c, 0, sizeof *c);
		snprintf(c->text, sizeof c->text, "%s", clause);
		p.clause_no = spec->n;
		p.clause = c->text;
		rc = parse_clause(&p, c, clause, known_calls, nknown);
		if (rc != 0)
			break;
	}
	if (rc == 0 && spec->n == 0) {
		snprintf(err, errlen, "FTSHIM_INJECT is empty; accepted: clauses like \"rank=3 at=time:2s\", separated by ';'");
		rc = -EINVAL;
	}
	free(copy);
	if (rc != 0)
		ft_inject_free(spec);
	return rc;
}

void ft_inject_free(struct ft_inject_spec *spec)
{
	for (uint32_t i = 0; i < spec->n; i++)
		free(spec->clauses[i].ranks);
	free(spec->clauses);
	memset(spec, 0, sizeof *spec);
}

int ft_inject_check_ranks(const struct ft_inject_spec *spec, uint32_t nprocs, uint32_t nspawnable,
			  const struct ft_inject_copies *copies, char *err, size_t errlen)
{
	struct parser p = { .err = err, .errlen = errlen };
	const char *variable = copies ? copies->variable : "";
	bool replicas = copies && copies->replica_of;

	for (uint32_t i = 0; i < spec->n; i++) {
		const struct ft_inject_clause *c = &spec->clauses[i];
		p.clause_no = i + 1;
		p.clause = c->text;
		if (!replicas && c->copy != FT_COPY_PRIMARY)
			return fail(&p, "copy=%s: this job runs no replicas (FTSHIM_REPLICAS is not set)",
				    c->copy == FT_COPY_BOTH ? "both" : "replica");
		if (copies && (c->spawned || c->spare) && c->copy_given)
			return fail(&p, "copy= does not apply to %s processes (they have no replica)",
				    c->spare ? "spare" : "spawned");
		if (c->spare && (!copies || copies->nspares == 0))
			return fail(&p, "spare:%u: this job has no spares (FTSHIM_SPARES is not set)", c->ranks[0]);
		for (uint32_t k = 0; c->spare && k < c->nranks; k++)
			if (c->ranks[k] >= copies->nspares)
				return fail(&p, "spare:%u: the job has %u spare%s (FTSHIM_SPARES), spare:0 to spare:%u",
					    c->ranks[k], copies->nspares, copies->nspares == 1 ? "" : "s",
					    copies->nspares - 1);
		if (copies && !c->spawned && !c->spare && c->ranks_kind == FT_RANKS_LIST) {
			for (uint32_t k = 0; k < c->nranks; k++) {
				if (c->ranks[k] >= copies->n && replicas)
					return fail(&p, "rank %u is not one of the program's ranks: with "
						    "FTSHIM_REPLICAS it sees 0 to %u, and copy=replica or both "
						    "names their replicas", c->ranks[k], copies->n - 1);
				if (c->ranks[k] >= copies->n)
					return fail(&p, "rank %u is not one of the program's ranks: with "
						    "%s it sees 0 to %u, and spare:J names the spares",
						    c->ranks[k], variable, copies->n - 1);
				if (c->copy == FT_COPY_REPLICA && copies->replica_of[c->ranks[k]] < 0)
					return fail(&p, "copy=replica: rank %u has no replica (FTSHIM_REPLICAS)",
						    c->ranks[k]);
			}
		}
		uint32_t pool = ft_inject_pool(c, nprocs, copies);
		if (copies && c->ranks_kind == FT_RANKS_HOST && c->host_of >= copies->n)
			return fail(&p, "host:%u is not one of the program's ranks: with %s "
				    "it sees 0 to %u", c->host_of, variable, copies->n - 1);
		if (copies && c->ranks_kind == FT_RANKS_HOST && c->copy == FT_COPY_REPLICA &&
		    copies->replica_of[c->host_of] < 0)
			return fail(&p, "host:%u copy=replica: rank %u has no replica (FTSHIM_REPLICAS)",
				    c->host_of, c->host_of);
		if (copies && c->ranks_kind == FT_RANKS_RANDOM && c->count > pool)
			return fail(&p, "random:%u: the program has only %u ranks (%s)",
				    c->count, pool, variable);
		for (uint32_t k = 0; k < c->nranks; k++) {
			if (c->spawned && c->ranks[k] >= nspawnable && nspawnable == 0)
				return fail(&p, "spawned:%u: the job may spawn no process (FTSHIM_SPAWN_MAX=0)",
					    c->ranks[k]);
			if (c->spawned && c->ranks[k] >= nspawnable)
				return fail(&p, "spawned:%u: the job may spawn %u processes (FTSHIM_SPAWN_MAX), "
					    "spawned:0 to spawned:%u", c->ranks[k], nspawnable, nspawnable - 1);
			if (!c->spawned && !c->spare && c->ranks[k] >= nprocs)
				return fail(&p, "rank %u does not exist; the job has ranks 0 to %u", c->ranks[k],
					    nprocs - 1);
		}
		if (c->ranks_kind == FT_RANKS_HOST && c->host_of >= nprocs)
			return fail(&p, "host:%u: rank %u does not exist; the job has ranks 0 to %u", c->host_of,
				    c->host_of, nprocs - 1);
		if (c->ranks_kind == FT_RANKS_RANDOM && c->count > nprocs)
			return fail(&p, "random:%u: the job has only %u ranks", c->count, nprocs);
	}
	return 0;
}

/* --- the plan ------------------------------------------------------------- */

/* A uniform double in (0, 1]. */
static double uniform(uint64_t *state)
{
	return ((double)(ft_splitmix64_next(state) >> 11) + 1.0) / 9007199254740992.0;
}

uint32_t ft_inject_victims(const struct ft_inject_clause *c, uint32_t nprocs,
			   const uint64_t *host_ids, const struct ft_inject_copies *copies, uint32_t *out,
			   uint32_t max)
{
	uint32_t n = 0;

	switch (c->ranks_kind) {
	case FT_RANKS_LIST:
		for (uint32_t k = 0; k < c->nranks && n < max; k++)
			if (c->ranks[k] < nprocs)
				out[n++] = c->ranks[k];
		return n;
	case FT_RANKS_HOST: {
		if (c->host_of >= nprocs)
			return 0;
		/* The hosts of the copies of rank host_of that copy= names. */
		int64_t primary = c->host_of, replica = -1;
		if (copies && c->host_of < copies->n) {
			if (c->copy != FT_COPY_PRIMARY)
				replica = copies->replica_of[c->host_of];
			if (c->copy == FT_COPY_REPLICA)
				primary = -1;
		}
		for (uint32_t r = 0; r < nprocs && n < max; r++)
			if ((primary >= 0 && host_ids[r] == host_ids[primary]) ||
			    (replica >= 0 && (uint32_t)replica < nprocs && host_ids[r] == host_ids[replica]))
				out[n++] = r;
		return n;
	}
	case FT_RANKS_RANDOM: {
		/* A partial Fisher-Yates shuffle over a sparse map of swaps, so
		 * that choosing k of a million ranks costs O(k). */
		uint32_t k = c->count < nprocs ? c->count : nprocs;
		uint64_t state = ft_mix64(c->seed ^ UINT64_C(0x72616e6b73)); /* "ranks" */
		uint32_t *from = malloc((size_t)k * 2 * sizeof *from), nswaps = 0;
		if (!from)
			return 0;
		uint32_t *to = from + k;
		for (uint32_t i = 0; i < k && n < max; i++) {
			uint32_t j = i + (uint32_t)(ft_splitmix64_next(&state) % (nprocs - i));
			uint32_t vi = i, vj = j;
			for (uint32_t s = 0; s < nswaps; s++) {
				if (from[s] == i)
					vi = to[s];
				if (from[s] == j)
					vj = to[s];
			}
			out[n++] = vj;
			/* Position j now holds what position i held. */
			bool found = false;
			for (uint32_t s = 0; s < nswaps; s++) {
				if (from[s] == j) {
					to[s] = vi;
					found = true;
				}
			}
			if (!found && nswaps < k) {
				from[nswaps] = j;
				to[nswaps++] = vi;
			}
		}
		free(from);
		return n;
	}
	}
	return 0;
}

uint32_t ft_inject_pool(const struct ft_inject_clause *c, uint32_t nprocs,
			const struct ft_inject_copies *copies)
{
	return copies && !c->spawned && !c->spare && c->ranks_kind != FT_RANKS_HOST && copies->n < nprocs
		       ? copies->n
		       : nprocs;
}

bool ft_inject_victim_is(const struct ft_inject_clause *c, const struct ft_inject_copies *copies,
			 uint32_t v, uint32_t self)
{
	if (!copies || !copies->replica_of || c->spawned || c->spare || c->ranks_kind == FT_RANKS_HOST ||
	    v >= copies->n)
		return v == self;
	int32_t replica = copies->replica_of[v];
	return (c->copy != FT_COPY_REPLICA && v == self) ||
	       (c->copy != FT_COPY_PRIMARY && replica >= 0 && (uint32_t)replica == self);
}

uint32_t ft_inject_plan(const struct ft_inject_spec *spec, uint32_t nprocs, uint32_t self,
			const uint64_t *host_ids, const struct ft_inject_copies *copies,
			struct ft_inject_action *out, uint32_t max)
{
	uint32_t nout = 0;
	uint32_t *victims = malloc(((size_t)nprocs + 1) * sizeof *victims);

	if (!victims)
		return 0;
	for (uint32_t i = 0; i < spec->n && nout < max; i++) {
		const struct ft_inject_clause *c = &spec->clauses[i];
		uint32_t nv = ft_inject_victims(c, ft_inject_pool(c, nprocs, copies), host_ids, copies,
						victims, nprocs);
		uint64_t state = ft_mix64(c->seed ^ UINT64_C(0x74696d6573)); /* "times" */
		uint64_t t = 0;
		for (uint32_t k = 0; k < nv; k++) {
			/* Random times: the victims die one after another. */
			if (c->when == FT_AT_EXP)
				t += (uint64_t)(-log(uniform(&state)) * (double)c->scale_ns);
			else if (c->when == FT_AT_WEIBULL)
				t += (uint64_t)(pow(-log(uniform(&state)), 1.0 / c->shape) * (double)c->scale_ns);
			if (!ft_inject_victim_is(c, copies, victims[k], self))
				continue;
			out[nout].clause = c;
			out[nout].when = c->when == FT_AT_EXP || c->when == FT_AT_WEIBULL ? FT_AT_TIME : c->when;
			out[nout].at_ns = c->when == FT_AT_TIME ? c->at_ns : t;
			nout++;
			break;
		}
	}
	free(victims);
	return nout;
}
