/* check_coll_sched.c: unit tests of src/coll_sched.c. A simulator runs
 * every rank's schedule against the others (messages queued per pair of
 * ranks and matched in order, as MPI's non-overtaking rule does; a
 * group's sends posted before its receives are matched), and each
 * collective is checked on 1 to 9 ranks, every root, in place and not,
 * v-forms with uneven counts, zero counts and gaps: every rank ends with
 * what MPI says, no message is left over, no receive mismatches its
 * message's length, and nothing deadlocks. The reduction is composition
 * of affine maps, associative and not commutative, so rank order is
 * checked too. Bad arguments are refused. */
#include "ftshim_config.h"

#include <check.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/coll_sched.h"

#define MAXN 9
#define BUFLEN 512
#define QLEN 64

/* x -> x * m + c; a op b applies a, then b. */
struct elem {
	uint64_t m, c;
};

static struct elem op(struct elem a, struct elem b)
{
	return (struct elem){a.m * b.m, a.c * b.m + b.c};
}

static bool same(struct elem a, struct elem b)
{
	return a.m == b.m && a.c == b.c;
}

struct msg {
	int64_t count;
	struct elem v[BUFLEN];
};

struct sim_rank {
	struct elem buf[5][BUFLEN]; /* by enum ft_coll_buf */
	struct ft_coll_sched s;
	uint32_t at;	 /* next step */
	bool posted;	 /* the group at `at` has its sends queued */
	uint32_t done_in; /* receives of that group matched so far */
};

static struct sim_rank ranks[MAXN];
static struct msg *queue[MAXN][MAXN][QLEN];
static int qhead[MAXN][MAXN], qtail[MAXN][MAXN];

static struct elem *span_at(struct sim_rank *r, struct ft_coll_span sp)
{
	ck_assert_int_ge(sp.off, 0);
	ck_assert_int_le(sp.off + sp.count, BUFLEN);
	return &r->buf[sp.buf][sp.off];
}

/* Run one group of rank me as far as it goes: true if it moved. */
static bool step(uint32_t me)
{
	struct sim_rank *r = &ranks[me];
	struct ft_coll_sched *s = &r->s;

	if (r->at >= s->nsteps)
		return false;
	struct ft_coll_step *first = &s->steps[r->at];
	if (first->op == FT_CS_COPY || first->op == FT_CS_REDUCE) {
		struct elem *a = span_at(r, first->a), *b = span_at(r, first->b);
		ck_assert_int_eq(first->a.count, first->b.count);
		for (int64_t i = 0; i < first->a.count; i++)
			b[i] = first->op == FT_CS_COPY ? a[i] : op(a[i], b[i]);
		r->at++;
		return true;
	}
	uint32_t end = r->at;
	while (end < s->nsteps && s->steps[end].group == first->group &&
	       (s->steps[end].op == FT_CS_SEND || s->steps[end].op == FT_CS_RECV))
		end++;
	/* A group is only sends and receives, or one local step. */
	ck_assert(end == s->nsteps || s->steps[end].group != first->group);
	bool moved = false;
	if (!r->posted) {
		for (uint32_t i = r->at; i < end; i++) {
			struct ft_coll_step *st = &s->steps[i];
			if (st->op != FT_CS_SEND)
				continue;
			ck_assert_int_ge(st->peer, 0);
			struct msg *m = malloc(sizeof *m);
			m->count = st->a.count;
			if (st->a.buf != FT_CB_NONE)
				memcpy(m->v, span_at(r, st->a), (size_t)st->a.count * sizeof m->v[0]);
			int *t = &qtail[me][st->peer];
			ck_assert_int_lt(*t - qhead[me][st->peer], QLEN);
			queue[me][st->peer][(*t)++ % QLEN] = m;
		}
		r->posted = moved = true;
	}
	/* Receives match in posting order, each from its own peer's queue. */
	uint32_t nth = 0;
	for (uint32_t i = r->at; i < end; i++) {
		struct ft_coll_step *st = &s->steps[i];
		if (st->op != FT_CS_RECV)
			continue;
		if (nth++ < r->done_in)
			continue;
		int *h = &qhead[st->peer][me];
		if (*h == qtail[st->peer][me])
			return moved;
		struct msg *m = queue[st->peer][me][(*h)++ % QLEN];
		ck_assert_int_eq(m->count, st->a.count);
		if (st->a.buf != FT_CB_NONE)
			memcpy(span_at(r, st->a), m->v, (size_t)m->count * sizeof m->v[0]);
		free(m);
		r->done_in++;
		moved = true;
	}
	r->at = end;
	r->posted = false;
	r->done_in = 0;
	return true;
}

