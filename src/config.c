/* config.c: parse the FTSHIM_* environment variables, using the one table
 * in config_vars.h. Every failure produces one line that names the
 * variable, the value, what is wrong and what is accepted. */
#include "ftshim_config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "src/config.h"

#define FT_MS FT_NSEC_PER_MSEC
#define FT_S FT_NSEC_PER_SEC
#define FT_STRING_MAX 4095

#define FT_CONFIG_DESC(group, name, field, type, def, min, max, kw, help) \
	{ FT_CONFIG_PREFIX #name, group, FT_CV_##type, def, min, max, kw, help, \
	  offsetof(struct ft_config, field) },
const struct ft_config_var ft_config_vars[] = { FT_CONFIG_VARS(FT_CONFIG_DESC) };
#undef FT_CONFIG_DESC
const size_t ft_config_var_count = FT_ARRAY_SIZE(ft_config_vars);

void ft_config_format_duration(uint64_t ns, char *out, size_t outlen)
{
	static const struct {
		const char *unit;
		uint64_t ns;
	} units[] = { { "s", FT_S }, { "ms", FT_MS }, { "us", FT_NSEC_PER_USEC } };

	if (ns == 0) { /* in the units the messages name */
		snprintf(out, outlen, "0s");
		return;
	}
	for (size_t i = 0; i < FT_ARRAY_SIZE(units); i++) {
		if (ns >= units[i].ns && ns % units[i].ns == 0) {
			snprintf(out, outlen, "%" PRIu64 "%s", ns / units[i].ns, units[i].unit);
			return;
		}
		/* 1.5s reads better than 1500ms; keep one decimal place. */
		if (ns >= units[i].ns && ns % (units[i].ns / 10) == 0 && units[i].ns >= 10) {
			snprintf(out, outlen, "%" PRIu64 ".%" PRIu64 "%s", ns / units[i].ns,
				 ns % units[i].ns / (units[i].ns / 10), units[i].unit);
			return;
		}
	}
	snprintf(out, outlen, "%" PRIu64 "ns", ns);
}

/* "a|b|c" as "a, b or c". */
static void keywords_as_list(const char *kw, char *out, size_t outlen)
{
	size_t used = 0, n = 0;
	const char *p = kw;

	out[0] = '\0';
	while (*p) {
		size_t len = strcspn(p, "|");
		const char *sep = n == 0 ? "" : (p[len] ? ", " : " or ");
		int w = snprintf(out + used, outlen - used, "%s%.*s", sep, (int)len, p);
		if (w < 0 || (size_t)w >= outlen - used)
			return;
		used += (size_t)w;
		n++;
		p += len + (p[len] == '|');
	}
}

void ft_config_describe_accepted(const struct ft_config_var *var, char *out, size_t outlen)
{
	char lo[32], hi[32], list[256];

	switch (var->type) {
	case FT_CV_BOOL:
		snprintf(out, outlen, "0 or 1 (also no/yes, false/true, off/on)");
		break;
	case FT_CV_UINT:
		snprintf(out, outlen, "an integer from %" PRIu64 " to %" PRIu64, var->min, var->max);
		break;
	case FT_CV_DURATION:
		ft_config_format_duration(var->min, lo, sizeof lo);
		ft_config_format_duration(var->max, hi, sizeof hi);
		snprintf(out, outlen, "a duration from %s to %s, with unit us, ms or s (a bare number is ms)",
			 lo, hi);
		break;
	case FT_CV_ENUM:
		keywords_as_list(var->keywords, list, sizeof list);
		snprintf(out, outlen, "%s", list);
		break;
	case FT_CV_STRING:
		snprintf(out, outlen, "any text of at most %d characters", FT_STRING_MAX);
		break;
	}
}

static int parse_bool(const char *value, bool *dst)
{
	static const char *const no[] = { "0", "no", "false", "off" };
	static const char *const yes[] = { "1", "yes", "true", "on" };

	for (size_t i = 0; i < FT_ARRAY_SIZE(no); i++) {
		if (strcasecmp(value, no[i]) == 0) {
			*dst = false;
			return 0;
		}
		if (strcasecmp(value, yes[i]) == 0) {
			*dst = true;
			return 0;
		}
	}
	return -EINVAL;
}

