/* replica_plan.c: FTSHIM_REPLICAS (and FTSHIM_SPARES) parsed, a launch
 * split into logical ranks and replicas (or program ranks and spares), and the replicas placed on other hosts than their
 * primaries by a maximum matching (replica_plan.h). */
#include "ftshim_config.h"

#include "src/replica_plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct ft_split_kind ft_split_replicas = {
	.variable = "FTSHIM_REPLICAS", .extra = "replica", .base = "logical rank", .one_per_base = true,
};
const struct ft_split_kind ft_split_spares = {
	.variable = "FTSHIM_SPARES", .extra = "spare", .base = "program rank", .one_per_base = false,
};

static int refuse_spec(const struct ft_split_kind *kind, const char *text, char *err, size_t errlen)
{
	snprintf(err, errlen,
		 "%s=%s: expected a count of %ss (0 to %u, like 4) or a "
		 "percentage of the %ss (1%% to 100%%, like 50%%)",
		 kind->variable, text, kind->extra, FT_REPLICAS_MAX, kind->base);
	return -EINVAL;
}

int ft_replica_spec_parse(const struct ft_split_kind *kind, const char *text,
			  struct ft_replica_spec *spec, char *err, size_t errlen)
{
	const char *p = text;
	uint32_t value = 0;

	spec->value = 0;
	spec->percent = false;
	if (text[0] == '\0')
		return 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		value = value * 10 + (uint32_t)(*p - '0');
		/* Checked at every digit, so that value never wraps. */
		if (value > FT_REPLICAS_MAX)
			return refuse_spec(kind, text, err, errlen);
	}
	bool percent = p > text && *p == '%';
	if (percent)
		p++;
	if (p == text || *p != '\0' || (percent && (value < 1 || value > 100)))
		return refuse_spec(kind, text, err, errlen);
	spec->value = value;
	spec->percent = percent;
	return 0;
}

static const char *plural(uint64_t count)
{
	return count == 1 ? "" : "s";
}

/* The processes that n logical ranks need at p%: n + ceil(n p / 100). */
static uint64_t launch_size(uint64_t n, uint32_t p)
{
	return n + (n * p + 99) / 100;
}

static int split_count(const struct ft_split_kind *kind, uint32_t want, uint32_t launched,
		       uint32_t *n, uint32_t *r, char *err, size_t errlen)
{
	if (kind->one_per_base && (uint64_t)want * 2 > launched) {
		int len = snprintf(
		    err, errlen,
		    "%s=%u with %u process%s launched: %u %s%s "
		    "need%s at least %u %s%s, so launch %llu processes or more",
		    kind->variable, want, launched, launched == 1 ? "" : "es", want, kind->extra,
		    plural(want), want == 1 ? "s" : "", want, kind->base, plural(want),
		    (unsigned long long)want * 2);
		if (launched / 2 > 0 && len >= 0 && (size_t)len < errlen)
			snprintf(err + len, errlen - (size_t)len, ", or ask for at most %u",
				 launched / 2);
		return -EINVAL;
	}
	if (!kind->one_per_base && want >= launched) {
		int len = snprintf(err, errlen,
				   "%s=%u with %u process%s launched leaves no %s, so launch %llu "
				   "processes or more",
				   kind->variable, want, launched, launched == 1 ? "" : "es", kind->base,
				   (unsigned long long)want + 1);
		if (launched > 1 && len >= 0 && (size_t)len < errlen)
			snprintf(err + len, errlen - (size_t)len, ", or ask for at most %u",
				 launched - 1);
		return -EINVAL;
	}
	*n = launched - want;
	*r = want;
	return 0;
}

