/* coll_sched.c: the schedules of coll_sched.h. Each kind of collective
 * is a few lines over four building blocks: a step added to the current
 * group or to a new one, a binomial broadcast of a span, and a binomial
 * reduction towards rank 0 that keeps rank order. One builder for one
 * rank; nothing is shared. */
#include "ftshim_config.h"

#include <errno.h>
#include <stdlib.h>

#include "src/coll_sched.h"

#define SPAN(b, o, c) ((struct ft_coll_span){.buf = (b), .off = (o), .count = (c)})
#define NO_SPAN SPAN(FT_CB_NONE, 0, 0)

/* A schedule being built: the rank, the group under way, and the first
 * error met (steps after it are dropped). */
struct build {
	struct ft_coll_sched *s;
	uint32_t n, me;
	uint32_t group;
	int err;
};

static void add(struct build *b, enum ft_coll_op op, int32_t peer, struct ft_coll_span x,
		struct ft_coll_span y)
{
	struct ft_coll_sched *s = b->s;

	if (b->err)
		return;
	if (s->nsteps == s->cap) {
		uint32_t cap = s->cap ? 2 * s->cap : 16;
		struct ft_coll_step *grown = realloc(s->steps, cap * sizeof *grown);
		if (!grown) {
			b->err = -ENOMEM;
			return;
		}
		s->steps = grown;
		s->cap = cap;
	}
	s->steps[s->nsteps++] =
		(struct ft_coll_step){.op = op, .peer = peer, .group = b->group, .a = x, .b = y};
}

/* Close the group under way: what comes next waits for it. */
static void next_group(struct build *b)
{
	if (b->s->nsteps && b->s->steps[b->s->nsteps - 1].group == b->group)
		b->group++;
}

static void send(struct build *b, int32_t to, struct ft_coll_span x)
{
	add(b, FT_CS_SEND, to, x, NO_SPAN);
}

static void recv(struct build *b, int32_t from, struct ft_coll_span x)
{
	add(b, FT_CS_RECV, from, x, NO_SPAN);
}

/* A copy of from to to, whose blocks are of peer's type (-1: none). */
static void copy_of(struct build *b, int32_t peer, struct ft_coll_span from, struct ft_coll_span to)
{
	if (from.buf == to.buf && from.off == to.off)
		return;
	next_group(b);
	add(b, FT_CS_COPY, peer, from, to);
	next_group(b);
}

static void copy(struct build *b, struct ft_coll_span from, struct ft_coll_span to)
{
	copy_of(b, -1, from, to);
}

/* inout := in op inout, in holding the lower ranks' part. */
static void reduce(struct build *b, struct ft_coll_span in, struct ft_coll_span inout)
{
	next_group(b);
	add(b, FT_CS_REDUCE, -1, in, inout);
	next_group(b);
}

static void need_tmp(struct build *b, int which, int64_t count)
{
	if (count > b->s->tmp_count[which])
		b->s->tmp_count[which] = count;
}

/* Broadcast span x from root: a binomial tree over the ranks counted
 * from the root. */
static void bcast(struct build *b, int32_t root, struct ft_coll_span x)
{
	uint32_t n = b->n, vr = (b->me + n - (uint32_t)root) % n, mask = 1;

	while (mask < n) {
		if (vr & mask) {
			next_group(b);
			recv(b, (int32_t)((b->me + n - mask) % n), x);
			next_group(b);
			break;
		}
		mask <<= 1;
	}
	for (mask >>= 1; mask > 0; mask >>= 1)
		if (vr + mask < n)
			send(b, (int32_t)((b->me + mask) % n), x);
	next_group(b);
}

/* Reduce count elements of span in over every rank towards rank 0, in
 * rank order: rank r combines the parts of ranks [r, r + 2^k) with the
 * part of [r + 2^k, r + 2^(k+1)) it receives, its own being the lower.
 * The scratch buffers hold the part and what arrives, their roles
 * swapping at each step; returns, at rank 0, the buffer with the result. */
