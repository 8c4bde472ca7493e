/* ring.c: the heartbeat ring and its broadcast topology. Positions come
 * from a Fisher-Yates shuffle driven by splitmix64, so equal seeds give
 * equal rings on every process; a Fenwick tree over the in-ring flags turns
 * "the k-th in-ring position" and "in-ring positions before p" into
 * O(log n) walks, which every query below is built from. */
#include "ftshim_config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/hash.h"
#include "src/ring.h"

/* Uniform in [0, bound), bound > 0, from splitmix64: the same sequence on
 * every process for the same seed. Rejection keeps the shuffle unbiased. */
static uint64_t rand_below(uint64_t *state, uint64_t bound)
{
	uint64_t threshold = -bound % bound; /* 2^64 mod bound */
	uint64_t x;

	do
		x = ft_splitmix64_next(state);
	while (x < threshold);
	return x % bound;
}

static uint32_t lowbit(uint32_t i)
{
	return i & (0u - i);
}

/* In-ring positions among [0, pos). tree[] is 1-based: node i is tree[i - 1]. */
static uint32_t prefix_count(const struct ft_ring *r, uint32_t pos)
{
	uint32_t sum = 0;

	for (uint32_t i = pos; i > 0; i -= lowbit(i))
		sum += r->tree[i - 1];
	return sum;
}

/* The position of the in-ring rank with index k (0-based), k < nin: descend
 * the tree, skipping every block that holds no more than what is left. */
static uint32_t kth_position(const struct ft_ring *r, uint32_t k)
{
	uint32_t pos = 0, step = 1;

	while (step <= r->n / 2)
		step <<= 1;
	for (; step; step >>= 1) {
		uint32_t next = pos + step;
		if (next <= r->n && r->tree[next - 1] <= k) {
			pos = next;
			k -= r->tree[next - 1];
		}
	}
	return pos; /* nodes 1..pos hold exactly k ones: node pos + 1 is it */
}

static uint32_t rank_of_index(const struct ft_ring *r, uint32_t k)
{
	/* While nobody has left the ring, index and position coincide. */
	if (r->nin == r->n)
		return r->rank_at[k];
	return r->rank_at[kth_position(r, k)];
}

int ft_ring_init(struct ft_ring *r, uint32_t n, bool shuffle, uint64_t seed)
{
	size_t count = n ? n : 1; /* no zero-size allocations to special-case */

	memset(r, 0, sizeof *r);
	r->rank_at = malloc(count * sizeof *r->rank_at);
	if (!r->rank_at)
		return -ENOMEM;
	r->pos_of = malloc(count * sizeof *r->pos_of);
	if (!r->pos_of)
		goto out_free_rank_at;
	r->in = malloc(count * sizeof *r->in);
	if (!r->in)
		goto out_free_pos_of;
	r->tree = malloc(count * sizeof *r->tree);
	if (!r->tree)
		goto out_free_in;

	for (uint32_t p = 0; p < n; p++)
		r->rank_at[p] = p;
	if (shuffle) {
		uint64_t state = seed;
		for (uint32_t p = n; p > 1; p--) {
			uint32_t j = (uint32_t)rand_below(&state, p);
			uint32_t t = r->rank_at[p - 1];
			r->rank_at[p - 1] = r->rank_at[j];
			r->rank_at[j] = t;
		}
	}
	for (uint32_t p = 0; p < n; p++)
		r->pos_of[r->rank_at[p]] = p;
	memset(r->in, 1, count);
	/* All in: node i covers lowbit(i) positions, all of them ones. O(n). */
	for (uint64_t i = 1; i <= n; i++)
		r->tree[i - 1] = lowbit((uint32_t)i);
	r->n = n;
	r->nin = n;
	return 0;

out_free_in:
	free(r->in);
out_free_pos_of:
	free(r->pos_of);
out_free_rank_at:
	free(r->rank_at);
	memset(r, 0, sizeof *r);
	return -ENOMEM;
}

void ft_ring_destroy(struct ft_ring *r)
{
	free(r->rank_at);
	free(r->pos_of);
	free(r->in);
	free(r->tree);
	memset(r, 0, sizeof *r);
}

bool ft_ring_contains(const struct ft_ring *r, uint32_t rank)
{
	return rank < r->n && r->in[r->pos_of[rank]];
}