static int split_percent(const struct ft_split_kind *kind, uint32_t p, uint32_t launched,
			 uint32_t *n, uint32_t *r, char *err, size_t errlen)
{
	/* The lowest n whose launch size reaches `launched`; launch_size(n)
	 * >= n, so it is at most `launched`. */
	uint64_t lo = 0, hi = launched;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (launch_size(mid, p) >= launched)
			hi = mid;
		else
			lo = mid + 1;
	}
	uint64_t above = launch_size(lo, p);
	if (above == launched) {
		*n = (uint32_t)lo;
		*r = launched - (uint32_t)lo;
		return 0;
	}
	/* launch_size(0) == 0 < launched, so lo >= 1 here. */
	uint64_t below = launch_size(lo - 1, p);
	int len = snprintf(err, errlen,
			   "%s=%u%% with %u process%s launched: n %ss and "
			   "%u%% of n as %ss (rounded up) never make %u process%s; launch ",
			   kind->variable, p, launched, launched == 1 ? "" : "es", kind->base, p,
			   kind->extra, launched,
			   launched == 1 ? "" : "es");
	if (len < 0 || (size_t)len >= errlen)
		return -EINVAL;
	if (below > 0)
		len += snprintf(err + len, errlen - (size_t)len, "%llu (%llu + %llu) or ",
				(unsigned long long)below, (unsigned long long)(lo - 1),
				(unsigned long long)(below - (lo - 1)));
	if (len >= 0 && (size_t)len < errlen)
		snprintf(err + len, errlen - (size_t)len, "%llu (%llu + %llu)",
			 (unsigned long long)above, (unsigned long long)lo,
			 (unsigned long long)(above - lo));
	return -EINVAL;
}

int ft_replica_split(const struct ft_split_kind *kind, const struct ft_replica_spec *spec,
		     uint32_t launched, uint32_t *n, uint32_t *r, char *err, size_t errlen)
{
	if (spec->percent && spec->value > 100) {
		snprintf(err, errlen, "%s=%u%%: expected a percentage of 1%% to 100%%",
			 kind->variable, spec->value);
		return -EINVAL;
	}
	if (spec->percent)
		return split_percent(kind, spec->value, launched, n, r, err, errlen);
	return split_count(kind, spec->value, launched, n, r, err, errlen);
}

/* --- placement --------------------------------------------------------- */

/* The matching's state. Replicas and logical ranks on the same host are
 * not joined; everything else is, so replicas of one host all have the
 * same candidates, and per-host counts stand in for most of the graph. */
struct matcher {
	uint32_t n;
	const uint32_t *host; /* [n + r]: dense host index of each real rank */
	int32_t *owner;	      /* [n]: the replica holding logical rank l, or -1 */
	int32_t *served;      /* [n + r]: the logical rank a replica holds, or -1 */
	uint32_t *next_free;  /* [n + 1]: union-find towards the lowest free l >= i */
	uint32_t *cursor;     /* [hosts]: below it, every l is held or on that host */
	uint32_t *free_on;    /* [hosts]: free logical ranks on the host */
	uint32_t *held_on;    /* [hosts]: held logical ranks on the host */
	uint32_t *holders_on; /* [hosts]: replicas on the host that hold one */
	uint32_t free_count, held_count;
	uint32_t stuck_cursor; /* where augment resumes its search for a rank to free */
};

static uint32_t first_free(uint32_t *next_free, uint32_t l)
{
	uint32_t root = l;
	while (next_free[root] != root)
		root = next_free[root];
	while (next_free[l] != root) {
		uint32_t up = next_free[l];
		next_free[l] = root;
		l = up;
	}
	return root;
}

/* The lowest free logical rank off host h, or n. Held ranks stay held,
 * so the per-host cursor only moves forward. */
static uint32_t lowest_free_off(struct matcher *m, uint32_t h)
{
	if (m->free_count == m->free_on[h])
		return m->n;
	uint32_t l = first_free(m->next_free, m->cursor[h]);
	while (m->host[l] == h)
		l = first_free(m->next_free, l + 1);
	m->cursor[h] = l;
	return l;
}

static void hold_free(struct matcher *m, int32_t k, uint32_t l)
{
	m->owner[l] = k;
	m->served[k] = (int32_t)l;
	m->next_free[l] = l + 1;
	m->free_on[m->host[l]]--;
	m->held_on[m->host[l]]++;
	m->free_count--;
	m->held_count++;
}

/* Kuhn's step for replica k: find an augmenting path and flip it;
 * false if there is none, as there never will be later. */
static bool augment(struct matcher *m, int32_t k)
{
	uint32_t h = m->host[k];
	uint32_t l = lowest_free_off(m, h);

	if (l < m->n) {
		hold_free(m, k, l);
		return true;
	}
	/* Every free logical rank is on h. A replica on another host that
	 * holds a rank l off h can move to one of them and leave l to k.
	 * Without one there is no path: replicas on h reach only ranks off
	 * h, and all of those are held by replicas on h. */
	if (m->held_count - m->held_on[h] - m->holders_on[h] == 0)
		return false;
	/* Free ranks only get fewer, so they stay on h and only replicas on
	 * h come here. A rank passed over is on h, or off h and held by a
	 * replica on h, which nothing moves any more: the search resumes
	 * where the last one stopped. */
	for (l = m->stuck_cursor;; l++) {
		int32_t v = m->owner[l];
		if (m->host[l] != h && v >= 0 && m->host[v] != h)
			break;
	}
	m->stuck_cursor = l + 1;
	int32_t v = m->owner[l];
	hold_free(m, v, lowest_free_off(m, m->host[v]));
	m->owner[l] = k;
	m->served[k] = (int32_t)l;
	return true;
}