/* Build each rank's schedule from its own arguments (per_rank[me]; fill
 * has set the buffers) and run them all to the end. */
static void run_each(const struct ft_coll_args *per_rank, uint32_t n)
{
	memset(qhead, 0, sizeof qhead);
	memset(qtail, 0, sizeof qtail);
	for (uint32_t me = 0; me < n; me++) {
		ck_assert_int_eq(ft_coll_sched(&per_rank[me], n, me, &ranks[me].s), 0);
		ck_assert_int_le(ranks[me].s.tmp_count[0], BUFLEN);
		ck_assert_int_le(ranks[me].s.tmp_count[1], BUFLEN);
		ranks[me].at = 0;
		ranks[me].posted = false;
		ranks[me].done_in = 0;
	}
	for (;;) {
		bool moved = false, all_done = true;
		for (uint32_t me = 0; me < n; me++) {
			while (step(me))
				moved = true;
			all_done &= ranks[me].at >= ranks[me].s.nsteps;
		}
		if (all_done)
			break;
		ck_assert_msg(moved, "deadlock: kind %d on %u ranks", per_rank[0].kind, n);
	}
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < n; j++)
			ck_assert_msg(qhead[i][j] == qtail[i][j], "a message from %u to %u left over", i, j);
	for (uint32_t me = 0; me < n; me++)
		ft_coll_sched_fini(&ranks[me].s);
}

/* The same, every rank with the same arguments. */
static void run(const struct ft_coll_args *a, uint32_t n)
{
	struct ft_coll_args per[MAXN];

	for (uint32_t me = 0; me < n; me++)
		per[me] = *a;
	run_each(per, n);
}

/* The value rank r contributes at index j. */
static struct elem val(uint32_t r, int64_t j)
{
	return (struct elem){2 * r + 3 + (uint64_t)j, 1000 * (uint64_t)r + (uint64_t)j + 1};
}

/* A marker for what must stay untouched. */
static const struct elem UNSET = {0, 0xdead};

static void fill(uint32_t n)
{
	for (uint32_t r = 0; r < n; r++)
		for (int b = 0; b < 5; b++)
			for (int j = 0; j < BUFLEN; j++)
				ranks[r].buf[b][j] = b == FT_CB_SEND ? val(r, j) : UNSET;
}

/* Uneven counts with zeros, and displacements with gaps. */
static void v_layout(uint32_t n, int *counts, int *displs, int salt)
{
	int at = 1;

	for (uint32_t i = 0; i < n; i++) {
		counts[i] = (int)((i * 7 + (uint32_t)salt) % 4);
		displs[i] = at;
		at += counts[i] + (int)(i % 2);
	}
}

START_TEST(test_barrier)
{
	struct ft_coll_args a = {.kind = FT_COLL_BARRIER};

	for (uint32_t n = 1; n <= MAXN; n++) {
		fill(n);
		run(&a, n);
	}
}
END_TEST

START_TEST(test_bcast)
{
	for (uint32_t n = 1; n <= MAXN; n++)
		for (int32_t root = 0; root < (int32_t)n; root++) {
			struct ft_coll_args a = {.kind = FT_COLL_BCAST, .root = root, .rcount = 5};
			fill(n);
			for (int j = 0; j < 5; j++)
				ranks[root].buf[FT_CB_RECV][j] = val(99, j);
			run(&a, n);
			for (uint32_t r = 0; r < n; r++)
				for (int j = 0; j < 5; j++)
					ck_assert(same(ranks[r].buf[FT_CB_RECV][j], val(99, j)));
		}
}
END_TEST

