/* check_agreement.c: unit tests of src/agreement.c, the agreement
 * protocol, without MPI: one struct ft_agreements per member of one
 * communicator, whose send() deep-copies each message into one FIFO
 * queue; members that are dead (messages to them are dropped, and a
 * member may die after a set number of sends: half-way through sending
 * its decision), members that learn a failure each at its own time, a
 * member whose messages are held back, and a member that has not made the
 * communicator yet. The tests check: all alive (the AND of the flags, no
 * failures, rc 0); a failure known by some only (the union of those
 * reported); acknowledgements (rc 0 only if every contributor acknowledged
 * every failure decided); a member dead before contributing (nothing is
 * decided until the coordinator learns it); the coordinator dead before
 * deciding (the next one asks and decides); the coordinator dead half-way
 * through sending its decision (every survivor returns that decision,
 * adopted by the next coordinator from whoever holds it); a decision
 * that races a takeover (the new coordinator holds every contribution
 * before it hears of the decision) and one that reaches only a member
 * others wait on as their coordinator; late questions
 * answered from kept decisions, and forgotten after many agreements;
 * several agreements in a row; messages for a communicator not made yet,
 * replayed when it is; malformed messages dropped; and the agreement
 * order of an intercommunicator's two groups, the same on both sides. */
#include "ftshim_config.h"

#include <check.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/agreement.h"
#include "src/comm_table.h"

#define UNACKED 75
#define MAX_N 16
#define MAX_SEQ 80
#define COMM_ID UINT64_C(0x1234)
#define HELD_ANY (UINT32_MAX - 1)

struct model;

struct member {
	struct model *m;
	uint32_t index;
	bool made;                   /* has made the communicator */
	bool knows[MAX_N];           /* knows member i failed */
	bool acks[MAX_N];            /* has acknowledged member i's failure */
	struct ft_agreements t;
	struct ft_agreement *a[MAX_SEQ];
	uint32_t ndecided;           /* ops.decided calls */
};

struct qmsg {
	uint32_t from, to; /* member indices */
	struct ft_msg msg;
	uint8_t *data;
};

struct model {
	uint32_t n;
	int32_t world[MAX_N];        /* member index -> world rank */
	struct member p[MAX_N];
	bool dead[MAX_N];
	int32_t sends_left[MAX_N];   /* dies after that many more sends; -1: never */
	uint32_t held_back;          /* messages to it wait in later; UINT32_MAX: none,
					HELD_ANY: to anyone */
	uint32_t held_from;          /* only those from it; UINT32_MAX: from anyone */
	struct qmsg *q, *later;
	uint32_t nq, nlater;
	uint32_t sent[5];            /* by kind */
	uint64_t now;
};

static uint32_t index_of(const struct model *m, uint32_t rank)
{
	for (uint32_t i = 0; i < m->n; i++)
		if ((uint32_t)m->world[i] == rank)
			return i;
	ck_abort_msg("world rank %u is no member", rank);
	return UINT32_MAX;
}

static bool op_view(void *ctx, uint64_t id, struct ft_agree_view *v)
{
	struct member *p = ctx;

	if (!p->made || id != COMM_ID)
		return false;
	v->n = p->m->n;
	v->self = p->index;
	v->members = p->m->world;
	return true;
}

static bool op_failed(void *ctx, uint32_t rank)
{
	struct member *p = ctx;

	return p->knows[index_of(p->m, rank)];
}

static void push(struct qmsg **q, uint32_t *nq, const struct qmsg *x)
{
	*q = realloc(*q, (*nq + 1) * sizeof **q);
	ck_assert_ptr_nonnull(*q);
	(*q)[(*nq)++] = *x;
}

