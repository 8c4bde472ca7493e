/* agreement.c: the agreement protocol of one process (see agreement.h):
 * the list of agreements it knows, each one's state as a participant and
 * as a coordinator, the decisions it keeps for late questions, and the
 * messages it keeps for communicators not made yet. Called only through
 * the functions of agreement.h, one thread at a time. */
#include "ftshim_config.h"

#include <stdlib.h>
#include <string.h>

#include "src/agreement.h"

/* Decisions kept per communicator for late questions. */
#define KEEP_DECIDED 64
/* Messages kept for communicators not made yet; the oldest is dropped
 * first. */
#define MAX_HELD 4096

static void set_bit(uint8_t *b, uint32_t i)
{
	b[i / 8] |= (uint8_t)(1u << (i % 8));
}

static bool get_view(struct ft_agreements *t, uint64_t id, struct ft_agree_view *v)
{
	memset(v, 0, sizeof *v);
	if (!t->ops.view(t->ops.ctx, id, v))
		return false;
	if (v->self < v->n && v->members)
		return true;
	if (t->ops.view_done)
		t->ops.view_done(t->ops.ctx, v);
	return false;
}

static void put_view(struct ft_agreements *t, struct ft_agree_view *v)
{
	if (t->ops.view_done)
		t->ops.view_done(t->ops.ctx, v);
}

static bool member_failed(const struct ft_agreements *t, const struct ft_agree_view *v, uint32_t i)
{
	return t->ops.failed(t->ops.ctx, (uint32_t)v->members[i]);
}

/* The coordinator: the lowest index this process does not know failed. */
static uint32_t coordinator(const struct ft_agreements *t, const struct ft_agree_view *v)
{
	for (uint32_t i = 0; i < v->n; i++)
		if (!member_failed(t, v, i))
			return i;
	return UINT32_MAX;
}

static struct ft_agreement *find(const struct ft_agreements *t, uint64_t id, uint32_t seq)
{
	for (struct ft_agreement *a = t->all; a; a = a->next)
		if (a->id == id && a->seq == seq)
			return a;
	return NULL;
}

static void destroy(struct ft_agreement *a)
{
	free(a->my_bits);
	free(a->decided_failed);
	free(a->got);
	free(a->failed);
	free(a->acked);
	free(a);
}

/* Agreement seq of id, made if new (then the communicator's decisions
 * older than KEEP_DECIDED agreements that nobody waits for are
 * forgotten). NULL if memory ran out. */
static struct ft_agreement *get(struct ft_agreements *t, uint64_t id, uint32_t seq, uint32_t n)
{
	struct ft_agreement *a = find(t, id, seq);

	if (a)
		return a;
	a = calloc(1, sizeof *a);
	if (!a)
		return NULL;
	size_t b = ft_agree_bytes(n);
	a->my_bits = calloc(2, b + 1);
	a->decided_failed = calloc(1, b + 1);
	a->got = calloc(1, b + 1);
	a->failed = calloc(1, b + 1);
	a->acked = malloc(b + 1);
	if (!a->my_bits || !a->decided_failed || !a->got || !a->failed || !a->acked) {
		destroy(a);
		return NULL;
	}
	memset(a->acked, 0xff, b + 1);
	a->id = id;
	a->seq = seq;
	a->n = n;
	a->and_value = UINT32_MAX;
	a->sent_to = UINT32_MAX;
	a->next = t->all;
	t->all = a;
	for (struct ft_agreement **p = &t->all; *p;) {
		struct ft_agreement *o = *p;
		if (o->id == id && o->decided && !o->wanted && o->seq + KEEP_DECIDED < seq) {
			*p = o->next;
			destroy(o);
		} else {
			p = &o->next;
		}
	}
	return a;
}