static struct elem fold(uint32_t lo, uint32_t hi, int64_t j)
{
	struct elem acc = val(lo, j);

	for (uint32_t r = lo + 1; r < hi; r++)
		acc = op(acc, val(r, j));
	return acc;
}

START_TEST(test_reduce)
{
	/* all 2: an allreduce too large for recursive doubling. */
	for (int all = 0; all < 3; all++)
		for (int in_place = 0; in_place < 2; in_place++)
			for (uint32_t n = 1; n <= MAXN; n++)
				for (int32_t root = 0; root < (all ? 1 : (int32_t)n); root++) {
					struct ft_coll_args a = {.kind = all ? FT_COLL_ALLREDUCE
									     : FT_COLL_REDUCE,
								 .root = root,
								 .rcount = 4,
								 .in_place = in_place,
								 .elem_bytes = all == 2 ? FT_COLL_ALLREDUCE_RD_BYTES : 0};
					fill(n);
					for (uint32_t r = 0; r < n; r++)
						if (in_place && (all || r == (uint32_t)root))
							for (int j = 0; j < 4; j++)
								ranks[r].buf[FT_CB_RECV][j] = val(r, j);
					run(&a, n);
					for (uint32_t r = 0; r < n; r++) {
						if (!all && r != (uint32_t)root)
							continue;
						for (int j = 0; j < 4; j++)
							ck_assert(same(ranks[r].buf[FT_CB_RECV][j],
								       fold(0, n, j)));
						ck_assert(same(ranks[r].buf[FT_CB_RECV][4], UNSET));
					}
				}
}
END_TEST

START_TEST(test_gather_scatter)
{
	for (int in_place = 0; in_place < 2; in_place++)
		for (uint32_t n = 1; n <= MAXN; n++)
			for (int32_t root = 0; root < (int32_t)n; root++) {
				struct ft_coll_args g = {.kind = FT_COLL_GATHER,
							 .root = root,
							 .scount = 3,
							 .rcount = 3,
							 .in_place = in_place};
				fill(n);
				if (in_place)
					for (int j = 0; j < 3; j++)
						ranks[root].buf[FT_CB_RECV][3 * root + j] = val((uint32_t)root, j);
				run(&g, n);
				for (uint32_t i = 0; i < n; i++)
					for (int j = 0; j < 3; j++)
						ck_assert(same(ranks[root].buf[FT_CB_RECV][3 * i + (uint32_t)j],
							       val(i, j)));
				ck_assert(same(ranks[root].buf[FT_CB_RECV][3 * n], UNSET));

				struct ft_coll_args s = {.kind = FT_COLL_SCATTER,
							 .root = root,
							 .scount = 2,
							 .rcount = 2,
							 .in_place = in_place};
				fill(n);
				run(&s, n);
				for (uint32_t i = 0; i < n; i++) {
					if (in_place && i == (uint32_t)root) {
						ck_assert(same(ranks[i].buf[FT_CB_RECV][0], UNSET));
						continue;
					}
					for (int j = 0; j < 2; j++)
						ck_assert(same(ranks[i].buf[FT_CB_RECV][j],
							       val((uint32_t)root, 2 * i + (uint32_t)j)));
					ck_assert(same(ranks[i].buf[FT_CB_RECV][2], UNSET));
				}
			}
}
END_TEST

