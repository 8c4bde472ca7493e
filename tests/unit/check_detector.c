/* check_detector.c: unit tests of src/detector.c, the failure detector's
 * state machine, driven by a small in-process network: N detectors whose
 * send() deep-copies each message into one FIFO queue, a fake clock that
 * advances 1 ms at a time (every live detector ticks, then every queued
 * message is delivered), ranks that are dead (never tick, messages to them
 * are dropped) or paused (never tick, messages to them are held until they
 * resume), and a filter that drops chosen messages. The tests check the
 * steady ring (no news, one heartbeat per period, only to the successor),
 * the start-up grace, a silent death (found by the successor within
 * timeout + 2 periods, flooded to everyone once, the ring closed over the
 * gap), a dropped connection (only a ring neighbour acts, never for a
 * departed rank), two neighbours dying together, a new predecessor that no
 * flood reaches (it must still learn in time whom it now sends to, or it
 * is declared failed while alive), half of a 16-rank job dying for each
 * broadcast kind (exactly the dead set everywhere; chord floods with fewer
 * NOTICEs than BMG), anti-entropy (news whose NOTICEs were all lost arrives
 * by SYNC within a few periods, and the SYNCs then stop), fail-stop (a
 * paused rank declared failed is excluded when it resumes and its messages
 * are ignored), departures (no failure is declared for a departed rank,
 * ft_det_all_left), EXCLUDED answers to failed senders, duplicate news,
 * and a shuffled ring. The "quorum" case runs the ring and fail-stop tests
 * again with quorum rounds on, then partitions the network (messages
 * between the two sides dropped): the strict majority, or the half holding
 * the lowest rank, declares exactly the other side failed, every rank of
 * the other side reports lost_quorum and declares no one; healing then
 * brings no one back; failures proven by a refused connection need no
 * majority; a job of two; and, with rounds off, two jobs. The "readmit"
 * case (with and without rounds) pauses a rank past the timeout and
 * resumes it: everyone re-admits it once (the ring closes back over it,
 * no one is declared failed afterwards, the views agree), it is never
 * excluded; a second pause is final; a death proven by a refused
 * connection is never undone. The "join" cases (also with rounds) run a
 * job of capacity 8 with 4 members (sim_send fails on any message to a
 * rank the sender does not know joined, or before ops.learned told it so,
 * as the engine needs the endpoint first): the ring and the rounds are
 * the members' alone; a rank spawned through ft_det_join reaches every
 * member once and joins the ring; silent from the start, it is declared
 * one timeout after the join; ft_det_all_left and the lowest member count
 * members only; what an empty slot sends, and news about it, are dropped
 * until its JOINED comes, which senders put first; a spawned detector
 * started with its parent's view (cfg.known) matches the parent without
 * reporting or sending anything; and a shared ring skips empty slots. */
#include "ftshim_config.h"

#include <check.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/detector.h"
#include "src/frame.h"
#include "src/proc_table.h"
#include "src/ring.h"

#define MS UINT64_C(1000000)
#define PERIOD_MS 10
#define TIMEOUT_MS 100
#define GRACE_MS 50
#define MAX_NODES 16
#define MAX_RECS 64

/* The tests' own random numbers (xorshift64*). */
static uint64_t test_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(0x2545f4914f6cdd1d);
}

/* --- the simulated network ----------------------------------------------- */

/* One call of ops.learned. */
struct rec {
	struct ft_entry e;
	uint32_t told_by;
	uint64_t at;  /* fake time */
	int via;      /* type of the message being received, 0 outside ft_det_receive */
};

struct node {
	struct ft_detector d;
	uint32_t rank;
	bool dead, paused;
	struct rec recs[MAX_RECS];
	uint32_t nrecs;
	uint32_t nexcluded, excluded_by, excluded_how;
	uint32_t nlost, lost_reached, lost_members, lost_lowest; /* ops.lost_quorum */
	uint64_t lost_at;
	uint32_t ndeclared; /* ops.declared_self */
	bool reach[MAX_NODES]; /* the ranks whose endpoint its engine would have */
};

/* A message in flight; for lists, m.list.entries points to entries, a
 * copy owned by the queue. */
struct qmsg {
	uint32_t to;
	struct ft_msg m;
	struct ft_entry *entries;
};

struct queue {
	struct qmsg *v;
	size_t head, len, cap;
};

static struct {
	uint32_t n;
	struct ft_det_config base; /* every node's, but self */
	struct ft_ring *shared_ring; /* NULL: each detector builds its own */
	struct node nodes[MAX_NODES];
	struct queue q;    /* in flight */
	struct queue held; /* for paused ranks */
	uint64_t now;
	int via;
	bool (*drop)(const struct qmsg *qm);
	uint64_t dropped;
	uint64_t sent_to[MAX_NODES][MAX_NODES][FT_MSG_TYPE_END];
} sim;

static bool is_list(enum ft_msg_type t)
{
	return t == FT_MSG_NOTICE || t == FT_MSG_SYNC;
}

/* Append qm, whose entries the queue now owns. */
static void queue_put(struct queue *q, const struct qmsg *qm)
{
	if (q->len == q->cap) {
		q->cap = q->cap ? 2 * q->cap : 64;
		q->v = realloc(q->v, q->cap * sizeof *q->v);
		ck_assert_ptr_nonnull(q->v);
	}
	q->v[q->len++] = *qm;
}

/* Append a deep copy of m. */
static void queue_push(struct queue *q, uint32_t to, const struct ft_msg *m)
{
	struct qmsg qm = { .to = to, .m = *m, .entries = NULL };

	if (is_list(m->type)) {
		if (m->list.count > 0) {
			qm.entries = malloc(m->list.count * sizeof *qm.entries);
			ck_assert_ptr_nonnull(qm.entries);
			memcpy(qm.entries, m->list.entries, m->list.count * sizeof *qm.entries);
		}
		qm.m.list.entries = qm.entries;
	}
	queue_put(q, &qm);
}

static void queue_free(struct queue *q)
{
	for (size_t i = q->head; i < q->len; i++)
		free(q->v[i].entries);
	free(q->v);
	memset(q, 0, sizeof *q);
}

/* Messages in flight from -> to of type (FT_RANK_NONE / 0: any). */
static uint32_t queued(uint32_t from, uint32_t to, enum ft_msg_type type)
{
	uint32_t c = 0;

	for (size_t i = sim.q.head; i < sim.q.len; i++) {
		const struct qmsg *qm = &sim.q.v[i];
		if ((from == FT_RANK_NONE || qm->m.from == from) &&
		    (to == FT_RANK_NONE || qm->to == to) && (type == 0 || qm->m.type == type))
			c++;
	}
	return c;
}

static void sim_send(void *ctx, uint32_t to, const struct ft_msg *m)
{
	const struct node *from = ctx;

	ck_assert_uint_lt(to, sim.n);
	ck_assert_uint_ne(to, from->rank);
	/* Only to members, and only once the engine could know where. */
	ck_assert(ft_det_is_joined(&from->d, to));
	ck_assert_msg(from->reach[to], "%u sends to %u before it learned that it joined",
		      from->rank, to);
	ck_assert_uint_eq(m->from, from->rank);
	ck_assert_int_gt(m->type, 0);
	ck_assert_int_lt(m->type, FT_MSG_TYPE_END);
	sim.sent_to[from->rank][to][m->type]++;
	queue_push(&sim.q, to, m);
}

static void sim_learned(void *ctx, const struct ft_entry *e, uint32_t told_by)
{
	struct node *nd = ctx;

	ck_assert_uint_lt(nd->nrecs, MAX_RECS);
	nd->recs[nd->nrecs++] = (struct rec){ .e = *e, .told_by = told_by, .at = sim.now, .via = sim.via };
	if (e->event == FT_EV_JOINED)
		nd->reach[e->rank] = true;
}

static void sim_excluded(void *ctx, uint32_t by, uint32_t how)
{
	struct node *nd = ctx;

	nd->nexcluded++;
	nd->excluded_by = by;
	nd->excluded_how = how;
}

/* The process exits: it is dead to the network from now on. */
static void sim_lost_quorum(void *ctx, uint32_t reached, uint32_t members, uint32_t lowest)
{
	struct node *nd = ctx;

	nd->nlost++;
	nd->lost_reached = reached;
	nd->lost_members = members;
	nd->lost_lowest = lowest;
	nd->lost_at = sim.now;
	nd->dead = true;
}

/* Whether sim_init turns quorum rounds / re-admission on (set by the
 * "quorum" and "readmit" cases). */
static bool sim_quorum, sim_readmit;

static void sim_declared_self(void *ctx, uint32_t by, uint32_t how)
{
	struct node *nd = ctx;

	(void)by;
	ck_assert_uint_eq(how, FT_HOW_HB_TIMEOUT);
	nd->ndeclared++;
}


static void quorum_on(void)
{
	sim_quorum = true;
}

static void readmit_on(void)
{
	sim_readmit = true;
}

static void readmit_quorum_on(void)
{
	sim_readmit = sim_quorum = true;
}

static void sim_destroy(void)
{
	for (uint32_t r = 0; r < sim.n; r++)
		ft_det_destroy(&sim.nodes[r].d);
	queue_free(&sim.q);
	queue_free(&sim.held);
	sim.n = 0;
}

/* After every test, also one that failed half-way (CK_FORK=no). */
static void sim_teardown(void)
{
	sim_destroy();
	sim_quorum = sim_readmit = false; /* for the next case, with CK_FORK=no */
}

/* (Re)create rank r's detector from sim.base, starting with the view
 * known[0..nknown). Its engine would have the endpoints of every rank it
 * starts with as a member. */
static void node_init(uint32_t r, const struct ft_entry *known, uint32_t nknown)
{
	struct node *nd = &sim.nodes[r];
	struct ft_det_config cfg = sim.base;
	struct ft_det_ops ops = { .ctx = nd, .send = sim_send, .learned = sim_learned,
				  .excluded = sim_excluded, .lost_quorum = sim_lost_quorum,
				  .declared_self = sim_declared_self };

	cfg.self = r;
	cfg.known = known;
	cfg.nknown = nknown;
	nd->rank = r;
	ck_assert_int_eq(ft_det_init(&nd->d, &cfg, &ops, sim.shared_ring), 0);
	for (uint32_t x = 0; x < sim.n; x++)
		nd->reach[x] = ft_det_is_joined(&nd->d, x);
}

/* A job of capacity n whose ranks [0, njoined) run from the start (0:
 * all); the other rank slots are processes not spawned yet: dead, until
 * spawn(). */
static void sim_init_joined(uint32_t n, uint32_t njoined, enum ft_bcast_kind kind, bool shuffle,
			    uint64_t seed)
{
	sim_destroy();
	ck_assert_uint_le(n, MAX_NODES);
	memset(&sim, 0, sizeof sim);
	sim.n = n;
	sim.now = 1000 * MS;
	sim.base = (struct ft_det_config){
		.nprocs = n, .njoined = njoined, .period_ns = PERIOD_MS * MS,
		.timeout_ns = TIMEOUT_MS * MS, .grace_ns = GRACE_MS * MS, .bcast = kind,
		.shuffle = shuffle, .seed = seed, .quorum = sim_quorum, .readmit = sim_readmit,
	};
	for (uint32_t r = 0; r < n; r++) {
		node_init(r, NULL, 0);
		sim.nodes[r].dead = njoined && r >= njoined;
	}
}

static void sim_init(uint32_t n, enum ft_bcast_kind kind, bool shuffle, uint64_t seed)
{
	sim_init_joined(n, 0, kind, shuffle, seed);
}

static void sim_start(void)
{
	for (uint32_t r = 0; r < sim.n; r++)
		ft_det_start(&sim.nodes[r].d, sim.now);
}

static bool live(uint32_t r)
{
	return !sim.nodes[r].dead && !sim.nodes[r].paused;
}

static struct ft_detector *det(uint32_t r)
{
	return &sim.nodes[r].d;
}