static void post(struct ft_agreements *t, const struct ft_agree_view *v, uint32_t to, uint16_t kind,
		 const struct ft_agreement *a, uint32_t value, const uint8_t *data, uint32_t len)
{
	struct ft_msg m = { .type = FT_MSG_APP };

	m.app.key = a->id;
	m.app.seq = a->seq;
	m.app.kind = kind;
	m.app.value = value;
	m.app.len = len;
	m.app.data = data;
	t->ops.send(t->ops.ctx, (uint32_t)v->members[to], &m);
}

static void on_contribution(struct ft_agreements *t, struct ft_agreement *a,
			    const struct ft_agree_view *v, uint32_t from, const struct ft_msg *m);

static void send_contribution(struct ft_agreements *t, struct ft_agreement *a,
			      const struct ft_agree_view *v)
{
	size_t b = ft_agree_bytes(a->n);
	uint8_t *d = malloc(4 + 2 * b);
	uint32_t to = coordinator(t, v);

	if (!d || to == UINT32_MAX) {
		free(d);
		return;
	}
	memcpy(d, &a->n, 4);
	memcpy(d + 4, a->my_bits, 2 * b);
	a->sent_to = to;
	if (to == v->self) {
		/* Its own contribution, taken here rather than sent. */
		struct ft_msg m = { .type = FT_MSG_APP, .from = (uint32_t)v->members[v->self] };
		m.app.key = a->id;
		m.app.seq = a->seq;
		m.app.kind = FT_AGREE_CONTRIB;
		m.app.value = a->my_value;
		m.app.len = (uint32_t)(4 + 2 * b);
		m.app.data = d;
		on_contribution(t, a, v, to, &m);
	} else {
		post(t, v, to, FT_AGREE_CONTRIB, a, a->my_value, d, (uint32_t)(4 + 2 * b));
	}
	free(d);
}

static void send_decision(struct ft_agreements *t, const struct ft_agreement *a,
			  const struct ft_agree_view *v, uint32_t to)
{
	size_t b = ft_agree_bytes(a->n);
	uint8_t *d = malloc(8 + b);
	uint32_t rc = (uint32_t)a->rc;

	if (!d)
		return;
	memcpy(d, &a->n, 4);
	memcpy(d + 4, &rc, 4);
	memcpy(d + 8, a->decided_failed, b);
	post(t, v, to, FT_AGREE_DECIDE, a, a->value, d, (uint32_t)(8 + b));
	free(d);
}

static void broadcast_decision(struct ft_agreements *t, const struct ft_agreement *a,
			       const struct ft_agree_view *v)
{
	for (uint32_t i = 0; i < v->n; i++)
		if (i != v->self && !member_failed(t, v, i))
			send_decision(t, a, v, i);
}

static void set_decided(struct ft_agreements *t, struct ft_agreement *a, uint32_t value, int rc,
			const uint8_t *failed)
{
	a->decided = true;
	a->value = value;
	a->rc = rc;
	memcpy(a->decided_failed, failed, ft_agree_bytes(a->n));
	if (t->ops.decided)
		t->ops.decided(t->ops.ctx, a);
}

/* As the coordinator: decide once every live member has contributed. A
 * coordinator other than index 0 first asks everyone for a decision. */
static void try_decide(struct ft_agreements *t, struct ft_agreement *a, const struct ft_agree_view *v)
{
	if (a->decided || coordinator(t, v) != v->self || !a->joined)
		return;
	if (v->self != 0 && !a->asked) {
		a->asked = true;
		for (uint32_t i = 0; i < v->n; i++)
			if (i != v->self && !member_failed(t, v, i))
				post(t, v, i, FT_AGREE_ASK, a, 0, NULL, 0);
	}
	for (uint32_t i = 0; i < v->n; i++)
		if (!ft_agree_bit(a->got, i) && !member_failed(t, v, i))
			return;
	size_t b = ft_agree_bytes(a->n);
	uint8_t *failed = calloc(1, b + 1);
	if (!failed)
		return;
	int rc = 0;
	for (uint32_t i = 0; i < a->n; i++) {
		if (ft_agree_bit(a->failed, i) || member_failed(t, v, i))
			set_bit(failed, i);
		if (ft_agree_bit(failed, i) && !ft_agree_bit(a->acked, i))
			rc = t->unacked_rc;
	}
	set_decided(t, a, a->and_value, rc, failed);
	free(failed);
	broadcast_decision(t, a, v);
}