START_TEST(test_gatherv_scatterv)
{
	int counts[MAXN], displs[MAXN];
	struct ft_coll_args per[MAXN];

	for (int in_place = 0; in_place < 2; in_place++)
		for (uint32_t n = 1; n <= MAXN; n++)
			for (int32_t root = 0; root < (int32_t)n; root++) {
				v_layout(n, counts, displs, root);
				fill(n);
				for (uint32_t me = 0; me < n; me++)
					per[me] = (struct ft_coll_args){.kind = FT_COLL_GATHERV,
									.root = root,
									.scount = counts[me],
									.rcounts = counts,
									.rdispls = displs,
									.in_place = in_place && me == (uint32_t)root};
				if (in_place)
					for (int j = 0; j < counts[root]; j++)
						ranks[root].buf[FT_CB_RECV][displs[root] + j] =
							val((uint32_t)root, j);
				run_each(per, n);
				for (uint32_t i = 0; i < n; i++) {
					for (int j = 0; j < counts[i]; j++)
						ck_assert(same(ranks[root].buf[FT_CB_RECV][displs[i] + j],
							       val(i, j)));
					/* The gap after an odd rank's block stays untouched. */
					if (i % 2)
						ck_assert(same(ranks[root].buf[FT_CB_RECV][displs[i] + counts[i]],
							       UNSET));
				}
				ck_assert(same(ranks[root].buf[FT_CB_RECV][0], UNSET));

				fill(n);
				for (uint32_t me = 0; me < n; me++)
					per[me] = (struct ft_coll_args){.kind = FT_COLL_SCATTERV,
									.root = root,
									.rcount = counts[me],
									.scounts = counts,
									.sdispls = displs,
									.in_place = in_place && me == (uint32_t)root};
				run_each(per, n);
				for (uint32_t i = 0; i < n; i++) {
					if (in_place && i == (uint32_t)root)
						continue;
					for (int j = 0; j < counts[i]; j++)
						ck_assert(same(ranks[i].buf[FT_CB_RECV][j],
							       val((uint32_t)root, displs[i] + j)));
					ck_assert(same(ranks[i].buf[FT_CB_RECV][counts[i]], UNSET));
				}
			}
}
END_TEST

START_TEST(test_allgather)
{
	int counts[MAXN], displs[MAXN];
	struct ft_coll_args per[MAXN];

	for (int v = 0; v < 2; v++)
		for (int in_place = 0; in_place < 2; in_place++)
			for (uint32_t n = 1; n <= MAXN; n++) {
				v_layout(n, counts, displs, (int)n);
				fill(n);
				for (uint32_t me = 0; me < n; me++) {
					int64_t c = v ? counts[me] : 3;
					int64_t off = v ? displs[me] : 3 * (int64_t)me;
					per[me] = (struct ft_coll_args){
						.kind = v ? FT_COLL_ALLGATHERV : FT_COLL_ALLGATHER,
						.scount = c,
						.rcount = 3,
						.rcounts = counts,
						.rdispls = displs,
						.in_place = in_place};
					if (in_place)
						for (int64_t j = 0; j < c; j++)
							ranks[me].buf[FT_CB_RECV][off + j] = val(me, j);
				}
				run_each(per, n);
				for (uint32_t r = 0; r < n; r++)
					for (uint32_t i = 0; i < n; i++) {
						int64_t c = v ? counts[i] : 3;
						int64_t off = v ? displs[i] : 3 * (int64_t)i;
						for (int64_t j = 0; j < c; j++)
							ck_assert(same(ranks[r].buf[FT_CB_RECV][off + j],
								       val(i, j)));
					}
			}
}
END_TEST