static void deliver_all(void)
{
	while (sim.q.head < sim.q.len) {
		struct qmsg qm = sim.q.v[sim.q.head++];
		struct node *to = &sim.nodes[qm.to];

		if (to->paused) {
			queue_put(&sim.held, &qm);
			continue;
		}
		if (!to->dead && !(sim.drop && sim.drop(&qm))) {
			sim.via = qm.m.type;
			ft_det_receive(&to->d, &qm.m, sim.now);
			sim.via = 0;
		} else if (!to->dead) {
			sim.dropped++;
		}
		free(qm.entries);
	}
	sim.q.head = sim.q.len = 0;
}

/* Move time forward by ms, 1 ms at a time: every live detector ticks, then
 * everything in flight is delivered. */
static void advance(uint64_t ms)
{
	for (uint64_t i = 0; i < ms; i++) {
		sim.now += MS;
		for (uint32_t r = 0; r < sim.n; r++) {
			if (!live(r))
				continue;
			uint64_t next = ft_det_tick(det(r), sim.now);
			ck_assert_uint_gt(next, sim.now);
		}
		deliver_all();
	}
}

/* A paused rank runs again: what was held for it is queued first. */
static void resume(uint32_t r)
{
	struct queue rest = { 0 };

	sim.nodes[r].paused = false;
	for (size_t i = sim.held.head; i < sim.held.len; i++) {
		if (sim.held.v[i].to == r)
			queue_put(&sim.q, &sim.held.v[i]);
		else
			queue_put(&rest, &sim.held.v[i]);
	}
	free(sim.held.v);
	sim.held = rest;
}

/* Deliver m to rank to directly, as the network would. */
static void inject(uint32_t to, const struct ft_msg *m)
{
	sim.via = m->type;
	ft_det_receive(det(to), m, sim.now);
	sim.via = 0;
}

static uint32_t count_learned(uint32_t r, uint32_t rank, uint16_t event)
{
	uint32_t c = 0;

	for (uint32_t i = 0; i < sim.nodes[r].nrecs; i++)
		if (sim.nodes[r].recs[i].e.rank == rank && sim.nodes[r].recs[i].e.event == event)
			c++;
	return c;
}

static const struct rec *find_learned(uint32_t r, uint32_t rank, uint16_t event)
{
	for (uint32_t i = 0; i < sim.nodes[r].nrecs; i++)
		if (sim.nodes[r].recs[i].e.rank == rank && sim.nodes[r].recs[i].e.event == event)
			return &sim.nodes[r].recs[i];
	return NULL;
}

/* Learned events of a kind by rank r, about any rank. */
static uint32_t count_event(uint32_t r, uint16_t event)
{
	uint32_t c = 0;

	for (uint32_t i = 0; i < sim.nodes[r].nrecs; i++)
		if (sim.nodes[r].recs[i].e.event == event)
			c++;
	return c;
}

static uint64_t total_sent(enum ft_msg_type type)
{
	uint64_t c = 0;

	for (uint32_t r = 0; r < sim.n; r++)
		c += det(r)->stats.sent[type];
	return c;
}

/* Advance 1 ms at a time until rank r learned (rank, event), for at most
 * limit ms. Returns the rec, or NULL. */
static const struct rec *advance_until_learned(uint32_t r, uint32_t rank, uint16_t event,
					       uint64_t limit)
{
	for (uint64_t i = 0; i < limit; i++) {
		const struct rec *rc = find_learned(r, rank, event);
		if (rc)
			return rc;
		advance(1);
	}
	return find_learned(r, rank, event);
}

static struct ft_msg list_msg(enum ft_msg_type type, uint32_t from, const struct ft_entry *e,
			      uint32_t n)
{
	struct ft_msg m = { .type = type, .from = from };

	m.list.count = n;
	m.list.entries = e;
	return m;
}

static bool drop_notices_to_6(const struct qmsg *qm)
{
	return qm->to == 6 && qm->m.type == FT_MSG_NOTICE;
}

/* --- tests ---------------------------------------------------------------- */

START_TEST(test_steady_state)
{
	const uint32_t n = 8;

	sim_init(n, FT_BCAST_CHORD, false, 0);
	sim_start();
	advance(2000);
	for (uint32_t r = 0; r < n; r++) {
		const struct ft_detector *d = det(r);
		uint32_t succ = (r + 1) % n, pred = (r + n - 1) % n;

		ck_assert_uint_eq(sim.nodes[r].nrecs, 0);
		ck_assert_uint_eq(sim.nodes[r].nexcluded, 0);
		ck_assert_uint_eq(d->observed, pred);
		ck_assert_uint_eq(d->emit_to, succ);
		ck_assert_uint_ge(d->stats.sent[FT_MSG_HEARTBEAT], 199);
		ck_assert_uint_le(d->stats.sent[FT_MSG_HEARTBEAT], 202);
		ck_assert_uint_eq(d->stats.sent[FT_MSG_NOTICE], 0);
		ck_assert_uint_eq(d->stats.sent[FT_MSG_SYNC], 0);
		ck_assert_uint_eq(d->stats.sent[FT_MSG_EXCLUDED], 0);
		for (uint32_t j = 0; j < n; j++)
			ck_assert_uint_eq(sim.sent_to[r][j][FT_MSG_HEARTBEAT],
					  j == succ ? d->stats.sent[FT_MSG_HEARTBEAT] : 0);
		ck_assert_uint_eq(d->stats.received[FT_MSG_HEARTBEAT],
				  det(pred)->stats.sent[FT_MSG_HEARTBEAT]);
		ck_assert_uint_eq(d->stats.duplicates, 0);
		ck_assert_uint_eq(d->stats.from_failed, 0);
		ck_assert_uint_eq(d->nfailed, 0);
		ck_assert(!ft_det_all_left(d));
	}
	sim_destroy();
}
END_TEST

/* A rank silent from the start is found after grace + timeout, no sooner. */
START_TEST(test_start_grace)
{
	const uint32_t n = 8;

	sim_init(n, FT_BCAST_CHORD, false, 0);
	sim.nodes[5].dead = true;
	uint64_t t0 = sim.now;
	sim_start();
	const struct rec *rc = advance_until_learned(6, 5, FT_EV_FAILED, 400);
	ck_assert_ptr_nonnull(rc);
	ck_assert_uint_ge(rc->at, t0 + (GRACE_MS + TIMEOUT_MS) * MS);
	ck_assert_uint_le(rc->at, t0 + (GRACE_MS + TIMEOUT_MS + 2) * MS);
	ck_assert_uint_eq(rc->e.detector, 6);
	advance(1000);
	for (uint32_t r = 0; r < n; r++)
		if (r != 5)
			ck_assert_uint_eq(sim.nodes[r].nrecs, 1);
	sim_destroy();
}
END_TEST

START_TEST(test_silent_death)
{
	const uint32_t n = 8;

	sim_init(n, FT_BCAST_CHORD, false, 0);
	sim_start();
	advance(1000);
	sim.nodes[3].dead = true;
	uint64_t t_dead = sim.now;

	const struct rec *rc = advance_until_learned(4, 3, FT_EV_FAILED, 300);
	ck_assert_ptr_nonnull(rc);
	/* Its last heartbeat left at most a period before it died. */
	ck_assert_uint_ge(rc->at, t_dead + (TIMEOUT_MS - PERIOD_MS) * MS);
	ck_assert_uint_le(rc->at, t_dead + (TIMEOUT_MS + 2 * PERIOD_MS) * MS);
	ck_assert_uint_eq(rc->e.how, FT_HOW_HB_TIMEOUT);
	ck_assert_uint_eq(rc->e.detector, 4);
	ck_assert_uint_eq(rc->told_by, 4);
	/* Declared by its own tick, or on the answer that made a majority. */
	ck_assert_int_eq(rc->via, sim_quorum ? FT_MSG_PROBE : 0);
	uint64_t t_found = rc->at;
	ck_assert_uint_eq(sim.sent_to[4][3][FT_MSG_EXCLUDED], 1);
	/* The flood reached 2 in the same step; its first heartbeat to its new
	 * successor 4 leaves on its next tick, off its old schedule. */
	ck_assert_ptr_nonnull(find_learned(2, 3, FT_EV_FAILED));
	ck_assert_uint_eq(sim.sent_to[2][4][FT_MSG_HEARTBEAT], 0);
	advance(1);
	ck_assert_uint_eq(sim.sent_to[2][4][FT_MSG_HEARTBEAT], 1);

	advance(2 * PERIOD_MS);
	for (uint32_t r = 0; r < n; r++) {
		if (r == 3 || r == 4)
			continue;
		const struct rec *o = find_learned(r, 3, FT_EV_FAILED);
		ck_assert_ptr_nonnull(o);
		ck_assert_uint_le(o->at, t_found + PERIOD_MS * MS);
		ck_assert_uint_ne(o->told_by, r);
		ck_assert_uint_ne(o->told_by, 3);
		ck_assert_uint_lt(o->told_by, n);
		ck_assert_uint_eq(o->e.detector, 4);
		ck_assert_uint_eq(o->e.how, FT_HOW_HB_TIMEOUT);
		ck_assert(o->via == FT_MSG_NOTICE || o->via == FT_MSG_SYNC);
	}
	uint64_t hb_2_to_4 = sim.sent_to[2][4][FT_MSG_HEARTBEAT];
	advance(1000);
	for (uint32_t r = 0; r < n; r++) {
		if (r == 3)
			continue;
		ck_assert_uint_eq(count_learned(r, 3, FT_EV_FAILED), 1);
		ck_assert_uint_eq(sim.nodes[r].nrecs, 1);
		ck_assert_uint_eq(sim.nodes[r].nexcluded, 0);
		ck_assert(ft_det_knows_failed(det(r), 3));
		ck_assert_uint_eq(det(r)->nfailed, 1);
	}
	ck_assert_uint_eq(det(4)->observed, 2);
	ck_assert_uint_eq(det(2)->emit_to, 4);
	ck_assert_uint_eq(det(4)->emit_to, 5);
	ck_assert_uint_eq(det(2)->observed, 1);
	/* 2 now heartbeats 4, which is satisfied with it. */
	ck_assert_uint_ge(sim.sent_to[2][4][FT_MSG_HEARTBEAT] - hb_2_to_4, 99);
	sim_destroy();
}
END_TEST

START_TEST(test_connection_lost)
{
	const uint32_t n = 8;

	sim_init(n, FT_BCAST_CHORD, false, 0);
	sim_start();
	advance(200);

	/* Not a ring neighbour of 3: nothing at all. */
	ck_assert(!ft_det_connection_lost(det(6), 3, sim.now));
	ck_assert(!ft_det_connection_lost(det(6), 99, sim.now));
	ck_assert_uint_eq(queued(FT_RANK_NONE, FT_RANK_NONE, 0), 0);
	ck_assert(!ft_det_knows_failed(det(6), 3));
	ck_assert_uint_eq(sim.nodes[6].nrecs, 0);

	/* The observer declares at once. */
	sim.nodes[3].dead = true;
	ck_assert(ft_det_connection_lost(det(4), 3, sim.now));
	const struct rec *rc = find_learned(4, 3, FT_EV_FAILED);
	ck_assert_ptr_nonnull(rc);
	ck_assert_uint_eq(rc->at, sim.now);
	ck_assert_uint_eq(rc->e.how, FT_HOW_CONN_LOST);
	ck_assert_uint_eq(rc->e.detector, 4);
	ck_assert_uint_eq(rc->told_by, 4);
	deliver_all();
	for (uint32_t r = 0; r < n; r++)
		if (r != 3)
			ck_assert_uint_eq(count_learned(r, 3, FT_EV_FAILED), 1);
	/* Known already: the other neighbour does nothing. */
	ck_assert(!ft_det_connection_lost(det(2), 3, sim.now));
	ck_assert_uint_eq(queued(FT_RANK_NONE, FT_RANK_NONE, 0), 0);
	ck_assert_uint_eq(det(4)->observed, 2);

	/* A departed rank: neither neighbour acts. */
	ft_det_depart(det(6), sim.now);
	deliver_all();
	ck_assert(ft_det_knows_departed(det(7), 6));
	ck_assert(ft_det_knows_departed(det(5), 6));
	ck_assert(!ft_det_connection_lost(det(7), 6, sim.now));
	ck_assert(!ft_det_connection_lost(det(5), 6, sim.now));
	ck_assert_uint_eq(queued(FT_RANK_NONE, FT_RANK_NONE, 0), 0);
	for (uint32_t r = 0; r < n; r++)
		ck_assert_uint_eq(count_learned(r, 6, FT_EV_FAILED), 0);
	ck_assert(!ft_det_knows_failed(det(7), 6));
	ck_assert_uint_eq(sim.nodes[6].nexcluded, 0);

	/* The rank we send heartbeats to counts as a neighbour too. */
	sim.nodes[0].dead = true;
	ck_assert_uint_eq(det(7)->emit_to, 0);
	ck_assert(ft_det_connection_lost(det(7), 0, sim.now));
	rc = find_learned(7, 0, FT_EV_FAILED);
	ck_assert_ptr_nonnull(rc);
	ck_assert_uint_eq(rc->e.how, FT_HOW_CONN_LOST);
	deliver_all();
	ck_assert_uint_eq(count_learned(1, 0, FT_EV_FAILED), 1);
	ck_assert_uint_eq(det(1)->observed, 7);
	ck_assert_uint_eq(det(7)->emit_to, 1);

	/* And nothing else is found later. */
	advance(1000);
	for (uint32_t r = 1; r < n; r++) {
		if (r == 3)
			continue;
		ck_assert_uint_eq(count_event(r, FT_EV_FAILED), 2);
		ck_assert_uint_eq(sim.nodes[r].nexcluded, 0);
	}
	sim_destroy();
}
END_TEST