static enum ft_coll_buf reduce_to_0(struct build *b, struct ft_coll_span in)
{
	enum ft_coll_buf acc = FT_CB_TMP_A, other = FT_CB_TMP_B;
	int64_t c = in.count;

	need_tmp(b, 0, c);
	copy(b, in, SPAN(acc, 0, c));
	for (uint32_t mask = 1; mask < b->n; mask <<= 1) {
		if (b->me & mask) {
			send(b, (int32_t)(b->me - mask), SPAN(acc, 0, c));
			next_group(b);
			break;
		}
		if (b->me + mask < b->n) {
			need_tmp(b, 1, c);
			recv(b, (int32_t)(b->me + mask), SPAN(other, 0, c));
			reduce(b, SPAN(acc, 0, c), SPAN(other, 0, c));
			enum ft_coll_buf t = acc;
			acc = other;
			other = t;
		}
	}
	return acc;
}

/* The input of a reduction at this rank: the receive buffer if in place. */
static struct ft_coll_span input(const struct ft_coll_args *a, int64_t count)
{
	return SPAN(a->in_place ? FT_CB_RECV : FT_CB_SEND, 0, count);
}

static void build_barrier(struct build *b)
{
	for (uint32_t k = 1; k < b->n; k <<= 1) {
		send(b, (int32_t)((b->me + k) % b->n), NO_SPAN);
		recv(b, (int32_t)((b->me + b->n - k) % b->n), NO_SPAN);
		next_group(b);
	}
}

/* Allreduce by recursive doubling, log2 of n rounds where a reduction and
 * a broadcast take twice that (for small vectors: each round sends the
 * whole of it). With n not a power of two, the first
 * 2 rem ranks fold in pairs first (the odd one of each pair keeps the
 * pair's part, the even one waits) and get the result back last. At
 * each round a rank's part covers a block of consecutive ranks, and its
 * partner's the block beside it, so the lower block goes first, as a
 * non-commutative operation needs. */
static void build_allreduce(struct build *b, const struct ft_coll_args *a)
{
	int64_t c = a->rcount;
	uint32_t n = b->n, me = b->me, pof2 = 1;
	enum ft_coll_buf acc = FT_CB_TMP_A, other = FT_CB_TMP_B;
	int64_t newrank;

	while (pof2 * 2 <= n)
		pof2 *= 2;
	uint32_t rem = n - pof2;
	need_tmp(b, 0, c);
	copy(b, input(a, c), SPAN(acc, 0, c));
	if (me < 2 * rem && me % 2 == 0) {
		send(b, (int32_t)(me + 1), SPAN(acc, 0, c));
		next_group(b);
		newrank = -1;
	} else if (me < 2 * rem) {
		need_tmp(b, 1, c);
		recv(b, (int32_t)(me - 1), SPAN(other, 0, c));
		next_group(b);
		reduce(b, SPAN(other, 0, c), SPAN(acc, 0, c));
		newrank = me / 2;
	} else {
		newrank = (int64_t)me - rem;
	}
	for (uint32_t mask = 1; newrank >= 0 && mask < pof2; mask <<= 1) {
		uint32_t pn = (uint32_t)newrank ^ mask;
		int32_t partner = (int32_t)(pn < rem ? pn * 2 + 1 : pn + rem);
		need_tmp(b, 1, c);
		send(b, partner, SPAN(acc, 0, c));
		recv(b, partner, SPAN(other, 0, c));
		next_group(b);
		if (pn < (uint32_t)newrank) {
			reduce(b, SPAN(other, 0, c), SPAN(acc, 0, c));
		} else {
			reduce(b, SPAN(acc, 0, c), SPAN(other, 0, c));
			enum ft_coll_buf t = acc;
			acc = other;
			other = t;
		}
	}
	if (me < 2 * rem && me % 2 == 0) {
		recv(b, (int32_t)(me + 1), SPAN(FT_CB_RECV, 0, c));
		next_group(b);
		return;
	}
	if (me < 2 * rem) {
		send(b, (int32_t)(me - 1), SPAN(acc, 0, c));
		next_group(b);
	}
	copy(b, SPAN(acc, 0, c), SPAN(FT_CB_RECV, 0, c));
}