START_TEST(test_alltoall)
{
	int sc[MAXN][MAXN], sd[MAXN][MAXN], rc[MAXN][MAXN], rd[MAXN][MAXN];
	struct ft_coll_args per[MAXN];
	/* The default, a pair a round, and rounds that end mid-way. */
	static const uint32_t batches[] = { 32, 1, 3 };

	for (size_t bi = 0; bi < sizeof batches / sizeof batches[0]; bi++) {
		ft_coll_sched_alltoall_batch = batches[bi];
		/* v: 0 alltoall, 1 alltoallv, 2 alltoallw (its spans count
		 * bytes, here one element each). */
		for (int v = 0; v < 3; v++)
			for (int in_place = 0; in_place < 2; in_place++)
				for (uint32_t n = 1; n <= MAXN; n++) {
					/* What i sends j: (i + 2 j) % 3 elements (v), or 2.
					 * In place, what i sends j sits where i receives
					 * from j, so the counts are symmetric. */
					for (uint32_t i = 0; i < n; i++)
						for (uint32_t j = 0; j < n; j++) {
							sc[i][j] = !v ? 2 : in_place ? (int)((i + j) % 3) : (int)((i + 2 * j) % 3);
							rc[i][j] = !v ? 2 : in_place ? (int)((i + j) % 3) : (int)((j + 2 * i) % 3);
						}
					for (uint32_t i = 0; i < n; i++) {
						int sat = 0, rat = 2;
						for (uint32_t j = 0; j < n; j++) {
							sd[i][j] = sat;
							rd[i][j] = rat;
							sat += sc[i][j] + 1;
							rat += rc[i][j] + (int)(j % 2);
						}
					}
					fill(n);
					for (uint32_t me = 0; me < n; me++) {
						int64_t w_span = 0;
						for (uint32_t j = 0; j < n; j++)
							if (rd[me][j] + rc[me][j] > w_span)
								w_span = rd[me][j] + rc[me][j];
						per[me] = (struct ft_coll_args){
							.kind = v == 2 ? FT_COLL_ALLTOALLW : v ? FT_COLL_ALLTOALLV : FT_COLL_ALLTOALL,
							.w_span = w_span,
							.scount = 2,
							.rcount = 2,
							.scounts = sc[me],
							.sdispls = sd[me],
							.rcounts = rc[me],
							.rdispls = rd[me],
							.in_place = in_place};
						/* The value me sends j, at index k: val(me, 100 j + k). */
						for (uint32_t j = 0; j < n; j++) {
							int64_t soff = v ? sd[me][j] : 2 * (int64_t)j;
							int64_t roff = v ? rd[me][j] : 2 * (int64_t)j;
							int c = in_place ? (v ? rc[me][j] : 2) : (v ? sc[me][j] : 2);
							for (int k = 0; k < c; k++) {
								struct elem x = val(me, 100 * (int64_t)j + k);
								if (in_place)
									ranks[me].buf[FT_CB_RECV][roff + k] = x;
								else
									ranks[me].buf[FT_CB_SEND][soff + k] = x;
							}
						}
					}
					run_each(per, n);
					/* The w form's copies name their block's type: its
					 * own block's (me), or none (the raw copy out of the
					 * receive buffer, in place). */
					for (uint32_t me = 0; me < n && v == 2; me++) {
						struct ft_coll_sched ws;
						ck_assert_int_eq(ft_coll_sched(&per[me], n, me, &ws), 0);
						int copies = 0;
						for (uint32_t k = 0; k < ws.nsteps; k++)
							if (ws.steps[k].op == FT_CS_COPY) {
								copies++;
								ck_assert_int_eq(ws.steps[k].peer, in_place ? -1 : (int32_t)me);
							}
						ck_assert_int_le(copies, 1);
						ft_coll_sched_fini(&ws);
					}
					for (uint32_t me = 0; me < n; me++)
						for (uint32_t i = 0; i < n; i++) {
							int64_t roff = v ? rd[me][i] : 2 * (int64_t)i;
							int c = v ? rc[me][i] : 2;
							for (int k = 0; k < c; k++)
								ck_assert(same(ranks[me].buf[FT_CB_RECV][roff + k],
									       val(i, 100 * (int64_t)me + k)));
						}
				}
	}
	ft_coll_sched_alltoall_batch = 32;
}
END_TEST

START_TEST(test_reduce_scatter)
{
	int counts[MAXN];

	for (int block = 0; block < 2; block++)
		for (int in_place = 0; in_place < 2; in_place++)
			for (uint32_t n = 1; n <= MAXN; n++) {
				int64_t total = 0;
				for (uint32_t i = 0; i < n; i++)
					total += counts[i] = block ? 2 : (int)((i * 5 + 1) % 3);
				struct ft_coll_args a = {.kind = block ? FT_COLL_REDUCE_SCATTER_BLOCK
								       : FT_COLL_REDUCE_SCATTER,
							 .rcount = 2,
							 .rcounts = counts,
							 .in_place = in_place};
				fill(n);
				if (in_place)
					for (uint32_t r = 0; r < n; r++)
						for (int64_t j = 0; j < total; j++)
							ranks[r].buf[FT_CB_RECV][j] = val(r, j);
				run(&a, n);
				int64_t off = 0;
				for (uint32_t r = 0; r < n; r++) {
					for (int j = 0; j < counts[r]; j++)
						ck_assert(same(ranks[r].buf[FT_CB_RECV][j], fold(0, n, off + j)));
					off += counts[r];
				}
			}
}
END_TEST