START_TEST(test_two_neighbours)
{
	const uint32_t n = 8;

	sim_init(n, FT_BCAST_CHORD, false, 0);
	sim_start();
	advance(1000);
	sim.nodes[3].dead = sim.nodes[4].dead = true;
	advance(3 * TIMEOUT_MS);
	for (uint32_t r = 0; r < n; r++) {
		if (r == 3 || r == 4)
			continue;
		ck_assert_uint_eq(count_learned(r, 3, FT_EV_FAILED), 1);
		ck_assert_uint_eq(count_learned(r, 4, FT_EV_FAILED), 1);
		ck_assert_uint_eq(sim.nodes[r].nrecs, 2);
		ck_assert_uint_eq(det(r)->nfailed, 2);
	}
	/* 5 found both, one after the other. */
	const struct rec *r4 = find_learned(5, 4, FT_EV_FAILED), *r3 = find_learned(5, 3, FT_EV_FAILED);
	ck_assert_uint_eq(r4->e.detector, 5);
	ck_assert_uint_eq(r3->e.detector, 5);
	ck_assert_uint_eq(r3->e.how, FT_HOW_HB_TIMEOUT);
	ck_assert_uint_ge(r3->at, r4->at + (TIMEOUT_MS - PERIOD_MS) * MS);
	ck_assert_uint_eq(det(5)->observed, 2);
	ck_assert_uint_eq(det(2)->emit_to, 5);
	advance(1000);
	for (uint32_t r = 0; r < n; r++)
		if (r != 3 && r != 4)
			ck_assert_uint_eq(sim.nodes[r].nrecs, 2);
	sim_destroy();
}
END_TEST

static const enum ft_bcast_kind kinds[] = { FT_BCAST_CHORD, FT_BCAST_BMG, FT_BCAST_HYPERCUBE };
static const char *const kind_names[] = { "chord", "bmg", "hypercube" };

/* Mark 8 of 16 ranks dead, drawn from a fixed seed. */
static void kill_half(bool dead[MAX_NODES])
{
	uint64_t s = UINT64_C(0x5eed);
	uint32_t k = 0;

	memset(dead, 0, MAX_NODES * sizeof *dead);
	while (k < 8) {
		uint32_t r = (uint32_t)(test_rand(&s) % 16);
		if (!dead[r]) {
			dead[r] = true;
			sim.nodes[r].dead = true;
			k++;
		}
	}
}

/* Every survivor knows exactly the dead set, learned each once. */
static void check_converged(const bool dead[MAX_NODES])
{
	uint32_t ndead = 0;

	for (uint32_t r = 0; r < sim.n; r++)
		ndead += dead[r];
	for (uint32_t r = 0; r < sim.n; r++) {
		if (dead[r])
			continue;
		ck_assert_msg(sim.nodes[r].nexcluded == 0, "live rank %u excluded by %u", r,
			      sim.nodes[r].excluded_by);
		ck_assert_uint_eq(det(r)->nfailed, ndead);
		ck_assert_uint_eq(count_event(r, FT_EV_FAILED), ndead);
		for (uint32_t x = 0; x < sim.n; x++) {
			if (x == r)
				continue;
			ck_assert_msg(ft_det_knows_failed(det(r), x) == dead[x],
				      "rank %u on %u: knows failed %d, dead %d", r, x,
				      (int)ft_det_knows_failed(det(r), x), (int)dead[x]);
			ck_assert_uint_eq(count_learned(r, x, FT_EV_FAILED), dead[x] ? 1 : 0);
		}
		/* The ring is closed over the dead. */
		ck_assert(!dead[det(r)->observed]);
		ck_assert(!dead[det(r)->emit_to]);
		ck_assert_uint_eq(det(det(r)->emit_to)->observed, r);
	}
}

START_TEST(test_half_dies_silently)
{
	bool dead[MAX_NODES];

	sim_init(16, kinds[_i], false, 0);
	sim_start();
	advance(300);
	kill_half(dead);
	advance(3000);
	check_converged(dead);
	sim_destroy();
}
END_TEST

/* 5 finds 4 dead and now watches 3; its flood of the news goes to 6, 7
 * and 1, all dead too, and its heartbeats go to dead 6. 3 must still learn
 * in time that it now sends to 5, or 5 declares it failed. */
START_TEST(test_new_predecessor_told)
{
	static const uint32_t victims[] = { 1, 4, 6, 7 };
	bool dead[MAX_NODES] = { false };

	sim_init(8, FT_BCAST_CHORD, false, 0);
	sim_start();
	advance(300);
	for (size_t i = 0; i < 4; i++)
		dead[victims[i]] = sim.nodes[victims[i]].dead = true;
	advance(2000);
	check_converged(dead);
	sim_destroy();
}
END_TEST

START_TEST(test_half_declared)
{
	uint64_t notices[3];
	bool dead[MAX_NODES];

	for (size_t k = 0; k < 3; k++) {
		sim_init(16, kinds[k], false, 0);
		sim_start();
		advance(GRACE_MS / 2);
		kill_half(dead);
		/* Each is announced by the next live rank on the ring. */
		for (uint32_t x = 0; x < 16; x++) {
			if (!dead[x])
				continue;
			uint32_t by = (x + 1) % 16;
			while (dead[by])
				by = (by + 1) % 16;
			ft_det_declare(det(by), x, FT_HOW_CONN_LOST, sim.now);
			deliver_all();
		}
		/* Floods that ran into dead ranks not yet known failed are
		 * completed by anti-entropy within a few periods. */
		advance(1000);
		check_converged(dead);
		notices[k] = total_sent(FT_MSG_NOTICE);
		uint64_t syncs = total_sent(FT_MSG_SYNC);
		advance(1000);
		ck_assert_uint_eq(total_sent(FT_MSG_NOTICE), notices[k]);
		ck_assert_uint_eq(total_sent(FT_MSG_SYNC), syncs);
		sim_destroy();
	}
	for (size_t k = 0; k < 3; k++)
		printf("check_detector: 8 of 16 declared, %s: %llu NOTICE messages\n", kind_names[k],
		       (unsigned long long)notices[k]);
	ck_assert_uint_gt(notices[0], 0);
	ck_assert_uint_lt(notices[0], notices[1]);
}
END_TEST

START_TEST(test_anti_entropy)
{
	const uint32_t n = 8;

	sim_init(n, FT_BCAST_CHORD, false, 0);
	sim.drop = drop_notices_to_6;
	sim_start();
	advance(200);
	sim.nodes[2].dead = true;
	ft_det_declare(det(3), 2, FT_HOW_CONN_LOST, sim.now);
	uint64_t t_declared = sim.now;
	deliver_all();
	ck_assert_uint_gt(sim.dropped, 0);
	ck_assert_uint_eq(count_learned(6, 2, FT_EV_FAILED), 0);
	for (uint32_t r = 0; r < n; r++)
		if (r != 2 && r != 6)
			ck_assert_uint_eq(count_learned(r, 2, FT_EV_FAILED), 1);

	const struct rec *rc = advance_until_learned(6, 2, FT_EV_FAILED, 5 * PERIOD_MS);
	ck_assert_ptr_nonnull(rc);
	ck_assert_uint_le(rc->at, t_declared + 3 * PERIOD_MS * MS);
	ck_assert_int_eq(rc->via, FT_MSG_SYNC);
	ck_assert_msg(rc->told_by == 5 || rc->told_by == 7, "told_by %u", rc->told_by);
	ck_assert_uint_eq(rc->e.detector, 3);
	ck_assert_uint_eq(rc->e.how, FT_HOW_CONN_LOST);
	ck_assert_uint_gt(total_sent(FT_MSG_SYNC), 0);
	ck_assert_uint_gt(det(6)->stats.received[FT_MSG_SYNC], 0);

	/* The views agree now: no more SYNCs, nothing else learned. */
	advance(2 * PERIOD_MS);
	uint64_t syncs = total_sent(FT_MSG_SYNC);
	advance(1000);
	ck_assert_uint_eq(total_sent(FT_MSG_SYNC), syncs);
	for (uint32_t r = 0; r < n; r++) {
		if (r == 2)
			continue;
		ck_assert_uint_eq(sim.nodes[r].nrecs, 1);
		ck_assert_uint_eq(det(r)->digest, det(3)->digest);
	}
	ck_assert_uint_eq(det(6)->observed, 5);

	/* A SYNC that asks for a reply gets the whole view back when the
	 * receiver knows more, and nothing otherwise. */
	struct ft_msg m = list_msg(FT_MSG_SYNC, 0, NULL, 0);
	m.list.flags = FT_SYNC_REPLY;
	inject(4, &m);
	ck_assert_uint_eq(queued(4, 0, FT_MSG_SYNC), 1);
	ck_assert_uint_eq(queued(FT_RANK_NONE, FT_RANK_NONE, 0), 1);
	const struct qmsg *reply = &sim.q.v[sim.q.head];
	ck_assert_uint_eq(reply->m.list.flags & FT_SYNC_REPLY, 0);
	ck_assert_uint_eq(reply->m.list.count, 1);
	ck_assert_uint_eq(reply->m.list.entries[0].rank, 2);
	ck_assert_uint_eq(reply->m.list.entries[0].event, FT_EV_FAILED);
	deliver_all();
	struct ft_entry known = { .rank = 2, .event = FT_EV_FAILED, .how = FT_HOW_CONN_LOST, .detector = 3 };
	m = list_msg(FT_MSG_SYNC, 0, &known, 1);
	m.list.flags = FT_SYNC_REPLY;
	inject(4, &m);
	m = list_msg(FT_MSG_SYNC, 0, NULL, 0);
	inject(4, &m);
	ck_assert_uint_eq(queued(FT_RANK_NONE, FT_RANK_NONE, 0), 0);
	sim_destroy();
}
END_TEST