static void on_contribution(struct ft_agreements *t, struct ft_agreement *a,
			    const struct ft_agree_view *v, uint32_t from, const struct ft_msg *m)
{
	size_t b = ft_agree_bytes(a->n);

	if (m->app.len != 4 + 2 * b)
		return;
	if (a->decided) {
		send_decision(t, a, v, from); /* late, or asking again */
		return;
	}
	if (!ft_agree_bit(a->got, from)) {
		set_bit(a->got, from);
		a->and_value &= m->app.value;
		for (size_t i = 0; i < b; i++) {
			a->failed[i] |= m->app.data[4 + i];
			a->acked[i] &= m->app.data[4 + b + i];
		}
	}
	try_decide(t, a, v);
}

static void on_decision(struct ft_agreements *t, struct ft_agreement *a,
			const struct ft_agree_view *v, const struct ft_msg *m)
{
	size_t b = ft_agree_bytes(a->n);
	uint32_t rc;

	if (m->app.len != 8 + b || a->decided)
		return;
	memcpy(&rc, m->app.data + 4, 4);
	set_decided(t, a, m->app.value, (int)rc, m->app.data + 8);
	/* A coordinator that took over adopts a decision someone held, and
	 * makes sure every live member gets it. */
	if (coordinator(t, v) == v->self)
		broadcast_decision(t, a, v);
}

static void hold(struct ft_agreements *t, const struct ft_msg *m)
{
	struct ft_agree_held *h = malloc(sizeof *h + m->app.len);

	if (!h)
		return;
	h->next = NULL;
	h->m = *m;
	if (m->app.len)
		memcpy(h->data, m->app.data, m->app.len);
	h->m.app.data = h->data;
	*t->held_tail = h;
	t->held_tail = &h->next;
	if (++t->nheld > MAX_HELD) {
		struct ft_agree_held *old = t->held;
		t->held = old->next;
		if (!t->held)
			t->held_tail = &t->held;
		t->nheld--;
		free(old);
	}
}

void ft_agree_init(struct ft_agreements *t, const struct ft_agree_ops *ops, int unacked_rc)
{
	memset(t, 0, sizeof *t);
	t->ops = *ops;
	t->unacked_rc = unacked_rc;
	t->held_tail = &t->held;
}

void ft_agree_destroy(struct ft_agreements *t)
{
	while (t->all) {
		struct ft_agreement *a = t->all;
		t->all = a->next;
		destroy(a);
	}
	while (t->held) {
		struct ft_agree_held *h = t->held;
		t->held = h->next;
		free(h);
	}
	t->held_tail = &t->held;
	t->nheld = 0;
}

struct ft_agreement *ft_agree_start(struct ft_agreements *t, uint64_t id, uint32_t seq,
				    uint32_t value, bool (*acked)(void *arg, uint32_t rank),
				    void *arg, uint64_t now)
{
	struct ft_agree_view v;

	if (!get_view(t, id, &v))
		return NULL;
	size_t b = ft_agree_bytes(v.n);
	struct ft_agreement *a = get(t, id, seq, v.n);
	if (a) {
		a->joined = true;
		a->wanted = true;
		a->my_value = value;
		for (uint32_t i = 0; i < v.n; i++) {
			if (member_failed(t, &v, i))
				set_bit(a->my_bits, i);
			if (acked && acked(arg, (uint32_t)v.members[i]))
				set_bit(a->my_bits + b, i);
		}
		send_contribution(t, a, &v);
		a->checked_ns = now;
	}
	put_view(t, &v);
	return a;
}