/* A decimal integer, the whole string, no sign. */
static int parse_u64(const char *value, uint64_t *dst)
{
	char *end;

	if (!isdigit((unsigned char)value[0]))
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(value, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end)
		return -EINVAL;
	*dst = v;
	return 0;
}

/* "250ms", "1.5s", "100" (ms), "500us". Fractions are allowed down to the
 * nanosecond; more decimals than that are an error, not a rounding. */
int ft_parse_duration(const char *value, uint64_t *dst, char *why, size_t whylen)
{
	static const struct {
		const char *unit;
		uint64_t ns;
	} units[] = { { "ns", 1 }, { "us", FT_NSEC_PER_USEC }, { "ms", FT_MS }, { "s", FT_S }, { "", FT_MS } };
	const char *p = value;
	uint64_t whole = 0, frac = 0, frac_scale = 1;

	if (!isdigit((unsigned char)*p)) {
		snprintf(why, whylen, "not a duration");
		return -EINVAL;
	}
	for (; isdigit((unsigned char)*p); p++) {
		if (whole > (UINT64_MAX - 9) / 10) {
			snprintf(why, whylen, "too large");
			return -ERANGE;
		}
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p)) {
			snprintf(why, whylen, "not a duration");
			return -EINVAL;
		}
		for (; isdigit((unsigned char)*p); p++) {
			if (frac_scale >= FT_S) {
				snprintf(why, whylen, "too many decimals");
				return -EINVAL;
			}
			frac = frac * 10 + (uint64_t)(*p - '0');
			frac_scale *= 10;
		}
	}
	for (size_t i = 0; i < FT_ARRAY_SIZE(units); i++) {
		if (strcmp(p, units[i].unit) != 0)
			continue;
		uint64_t ns = units[i].ns;
		if (whole > UINT64_MAX / ns) {
			snprintf(why, whylen, "too large");
			return -ERANGE;
		}
		if ((frac * ns) % frac_scale != 0) {
			snprintf(why, whylen, "finer than a nanosecond");
			return -EINVAL;
		}
		uint64_t whole_ns = whole * ns, frac_ns = frac * ns / frac_scale;
		if (whole_ns > UINT64_MAX - frac_ns) {
			snprintf(why, whylen, "too large");
			return -ERANGE;
		}
		*dst = whole_ns + frac_ns;
		return 0;
	}
	snprintf(why, whylen, "unknown unit '%s'", p);
	return -EINVAL;
}

int ft_config_parse_value(const struct ft_config_var *var, const char *value, void *dst,
			  char *why, size_t whylen)
{
	uint64_t v;
	int rc;

	why[0] = '\0';
	if (var->type != FT_CV_STRING && value[0] == '\0') {
		snprintf(why, whylen, "empty value");
		return -EINVAL;
	}
	switch (var->type) {
	case FT_CV_BOOL:
		if (parse_bool(value, dst) != 0) {
			snprintf(why, whylen, "not a boolean");
			return -EINVAL;
		}
		return 0;
	case FT_CV_UINT:
		rc = parse_u64(value, &v);
		if (rc == -EINVAL) {
			snprintf(why, whylen, "not an integer");
			return rc;
		}
		if (rc == -ERANGE || v < var->min || v > var->max) {
			snprintf(why, whylen, "out of range");
			return -EINVAL;
		}
		*(uint64_t *)dst = v;
		return 0;
	case FT_CV_DURATION:
		rc = ft_parse_duration(value, &v, why, whylen);
		if (rc == -ERANGE || (rc == 0 && (v < var->min || v > var->max))) {
			snprintf(why, whylen, "out of range");
			return -EINVAL;
		}
		if (rc != 0)
			return -EINVAL;
		*(uint64_t *)dst = v;
		return 0;
	case FT_CV_ENUM: {
		const char *p = var->keywords;
		for (int i = 0; *p; i++) {
			size_t len = strcspn(p, "|");
			if (strlen(value) == len && strncasecmp(value, p, len) == 0) {
				*(int *)dst = i;
				return 0;
			}
			p += len + (p[len] == '|');
		}
		snprintf(why, whylen, "unknown keyword");
		return -EINVAL;
	}
	case FT_CV_STRING:
		if (strlen(value) > FT_STRING_MAX) {
			snprintf(why, whylen, "too long");
			return -EINVAL;
		}
		*(const char **)dst = value;
		return 0;
	}
	snprintf(why, whylen, "unknown type");
	return -EINVAL;
}