START_TEST(test_fail_stop)
{
	const uint32_t n = 8;

	sim_init(n, FT_BCAST_CHORD, false, 0);
	sim_start();
	advance(300);
	sim.nodes[2].paused = true;
	const struct rec *rc = advance_until_learned(3, 2, FT_EV_FAILED, 2 * TIMEOUT_MS);
	ck_assert_ptr_nonnull(rc);
	ck_assert_uint_eq(rc->e.how, FT_HOW_HB_TIMEOUT);
	advance(200);
	for (uint32_t r = 0; r < n; r++)
		if (r != 2)
			ck_assert_uint_eq(count_learned(r, 2, FT_EV_FAILED), 1);
	ck_assert_uint_gt(sim.held.len - sim.held.head, 0);

	uint64_t from_failed = 0;
	for (uint32_t r = 0; r < n; r++)
		from_failed += det(r)->stats.from_failed;
	ck_assert_uint_eq(from_failed, 0);

	/* It runs again: it ticks, then reads what waited for it. */
	resume(2);
	advance(1);
	ck_assert_uint_eq(sim.nodes[2].nexcluded, 1);
	ck_assert_uint_ne(sim.nodes[2].excluded_by, 2);
	ck_assert(live(sim.nodes[2].excluded_by));
	ck_assert_uint_eq(sim.nodes[2].excluded_by, 3);
	ck_assert_uint_eq(sim.nodes[2].excluded_how, FT_HOW_HB_TIMEOUT);
	ck_assert(det(2)->excluded);
	/* The heartbeat it sent on waking was ignored and answered. */
	ck_assert_uint_gt(det(3)->stats.from_failed, 0);

	/* Whatever it sends now is ignored. */
	struct ft_entry lie = { .rank = 1, .event = FT_EV_FAILED, .how = FT_HOW_HB_TIMEOUT, .detector = 2 };
	struct ft_msg m = list_msg(FT_MSG_NOTICE, 2, &lie, 1);
	uint64_t ff4 = det(4)->stats.from_failed;
	inject(4, &m);
	ck_assert_uint_eq(det(4)->stats.from_failed, ff4 + 1);
	ck_assert_uint_eq(queued(4, 2, FT_MSG_EXCLUDED), 1);
	deliver_all();

	advance(1000);
	ck_assert_uint_eq(sim.nodes[2].nexcluded, 1);
	/* It declared no one, and no one learned anything else. */
	ck_assert_uint_eq(sim.nodes[2].nrecs, 0);
	for (uint32_t r = 0; r < n; r++) {
		if (r == 2)
			continue;
		ck_assert_uint_eq(sim.nodes[r].nrecs, 1);
		ck_assert_uint_eq(count_learned(r, 1, FT_EV_FAILED), 0);
		ck_assert_uint_eq(sim.nodes[r].nexcluded, 0);
	}
	ck_assert_uint_eq(det(1)->emit_to, 3);
	ck_assert_uint_eq(det(3)->observed, 1);
	sim_destroy();
}
END_TEST

/* A rank that calls MPI_Abort sends its abort and exits; a peer that
 * sees the death first (its connection closed, its port refuses) still
 * reads the abort after it, learns it and passes it on: the job ends
 * (MPI_Abort left 8 of 20 two-rank jobs running before). Other news in
 * the same notice from the dead rank stays ignored. */
START_TEST(test_abort_after_death)
{
	const uint32_t n = 4;

	sim_init(n, FT_BCAST_CHORD, false, 0);
	sim_start();
	advance(300);
	sim.nodes[0].dead = true;
	ft_det_declare(det(1), 0, FT_HOW_CONN_LOST, sim.now);
	advance(10);
	for (uint32_t r = 1; r < n; r++)
		ck_assert_uint_eq(count_learned(r, 0, FT_EV_FAILED), 1);

	struct ft_entry last[2] = {
		{ .rank = 0, .event = FT_EV_ABORT, .how = 7, .detector = 0 },
		{ .rank = 2, .event = FT_EV_FAILED, .how = FT_HOW_CONN_LOST, .detector = 0 },
	};
	struct ft_msg m = list_msg(FT_MSG_NOTICE, 0, last, 2);
	inject(1, &m);
	const struct rec *rc = find_learned(1, 0, FT_EV_ABORT);
	ck_assert_ptr_nonnull(rc);
	ck_assert_uint_eq(rc->e.how, 7);
	ck_assert_uint_eq(count_learned(1, 2, FT_EV_FAILED), 0);
	/* Passed on: every live rank learns it, once. */
	advance(10);
	for (uint32_t r = 1; r < n; r++)
		ck_assert_uint_eq(count_learned(r, 0, FT_EV_ABORT), 1);
	inject(1, &m);
	ck_assert_uint_eq(count_learned(1, 0, FT_EV_ABORT), 1);
	sim_destroy();
}
END_TEST

START_TEST(test_departures)
{
	const uint32_t n = 6;
	/* Departure order, 60 ms apart. */
	static const uint32_t order[] = { 4, 1, 5, 0, 3, 2 };

	sim_init(n, FT_BCAST_CHORD, false, 0);
	sim_start();
	advance(200);
	for (uint32_t i = 0; i < n; i++) {
		ft_det_depart(det(order[i]), sim.now);
		deliver_all();
		for (uint32_t r = 0; r < n; r++) {
			ck_assert(ft_det_knows_departed(det(r), order[i]));
			ck_assert_uint_eq(count_learned(r, order[i], FT_EV_DEPARTED), 1);
			/* All left means all the others: only the last one
			 * knows it before it departs itself. */
			bool want = i == n - 1 || (i == n - 2 && r == order[n - 1]);
			ck_assert_msg(ft_det_all_left(det(r)) == want, "after %u departed, rank %u", i + 1, r);
		}
		ft_det_depart(det(order[i]), sim.now); /* twice: no more news */
		ck_assert_uint_eq(queued(FT_RANK_NONE, FT_RANK_NONE, 0), 0);
		advance(60);
	}
	advance(10 * TIMEOUT_MS);
	for (uint32_t r = 0; r < n; r++) {
		ck_assert_uint_eq(count_event(r, FT_EV_FAILED), 0);
		ck_assert_uint_eq(count_event(r, FT_EV_DEPARTED), n);
		ck_assert_uint_eq(det(r)->nfailed, 0);
		ck_assert_uint_eq(sim.nodes[r].nexcluded, 0);
		ck_assert(ft_det_all_left(det(r)));
	}
	sim_destroy();

	/* A departed rank that falls silent is not failed; the others'
	 * ring does not change. */
	sim_init(n, FT_BCAST_CHORD, false, 0);
	sim_start();
	advance(200);
	ft_det_depart(det(3), sim.now);
	deliver_all();
	advance(20);
	sim.nodes[3].dead = true;
	advance(10 * TIMEOUT_MS);
	for (uint32_t r = 0; r < n; r++) {
		if (r == 3)
			continue;
		ck_assert_uint_eq(count_event(r, FT_EV_FAILED), 0);
		ck_assert_uint_eq(count_learned(r, 3, FT_EV_DEPARTED), 1);
		ck_assert(!ft_det_knows_failed(det(r), 3));
		ck_assert(!ft_det_all_left(det(r)));
	}
	ck_assert_uint_eq(det(4)->observed, 3);
	sim_destroy();
}
END_TEST

START_TEST(test_exclusion)
{
	const uint32_t n = 6;

	sim_init(n, FT_BCAST_CHORD, false, 0);
	sim_start();
	advance(100);

	/* A NOTICE that says the receiver failed. */
	struct ft_entry me = { .rank = 2, .event = FT_EV_FAILED, .how = FT_HOW_HB_TIMEOUT, .detector = 1 };
	struct ft_msg m = list_msg(FT_MSG_NOTICE, 4, &me, 1);
	inject(2, &m);
	ck_assert_uint_eq(sim.nodes[2].nexcluded, 1);
	ck_assert_uint_eq(sim.nodes[2].excluded_by, 4);
	ck_assert_uint_eq(sim.nodes[2].excluded_how, FT_HOW_HB_TIMEOUT);
	ck_assert_uint_eq(sim.nodes[2].nrecs, 0);
	ck_assert_uint_eq(queued(2, FT_RANK_NONE, 0), 0);
	/* Excluded, it stops: no heartbeats, no reading, no second call. */
	ck_assert_uint_eq(ft_det_tick(det(2), sim.now + 50 * MS), UINT64_MAX);
	inject(2, &m);
	ck_assert_uint_eq(sim.nodes[2].nexcluded, 1);
	sim.nodes[2].dead = true;

	/* An EXCLUDED from a live rank. */
	struct ft_msg ex = { .type = FT_MSG_EXCLUDED, .from = 0 };
	ex.excluded.how = FT_HOW_CONN_LOST;
	ex.excluded.detector = 0;
	inject(5, &ex);
	ck_assert_uint_eq(sim.nodes[5].nexcluded, 1);
	ck_assert_uint_eq(sim.nodes[5].excluded_by, 0);
	ck_assert_uint_eq(sim.nodes[5].excluded_how, FT_HOW_CONN_LOST);
	ck_assert_uint_eq(queued(5, FT_RANK_NONE, 0), 0);
	sim.nodes[5].dead = true;
	deliver_all();
	sim_destroy();

	/* Messages from a rank known failed. */
	sim_init(n, FT_BCAST_CHORD, false, 0);
	sim_start();
	advance(100);
	sim.nodes[1].dead = true;
	ft_det_declare(det(2), 1, FT_HOW_CONN_LOST, sim.now);
	deliver_all();
	ck_assert(ft_det_knows_failed(det(3), 1));
	uint32_t nrecs3 = sim.nodes[3].nrecs;

	struct ft_msg hb = { .type = FT_MSG_HEARTBEAT, .from = 1 };
	hb.hb.seq = 1000;
	hb.hb.nfailed = 3;
	hb.hb.digest = 12345;
	for (int i = 0; i < 3; i++) /* mismatched digests, yet no SYNC */
		inject(3, &hb);
	ck_assert_uint_eq(det(3)->stats.from_failed, 3);
	ck_assert_uint_eq(queued(3, 1, FT_MSG_EXCLUDED), 3);
	ck_assert_uint_eq(queued(3, FT_RANK_NONE, 0), 3);
	for (size_t i = sim.q.head; i < sim.q.len; i++) {
		ck_assert_uint_eq(sim.q.v[i].m.excluded.detector, 3);
		ck_assert_uint_eq(sim.q.v[i].m.excluded.how, FT_HOW_NOTICE);
	}
	deliver_all();

	struct ft_entry news = { .rank = 4, .event = FT_EV_FAILED, .how = FT_HOW_HB_TIMEOUT, .detector = 1 };
	m = list_msg(FT_MSG_NOTICE, 1, &news, 1);
	inject(3, &m);
	m.type = FT_MSG_SYNC;
	m.list.flags = FT_SYNC_REPLY;
	inject(3, &m);
	ck_assert_uint_eq(det(3)->stats.from_failed, 5);
	ck_assert_uint_eq(queued(3, 1, FT_MSG_EXCLUDED), 2);
	ck_assert_uint_eq(queued(3, FT_RANK_NONE, 0), 2);
	ck_assert(!ft_det_knows_failed(det(3), 4));
	ck_assert_uint_eq(sim.nodes[3].nrecs, nrecs3);
	deliver_all();

	/* An EXCLUDED from a failed rank is not obeyed, nor answered. */
	ex.from = 1;
	inject(3, &ex);
	ck_assert_uint_eq(sim.nodes[3].nexcluded, 0);
	ck_assert_uint_eq(det(3)->stats.from_failed, 6);
	ck_assert_uint_eq(queued(FT_RANK_NONE, FT_RANK_NONE, 0), 0);

	advance(500);
	for (uint32_t r = 0; r < n; r++) {
		if (r == 1)
			continue;
		ck_assert_uint_eq(sim.nodes[r].nrecs, 1);
		ck_assert_uint_eq(sim.nodes[r].nexcluded, 0);
	}
	sim_destroy();
}
END_TEST