static void op_send(void *ctx, uint32_t to, const struct ft_msg *msg)
{
	struct member *p = ctx;
	struct model *m = p->m;
	struct qmsg x = { .from = p->index, .to = index_of(m, to), .msg = *msg };

	ck_assert_uint_ne(x.to, p->index);
	if (m->dead[p->index]) /* died half-way through this call */
		return;
	ck_assert_uint_lt(msg->app.kind, 5);
	m->sent[msg->app.kind]++;
	x.msg.from = (uint32_t)m->world[p->index];
	x.data = malloc(msg->app.len + 1);
	memcpy(x.data, msg->app.data ? msg->app.data : (const uint8_t *)"", msg->app.len);
	x.msg.app.data = x.data;
	if ((x.to == m->held_back || m->held_back == HELD_ANY) &&
	    (m->held_from == UINT32_MAX || x.from == m->held_from))
		push(&m->later, &m->nlater, &x);
	else
		push(&m->q, &m->nq, &x);
	if (m->sends_left[p->index] > 0 && --m->sends_left[p->index] == 0)
		m->dead[p->index] = true;
}

static void op_decided(void *ctx, const struct ft_agreement *a)
{
	struct member *p = ctx;

	ck_assert(a->decided);
	p->ndecided++;
}

static bool op_acked(void *arg, uint32_t rank)
{
	struct member *p = arg;

	return p->acks[index_of(p->m, rank)];
}

static void model_init(struct model *m, uint32_t n, const int32_t *world)
{
	static const struct ft_agree_ops ops = {
		.view = op_view,
		.failed = op_failed,
		.send = op_send,
		.decided = op_decided,
	};

	memset(m, 0, sizeof *m);
	m->n = n;
	m->held_back = m->held_from = UINT32_MAX;
	for (uint32_t i = 0; i < n; i++) {
		struct ft_agree_ops o = ops;
		m->world[i] = world ? world[i] : (int32_t)i;
		m->sends_left[i] = -1;
		m->p[i].m = m;
		m->p[i].index = i;
		m->p[i].made = true;
		o.ctx = &m->p[i];
		ft_agree_init(&m->p[i].t, &o, UNACKED);
	}
}

static void free_queue(struct qmsg *q, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		free(q[i].data);
	free(q);
}

static void model_fini(struct model *m)
{
	for (uint32_t i = 0; i < m->n; i++)
		ft_agree_destroy(&m->p[i].t);
	free_queue(m->q, m->nq);
	free_queue(m->later, m->nlater);
}

/* Deliver until no message is in flight (those held back wait). */
static void run(struct model *m)
{
	for (uint32_t k = 0; k < m->nq; k++) {
		struct qmsg x = m->q[k];
		if (!m->dead[x.to])
			ft_agree_receive(&m->p[x.to].t, &x.msg);
		free(x.data);
		m->q[k].data = NULL;
	}
	m->nq = 0;
}

static void release_held_back(struct model *m)
{
	for (uint32_t k = 0; k < m->nlater; k++)
		push(&m->q, &m->nq, &m->later[k]);
	m->nlater = 0;
	m->held_back = m->held_from = UINT32_MAX;
	run(m);
}

/* The messages held back reach every member but lost_to (theirs are
 * lost), after what is in flight now. */
static void release_held_back_but(struct model *m, uint32_t lost_to)
{
	for (uint32_t k = 0; k < m->nlater; k++) {
		if (m->later[k].to == lost_to)
			free(m->later[k].data);
		else
			push(&m->q, &m->nq, &m->later[k]);
	}
	m->nlater = 0;
	m->held_back = m->held_from = UINT32_MAX;
	run(m);
}

/* The messages held back are lost. */
static void drop_held_back(struct model *m)
{
	free_queue(m->later, m->nlater);
	m->later = NULL;
	m->nlater = 0;
}

static void start(struct model *m, uint32_t i, uint32_t seq, uint32_t value)
{
	struct member *p = &m->p[i];

	p->a[seq] = ft_agree_start(&p->t, COMM_ID, seq, value, op_acked, p, m->now);
	ck_assert_ptr_nonnull(p->a[seq]);
}