void ft_config_defaults(struct ft_config *cfg)
{
	char why[64];

	memset(cfg, 0, sizeof *cfg);
	for (size_t i = 0; i < ft_config_var_count; i++) {
		const struct ft_config_var *var = &ft_config_vars[i];
		int rc = ft_config_parse_value(var, var->def, (char *)cfg + var->offset, why, sizeof why);
		/* The defaults are part of the table; a test parses every one. */
		(void)rc;
	}
}

static const struct ft_config_var *find_var(const char *name, size_t len)
{
	for (size_t i = 0; i < ft_config_var_count; i++) {
		const char *known = ft_config_vars[i].name;
		if (strlen(known) == len && strncmp(known, name, len) == 0)
			return &ft_config_vars[i];
	}
	return NULL;
}

/* Levenshtein distance, for "did you mean". Names are short. */
static size_t edit_distance(const char *a, size_t la, const char *b)
{
	size_t lb = strlen(b);
	size_t row[64];

	if (la >= FT_ARRAY_SIZE(row) || lb >= FT_ARRAY_SIZE(row))
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t cost = toupper((unsigned char)a[i - 1]) == toupper((unsigned char)b[j - 1]) ? 0 : 1;
			size_t best = diag + cost;
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

const struct ft_config_var *ft_config_find(const char *name)
{
	return find_var(name, strlen(name));
}

const char *ft_closest_word(const char *name, size_t len, const void *words, size_t n,
			    size_t stride)
{
	const char *best = NULL;
	size_t best_d = 4; /* a suggestion farther than 3 edits is noise */

	for (size_t i = 0; i < n; i++) {
		const char *word = *(const char *const *)(const void *)((const char *)words + i * stride);
		size_t d = edit_distance(name, len, word);
		if (d < best_d) {
			best_d = d;
			best = word;
		}
	}
	return best;
}

static const char *closest_name(const char *name, size_t len)
{
	return ft_closest_word(name, len, ft_config_vars, ft_config_var_count, sizeof ft_config_vars[0]);
}

/* The environment can hold anything; an error line must stay one line of
 * text, so control characters are shown as '?' and long values are cut. */
static const char *printable(const char *text, char *out, size_t outlen)
{
	size_t i = 0;

	for (; text[i] && i + 4 < outlen; i++)
		out[i] = iscntrl((unsigned char)text[i]) ? '?' : text[i];
	if (text[i]) {
		memcpy(out + i, "...", 3);
		i += 3;
	}
	out[i] = '\0';
	return out;
}

static int fail_value(const struct ft_config_var *var, const char *value, const char *why,
		      char *err, size_t errlen)
{
	char accepted[256], shown[128];

	ft_config_describe_accepted(var, accepted, sizeof accepted);
	snprintf(err, errlen, "%s=%s: %s; accepted: %s (default %s)", var->name,
		 printable(value, shown, sizeof shown), why, accepted, var->def[0] ? var->def : "unset");
	return -EINVAL;
}

/* Calls fn for each FTSHIM_ name of envp that is not a variable, with
 * the known name it is a near miss of, or NULL; stops at the first that
 * fn says to (returns true), and says whether one did. */
static bool each_unknown_name(char *const *envp, bool (*fn)(const char *entry, const char *hint,
							  void *arg),
			      void *arg)
{
	const size_t plen = strlen(FT_CONFIG_PREFIX);

	for (char *const *e = envp; *e; e++) {
		if (strncmp(*e, FT_CONFIG_PREFIX, plen) != 0)
			continue;
		size_t len = strcspn(*e, "=");
		if (!find_var(*e, len) && fn(*e, closest_name(*e, len), arg))
			return true;
	}
	return false;
}

struct unknown_out {
	char *out;
	size_t outlen;
	int count;
};

/* A near miss of a known name is most likely a typo of it: fatal. */
static bool near_miss(const char *entry, const char *hint, void *arg)
{
	struct unknown_out *u = arg;
	char shown[160];

	if (!hint)
		return false;
	printable(entry, shown, sizeof shown);
	snprintf(u->out, u->outlen,
		 "%s: unknown variable (did you mean %s?); the variables are listed in 'man 7 ftshim'",
		 shown, hint);
	return true;
}

static bool far_from_any(const char *entry, const char *hint, void *arg)
{
	struct unknown_out *u = arg;
	char shown[64];
	size_t at = strlen(u->out);

	if (hint)
		return false;
	printable(entry, shown, sizeof shown);
	shown[strcspn(shown, "=")] = '\0';
	snprintf(u->out + at, u->outlen - at, "%s%s", u->count ? ", " : "", shown);
	u->count++;
	return false;
}

int ft_config_unknown(char *const *envp, char *out, size_t outlen)
{
	struct unknown_out u = {.out = out, .outlen = outlen};

	if (outlen == 0)
		return 0;
	out[0] = '\0';
	each_unknown_name(envp, far_from_any, &u);
	return u.count;
}

static int check_unknown_names(char *const *envp, char *err, size_t errlen)
{
	struct unknown_out u = {.out = err, .outlen = errlen};

	return each_unknown_name(envp, near_miss, &u) ? -EINVAL : 0;
}

static const char *env_value(char *const *envp, const char *name)
{
	size_t len = strlen(name);

	for (char *const *e = envp; *e; e++)
		if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
			return *e + len + 1;
	return NULL;
}

/* Rules between variables, beyond each one's range. */
static int check_relations(const struct ft_config *cfg, char *err, size_t errlen)
{
	char period[32], timeout[32];

	if (cfg->hb_timeout < 2 * cfg->hb_period) {
		ft_config_format_duration(cfg->hb_period, period, sizeof period);
		ft_config_format_duration(cfg->hb_timeout, timeout, sizeof timeout);
		snprintf(err, errlen,
			 "FTSHIM_HB_TIMEOUT=%s is less than twice FTSHIM_HB_PERIOD=%s; accepted: a timeout of at least two periods",
			 timeout, period);
		return -EINVAL;
	}
	return 0;
}

static int load_var(const struct ft_config_var *var, struct ft_config *cfg, char *const *envp,
		    char *err, size_t errlen)
{
	char why[128];
	const char *value = env_value(envp, var->name);

	if (!value)
		return 0;
	if (ft_config_parse_value(var, value, (char *)cfg + var->offset, why, sizeof why) != 0)
		return fail_value(var, value, why, err, errlen);
	return 0;
}

int ft_config_load(struct ft_config *cfg, char *const *envp, char *err, size_t errlen)
{
	const struct ft_config_var *disable = find_var(FT_CONFIG_PREFIX "DISABLE",
						       strlen(FT_CONFIG_PREFIX "DISABLE"));

	ft_config_defaults(cfg);
	err[0] = '\0';
	/* A disabled shim reads nothing else, so that switching it off is
	 * always a way out. */
	if (load_var(disable, cfg, envp, err, errlen) != 0)
		return -EINVAL;
	if (cfg->disable)
		return 0;
	for (size_t i = 0; i < ft_config_var_count; i++)
		if (load_var(&ft_config_vars[i], cfg, envp, err, errlen) != 0)
			return -EINVAL;
	if (check_unknown_names(envp, err, errlen) != 0)
		return -EINVAL;
	return check_relations(cfg, err, errlen);
}