START_TEST(test_duplicates)
{
	const uint32_t n = 6;

	sim_init(n, FT_BCAST_BMG, false, 0);
	sim_start();
	advance(GRACE_MS / 2);
	sim.nodes[0].dead = true;

	struct ft_entry e[2] = {
		{ .rank = 0, .event = FT_EV_FAILED, .how = FT_HOW_HB_TIMEOUT, .detector = 1 },
		{ .rank = 5, .event = FT_EV_DEPARTED, .detector = 5 },
	};
	struct ft_msg m = list_msg(FT_MSG_NOTICE, 1, e, 1);
	inject(3, &m);
	ck_assert_uint_eq(count_learned(3, 0, FT_EV_FAILED), 1);
	ck_assert_uint_eq(sim.nodes[3].recs[0].told_by, 1);
	ck_assert_int_eq(sim.nodes[3].recs[0].via, FT_MSG_NOTICE);
	uint64_t flooded = det(3)->stats.sent[FT_MSG_NOTICE];
	ck_assert_uint_gt(flooded, 0);
	ck_assert_uint_eq(det(3)->stats.duplicates, 0);
	uint32_t inflight = queued(FT_RANK_NONE, FT_RANK_NONE, 0);

	inject(3, &m);
	ck_assert_uint_eq(count_learned(3, 0, FT_EV_FAILED), 1);
	ck_assert_uint_eq(det(3)->stats.duplicates, 1);
	ck_assert_uint_eq(det(3)->stats.sent[FT_MSG_NOTICE], flooded);
	ck_assert_uint_eq(queued(FT_RANK_NONE, FT_RANK_NONE, 0), inflight);

	/* One known and one new: only the new one is learned and forwarded. */
	m = list_msg(FT_MSG_NOTICE, 4, e, 2);
	inject(3, &m);
	ck_assert_uint_eq(det(3)->stats.duplicates, 2);
	ck_assert_uint_eq(count_learned(3, 0, FT_EV_FAILED), 1);
	ck_assert_uint_eq(count_learned(3, 5, FT_EV_DEPARTED), 1);
	ck_assert_uint_gt(det(3)->stats.sent[FT_MSG_NOTICE], flooded);
	for (size_t i = sim.q.head + inflight; i < sim.q.len; i++) {
		ck_assert_int_eq(sim.q.v[i].m.type, FT_MSG_NOTICE);
		ck_assert_uint_eq(sim.q.v[i].m.list.count, 1);
		ck_assert_uint_eq(sim.q.v[i].m.list.entries[0].rank, 5);
	}
	deliver_all();

	/* The flood itself brings it back to 3 more than once. */
	for (uint32_t r = 1; r < n; r++) {
		ck_assert_uint_eq(count_learned(r, 0, FT_EV_FAILED), 1);
		ck_assert_uint_eq(count_learned(r, 5, FT_EV_DEPARTED), 1);
	}
	uint64_t dups = 0;
	for (uint32_t r = 1; r < n; r++)
		dups += det(r)->stats.duplicates;
	ck_assert_uint_gt(dups, 2);
	/* A SYNC with known news counts too. */
	m = list_msg(FT_MSG_SYNC, 4, e, 2);
	uint64_t d3 = det(3)->stats.duplicates;
	inject(3, &m);
	ck_assert_uint_eq(det(3)->stats.duplicates, d3 + 2);
	ck_assert_uint_eq(sim.nodes[3].nrecs, 2);
	deliver_all();
	sim_destroy();
}
END_TEST

START_TEST(test_shuffled_ring)
{
	const uint32_t n = 8;
	bool identity = true;

	sim_init(n, FT_BCAST_CHORD, true, 7);
	sim_start();
	advance(500);
	for (uint32_t r = 0; r < n; r++) {
		const struct ft_detector *d = det(r);
		ck_assert_uint_eq(d->emit_to, ft_ring_successor(d->ring, r));
		ck_assert_uint_eq(d->observed, ft_ring_predecessor(d->ring, r));
		ck_assert_uint_eq(det(d->emit_to)->observed, r);
		ck_assert_uint_eq(sim.nodes[r].nrecs, 0);
		if (d->emit_to != (r + 1) % n)
			identity = false;
	}
	ck_assert(!identity);

	uint32_t victim = 3, succ = det(3)->emit_to, pred = det(3)->observed;
	sim.nodes[victim].dead = true;
	advance(2 * TIMEOUT_MS);
	const struct rec *rc = find_learned(succ, victim, FT_EV_FAILED);
	ck_assert_ptr_nonnull(rc);
	ck_assert_uint_eq(rc->e.detector, succ);
	for (uint32_t r = 0; r < n; r++)
		if (r != victim)
			ck_assert_uint_eq(count_learned(r, victim, FT_EV_FAILED), 1);
	ck_assert_uint_eq(det(succ)->observed, pred);
	ck_assert_uint_eq(det(pred)->emit_to, succ);
	sim_destroy();
}
END_TEST

/* --- partitions (quorum rounds) ------------------------------------------ */

/* side[r]: which side of a partition rank r is on; drop_across drops
 * every message between the two sides. */
static int side[MAX_NODES];

static bool drop_across(const struct qmsg *qm)
{
	return side[qm->m.from] != side[qm->to];
}

static uint32_t failed_learned(uint32_t r)
{
	return count_event(r, FT_EV_FAILED);
}

/* The partitions of an 8-rank job: 5 | 3, and two even splits, one with
 * rank 0 on side 0, one with it on side 1. */
static const int partitions[][8] = {
	{ 0, 0, 1, 0, 0, 1, 0, 1 },
	{ 0, 0, 1, 1, 0, 1, 0, 1 },
	{ 1, 0, 0, 1, 1, 0, 1, 0 },
};

/* Cut the job in two: the winning side (strict majority, or half holding
 * rank 0) declares exactly the other failed, by heartbeat timeout, within
 * a few timeouts; every rank of the losing side reports lost_quorum with
 * what it reached, and declares no one. */
START_TEST(test_partition)
{
	const uint32_t n = 8;
	uint32_t nwin = 0;

	memcpy(side, partitions[_i], sizeof partitions[_i]);
	int win = 0;
	for (uint32_t r = 0; r < n; r++)
		nwin += side[r] == 0;
	if (nwin * 2 < n || (nwin * 2 == n && side[0] != 0)) {
		win = 1;
		nwin = n - nwin;
	}
	sim_init(n, FT_BCAST_CHORD, true, 11);
	sim_start();
	advance(300);
	uint64_t t0 = sim.now;
	sim.drop = drop_across;
	advance(6 * TIMEOUT_MS);
	for (uint32_t r = 0; r < n; r++) {
		if (side[r] == win) {
			ck_assert_uint_eq(sim.nodes[r].nlost, 0);
			ck_assert_uint_eq(sim.nodes[r].nexcluded, 0);
			ck_assert_uint_eq(failed_learned(r), n - nwin);
			for (uint32_t x = 0; x < n; x++) {
				if (side[x] == win)
					continue;
				const struct rec *rc = find_learned(r, x, FT_EV_FAILED);
				ck_assert_ptr_nonnull(rc);
				ck_assert_uint_le(rc->at, t0 + 4 * (TIMEOUT_MS + 2 * PERIOD_MS) * MS);
			}
		} else {
			/* Fail-stop on the losing side, and never a second job. */
			ck_assert_uint_eq(sim.nodes[r].nlost, 1);
			ck_assert_uint_eq(failed_learned(r), 0);
			ck_assert_uint_eq(sim.nodes[r].lost_members, n);
			ck_assert_uint_le(sim.nodes[r].lost_reached, n - nwin);
			ck_assert_uint_eq(sim.nodes[r].lost_lowest, 0);
			ck_assert_uint_le(sim.nodes[r].lost_at, t0 + 5 * TIMEOUT_MS * MS);
		}
	}
	/* A round costs one PROBE per member and the answers. */
	uint64_t rounds = 0;
	for (uint32_t r = 0; r < n; r++)
		rounds += det(r)->stats.quorum_rounds;
	ck_assert_uint_gt(rounds, 0);
	ck_assert_uint_le(total_sent(FT_MSG_PROBE), rounds * 2 * n);
	sim_destroy();
}
END_TEST

/* Heal the cut once the majority has declared the minority failed, before
 * the minority's rounds end: the minority ranks leave (lost_quorum, or
 * EXCLUDED from a majority rank that hears them again), none comes back,
 * and the majority is not disturbed. */
START_TEST(test_partition_heals)
{
	const uint32_t n = 8;

	memcpy(side, partitions[0], sizeof partitions[0]);
	sim_init(n, FT_BCAST_CHORD, true, 5);
	sim_start();
	advance(300);
	sim.drop = drop_across;
	for (int i = 0; i < 10 * TIMEOUT_MS; i++) {
		bool all = true;
		for (uint32_t r = 0; r < n && all; r++)
			all = side[r] == 1 || failed_learned(r) == 3;
		if (all)
			break;
		advance(1);
	}
	sim.drop = NULL;
	advance(10 * TIMEOUT_MS);
	for (uint32_t r = 0; r < n; r++) {
		if (side[r] == 0) {
			ck_assert_uint_eq(failed_learned(r), 3);
			ck_assert_uint_eq(count_learned(r, 2, FT_EV_FAILED), 1);
			ck_assert_uint_eq(count_learned(r, 5, FT_EV_FAILED), 1);
			ck_assert_uint_eq(count_learned(r, 7, FT_EV_FAILED), 1);
			ck_assert_uint_eq(sim.nodes[r].nlost + sim.nodes[r].nexcluded, 0);
		} else {
			ck_assert_uint_eq(sim.nodes[r].nlost + sim.nodes[r].nexcluded, 1);
			ck_assert(det(r)->excluded);
			ck_assert_uint_eq(failed_learned(r), 0);
		}
	}
	sim_destroy();
}
END_TEST

/* Half the job is proven dead (refused connections, rank 0 among them):
 * that needs no majority, and the survivors are the whole membership
 * afterwards, so one of them paused is declared by the other three. */
START_TEST(test_proven_deaths_shrink_membership)
{
	const uint32_t n = 8, dead[] = { 0, 1, 2, 3 };

	sim_init(n, FT_BCAST_CHORD, false, 0);
	sim_start();
	advance(300);
	for (size_t i = 0; i < 4; i++) {
		sim.nodes[dead[i]].dead = true;
		ft_det_declare(det(4), dead[i], FT_HOW_CONN_LOST, sim.now);
	}
	advance(50);
	for (uint32_t r = 4; r < n; r++)
		ck_assert_uint_eq(failed_learned(r), 4);
	sim.nodes[6].paused = true;
	ck_assert_ptr_nonnull(advance_until_learned(7, 6, FT_EV_FAILED, 2 * TIMEOUT_MS));
	advance(50);
	for (uint32_t r = 4; r < n; r++) {
		if (r == 6)
			continue;
		ck_assert_uint_eq(failed_learned(r), 5);
		ck_assert_uint_eq(sim.nodes[r].nlost, 0);
	}
	sim_destroy();
}
END_TEST

/* On the losing side of an even split, rank 7 answers a round and then
 * dies (a refused connection, which needs no round): it must leave the
 * count of those reached with the membership, or the 3 left would make 4
 * of 7 and win. */
START_TEST(test_answer_then_death)
{
	const uint32_t n = 8;
	const int halves[8] = { 0, 0, 0, 0, 1, 1, 1, 1 };

	memcpy(side, halves, sizeof halves);
	sim_init(n, FT_BCAST_CHORD, true, 9);
	sim_start();
	advance(300);
	sim.drop = drop_across;
	uint32_t r = FT_RANK_NONE;
	for (int i = 0; i < 3 * TIMEOUT_MS && r == FT_RANK_NONE; i++) {
		advance(1);
		for (uint32_t x = 4; x < 7; x++)
			if (det(x)->q.active && det(x)->q.nanswered == 3)
				r = x;
	}
	ck_assert_uint_ne(r, FT_RANK_NONE);
	sim.nodes[7].dead = true;
	for (uint32_t x = 4; x < 7; x++)
		ft_det_declare(det(x), 7, FT_HOW_CONN_LOST, sim.now);
	advance(6 * TIMEOUT_MS);
	for (uint32_t x = 4; x < 7; x++) {
		ck_assert_uint_eq(sim.nodes[x].nlost, 1);
		for (uint32_t y = 0; y < 4; y++)
			ck_assert_uint_eq(count_learned(x, y, FT_EV_FAILED), 0);
	}
	for (uint32_t x = 0; x < 4; x++)
		ck_assert_uint_eq(sim.nodes[x].nlost, 0);
	sim_destroy();
}
END_TEST

/* Two ranks: the one that holds rank 0 wins; rank 1 alone cannot tell a
 * stopped rank 0 from a cut, and leaves. */