static void start_all_live(struct model *m, uint32_t seq, const uint32_t *values)
{
	for (uint32_t i = 0; i < m->n; i++)
		if (!m->dead[i])
			start(m, i, seq, values ? values[i] : UINT32_MAX);
}

/* Member i learns that member f failed. */
static void learn(struct model *m, uint32_t i, uint32_t f)
{
	if (m->dead[i] || m->p[i].knows[f])
		return;
	m->p[i].knows[f] = true;
	ft_agree_failure(&m->p[i].t);
}

static void kill_known_by_all(struct model *m, uint32_t f)
{
	m->dead[f] = true;
	for (uint32_t i = 0; i < m->n; i++)
		learn(m, i, f);
}

struct decision {
	uint32_t value;
	int rc;
	uint8_t failed[(MAX_N + 7) / 8];
};

static bool take(struct model *m, uint32_t i, uint32_t seq, struct decision *d)
{
	memset(d, 0, sizeof *d);
	return ft_agree_take(&m->p[i].t, m->p[i].a[seq], m->now, &d->value, &d->rc, d->failed);
}

/* Every live member that started seq has decided d (returned). */
static struct decision expect_uniform(struct model *m, uint32_t seq)
{
	struct decision first, d;
	bool have = false;

	for (uint32_t i = 0; i < m->n; i++) {
		if (m->dead[i] || !m->p[i].a[seq])
			continue;
		ck_assert_msg(take(m, i, seq, &d), "member %u has not decided agreement %u", i, seq);
		if (!have) {
			first = d;
			have = true;
			continue;
		}
		ck_assert_uint_eq(d.value, first.value);
		ck_assert_int_eq(d.rc, first.rc);
		ck_assert_mem_eq(d.failed, first.failed, ft_agree_bytes(m->n));
	}
	ck_assert(have);
	return first;
}

static uint32_t failed_set(const struct decision *d, uint32_t n)
{
	uint32_t set = 0;

	for (uint32_t i = 0; i < n; i++)
		if (ft_agree_bit(d->failed, i))
			set |= 1u << i;
	return set;
}

START_TEST(test_all_alive)
{
	struct model m;
	uint32_t values[MAX_N];

	for (uint32_t n = 1; n <= MAX_N; n++) {
		model_init(&m, n, NULL);
		uint32_t expect = UINT32_MAX;
		for (uint32_t i = 0; i < n; i++) {
			values[i] = ~(1u << i) & ~(1u << 20);
			expect &= values[i];
		}
		start_all_live(&m, 0, values);
		run(&m);
		struct decision d = expect_uniform(&m, 0);
		ck_assert_uint_eq(d.value, n == 0 ? UINT32_MAX : expect);
		ck_assert_int_eq(d.rc, 0);
		ck_assert_uint_eq(failed_set(&d, n), 0);
		/* n - 1 contributions, n - 1 decisions, no questions. */
		ck_assert_uint_eq(m.sent[FT_AGREE_CONTRIB], n - 1);
		ck_assert_uint_eq(m.sent[FT_AGREE_DECIDE], n - 1);
		ck_assert_uint_eq(m.sent[FT_AGREE_ASK], 0);
		for (uint32_t i = 0; i < n; i++)
			ck_assert_uint_eq(m.p[i].ndecided, 1);
		model_fini(&m);
	}
}
END_TEST

/* Member 5 contributed and died; only member 2 knew before it started:
 * the coordinator, which never learns it, still decides it failed. */