static void build_reduce(struct build *b, const struct ft_coll_args *a, bool all)
{
	int64_t c = a->rcount;
	bool mine_in_place = a->in_place && (all || b->me == (uint32_t)a->root);
	struct ft_coll_span in = SPAN(mine_in_place ? FT_CB_RECV : FT_CB_SEND, 0, c);
	enum ft_coll_buf acc = reduce_to_0(b, in);
	int32_t root = all ? 0 : a->root;

	if (b->me == 0 && root == 0)
		copy(b, SPAN(acc, 0, c), SPAN(FT_CB_RECV, 0, c));
	else if (b->me == 0) {
		send(b, root, SPAN(acc, 0, c));
		next_group(b);
	} else if (b->me == (uint32_t)root) {
		recv(b, 0, SPAN(FT_CB_RECV, 0, c));
		next_group(b);
	}
	if (all)
		bcast(b, 0, SPAN(FT_CB_RECV, 0, c));
}

/* Block i of the receive buffer of a gather (at the root) or an
 * allgather, or of an alltoall's receive buffer. */
static struct ft_coll_span gathered(const struct ft_coll_args *a, uint32_t i, bool v)
{
	return v ? SPAN(FT_CB_RECV, a->rdispls[i], a->rcounts[i])
		 : SPAN(FT_CB_RECV, (int64_t)i * a->rcount, a->rcount);
}

/* Block i of the send buffer of a scatter (at the root) or an alltoall. */
static struct ft_coll_span scattered(const struct ft_coll_args *a, uint32_t i, bool v)
{
	return v ? SPAN(FT_CB_SEND, a->sdispls[i], a->scounts[i])
		 : SPAN(FT_CB_SEND, (int64_t)i * a->scount, a->scount);
}

static void build_gather(struct build *b, const struct ft_coll_args *a, bool v)
{
	uint32_t root = (uint32_t)a->root;

	if (b->me != root) {
		send(b, a->root, SPAN(FT_CB_SEND, 0, a->scount));
		next_group(b);
		return;
	}
	if (!a->in_place)
		copy(b, SPAN(FT_CB_SEND, 0, a->scount), gathered(a, root, v));
	for (uint32_t i = 0; i < b->n; i++)
		if (i != root)
			recv(b, (int32_t)i, gathered(a, i, v));
	next_group(b);
}

static void build_scatter(struct build *b, const struct ft_coll_args *a, bool v)
{
	uint32_t root = (uint32_t)a->root;

	if (b->me != root) {
		recv(b, a->root, SPAN(FT_CB_RECV, 0, a->rcount));
		next_group(b);
		return;
	}
	if (!a->in_place)
		copy(b, scattered(a, root, v), SPAN(FT_CB_RECV, 0, a->rcount));
	for (uint32_t i = 0; i < b->n; i++)
		if (i != root)
			send(b, (int32_t)i, scattered(a, i, v));
	next_group(b);
}

/* A ring: at step k each rank passes on the block it got at step k - 1
 * (its own first). */
static void build_allgather(struct build *b, const struct ft_coll_args *a, bool v)
{
	uint32_t n = b->n, me = b->me;

	if (!a->in_place)
		copy(b, SPAN(FT_CB_SEND, 0, a->scount), gathered(a, me, v));
	for (uint32_t k = 0; k + 1 < n; k++) {
		send(b, (int32_t)((me + 1) % n), gathered(a, (me + n - k) % n, v));
		recv(b, (int32_t)((me + n - 1) % n), gathered(a, (me + 2 * n - k - 1) % n, v));
		next_group(b);
	}
}

/* Each round of an alltoall waits for its slowest message, so a round of
 * many pairs costs one wait where a round per pair cost n - 1; the bound
 * keeps a large job from posting thousands of requests at a time. */