START_TEST(test_two_ranks)
{
	sim_init(2, FT_BCAST_CHORD, false, 0);
	sim_start();
	advance(300);
	sim.nodes[1].paused = true;
	ck_assert_ptr_nonnull(advance_until_learned(0, 1, FT_EV_FAILED, 2 * TIMEOUT_MS));
	ck_assert_uint_eq(sim.nodes[0].nlost, 0);

	sim_init(2, FT_BCAST_CHORD, false, 0);
	sim_start();
	advance(300);
	sim.nodes[0].paused = true;
	advance(3 * TIMEOUT_MS);
	ck_assert_uint_eq(sim.nodes[1].nlost, 1);
	ck_assert_uint_eq(sim.nodes[1].lost_reached, 1);
	ck_assert_uint_eq(sim.nodes[1].lost_members, 2);
	ck_assert_uint_eq(failed_learned(1), 0);
	sim_destroy();
}
END_TEST

/* A suspect heard again before the verdict is dropped, not declared: side
 * 1 (3 ranks) stops hearing side 0 for a while (one way only: side 0 hears
 * everything), so its rounds cannot win; when the heartbeats come back
 * before a round's deadline, the suspects are dropped, the rounds end, and
 * no one is declared or leaves. */
static bool drop_0_to_1(const struct qmsg *qm)
{
	return side[qm->m.from] == 0 && side[qm->to] == 1;
}

START_TEST(test_short_cut_forgotten)
{
	const uint32_t n = 8;

	memcpy(side, partitions[0], sizeof partitions[0]);
	sim_init(n, FT_BCAST_CHORD, true, 3);
	sim_start();
	advance(300);
	sim.drop = drop_0_to_1;
	/* Until the first round starts; then heal at once. */
	uint64_t rounds = 0;
	for (int i = 0; i < 3 * TIMEOUT_MS && rounds == 0; i++) {
		advance(1);
		for (uint32_t r = 0; r < n; r++)
			rounds += det(r)->stats.quorum_rounds;
	}
	ck_assert_uint_gt(rounds, 0);
	sim.drop = NULL;
	advance(5 * TIMEOUT_MS);
	uint64_t cleared = 0;
	for (uint32_t r = 0; r < n; r++) {
		ck_assert_uint_eq(failed_learned(r), 0);
		ck_assert_uint_eq(sim.nodes[r].nlost + sim.nodes[r].nexcluded, 0);
		ck_assert(!det(r)->q.active);
		cleared += det(r)->stats.suspects_cleared;
	}
	ck_assert_uint_gt(cleared, 0);
	sim_destroy();
}
END_TEST

/* Without quorum rounds (FTSHIM_PARTITION=off) both sides go on, each
 * declaring the other failed: the two jobs that the rounds prevent. */
START_TEST(test_partition_without_quorum)
{
	const uint32_t n = 8;

	sim_quorum = false;
	memcpy(side, partitions[0], sizeof partitions[0]);
	sim_init(n, FT_BCAST_CHORD, true, 11);
	sim_start();
	advance(300);
	sim.drop = drop_across;
	advance(10 * TIMEOUT_MS);
	for (uint32_t r = 0; r < n; r++) {
		ck_assert_uint_eq(sim.nodes[r].nlost, 0);
		ck_assert_uint_eq(failed_learned(r), side[r] == 0 ? 3 : 5);
		ck_assert_uint_eq(det(r)->stats.quorum_rounds, 0);
	}
	sim_destroy();
}
END_TEST

/* --- re-admission ---------------------------------------------------------- */

/* Pause rank p past the timeout until every other live rank knows it
 * failed (by event), then resume it and let it run ms. */
static void pause_resume(uint32_t p, uint16_t event, uint64_t ms)
{
	sim.nodes[p].paused = true;
	for (uint32_t k = 0; k < 20 * TIMEOUT_MS; k++) {
		uint32_t knowing = 0, others = 0;
		for (uint32_t r = 0; r < sim.n; r++) {
			if (r == p || !live(r))
				continue;
			others++;
			knowing += count_learned(r, p, event) == 1;
		}
		if (knowing == others)
			break;
		advance(1);
	}
	for (uint32_t r = 0; r < sim.n; r++)
		if (r != p && live(r))
			ck_assert_uint_eq(count_learned(r, p, event), 1);
	advance(50);
	resume(p);
	advance(ms);
}

static void check_views_agree(void)
{
	for (uint32_t r = 1; r < sim.n; r++) {
		if (!live(r) || !live(0))
			continue;
		ck_assert_uint_eq(det(r)->digest, det(0)->digest);
		ck_assert_uint_eq(det(r)->nfailed, det(0)->nfailed);
	}
}

START_TEST(test_readmission)
{
	const uint32_t n = 8;

	sim_init(n, FT_BCAST_CHORD, false, 0);
	sim_start();
	advance(300);
	pause_resume(2, FT_EV_FAILED, 100);
	/* Told it failed, it waited instead of leaving, and is back. */
	ck_assert_uint_eq(sim.nodes[2].nexcluded, 0);
	ck_assert_uint_eq(sim.nodes[2].ndeclared, 1);
	ck_assert_uint_eq(count_learned(2, 2, FT_EV_READMITTED), 1);
	ck_assert(!det(2)->awaiting_readmission);
	for (uint32_t r = 0; r < n; r++) {
		if (r != 2) {
			ck_assert_uint_eq(count_learned(r, 2, FT_EV_READMITTED), 1);
			ck_assert(!ft_det_knows_failed(det(r), 2));
			ck_assert_uint_eq(det(r)->nleft, 0);
		}
		ck_assert_uint_eq(det(r)->nfailed, 0);
	}
	/* Everyone learned the failure before the re-admission. */
	for (uint32_t r = 0; r < n; r++) {
		if (r == 2)
			continue;
		const struct rec *f = find_learned(r, 2, FT_EV_FAILED), *b = find_learned(r, 2, FT_EV_READMITTED);
		ck_assert(f && b && f < b);
	}
	/* Re-admitted by the rank its first heartbeat went to. */
	ck_assert_uint_eq(det(3)->stats.readmitted, 1);
	/* The ring is whole again: 2 watches 1, 3 watches 2. */
	ck_assert_uint_eq(det(1)->emit_to, 2);
	ck_assert_uint_eq(det(2)->observed, 1);
	ck_assert_uint_eq(det(2)->emit_to, 3);
	ck_assert_uint_eq(det(3)->observed, 2);
	check_views_agree();
	/* And it stays so: nobody is declared failed any more. */
	uint32_t before[MAX_NODES];
	for (uint32_t r = 0; r < n; r++)
		before[r] = sim.nodes[r].nrecs;
	advance(2000);
	for (uint32_t r = 0; r < n; r++) {
		ck_assert_uint_eq(sim.nodes[r].nrecs, before[r]);
		ck_assert_uint_eq(sim.nodes[r].nexcluded, 0);
		ck_assert_uint_eq(sim.nodes[r].nlost, 0);
	}
	check_views_agree();
	sim_destroy();
}
END_TEST

START_TEST(test_readmission_once)
{
	const uint32_t n = 6;

	sim_init(n, FT_BCAST_CHORD, false, 0);
	sim_start();
	advance(300);
	pause_resume(4, FT_EV_FAILED, 100);
	ck_assert_uint_eq(count_learned(0, 4, FT_EV_READMITTED), 1);
	/* A second silence is final. */
	pause_resume(4, FT_EV_FAILED_AGAIN, 100);
	ck_assert_uint_eq(sim.nodes[4].nexcluded, 1);
	for (uint32_t r = 0; r < n; r++) {
		if (r == 4)
			continue;
		ck_assert(ft_det_knows_failed(det(r), 4));
		ck_assert_uint_eq(count_learned(r, 4, FT_EV_READMITTED), 1);
		ck_assert_uint_eq(det(r)->nfailed, 1);
	}
	ck_assert_uint_eq(det(3)->emit_to, 5);
	ck_assert_uint_eq(det(5)->observed, 3);
	advance(1000);
	for (uint32_t r = 0; r < n; r++)
		if (r != 4)
			ck_assert_uint_eq(sim.nodes[r].nexcluded, 0);
	sim_destroy();
}
END_TEST

/* A re-admission that arrives without the failure it undoes (no sender
 * does that) is dropped; with it, both are learned in order. */
START_TEST(test_readmission_needs_history)
{
	sim_init(4, FT_BCAST_CHORD, false, 0);
	sim_start();
	advance(300);
	struct ft_entry failed = { .rank = 1, .event = FT_EV_FAILED, .how = FT_HOW_HB_TIMEOUT, .detector = 2 };
	struct ft_entry back = { .rank = 1, .event = FT_EV_READMITTED, .detector = 2 };
	struct ft_msg m = list_msg(FT_MSG_NOTICE, 2, &back, 1);
	inject(3, &m);
	ck_assert_uint_eq(count_learned(3, 1, FT_EV_READMITTED), 0);
	ck_assert(!ft_det_knows_failed(det(3), 1));
	struct ft_entry both[2] = { failed, back };
	m = list_msg(FT_MSG_NOTICE, 2, both, 2);
	inject(3, &m);
	ck_assert_uint_eq(count_learned(3, 1, FT_EV_FAILED), 1);
	ck_assert_uint_eq(count_learned(3, 1, FT_EV_READMITTED), 1);
	ck_assert(!ft_det_knows_failed(det(3), 1));
	ck_assert_uint_eq(det(3)->nfailed, 0);
	/* What 3 floods carries the history too. */
	for (size_t i = sim.q.head; i < sim.q.len; i++) {
		const struct qmsg *qm = &sim.q.v[i];
		if (qm->m.from != 3 || qm->m.type != FT_MSG_NOTICE)
			continue;
		ck_assert_uint_eq(qm->m.list.count, 2);
		ck_assert_uint_eq(qm->m.list.entries[0].event, FT_EV_FAILED);
		ck_assert_uint_eq(qm->m.list.entries[1].event, FT_EV_READMITTED);
	}
	sim_destroy();
}
END_TEST

START_TEST(test_proven_death_not_readmitted)
{
	const uint32_t n = 5;

	sim_init(n, FT_BCAST_CHORD, false, 0);
	sim_start();
	advance(300);
	/* A refused connection proves death: even if the rank then speaks
	 * (a stale frame), it stays failed and is told so. */
	sim.nodes[1].paused = true;
	ft_det_declare(det(2), 1, FT_HOW_CONN_LOST, sim.now);
	advance(50);
	for (uint32_t r = 0; r < n; r++)
		if (r != 1)
			ck_assert(ft_det_knows_failed(det(r), 1));
	resume(1);
	advance(50);
	ck_assert_uint_eq(sim.nodes[1].nexcluded, 1);
	for (uint32_t r = 0; r < n; r++) {
		ck_assert_uint_eq(count_learned(r, 1, FT_EV_READMITTED), 0);
		ck_assert_uint_eq(det(r)->stats.readmitted, 0);
	}
	sim_destroy();
}
END_TEST

/* --- joining (spawned processes) ------------------------------------------ */

/* News that rank joined; its endpoint (address in detector, port in how)
 * is made of values that are no rank of the job. */
static struct ft_entry joined_entry(uint32_t rank)
{
	return (struct ft_entry){ .rank = rank, .event = FT_EV_JOINED, .how = (uint16_t)(0x4000 + rank),
				  .detector = 0x0a000100u + rank, .at_ns = UINT64_C(0x1234) + rank };
}

/* The job of these cases: capacity 8, ranks 0..3 members from the start. */
#define CAP 8u
#define MEMBERS 4u

static void start_job(uint64_t ms)
{
	sim_init_joined(CAP, MEMBERS, FT_BCAST_CHORD, false, 0);
	sim_start();
	advance(ms);
}

/* Rank r's detector is created with the view of parent (a copy, scribbled
 * over once it is taken in), as a spawned process's; it runs from
 * ft_det_start on. */
static void take_view(uint32_t r, uint32_t parent)
{
	uint32_t nknown = det(parent)->nnews;
	struct ft_entry *known = malloc((nknown ? nknown : 1) * sizeof *known);

	ck_assert_ptr_nonnull(known);
	memcpy(known, det(parent)->news, nknown * sizeof *known);
	ft_det_destroy(det(r));
	node_init(r, known, nknown);
	memset(known, 0xa5, nknown * sizeof *known);
	free(known);
	sim.nodes[r].dead = false;
}