START_TEST(test_failure_known_by_some)
{
	struct model m;

	model_init(&m, 6, NULL);
	start(&m, 5, 0, UINT32_MAX);
	run(&m);
	m.dead[5] = true;
	m.p[2].knows[5] = true;
	for (uint32_t i = 0; i < 5; i++)
		start(&m, i, 0, UINT32_MAX);
	run(&m);
	struct decision d = expect_uniform(&m, 0);
	ck_assert_uint_eq(failed_set(&d, 6), 1u << 5);
	ck_assert_int_eq(d.rc, UNACKED);
	model_fini(&m);

	model_init(&m, 6, NULL);
	m.dead[4] = m.dead[5] = true;
	m.p[1].knows[4] = true;
	m.p[3].knows[5] = true;
	m.p[0].knows[4] = m.p[0].knows[5] = true;
	start_all_live(&m, 0, NULL);
	run(&m);
	d = expect_uniform(&m, 0);
	ck_assert_uint_eq(failed_set(&d, 6), (1u << 4) | (1u << 5));
	model_fini(&m);
}
END_TEST

START_TEST(test_acknowledgements)
{
	struct model m;
	struct decision d;

	/* Everyone acknowledged the failure: rc 0. */
	model_init(&m, 5, NULL);
	m.dead[3] = true;
	for (uint32_t i = 0; i < 5; i++)
		m.p[i].knows[3] = m.p[i].acks[3] = true;
	start_all_live(&m, 0, NULL);
	run(&m);
	d = expect_uniform(&m, 0);
	ck_assert_uint_eq(failed_set(&d, 5), 1u << 3);
	ck_assert_int_eq(d.rc, 0);
	model_fini(&m);

	/* One contributor had not: rc at every member. */
	model_init(&m, 5, NULL);
	m.dead[3] = true;
	for (uint32_t i = 0; i < 5; i++)
		m.p[i].knows[3] = m.p[i].acks[3] = i != 4;
	m.p[4].knows[3] = true;
	start_all_live(&m, 0, NULL);
	run(&m);
	d = expect_uniform(&m, 0);
	ck_assert_int_eq(d.rc, UNACKED);
	model_fini(&m);

	/* Acknowledging a member that did not fail changes nothing. */
	model_init(&m, 4, NULL);
	m.p[1].acks[2] = true;
	start_all_live(&m, 0, NULL);
	run(&m);
	d = expect_uniform(&m, 0);
	ck_assert_int_eq(d.rc, 0);
	ck_assert_uint_eq(failed_set(&d, 4), 0);
	model_fini(&m);
}
END_TEST

/* Member 3 died before it contributed: the coordinator waits until it
 * learns that, then decides without it. */
START_TEST(test_member_dies_before_contributing)
{
	struct model m;
	struct decision d;

	model_init(&m, 5, NULL);
	m.dead[3] = true;
	start_all_live(&m, 0, NULL);
	run(&m);
	for (uint32_t i = 0; i < 5; i++)
		if (i != 3)
			ck_assert(!take(&m, i, 0, &d));
	learn(&m, 4, 3); /* not the coordinator: still nothing */
	run(&m);
	ck_assert(!take(&m, 0, 0, &d));
	learn(&m, 0, 3);
	run(&m);
	d = expect_uniform(&m, 0);
	ck_assert_uint_eq(failed_set(&d, 5), 1u << 3);
	ck_assert_int_eq(d.rc, UNACKED);
	model_fini(&m);
}
END_TEST

/* The coordinator died before deciding: contributions go to member 1,
 * which asks everyone first, then decides. */
START_TEST(test_coordinator_dies_before_deciding)
{
	struct model m;
	uint32_t values[6] = { 0x0e, 0xfe, 0xfd, 0xfb, 0xf7, 0xef };

	model_init(&m, 6, NULL);
	m.dead[2] = true; /* not started: the coordinator waits for it */
	start_all_live(&m, 0, values);
	run(&m);
	kill_known_by_all(&m, 0);
	run(&m);
	/* Everyone but 0 and 1 was asked; nobody decides before 2 is known
	 * dead. */
	ck_assert_uint_eq(m.sent[FT_AGREE_ASK], 4);
	ck_assert_uint_eq(m.sent[FT_AGREE_DECIDE], 0);
	kill_known_by_all(&m, 2);
	run(&m);
	struct decision d = expect_uniform(&m, 0);
	ck_assert_uint_eq(d.value, 0xfe & 0xfb & 0xf7 & 0xef);
	ck_assert_uint_eq(failed_set(&d, 6), (1u << 0) | (1u << 2));
	model_fini(&m);
}
END_TEST