START_TEST(test_scan)
{
	for (int exclusive = 0; exclusive < 2; exclusive++)
		for (int in_place = 0; in_place < 2; in_place++)
			for (uint32_t n = 1; n <= MAXN; n++) {
				struct ft_coll_args a = {.kind = exclusive ? FT_COLL_EXSCAN : FT_COLL_SCAN,
							 .rcount = 3,
							 .in_place = in_place};
				fill(n);
				if (in_place)
					for (uint32_t r = 0; r < n; r++)
						for (int j = 0; j < 3; j++)
							ranks[r].buf[FT_CB_RECV][j] = val(r, j);
				run(&a, n);
				for (uint32_t r = exclusive ? 1 : 0; r < n; r++)
					for (int j = 0; j < 3; j++)
						ck_assert(same(ranks[r].buf[FT_CB_RECV][j],
							       fold(0, exclusive ? r : r + 1, j)));
			}
}
END_TEST

START_TEST(test_refused)
{
	struct ft_coll_sched s;
	int counts[2] = {1, 1};
	struct ft_coll_args a = {.kind = FT_COLL_BCAST, .root = 2, .rcount = 1};

	ck_assert_int_eq(ft_coll_sched(&a, 2, 0, &s), -EINVAL); /* root past n */
	a.root = -1;
	ck_assert_int_eq(ft_coll_sched(&a, 2, 0, &s), -EINVAL);
	a.root = 0;
	ck_assert_int_eq(ft_coll_sched(&a, 0, 0, &s), -EINVAL); /* no ranks */
	ck_assert_int_eq(ft_coll_sched(&a, 2, 2, &s), -EINVAL); /* me past n */
	a.rcount = -1;
	ck_assert_int_eq(ft_coll_sched(&a, 2, 0, &s), -EINVAL);
	a = (struct ft_coll_args){.kind = FT_COLL_ALLGATHERV, .rcounts = counts};
	ck_assert_int_eq(ft_coll_sched(&a, 2, 0, &s), -EINVAL); /* no displacements */
	a = (struct ft_coll_args){.kind = FT_COLL_GATHERV, .root = 1};
	ck_assert_int_eq(ft_coll_sched(&a, 2, 1, &s), -EINVAL); /* the root needs them */
	ck_assert_int_eq(ft_coll_sched(&a, 2, 0, &s), 0);	/* the others do not */
	ft_coll_sched_fini(&s);
	a = (struct ft_coll_args){.kind = FT_COLL_ALLTOALLW, .rcounts = counts, .rdispls = counts,
				   .in_place = true, .w_span = -1};
	ck_assert_int_eq(ft_coll_sched(&a, 2, 0, &s), -EINVAL); /* a negative span */
	a.in_place = false;
	a.w_span = 0;
	ck_assert_int_eq(ft_coll_sched(&a, 2, 0, &s), -EINVAL); /* no send arrays */
	a = (struct ft_coll_args){.kind = (enum ft_coll_kind)99};
	ck_assert_int_eq(ft_coll_sched(&a, 2, 0, &s), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("coll_sched");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_barrier);
	tcase_add_test(tc, test_bcast);
	tcase_add_test(tc, test_reduce);
	tcase_add_test(tc, test_gather_scatter);
	tcase_add_test(tc, test_gatherv_scatterv);
	tcase_add_test(tc, test_allgather);
	tcase_add_test(tc, test_alltoall);
	tcase_add_test(tc, test_reduce_scatter);
	tcase_add_test(tc, test_scan);
	tcase_add_test(tc, test_refused);
	suite_add_tcase(suite, tc);

	SRunner *sr = srunner_create(suite);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