/* parent spawns rank r: it learns that r joined (ft_det_join), and r
 * starts with its view. */
static void spawn(uint32_t r, uint32_t parent)
{
	struct ft_entry j = joined_entry(r);

	ft_det_join(det(parent), &j, sim.now);
	take_view(r, parent);
	ft_det_start(det(r), sim.now);
}

/* Nothing was sent to a rank slot at or above first. */
static void assert_nothing_sent_from(uint32_t first)
{
	for (uint32_t r = 0; r < sim.n; r++)
		for (uint32_t x = first; x < sim.n; x++)
			for (int t = 1; t < FT_MSG_TYPE_END; t++)
				ck_assert_msg(sim.sent_to[r][x][t] == 0, "%u sent type %d to %u", r, t, x);
}

/* A job of capacity 8 with 4 members: the ring is theirs alone, the empty
 * slots are never sent to nor declared failed, and the members are the 4. */
START_TEST(test_join_ring_over_members)
{

	start_job(2000);
	for (uint32_t r = 0; r < MEMBERS; r++) {
		const struct ft_detector *d = det(r);
		ck_assert_uint_eq(sim.nodes[r].nrecs, 0);
		ck_assert_uint_eq(sim.nodes[r].nlost + sim.nodes[r].nexcluded, 0);
		ck_assert_uint_eq(d->observed, (r + MEMBERS - 1) % MEMBERS);
		ck_assert_uint_eq(d->emit_to, (r + 1) % MEMBERS);
		ck_assert_uint_ge(d->stats.sent[FT_MSG_HEARTBEAT], 199);
		ck_assert_uint_eq(d->nfailed, 0);
		ck_assert_uint_eq(d->njoined, MEMBERS);
		ck_assert(!ft_det_all_left(d));
		for (uint32_t x = 0; x < CAP; x++)
			ck_assert(ft_det_is_joined(d, x) == (x < MEMBERS));
	}
	assert_nothing_sent_from(MEMBERS);
	sim_destroy();
}
END_TEST

/* Rank 4 is spawned by rank 0, which learns it outside the control plane
 * (ft_det_join): every member learns it once, with its endpoint, before
 * anyone sends to it (sim_send checks that); the ring takes it in between
 * 3 and 0; it learns nothing new itself, and all views agree. A JOINED for
 * a rank that was a member from the start is news that changes nothing
 * but is reported once (for its endpoint). */
START_TEST(test_join_spreads)
{
	struct ft_entry j4 = joined_entry(4);

	start_job(200);
	spawn(4, 0);
	ck_assert(ft_det_is_joined(det(0), 4));
	ck_assert_uint_eq(det(0)->observed, 4);
	uint64_t notices = det(0)->stats.sent[FT_MSG_NOTICE];
	ck_assert_uint_gt(notices, 0);
	ft_det_join(det(0), &j4, sim.now); /* known: no second flood */
	ck_assert_uint_eq(det(0)->stats.sent[FT_MSG_NOTICE], notices);
	advance(50);
	for (uint32_t r = 0; r <= MEMBERS; r++) {
		const struct ft_detector *d = det(r);
		ck_assert(ft_det_is_joined(d, 4));
		ck_assert_uint_eq(d->njoined, MEMBERS + 1);
		ck_assert_uint_eq(d->digest, det(0)->digest);
		if (r == 4) {
			ck_assert_uint_eq(sim.nodes[r].nrecs, 0);
			continue;
		}
		ck_assert_uint_eq(sim.nodes[r].nrecs, 1);
		const struct rec *rc = find_learned(r, 4, FT_EV_JOINED);
		ck_assert_ptr_nonnull(rc);
		ck_assert_uint_eq(rc->e.how, j4.how);
		ck_assert_uint_eq(rc->e.detector, j4.detector);
		ck_assert_uint_eq(rc->e.at_ns, j4.at_ns);
		if (r == 0)
			ck_assert_uint_eq(rc->told_by, 0);
		else
			ck_assert(rc->told_by != r && rc->told_by < MEMBERS);
	}
	ck_assert_uint_eq(det(3)->emit_to, 4);
	ck_assert_uint_eq(det(4)->observed, 3);
	ck_assert_uint_eq(det(4)->emit_to, 0);
	ck_assert_uint_eq(det(0)->observed, 4);

	/* Rank 2 was there from the start: reported once (for its endpoint),
	 * and nothing else changes. */
	struct ft_entry j2 = joined_entry(2);
	ft_det_join(det(1), &j2, sim.now);
	advance(1000);
	for (uint32_t r = 0; r <= MEMBERS; r++) {
		ck_assert_uint_eq(count_learned(r, 2, FT_EV_JOINED), r == 2 ? 0 : 1);
		ck_assert_uint_eq(count_event(r, FT_EV_FAILED), 0);
		ck_assert_uint_eq(det(r)->njoined, MEMBERS + 1);
		ck_assert_uint_eq(det(r)->nnews, 2);
		ck_assert_uint_eq(det(r)->digest, det(1)->digest);
		ck_assert_uint_eq(det(det(r)->emit_to)->observed, r);
	}
	ck_assert_uint_gt(sim.sent_to[3][4][FT_MSG_HEARTBEAT], 90);
	assert_nothing_sent_from(MEMBERS + 1);
	sim_destroy();
}
END_TEST

/* A rank joins and never speaks (it died as it started): its new observer
 * gives it a whole timeout from the join, not from when it last heard its
 * old predecessor, then declares it like any member; the ring closes over
 * it. Members count it: the others may leave once it and they are gone. */
START_TEST(test_join_then_silent)
{
	struct ft_entry j4 = joined_entry(4);

	start_job(300);
	ft_det_join(det(2), &j4, sim.now);
	deliver_all();
	uint64_t t_join = sim.now;
	ck_assert_uint_eq(det(0)->observed, 4);
	ck_assert_uint_eq(det(3)->emit_to, 4);
	const struct rec *rc = advance_until_learned(0, 4, FT_EV_FAILED, 3 * TIMEOUT_MS);
	ck_assert_ptr_nonnull(rc);
	ck_assert_uint_ge(rc->at, t_join + TIMEOUT_MS * MS);
	ck_assert_uint_le(rc->at, t_join + (TIMEOUT_MS + 2) * MS);
	ck_assert_uint_eq(rc->e.detector, 0);
	ck_assert_uint_eq(rc->e.how, FT_HOW_HB_TIMEOUT);
	advance(100);
	for (uint32_t r = 0; r < MEMBERS; r++) {
		ck_assert_uint_eq(count_learned(r, 4, FT_EV_JOINED), 1);
		ck_assert_uint_eq(count_learned(r, 4, FT_EV_FAILED), 1);
		ck_assert_uint_eq(sim.nodes[r].nrecs, 2);
		ck_assert_uint_eq(det(r)->nfailed, 1);
		ck_assert_uint_eq(det(r)->njoined, MEMBERS + 1);
	}
	ck_assert_uint_eq(det(0)->observed, 3);
	ck_assert_uint_eq(det(3)->emit_to, 0);

	/* 0 may leave once 1, 2 and 3 have departed too, not before. */
	for (uint32_t r = 1; r < MEMBERS; r++) {
		ck_assert(!ft_det_all_left(det(0)));
		ft_det_depart(det(r), sim.now);
		deliver_all();
	}
	ck_assert(ft_det_all_left(det(0)));
	ck_assert(!ft_det_all_left(det(1)));
	assert_nothing_sent_from(MEMBERS + 1);
	sim_destroy();
}
END_TEST

/* Rank 4 joins and runs: the starting ranks may leave only once it has
 * departed too. */
START_TEST(test_join_all_left)
{
	start_job(100);
	for (uint32_t r = 1; r < MEMBERS; r++) {
		ck_assert(!ft_det_all_left(det(0)));
		ft_det_depart(det(r), sim.now);
		deliver_all();
	}
	ck_assert(ft_det_all_left(det(0)));
	sim_destroy();

	start_job(100);
	spawn(4, 1);
	advance(100);
	for (uint32_t r = 1; r <= MEMBERS; r++) {
		ck_assert(!ft_det_all_left(det(0)));
		ft_det_depart(det(r), sim.now);
		deliver_all();
	}
	ck_assert(ft_det_all_left(det(0)));
	ck_assert_uint_eq(count_event(0, FT_EV_FAILED), 0);
	sim_destroy();
}
END_TEST

/* The simulator's detectors share one read-only ring over every slot:
 * they skip the slots not joined as they skip the ranks known failed,
 * for heartbeats and floods alike. */
START_TEST(test_join_shared_ring)
{
	struct ft_ring ring;

	ck_assert_int_eq(ft_ring_init(&ring, CAP, true, 3), 0);
	sim_init_joined(CAP, MEMBERS, FT_BCAST_BMG, true, 3);
	sim.shared_ring = &ring;
	for (uint32_t r = 0; r < CAP; r++) {
		ft_det_destroy(det(r));
		node_init(r, NULL, 0);
	}
	sim_start();
	advance(300);
	spawn(5, 1);
	advance(300);
	for (uint32_t r = 0; r <= 5; r++) {
		if (r == 4)
			continue;
		ck_assert_uint_eq(det(det(r)->emit_to)->observed, r);
		ck_assert(ft_det_is_joined(det(r), 5));
	}
	uint32_t victim = det(5)->observed;
	sim.nodes[victim].dead = true;
	advance(3 * TIMEOUT_MS);
	for (uint32_t r = 0; r <= 5; r++) {
		if (r == 4 || r == victim)
			continue;
		ck_assert_uint_eq(count_learned(r, victim, FT_EV_FAILED), 1);
		ck_assert_uint_eq(count_event(r, FT_EV_FAILED), 1);
		ck_assert_uint_eq(det(det(r)->emit_to)->observed, r);
	}
	ck_assert_uint_eq(ring.nin, CAP);
	assert_nothing_sent_from(6);
	for (uint32_t r = 0; r < CAP; r++)
		ck_assert_uint_eq(sim.sent_to[r][4][FT_MSG_NOTICE] + sim.sent_to[r][4][FT_MSG_HEARTBEAT], 0);
	sim_destroy();
	ft_ring_destroy(&ring);
}
END_TEST

/* Quorum rounds count members only: in a job of capacity 8 with 4
 * members, 3 of them make a majority over the fourth, and the empty slots
 * are not probed. */
START_TEST(test_join_quorum_members)
{

	start_job(300);
	sim.nodes[3].paused = true;
	const struct rec *rc = advance_until_learned(0, 3, FT_EV_FAILED, 3 * TIMEOUT_MS);
	ck_assert_ptr_nonnull(rc);
	ck_assert_uint_gt(det(0)->stats.quorum_rounds, 0);
	advance(50);
	for (uint32_t r = 0; r < 3; r++) {
		ck_assert_uint_eq(sim.nodes[r].nlost + sim.nodes[r].nexcluded, 0);
		ck_assert_uint_eq(count_learned(r, 3, FT_EV_FAILED), 1);
	}
	assert_nothing_sent_from(MEMBERS);
	sim_destroy();
}
END_TEST

/* The lowest member breaks an even split, and an empty slot is none:
 * members 0..3, 5 and 6 (slot 4 never joined); 0..3 die (refused
 * connections); 5 and 6 are left, and 5, the lowest, alone declares a
 * stopped 6. */
START_TEST(test_join_lowest_member)
{
	start_job(100);
	spawn(5, 0);
	spawn(6, 0);
	advance(200);
	ck_assert(ft_det_is_joined(det(5), 6));
	for (uint32_t r = 0; r < MEMBERS; r++) {
		sim.nodes[r].dead = true;
		ft_det_declare(det(5), r, FT_HOW_CONN_LOST, sim.now);
	}
	advance(50);
	ck_assert_uint_eq(det(6)->nfailed, MEMBERS);
	ck_assert_uint_eq(det(5)->observed, 6);
	sim.nodes[6].paused = true;
	ck_assert_ptr_nonnull(advance_until_learned(5, 6, FT_EV_FAILED, 3 * TIMEOUT_MS));
	ck_assert_uint_eq(sim.nodes[5].nlost + sim.nodes[5].nexcluded, 0);
	ck_assert_uint_eq(det(5)->nfailed, MEMBERS + 1);
	ck_assert(!ft_det_is_joined(det(5), 4));
	assert_nothing_sent_from(7);
	sim_destroy();
}
END_TEST