/* The coordinator died after sending its decision to members 1..3, of
 * which 1's copy is late: member 1 takes over, asks, adopts the decision
 * 2 and 3 hold (not one of its own, though member 0's failure is news to
 * it) and every survivor gets it; the late copy changes nothing. */
START_TEST(test_coordinator_dies_half_way)
{
	struct model m;
	uint32_t values[6] = { 0x7f, 0xbf, 0xdf, 0xef, 0xf7, 0xfb };

	model_init(&m, 6, NULL);
	m.held_back = 1;
	/* Member 0 sends no contribution (its own is taken where it is
	 * made): its first sends are the decision's. */
	m.sends_left[0] = 3;
	start_all_live(&m, 0, values);
	run(&m);
	ck_assert(m.dead[0]);
	struct decision d0;
	ck_assert(take(&m, 2, 0, &d0));
	ck_assert_uint_eq(d0.value, 0x7f & 0xbf & 0xdf & 0xef & 0xf7 & 0xfb);
	ck_assert_uint_eq(failed_set(&d0, 6), 0);
	struct decision none;
	ck_assert(!take(&m, 1, 0, &none) && !take(&m, 4, 0, &none));
	m.held_back = UINT32_MAX; /* what comes next reaches 1 */
	for (uint32_t i = 1; i < 6; i++)
		learn(&m, i, 0);
	run(&m);
	ck_assert_uint_gt(m.sent[FT_AGREE_ASK], 0);
	struct decision d = expect_uniform(&m, 0);
	ck_assert_uint_eq(d.value, d0.value);
	ck_assert_int_eq(d.rc, 0);
	ck_assert_uint_eq(failed_set(&d, 6), 0);
	uint32_t decisions = m.p[1].ndecided;
	release_held_back(&m);
	ck_assert_uint_eq(m.p[1].ndecided, decisions);
	d = expect_uniform(&m, 0);
	ck_assert_uint_eq(d.value, d0.value);
	model_fini(&m);

	/* Its decision reached only member 1 before both died: the others
	 * decide anew, without both, and agree. */
	model_init(&m, 6, NULL);
	m.sends_left[0] = 1;
	m.held_back = 1;
	start_all_live(&m, 0, values);
	run(&m);
	kill_known_by_all(&m, 0);
	kill_known_by_all(&m, 1);
	run(&m);
	d = expect_uniform(&m, 0);
	ck_assert_uint_eq(failed_set(&d, 6), 3);
	ck_assert_uint_eq(d.value, 0xdf & 0xef & 0xf7 & 0xfb);
	model_fini(&m);

	/* Its decision reached only member 2, whose answers to member 1 come
	 * after everyone else's: 1 adopts the decision once they have all
	 * contributed, and must send it on itself. */
	model_init(&m, 6, NULL);
	m.sends_left[0] = 2;
	m.held_back = 1;
	m.held_from = 0;
	start_all_live(&m, 0, values);
	run(&m);
	drop_held_back(&m);
	m.held_from = 2;
	kill_known_by_all(&m, 0);
	run(&m);
	ck_assert_uint_eq(m.nlater, 1); /* 2's decision, in answer to the question */
	ck_assert(!take(&m, 1, 0, &none) && !take(&m, 3, 0, &none));
	release_held_back(&m);
	d = expect_uniform(&m, 0);
	ck_assert_uint_eq(d.value, d0.value);
	ck_assert_uint_eq(failed_set(&d, 6), 0);
	model_fini(&m);
}
END_TEST

/* Four members: coordinator 0 (the only flag without 0xf0) decides, its
 * decision to 1, 2 and 3 held back, and dies; nobody knows yet. */