uint32_t ft_coll_sched_alltoall_batch = 32;

/* Pairwise, ft_coll_sched_alltoall_batch pairs a round: for k = 1 .. n - 1, send to
 * me + k and receive from me - k. In place, the blocks to send are first
 * copied out of the receive buffer. v: the v form's arrays (and the w
 * form's, whose spans are bytes). */
static void build_alltoall(struct build *b, const struct ft_coll_args *a, bool v)
{
	uint32_t n = b->n, me = b->me;
	enum ft_coll_buf src = FT_CB_SEND;

	if (a->in_place) {
		int64_t end = a->kind == FT_COLL_ALLTOALLW ? a->w_span : 0;
		for (uint32_t i = 0; i < n && a->kind != FT_COLL_ALLTOALLW; i++) {
			int64_t e = v ? (int64_t)a->rdispls[i] + a->rcounts[i]
				      : (int64_t)(i + 1) * a->rcount;
			if (e > end)
				end = e;
		}
		need_tmp(b, 0, end);
		copy(b, SPAN(FT_CB_RECV, 0, end), SPAN(FT_CB_TMP_A, 0, end));
		src = FT_CB_TMP_A;
	}
	if (!a->in_place)
		copy_of(b, (int32_t)me, scattered(a, me, v), gathered(a, me, v));
	for (uint32_t k = 1; k < n; k++) {
		uint32_t to = (me + k) % n, from = (me + n - k) % n;
		/* In place, the block to send sits in the copy where the
		 * receive buffer has it. */
		struct ft_coll_span out = a->in_place ? gathered(a, to, v) : scattered(a, to, v);
		out.buf = src;
		send(b, (int32_t)to, out);
		recv(b, (int32_t)from, gathered(a, from, v));
		if (ft_coll_sched_alltoall_batch == 0 || k % ft_coll_sched_alltoall_batch == 0)
			next_group(b);
	}
	next_group(b);
}

static void build_reduce_scatter(struct build *b, const struct ft_coll_args *a, bool block)
{
	uint32_t n = b->n;
	int64_t total = 0, mine = 0, off = 0;

	for (uint32_t i = 0; i < n; i++)
		total += block ? a->rcount : a->rcounts[i];
	enum ft_coll_buf acc = reduce_to_0(b, input(a, total));
	mine = block ? a->rcount : a->rcounts[b->me];
	if (b->me != 0) {
		recv(b, 0, SPAN(FT_CB_RECV, 0, mine));
		next_group(b);
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		int64_t c = block ? a->rcount : a->rcounts[i];
		if (i == 0)
			copy(b, SPAN(acc, off, c), SPAN(FT_CB_RECV, 0, c));
		else
			send(b, (int32_t)i, SPAN(acc, off, c));
		off += c;
	}
	next_group(b);
}

/* A chain: rank r receives the result of ranks [0, r) from r - 1 and
 * passes [0, r] on. */
static void build_scan(struct build *b, const struct ft_coll_args *a, bool exclusive)
{
	uint32_t n = b->n, me = b->me;
	int64_t c = a->rcount;
	struct ft_coll_span in = input(a, c), out = SPAN(FT_CB_RECV, 0, c);
	struct ft_coll_span part = SPAN(FT_CB_TMP_A, 0, c);

	need_tmp(b, 0, c);
	if (!exclusive) {
		if (me > 0) {
			recv(b, (int32_t)me - 1, part);
			next_group(b);
		}
		copy(b, in, out);
		if (me > 0)
			reduce(b, part, out);
		if (me + 1 < n) {
			send(b, (int32_t)me + 1, out);
			next_group(b);
		}
		return;
	}
	if (me == 0) {
		if (n > 1)
			send(b, 1, in);
		next_group(b);
		return;
	}
	/* The input is kept first: in place, the result overwrites it. */
	if (me + 1 < n)
		copy(b, in, part);
	recv(b, (int32_t)me - 1, out);
	next_group(b);
	if (me + 1 < n) {
		reduce(b, out, part);
		send(b, (int32_t)me + 1, part);
		next_group(b);
	}
}