/* What a rank slot not joined sends is dropped, and news about it too
 * until its JOINED comes; whoever passes on later news about a rank that
 * joined sends its JOINED first. */
START_TEST(test_join_unjoined_ignored)
{

	start_job(100);
	uint64_t digest = det(1)->digest;

	struct ft_msg hb = { .type = FT_MSG_HEARTBEAT, .from = 6 };
	hb.hb.seq = 1;
	hb.hb.digest = 99;
	for (int i = 0; i < 3; i++)
		inject(1, &hb);
	struct ft_entry lie = { .rank = 2, .event = FT_EV_FAILED, .how = FT_HOW_HB_TIMEOUT, .detector = 6 };
	struct ft_msg msg = list_msg(FT_MSG_NOTICE, 6, &lie, 1);
	inject(1, &msg);
	struct ft_msg probe = { .type = FT_MSG_PROBE, .from = 6 };
	inject(1, &probe);
	ck_assert_uint_eq(det(1)->stats.from_unjoined, 5);
	ck_assert(!ft_det_knows_failed(det(1), 2));
	ck_assert_uint_eq(queued(FT_RANK_NONE, FT_RANK_NONE, 0), 0);

	/* From a member, about a slot not joined. */
	struct ft_entry about6 = { .rank = 6, .event = FT_EV_FAILED, .how = FT_HOW_HB_TIMEOUT, .detector = 0 };
	msg = list_msg(FT_MSG_NOTICE, 0, &about6, 1);
	inject(1, &msg);
	ft_det_declare(det(1), 6, FT_HOW_CONN_LOST, sim.now);
	ck_assert(!ft_det_connection_lost(det(1), 6, sim.now));
	ck_assert(!ft_det_knows_failed(det(1), 6));
	ck_assert_uint_eq(det(1)->digest, digest);
	ck_assert_uint_eq(det(1)->nfailed, 0);
	ck_assert_uint_eq(sim.nodes[1].nrecs, 0);
	ck_assert_uint_eq(queued(FT_RANK_NONE, FT_RANK_NONE, 0), 0);

	/* Once it joined it is heard. */
	struct ft_entry j6 = joined_entry(6);
	msg = list_msg(FT_MSG_NOTICE, 0, &j6, 1);
	inject(1, &msg);
	ck_assert_uint_eq(count_learned(1, 6, FT_EV_JOINED), 1);
	deliver_all();
	uint64_t unjoined = det(1)->stats.from_unjoined;
	sim.nodes[6].dead = true;
	inject(1, &hb);
	ck_assert_uint_eq(det(1)->stats.from_unjoined, unjoined);

	/* Its failure goes out after its JOINED. */
	ft_det_declare(det(1), 6, FT_HOW_CONN_LOST, sim.now);
	ck_assert_uint_gt(queued(1, FT_RANK_NONE, FT_MSG_NOTICE), 0);
	for (size_t i = sim.q.head; i < sim.q.len; i++) {
		const struct qmsg *qm = &sim.q.v[i];
		if (qm->m.from != 1 || qm->m.type != FT_MSG_NOTICE)
			continue;
		ck_assert_uint_eq(qm->m.list.count, 2);
		ck_assert_uint_eq(qm->m.list.entries[0].rank, 6);
		ck_assert_uint_eq(qm->m.list.entries[0].event, FT_EV_JOINED);
		ck_assert_uint_eq(qm->m.list.entries[1].event, FT_EV_FAILED);
	}
	advance(50);
	for (uint32_t r = 0; r < MEMBERS; r++)
		ck_assert_uint_eq(count_learned(r, 6, FT_EV_FAILED), 1);
	sim_destroy();
}
END_TEST

/* A spawned process starts with its parent's view (cfg.known): it holds
 * what the parent learned, in its digest and counts and ring, without a
 * report of any of it and without sending anything; it then runs with the
 * others as if it had learned it all. */
START_TEST(test_join_known_view)
{
	struct ft_entry j5 = joined_entry(5);

	start_job(100);
	spawn(4, 0);
	advance(100);
	sim.nodes[2].dead = true;
	ft_det_declare(det(3), 2, FT_HOW_CONN_LOST, sim.now);
	ft_det_depart(det(1), sim.now);
	advance(100);
	ft_det_join(det(0), &j5, sim.now);
	deliver_all();

	uint32_t queued_before = queued(FT_RANK_NONE, FT_RANK_NONE, 0);
	take_view(5, 0);
	const struct ft_detector *c = det(5), *p = det(0);
	ck_assert_uint_eq(queued(FT_RANK_NONE, FT_RANK_NONE, 0), queued_before);
	ck_assert_uint_eq(sim.nodes[5].nrecs, 0);
	ck_assert_uint_eq(c->nnews, 4);
	ck_assert_uint_eq(c->digest, p->digest);
	ck_assert_uint_eq(c->nfailed, 1);
	ck_assert_uint_eq(c->ndeparted, 1);
	ck_assert_uint_eq(c->nleft, 2);
	ck_assert_uint_eq(c->njoined, 6);
	ck_assert(ft_det_knows_failed(c, 2));
	ck_assert(ft_det_knows_departed(c, 1));
	ck_assert(ft_det_is_joined(c, 4));
	ck_assert(!ft_det_is_joined(c, 6));
	ck_assert(ft_ring_contains(c->ring, 4));
	ck_assert(ft_ring_contains(c->ring, 5));
	ck_assert(!ft_ring_contains(c->ring, 2));
	ck_assert(!ft_ring_contains(c->ring, 6));
	ck_assert_uint_eq(c->ring->nin, 5); /* 0, 1 (departed, still there), 3, 4, 5 */

	ft_det_start(det(5), sim.now);
	advance(1000);
	ck_assert_uint_eq(sim.nodes[5].nrecs, 0);
	ck_assert_uint_eq(sim.nodes[5].nexcluded, 0);
	for (uint32_t r = 0; r < 6; r++) {
		if (r == 2)
			continue;
		ck_assert_uint_eq(det(r)->digest, det(5)->digest);
		ck_assert_uint_eq(count_event(r, FT_EV_FAILED), r == 5 ? 0 : 1);
		if (r != 0 && r != 5)
			ck_assert_uint_eq(count_learned(r, 5, FT_EV_JOINED), 1);
	}
	ck_assert_uint_eq(det(4)->emit_to, 5);
	ck_assert_uint_eq(det(5)->observed, 4);
	assert_nothing_sent_from(6);
	sim_destroy();
}
END_TEST

/* A spawned process starts with the ranks before it as members but, from
 * its parents, only their failures (pmpi/spawn.c): the endpoint of an
 * earlier spawned rank it gets from that rank's JOINED news, which it
 * must report (ops.learned) although the rank is a member already. */
START_TEST(test_join_member_endpoint)
{
	struct ft_entry j5 = joined_entry(5);

	start_job(100);
	spawn(4, 0);
	advance(100);
	ft_det_join(det(0), &j5, sim.now);
	ft_det_destroy(det(5));
	sim.base.njoined = 6;
	node_init(5, NULL, 0);
	sim.base.njoined = MEMBERS;
	sim.nodes[5].dead = false;
	ft_det_start(det(5), sim.now);
	advance(1000);
	ck_assert_uint_eq(count_learned(5, 4, FT_EV_JOINED), 1);
	for (uint32_t r = 0; r < MEMBERS; r++)
		ck_assert_uint_eq(count_learned(r, 4, FT_EV_JOINED), 1);
	ck_assert_uint_eq(det(5)->digest, det(0)->digest);
	ck_assert_uint_eq(det(5)->njoined, 6);
	sim_destroy();
}
END_TEST

/* A case of the suite: its tests share the simulation, torn down after
 * each; setup chooses the options (NULL: none). */
static TCase *sim_case(Suite *s, const char *name, void (*setup)(void))
{
	TCase *tc = tcase_create(name);

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, sim_teardown);
	suite_add_tcase(s, tc);
	return tc;
}

static Suite *detector_suite(void)
{
	Suite *s = suite_create("detector");
	TCase *tc_ring = sim_case(s, "ring", NULL);
	TCase *tc_news = sim_case(s, "news", NULL);
	TCase *tc_excl = sim_case(s, "exclusion", NULL);
	TCase *tc_quorum = sim_case(s, "quorum", quorum_on);

	tcase_add_test(tc_ring, test_steady_state);
	tcase_add_test(tc_ring, test_start_grace);
	tcase_add_test(tc_ring, test_silent_death);
	tcase_add_test(tc_ring, test_connection_lost);
	tcase_add_test(tc_ring, test_two_neighbours);
	tcase_add_test(tc_ring, test_new_predecessor_told);
	tcase_add_test(tc_ring, test_shuffled_ring);

	tcase_add_loop_test(tc_news, test_half_dies_silently, 0, 3);
	tcase_add_test(tc_news, test_half_declared);
	tcase_add_test(tc_news, test_anti_entropy);
	tcase_add_test(tc_news, test_duplicates);
	tcase_add_test(tc_news, test_departures);

	tcase_add_test(tc_excl, test_fail_stop);
	tcase_add_test(tc_excl, test_abort_after_death);
	tcase_add_test(tc_excl, test_exclusion);

	/* The ring and fail-stop tests hold with quorum rounds on. */
	tcase_add_test(tc_quorum, test_steady_state);
	tcase_add_test(tc_quorum, test_silent_death);
	tcase_add_test(tc_quorum, test_two_neighbours);
	tcase_add_test(tc_quorum, test_new_predecessor_told);
	tcase_add_test(tc_quorum, test_shuffled_ring);
	tcase_add_test(tc_quorum, test_fail_stop);
	tcase_add_loop_test(tc_quorum, test_partition, 0, 3);
	tcase_add_test(tc_quorum, test_partition_heals);
	tcase_add_test(tc_quorum, test_proven_deaths_shrink_membership);
	tcase_add_test(tc_quorum, test_two_ranks);
	tcase_add_test(tc_quorum, test_answer_then_death);
	tcase_add_test(tc_quorum, test_short_cut_forgotten);
	tcase_add_test(tc_quorum, test_partition_without_quorum);

	TCase *tc_readmit = sim_case(s, "readmit", readmit_on);
	tcase_add_test(tc_readmit, test_readmission);
	tcase_add_test(tc_readmit, test_readmission_once);
	tcase_add_test(tc_readmit, test_proven_death_not_readmitted);
	tcase_add_test(tc_readmit, test_readmission_needs_history);
	tcase_add_test(tc_readmit, test_steady_state);
	tcase_add_test(tc_readmit, test_silent_death);

	TCase *tc_readmit_q = sim_case(s, "readmit_quorum", readmit_quorum_on);
	tcase_add_test(tc_readmit_q, test_readmission);
	tcase_add_test(tc_readmit_q, test_readmission_once);

	TCase *tc_join = sim_case(s, "join", NULL);
	tcase_add_test(tc_join, test_join_ring_over_members);
	tcase_add_test(tc_join, test_join_spreads);
	tcase_add_test(tc_join, test_join_then_silent);
	tcase_add_test(tc_join, test_join_all_left);
	tcase_add_test(tc_join, test_join_unjoined_ignored);
	tcase_add_test(tc_join, test_join_known_view);
	tcase_add_test(tc_join, test_join_member_endpoint);
	tcase_add_test(tc_join, test_join_shared_ring);

	/* The same with quorum rounds on, where members also make majorities. */
	TCase *tc_join_q = sim_case(s, "join_quorum", quorum_on);
	tcase_add_test(tc_join_q, test_join_ring_over_members);
	tcase_add_test(tc_join_q, test_join_spreads);
	tcase_add_test(tc_join_q, test_join_then_silent);
	tcase_add_test(tc_join_q, test_join_quorum_members);
	tcase_add_test(tc_join_q, test_join_lowest_member);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(detector_suite());

	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