static void decide_then_die(struct model *m)
{
	uint32_t values[4] = { 0x0f, 0xff, 0xff, 0xff };

	model_init(m, 4, NULL);
	m->held_back = HELD_ANY;
	m->held_from = 0;
	start_all_live(m, 0, values);
	run(m);
	ck_assert_uint_eq(m->nlater, 3);
	m->dead[0] = true;
}

/* Members 2 and 3 learn that coordinator 0 died, and send their
 * contributions to member 1, before 0's decision reaches them (it never
 * reaches 1). Member 1 then takes over holding every live member's
 * contribution; it must still learn 0's decision from them rather than
 * decide anew (0's flag is in it, and in no other). */
START_TEST(test_decision_races_takeover)
{
	struct model m;

	decide_then_die(&m);
	learn(&m, 2, 0);
	learn(&m, 3, 0);
	release_held_back_but(&m, 1);
	struct decision d2, none;
	ck_assert(take(&m, 2, 0, &d2));
	ck_assert_uint_eq(d2.value, 0x0f);
	ck_assert(!take(&m, 1, 0, &none));
	learn(&m, 1, 0);
	run(&m);
	struct decision d = expect_uniform(&m, 0);
	ck_assert_uint_eq(d.value, 0x0f);
	ck_assert_uint_eq(failed_set(&d, 4), 0);
	model_fini(&m);
}
END_TEST

/* Member 3 learns that coordinator 0 died and sends its contribution to
 * member 1, which does not know it yet; 0's decision then reaches 1 (not
 * 3, which it never reaches). Member 1 must send it to 3: 3 waits on 1,
 * which lives, and asks nobody else. */
START_TEST(test_decision_reaches_waiting_member)
{
	struct model m;

	decide_then_die(&m);
	learn(&m, 3, 0);
	run(&m); /* 3's contribution reaches 1 */
	release_held_back_but(&m, 3);
	learn(&m, 1, 0);
	learn(&m, 2, 0);
	run(&m);
	m.now += 2 * FT_AGREE_RECHECK_NS;
	struct decision none;
	(void)take(&m, 3, 0, &none);
	run(&m);
	struct decision d = expect_uniform(&m, 0);
	ck_assert_uint_eq(d.value, 0x0f);
	model_fini(&m);
}
END_TEST

/* A question after everyone took the decision is answered from the kept
 * one; after many more agreements it is forgotten. */
START_TEST(test_late_question)
{
	struct model m;

	model_init(&m, 4, NULL);
	for (uint32_t seq = 0; seq < MAX_SEQ; seq++) {
		start_all_live(&m, seq, NULL);
		run(&m);
		expect_uniform(&m, seq);
		if (seq != 10 && seq != MAX_SEQ - 1)
			continue;
		/* Member 2 asks member 3 about agreement 0. */
		struct ft_msg ask = { .type = FT_MSG_APP, .from = 2 };
		ask.app.key = COMM_ID;
		ask.app.seq = 0;
		ask.app.kind = FT_AGREE_ASK;
		uint32_t decisions = m.sent[FT_AGREE_DECIDE];
		ft_agree_receive(&m.p[3].t, &ask);
		ck_assert_uint_eq(m.nq, seq == 10 ? 1 : 0);
		ck_assert_uint_eq(m.sent[FT_AGREE_DECIDE], decisions + (seq == 10));
		if (seq == 10) {
			ck_assert_uint_eq(m.q[0].to, 2);
			ck_assert_uint_eq(m.q[0].msg.app.kind, FT_AGREE_DECIDE);
			ck_assert_uint_eq(m.q[0].msg.app.value, UINT32_MAX);
		}
		run(&m);
	}
	model_fini(&m);
}
END_TEST

/* Agreements in a row, the next started by some before others took the
 * one before. */