bool ft_agree_take(struct ft_agreements *t, struct ft_agreement *a, uint64_t now, uint32_t *value,
		   int *rc, uint8_t *failed)
{
	if (!a->decided) {
		if (now - a->checked_ns < FT_AGREE_RECHECK_NS)
			return false;
		a->checked_ns = now;
		struct ft_agree_view v;
		if (a->sent_to != UINT32_MAX && get_view(t, a->id, &v)) {
			if (member_failed(t, &v, a->sent_to))
				send_contribution(t, a, &v);
			put_view(t, &v);
		}
		return false;
	}
	*value = a->value;
	*rc = a->rc;
	if (failed)
		memcpy(failed, a->decided_failed, ft_agree_bytes(a->n));
	a->wanted = false;
	return true;
}

void ft_agree_receive(struct ft_agreements *t, const struct ft_msg *m)
{
	struct ft_agree_view v;
	uint32_t n;

	if (!get_view(t, m->app.key, &v)) {
		hold(t, m);
		return;
	}
	memcpy(&n, m->app.len >= 4 ? m->app.data : (const uint8_t *)&v.n, 4);
	uint32_t from = UINT32_MAX;
	for (uint32_t i = 0; i < v.n; i++)
		if ((uint32_t)v.members[i] == m->from)
			from = i;
	struct ft_agreement *a = NULL;
	if (from != UINT32_MAX && n == v.n)
		a = get(t, m->app.key, m->app.seq, v.n);
	if (a) {
		switch (m->app.kind) {
		case FT_AGREE_CONTRIB:
			on_contribution(t, a, &v, from, m);
			break;
		case FT_AGREE_DECIDE:
			on_decision(t, a, &v, m);
			break;
		case FT_AGREE_ASK:
			if (a->decided)
				send_decision(t, a, &v, from);
			else if (a->joined)
				send_contribution(t, a, &v);
			break;
		}
	}
	put_view(t, &v);
}

void ft_agree_created(struct ft_agreements *t, uint64_t id)
{
	struct ft_agree_held *mine = NULL, **tail = &mine;

	for (struct ft_agree_held **p = &t->held; *p;) {
		struct ft_agree_held *h = *p;
		if (h->m.app.key == id) {
			*p = h->next;
			h->next = NULL;
			*tail = h;
			tail = &h->next;
			t->nheld--;
		} else {
			p = &h->next;
		}
	}
	t->held_tail = &t->held;
	while (*t->held_tail)
		t->held_tail = &(*t->held_tail)->next;
	while (mine) {
		struct ft_agree_held *next = mine->next;
		ft_agree_receive(t, &mine->m);
		free(mine);
		mine = next;
	}
}

void ft_agree_failure(struct ft_agreements *t)
{
	for (struct ft_agreement *a = t->all; a; a = a->next) {
		struct ft_agree_view v;
		if (a->decided || !get_view(t, a->id, &v))
			continue;
		if (a->joined && a->sent_to != UINT32_MAX && member_failed(t, &v, a->sent_to))
			send_contribution(t, a, &v);
		try_decide(t, a, &v);
		put_view(t, &v);
	}
}

/* Whether c's remote group goes first in agreement order. */
static bool remote_group_first(const struct ft_comm *c)
{
	return c->remote_size && c->members[c->local_size] < c->members[0];
}

void ft_agree_order(const struct ft_comm *c, int32_t *out)
{
	uint32_t nl = c->local_size, nr = c->remote_size;

	if (remote_group_first(c)) {
		memcpy(out, c->members + nl, nr * sizeof *out);
		memcpy(out + nr, c->members, nl * sizeof *out);
	} else {
		memcpy(out, c->members, (nl + nr) * sizeof *out);
	}
}

uint32_t ft_agree_index(const struct ft_comm *c, bool remote, uint32_t j)
{
	uint32_t nl = c->local_size, nr = c->remote_size;
	bool swapped = remote_group_first(c);

	return remote ? (swapped ? j : nl + j) : (swapped ? nr + j : j);
}