bool ft_ring_remove(struct ft_ring *r, uint32_t rank)
{
	if (!ft_ring_contains(r, rank))
		return false;
	uint32_t pos = r->pos_of[rank];
	r->in[pos] = 0;
	/* 64-bit: i + lowbit(i) passes 2^32 - 1 when n is near it. */
	for (uint64_t i = (uint64_t)pos + 1; i <= r->n; i += lowbit((uint32_t)i))
		r->tree[i - 1]--;
	r->nin--;
	return true;
}

bool ft_ring_insert(struct ft_ring *r, uint32_t rank)
{
	if (rank >= r->n || ft_ring_contains(r, rank))
		return false;
	uint32_t pos = r->pos_of[rank];
	r->in[pos] = 1;
	for (uint64_t i = (uint64_t)pos + 1; i <= r->n; i += lowbit((uint32_t)i))
		r->tree[i - 1]++;
	r->nin++;
	return true;
}

/* With `before` in-ring ranks at positions below rank's, the k-th (0-based)
 * of the m others going forward has index before + self + k, wrapping past
 * nin to the indices below; going backward, before - 1 - k, wrapping the
 * other way. Step d uses k = (|d| - 1) mod m, so d = 1..m visits each
 * other rank once and d = m + 1 comes back to the first. */
uint32_t ft_ring_step(const struct ft_ring *r, uint32_t rank, int64_t d)
{
	if (rank >= r->n)
		return FT_RANK_NONE;
	uint32_t pos = r->pos_of[rank];
	uint32_t self = r->in[pos];
	if (d == 0)
		return self ? rank : FT_RANK_NONE;
	uint32_t m = r->nin - self;
	if (m == 0)
		return FT_RANK_NONE;

	/* |d| without overflow at INT64_MIN. */
	uint64_t mag = d > 0 ? (uint64_t)d : (uint64_t)(-(d + 1)) + 1;
	uint32_t k = (uint32_t)((mag - 1) % m);
	uint32_t before = prefix_count(r, pos);
	uint64_t idx;

	if (d > 0) {
		idx = (uint64_t)before + self + k;
		if (idx >= r->nin)
			idx -= r->nin;
	} else {
		idx = before >= k + 1 ? before - 1 - k : (uint64_t)before + r->nin - 1 - k;
	}
	return rank_of_index(r, (uint32_t)idx);
}

/* Append the rank at index idx unless it is already there. idx is never
 * the sender's own: every offset below is 0 < 2^k < n, or one bit flipped. */
static uint32_t add_target(const struct ft_ring *r, uint64_t idx, uint32_t *out, uint32_t count)
{
	uint32_t rank = rank_of_index(r, (uint32_t)idx);
	for (uint32_t i = 0; i < count; i++)
		if (out[i] == rank)
			return count;
	out[count] = rank;
	return count + 1;
}

uint32_t ft_ring_bcast_targets(const struct ft_ring *r, uint32_t rank, enum ft_bcast_kind kind,
			       uint32_t *out, uint32_t max)
{
	uint32_t count = 0;

	if (!ft_ring_contains(r, rank))
		return 0;
	uint64_t n = r->nin;
	uint64_t i = r->nin == r->n ? r->pos_of[rank] : prefix_count(r, r->pos_of[rank]);

	/* 64-bit index arithmetic: i + 2^k must not wrap for n near 2^32. */
	for (uint64_t step = 1; step < n && count < max; step <<= 1) {
		switch (kind) {
		case FT_BCAST_CHORD:
			count = add_target(r, (i + step) % n, out, count);
			break;
		case FT_BCAST_BMG:
			count = add_target(r, (i + step) % n, out, count);
			if (count < max)
				count = add_target(r, (i + n - step) % n, out, count);
			break;
		case FT_BCAST_HYPERCUBE:
			if ((i ^ step) < n)
				count = add_target(r, i ^ step, out, count);
			break;
		}
	}
	return count;
}

uint32_t ft_ring_max_targets(uint32_t n)
{
	uint32_t bits = 0;

	/* ceil(log2 n): the number of powers of two below n. */
	for (uint64_t step = 1; step < n; step <<= 1)
		bits++;
	return 2 * bits;
}