START_TEST(test_in_a_row)
{
	struct model m;

	model_init(&m, 7, NULL);
	for (uint32_t seq = 0; seq < 12; seq += 2) {
		uint32_t va[7], vb[7];
		for (uint32_t i = 0; i < 7; i++) {
			va[i] = i == 3 ? 1 : 3;
			vb[i] = i == seq % 7 ? 0 : 7;
		}
		for (uint32_t i = 0; i < 7; i++) {
			start(&m, i, seq, va[i]);
			if (i % 2)
				start(&m, i, seq + 1, vb[i]);
		}
		run(&m);
		for (uint32_t i = 0; i < 7; i += 2)
			start(&m, i, seq + 1, vb[i]);
		run(&m);
		ck_assert_uint_eq(expect_uniform(&m, seq).value, 1);
		ck_assert_uint_eq(expect_uniform(&m, seq + 1).value, 0);
	}
	/* A failure between two agreements is in the second's decision only. */
	start_all_live(&m, 20, NULL);
	run(&m);
	struct decision d = expect_uniform(&m, 20);
	ck_assert_uint_eq(failed_set(&d, 7), 0);
	kill_known_by_all(&m, 6);
	start_all_live(&m, 21, NULL);
	run(&m);
	d = expect_uniform(&m, 21);
	ck_assert_uint_eq(failed_set(&d, 7), 1u << 6);
	model_fini(&m);
}
END_TEST

/* The coordinator has not made the communicator when the contributions
 * come: they are kept and received once it is made. */
START_TEST(test_not_made_yet)
{
	struct model m;

	model_init(&m, 4, NULL);
	m.p[0].made = false;
	ck_assert_ptr_null(ft_agree_start(&m.p[0].t, COMM_ID, 0, 1, NULL, NULL, 0));
	for (uint32_t i = 1; i < 4; i++)
		start(&m, i, 0, 1);
	run(&m);
	ck_assert_uint_eq(m.p[0].t.nheld, 3);
	m.p[0].made = true;
	ft_agree_created(&m.p[0].t, COMM_ID + 1); /* another: nothing */
	ck_assert_uint_eq(m.p[0].t.nheld, 3);
	ft_agree_created(&m.p[0].t, COMM_ID);
	ck_assert_uint_eq(m.p[0].t.nheld, 0);
	ck_assert_uint_eq(m.sent[FT_AGREE_DECIDE], 0); /* 0 has not joined */
	start(&m, 0, 0, 1);
	run(&m);
	ck_assert_uint_eq(expect_uniform(&m, 0).value, 1);
	model_fini(&m);
}
END_TEST

START_TEST(test_malformed_dropped)
{
	struct model m;
	uint8_t junk[64] = { 0 };
	uint32_t wrong_n = 9;

	model_init(&m, 4, NULL);
	start_all_live(&m, 0, NULL);
	memcpy(junk, &wrong_n, 4);
	struct ft_msg bad = { .type = FT_MSG_APP, .from = 1 };
	bad.app.key = COMM_ID;
	bad.app.kind = FT_AGREE_DECIDE;
	bad.app.data = junk;
	bad.app.len = 8 + 1; /* n = 9 does not match */
	ft_agree_receive(&m.p[2].t, &bad);
	bad.from = 17; /* no member */
	memcpy(junk, &m.n, 4);
	ft_agree_receive(&m.p[2].t, &bad);
	bad.from = 1;
	bad.app.len = 5; /* too short for a decision */
	ft_agree_receive(&m.p[2].t, &bad);
	struct decision d;
	ck_assert(!take(&m, 2, 0, &d));
	run(&m);
	ck_assert_uint_eq(expect_uniform(&m, 0).value, UINT32_MAX);
	model_fini(&m);
}
END_TEST

/* An intercommunicator's sides list their own group first; both put the
 * group of lower first world rank first, and agree on the indices. */