static bool args_valid(const struct ft_coll_args *a, uint32_t n, uint32_t me)
{
	bool rooted = a->kind == FT_COLL_BCAST || a->kind == FT_COLL_REDUCE ||
		      a->kind == FT_COLL_GATHER || a->kind == FT_COLL_GATHERV ||
		      a->kind == FT_COLL_SCATTER || a->kind == FT_COLL_SCATTERV;
	bool at_root = rooted && a->root == (int32_t)me;

	if (n == 0 || me >= n || a->scount < 0 || a->rcount < 0)
		return false;
	if (rooted && (a->root < 0 || (uint32_t)a->root >= n))
		return false;
	switch (a->kind) {
	case FT_COLL_GATHERV:
		return !at_root || (a->rcounts && a->rdispls);
	case FT_COLL_SCATTERV:
		return !at_root || (a->scounts && a->sdispls);
	case FT_COLL_ALLGATHERV:
		return a->rcounts && a->rdispls;
	case FT_COLL_ALLTOALLV:
		return a->rcounts && a->rdispls && (a->in_place || (a->scounts && a->sdispls));
	case FT_COLL_ALLTOALLW:
		return a->rcounts && a->rdispls && a->w_span >= 0 &&
		       (a->in_place || (a->scounts && a->sdispls));
	case FT_COLL_REDUCE_SCATTER:
		return a->rcounts != NULL;
	default:
		return (unsigned)a->kind <= FT_COLL_EXSCAN;
	}
}

int ft_coll_sched(const struct ft_coll_args *a, uint32_t n, uint32_t me, struct ft_coll_sched *s)
{
	*s = (struct ft_coll_sched){0};
	if (!args_valid(a, n, me))
		return -EINVAL;
	struct build b = {.s = s, .n = n, .me = me};

	switch (a->kind) {
	case FT_COLL_BARRIER:
		build_barrier(&b);
		break;
	case FT_COLL_BCAST:
		bcast(&b, a->root, SPAN(FT_CB_RECV, 0, a->rcount));
		break;
	case FT_COLL_REDUCE:
		build_reduce(&b, a, false);
		break;
	case FT_COLL_ALLREDUCE:
		if (a->rcount * a->elem_bytes <= FT_COLL_ALLREDUCE_RD_BYTES)
			build_allreduce(&b, a);
		else
			build_reduce(&b, a, true);
		break;
	case FT_COLL_GATHER:
	case FT_COLL_GATHERV:
		build_gather(&b, a, a->kind == FT_COLL_GATHERV);
		break;
	case FT_COLL_SCATTER:
	case FT_COLL_SCATTERV:
		build_scatter(&b, a, a->kind == FT_COLL_SCATTERV);
		break;
	case FT_COLL_ALLGATHER:
	case FT_COLL_ALLGATHERV:
		build_allgather(&b, a, a->kind == FT_COLL_ALLGATHERV);
		break;
	case FT_COLL_ALLTOALL:
	case FT_COLL_ALLTOALLV:
	case FT_COLL_ALLTOALLW:
		build_alltoall(&b, a, a->kind != FT_COLL_ALLTOALL);
		break;
	case FT_COLL_REDUCE_SCATTER_BLOCK:
	case FT_COLL_REDUCE_SCATTER:
		build_reduce_scatter(&b, a, a->kind == FT_COLL_REDUCE_SCATTER_BLOCK);
		break;
	case FT_COLL_SCAN:
	case FT_COLL_EXSCAN:
		build_scan(&b, a, a->kind == FT_COLL_EXSCAN);
		break;
	}
	if (b.err) {
		ft_coll_sched_fini(s);
		return b.err;
	}
	return 0;
}

void ft_coll_sched_fini(struct ft_coll_sched *s)
{
	free(s->steps);
	*s = (struct ft_coll_sched){0};
}