struct host_rank {
	uint32_t host, rank;
};

static int by_host(const void *a, const void *b)
{
	const struct host_rank *x = a, *y = b;
	return (x->host > y->host) - (x->host < y->host);
}

/* Host ids renumbered 0 .. hosts-1, for per-host arrays. */
static int dense_hosts(const uint32_t *host_of, uint32_t size, uint32_t *dense, uint32_t *hosts)
{
	struct host_rank *sorted = malloc((size ? size : 1) * sizeof *sorted);
	if (!sorted)
		return -ENOMEM;
	for (uint32_t k = 0; k < size; k++)
		sorted[k] = (struct host_rank){host_of[k], k};
	qsort(sorted, size, sizeof *sorted, by_host);
	*hosts = 0;
	for (uint32_t i = 0; i < size; i++) {
		if (i > 0 && sorted[i].host != sorted[i - 1].host)
			(*hosts)++;
		dense[sorted[i].rank] = *hosts;
	}
	if (size > 0)
		(*hosts)++;
	free(sorted);
	return 0;
}

static int place(struct ft_replica_plan *plan, const uint32_t *host_of)
{
	uint32_t n = plan->n, size = plan->n + plan->r, hosts = 0;
	struct matcher m = {.n = n, .owner = plan->replica_of, .served = plan->logical_of};
	uint32_t *host = malloc((size ? size : 1) * sizeof *host);
	int rc = -ENOMEM;

	if (!host)
		return -ENOMEM;
	m.host = host;
	if (dense_hosts(host_of, size, host, &hosts) != 0)
		goto out;
	m.next_free = malloc(((size_t)n + 1) * sizeof *m.next_free);
	/* One block for the four per-host arrays. */
	m.cursor = calloc((size_t)(hosts ? hosts : 1) * 4, sizeof *m.cursor);
	if (!m.next_free || !m.cursor)
		goto out;
	m.free_on = m.cursor + hosts;
	m.held_on = m.free_on + hosts;
	m.holders_on = m.held_on + hosts;
	for (uint32_t l = 0; l <= n; l++)
		m.next_free[l] = l;
	for (uint32_t l = 0; l < n; l++)
		m.free_on[host[l]]++;
	m.free_count = n;

	for (uint32_t k = n; k < size; k++)
		if (augment(&m, (int32_t)k))
			m.holders_on[host[k]]++;
	/* The replicas left over share a host with every free logical rank. */
	for (uint32_t k = n; k < size; k++)
		if (m.served[k] < 0)
			hold_free(&m, (int32_t)k, first_free(m.next_free, 0));
	rc = 0;
out:
	free(m.cursor);
	free(m.next_free);
	free(host);
	return rc;
}

int ft_replica_plan_make(struct ft_replica_plan *plan, uint32_t n, uint32_t r,
			 const uint32_t *host_of)
{
	memset(plan, 0, sizeof *plan);
	uint64_t size = (uint64_t)n + r;
	if (r > n || size > INT32_MAX || (size > 0 && !host_of))
		return -EINVAL;
	plan->replica_of = malloc((n ? n : 1) * sizeof *plan->replica_of);
	plan->logical_of = malloc((size ? size : 1) * sizeof *plan->logical_of);
	if (!plan->replica_of || !plan->logical_of) {
		ft_replica_plan_fini(plan);
		return -ENOMEM;
	}
	plan->n = n;
	plan->r = r;
	for (uint32_t l = 0; l < n; l++) {
		plan->replica_of[l] = -1;
		plan->logical_of[l] = (int32_t)l;
	}
	for (uint32_t k = n; k < size; k++)
		plan->logical_of[k] = -1;
	int rc = place(plan, host_of);
	if (rc != 0)
		ft_replica_plan_fini(plan);
	return rc;
}

void ft_replica_plan_fini(struct ft_replica_plan *plan)
{
	free(plan->replica_of);
	free(plan->logical_of);
	memset(plan, 0, sizeof *plan);
}