START_TEST(test_intercommunicator_order)
{
	const int32_t a[] = { 5, 6 }, b[] = { 1, 2, 3 };
	struct ft_comm *ca = ft_comm_new(7, a, 2, b, 3), *cb = ft_comm_new(7, b, 3, a, 2);
	int32_t oa[5], ob[5];
	const int32_t expect[5] = { 1, 2, 3, 5, 6 };

	ck_assert_ptr_nonnull(ca);
	ck_assert_ptr_nonnull(cb);
	ft_agree_order(ca, oa);
	ft_agree_order(cb, ob);
	ck_assert_mem_eq(oa, expect, sizeof expect);
	ck_assert_mem_eq(ob, expect, sizeof expect);
	for (uint32_t j = 0; j < 2; j++) {
		ck_assert_uint_eq(ft_agree_index(ca, false, j), 3 + j);
		ck_assert_uint_eq(ft_agree_index(cb, true, j), 3 + j);
	}
	for (uint32_t j = 0; j < 3; j++) {
		ck_assert_uint_eq(ft_agree_index(ca, true, j), j);
		ck_assert_uint_eq(ft_agree_index(cb, false, j), j);
	}
	/* An intracommunicator keeps its order. */
	struct ft_comm *cc = ft_comm_new(8, a, 2, b, 0);
	ft_agree_order(cc, oa);
	ck_assert_int_eq(oa[0], 5);
	ck_assert_uint_eq(ft_agree_index(cc, false, 1), 1);

	/* The agreement over that order, with world ranks for addresses:
	 * world rank 1 (index 0) dies; 2 takes over. */
	struct model m;
	model_init(&m, 5, expect);
	start_all_live(&m, 0, NULL);
	kill_known_by_all(&m, 0);
	run(&m);
	struct decision d = expect_uniform(&m, 0);
	ck_assert_uint_eq(failed_set(&d, 5), 1);
	model_fini(&m);
	ft_comm_free(ca);
	ft_comm_free(cb);
	ft_comm_free(cc);
}
END_TEST

/* A member whose coordinator failed without ft_agree_failure re-sends
 * from ft_agree_take, at most every FT_AGREE_RECHECK_NS. */
START_TEST(test_take_rechecks)
{
	struct model m;
	struct decision d;

	model_init(&m, 3, NULL);
	m.dead[0] = true;
	start(&m, 1, 0, 1);
	start(&m, 2, 0, 1);
	run(&m);
	m.p[1].knows[0] = m.p[2].knows[0] = true; /* learned silently */
	uint32_t contribs = m.sent[FT_AGREE_CONTRIB];
	m.now = FT_AGREE_RECHECK_NS - 1;
	ck_assert(!take(&m, 2, 0, &d));
	ck_assert_uint_eq(m.sent[FT_AGREE_CONTRIB], contribs);
	m.now = FT_AGREE_RECHECK_NS;
	ck_assert(!take(&m, 2, 0, &d));
	ck_assert_uint_eq(m.sent[FT_AGREE_CONTRIB], contribs + 1);
	ck_assert(!take(&m, 1, 0, &d)); /* 1 is the coordinator now */
	run(&m);
	ft_agree_failure(&m.p[1].t);
	run(&m);
	d = expect_uniform(&m, 0);
	ck_assert_uint_eq(failed_set(&d, 3), 1);
	model_fini(&m);
}
END_TEST

static Suite *agreement_suite(void)
{
	Suite *s = suite_create("agreement");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_all_alive);
	tcase_add_test(tc, test_failure_known_by_some);
	tcase_add_test(tc, test_acknowledgements);
	tcase_add_test(tc, test_member_dies_before_contributing);
	tcase_add_test(tc, test_coordinator_dies_before_deciding);
	tcase_add_test(tc, test_coordinator_dies_half_way);
	tcase_add_test(tc, test_decision_races_takeover);
	tcase_add_test(tc, test_decision_reaches_waiting_member);
	tcase_add_test(tc, test_late_question);
	tcase_add_test(tc, test_in_a_row);
	tcase_add_test(tc, test_not_made_yet);
	tcase_add_test(tc, test_malformed_dropped);
	tcase_add_test(tc, test_intercommunicator_order);
	tcase_add_test(tc, test_take_rechecks);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(agreement_suite());

	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
