/* check_repl_log.c: unit tests of src/repl_log.c. The counts table makes
 * zeroed entries keyed by (communicator, peer, tag) and hands the same
 * ones back, keeps keys that differ in any one field apart, refuses
 * communicator 0 and negative peers, and never reports the empty-slot
 * marker as an entry; its values survive growth to 10,000 entries;
 * each_peer visits exactly one peer's entries, and drop_comm forgets
 * exactly one communicator's and keeps the rest findable and the count of
 * entries right, so the table grows again after it. The send log numbers
 * and keeps messages oldest first; each_after visits, oldest first,
 * exactly the entries to one peer past its copy's count of their tag;
 * appends beyond the budget drop the oldest and only as many as they must
 * (the log holds the longest run of newest messages within the budget),
 * counting them; a message larger than the budget is refused without
 * dropping anything; zero-length messages are logged; drop_comm forgets
 * one communicator's messages, the newest included, and appends go on in
 * order after it; fini frees everything and leaves a usable log. */
#include "ftshim_config.h"

#include <check.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/repl_log.h"

/* --- counts ---------------------------------------------------------------- */

/* The table is well formed: used counts the occupied slots, cap is a
 * power of two (or 0) and at least twice used. */
static void check_table(const struct ft_msg_table *t)
{
	size_t occupied = 0;

	for (size_t i = 0; i < t->cap; i++)
		occupied += !(t->slots[i].comm == 0 && t->slots[i].peer == -1);
	ck_assert_uint_eq(occupied, t->used);
	ck_assert_uint_eq(t->cap & (t->cap - 1), 0);
	ck_assert_uint_le(t->used * 2, t->cap);
}

static void assert_key(const struct ft_msg_counts *c, uint64_t comm, int32_t peer, int32_t tag)
{
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->comm, comm);
	ck_assert_int_eq(c->peer, peer);
	ck_assert_int_eq(c->tag, tag);
}

static void assert_zero(const struct ft_msg_counts *c)
{
	ck_assert_uint_eq(c->sent, 0);
	ck_assert_uint_eq(c->received, 0);
	ck_assert_uint_eq(c->skip[FT_SLOT_PRIMARY], 0);
	ck_assert_uint_eq(c->skip[FT_SLOT_REPLICA], 0);
}

START_TEST(test_counts_get_find)
{
	struct ft_msg_table t;

	ft_msg_table_init(&t);
	ck_assert_ptr_null(ft_msg_counts_find(&t, 7, 2, 5)); /* nothing allocated yet */

	struct ft_msg_counts *c = ft_msg_counts_get(&t, 7, 2, 5);
	assert_key(c, 7, 2, 5);
	assert_zero(c);
	ck_assert_uint_eq(t.used, 1);
	c->sent = 3;
	c->received = 2;
	c->skip[FT_SLOT_PRIMARY] = 1;
	c->skip[FT_SLOT_REPLICA] = 4;

	c = ft_msg_counts_get(&t, 7, 2, 5);
	assert_key(c, 7, 2, 5);
	ck_assert_uint_eq(c->sent, 3);
	ck_assert_uint_eq(c->received, 2);
	ck_assert_uint_eq(c->skip[FT_SLOT_PRIMARY], 1);
	ck_assert_uint_eq(c->skip[FT_SLOT_REPLICA], 4);
	ck_assert_uint_eq(t.used, 1);

	const struct ft_msg_counts *f = ft_msg_counts_find(&t, 7, 2, 5);
	ck_assert_ptr_eq(f, c);
	ck_assert_uint_eq(f->sent, 3);
	ck_assert_ptr_null(ft_msg_counts_find(&t, 7, 2, 6));
	ck_assert_ptr_null(ft_msg_counts_find(&t, 7, 3, 5));
	ck_assert_ptr_null(ft_msg_counts_find(&t, 8, 2, 5));
	check_table(&t);
	ft_msg_table_fini(&t);
	ck_assert_ptr_null(t.slots);
	ck_assert_uint_eq(t.cap, 0);
	ck_assert_uint_eq(t.used, 0);
	ck_assert_ptr_null(ft_msg_counts_find(&t, 7, 2, 5));
	ft_msg_table_fini(&t); /* twice is harmless */
}
END_TEST

START_TEST(test_counts_distinct_keys)
{
	/* Each differs from the first in one field, or swaps peer and tag. */
	static const struct {
		uint64_t comm;
		int32_t peer, tag;
	} keys[] = {
	    {7, 2, 5},	{7, 2, 6},
	    {7, 3, 5},	{8, 2, 5},
	    {7, 5, 2},	{(UINT64_C(1) << 32) | 7, 2, 5},
	    {7, 2, -5}, {7, 2, 0},
	    {7, 0, 5},	{UINT64_MAX, INT32_MAX, INT32_MIN},
	};
	const size_t n = sizeof keys / sizeof keys[0];
	struct ft_msg_table t;

	ft_msg_table_init(&t);
	for (size_t i = 0; i < n; i++) {
		struct ft_msg_counts *c =
		    ft_msg_counts_get(&t, keys[i].comm, keys[i].peer, keys[i].tag);
		assert_key(c, keys[i].comm, keys[i].peer, keys[i].tag);
		assert_zero(c); /* new, not one of the others */
		c->sent = 100 + i;
		c->received = 200 + i;
		ck_assert_uint_eq(t.used, i + 1);
	}
	for (size_t i = 0; i < n; i++) {
		const struct ft_msg_counts *c =
		    ft_msg_counts_find(&t, keys[i].comm, keys[i].peer, keys[i].tag);
		assert_key(c, keys[i].comm, keys[i].peer, keys[i].tag);
		ck_assert_uint_eq(c->sent, 100 + i);
		ck_assert_uint_eq(c->received, 200 + i);
	}
	check_table(&t);
	ft_msg_table_fini(&t);
}
END_TEST

START_TEST(test_counts_refused)
{
	struct ft_msg_table t;

	ft_msg_table_init(&t);
	ck_assert_ptr_null(ft_msg_counts_get(&t, 0, 1, 1));
	ck_assert_ptr_null(ft_msg_counts_get(&t, 1, -1, 1));
	ck_assert_ptr_null(ft_msg_counts_get(&t, 1, INT32_MIN, 1));
	ck_assert_ptr_null(ft_msg_counts_get(&t, 0, -1, 0));
	ck_assert_uint_eq(t.used, 0);

	ck_assert_ptr_nonnull(ft_msg_counts_get(&t, 1, 0, 0));
	ck_assert_ptr_null(ft_msg_counts_get(&t, 0, 0, 0));
	ck_assert_ptr_null(ft_msg_counts_get(&t, 1, -2, 0));
	ck_assert_uint_eq(t.used, 1);
	/* Empty slots are comm 0, peer -1: asking for that key (or any with
	 * comm 0 or a negative peer) finds nothing. */
	ck_assert_ptr_null(ft_msg_counts_find(&t, 0, -1, 0));
	ck_assert_ptr_null(ft_msg_counts_find(&t, 0, -1, 1));
	ck_assert_ptr_null(ft_msg_counts_find(&t, 0, 0, 0));
	ck_assert_ptr_null(ft_msg_counts_find(&t, 1, -1, 0));
	check_table(&t);
	ft_msg_table_fini(&t);
}
END_TEST

/* The i-th of many keys: 20 communicators, 100 peers, 10 tags (some
 * negative, like internal tags). */
static void key_of(uint32_t i, uint64_t *comm, int32_t *peer, int32_t *tag)
{
	*comm = UINT64_C(0x100000000) * (1 + i / 1000) + 1 + i / 1000;
	*peer = (int32_t)(i % 1000 / 10);
	*tag = (int32_t)(i % 10) - 3;
}

static void set_values(struct ft_msg_counts *c, uint32_t i)
{
	c->sent = 3u * i + 1;
	c->received = i;
	c->skip[FT_SLOT_PRIMARY] = i + 7;
	c->skip[FT_SLOT_REPLICA] = 2u * i;
}

static void assert_values(const struct ft_msg_counts *c, uint32_t i)
{
	uint64_t comm;
	int32_t peer, tag;

	key_of(i, &comm, &peer, &tag);
	assert_key(c, comm, peer, tag);
	ck_assert_uint_eq(c->sent, 3u * i + 1);
	ck_assert_uint_eq(c->received, i);
	ck_assert_uint_eq(c->skip[FT_SLOT_PRIMARY], i + 7);
	ck_assert_uint_eq(c->skip[FT_SLOT_REPLICA], 2u * i);
}

/* Insert keys lo..hi-1, each new and given its values. */
static void insert_range(struct ft_msg_table *t, uint32_t lo, uint32_t hi)
{
	for (uint32_t i = lo; i < hi; i++) {
		uint64_t comm;
		int32_t peer, tag;
		size_t used = t->used;

		key_of(i, &comm, &peer, &tag);
		struct ft_msg_counts *c = ft_msg_counts_get(t, comm, peer, tag);
		assert_key(c, comm, peer, tag);
		assert_zero(c);
		ck_assert_uint_eq(t->used, used + 1);
		set_values(c, i);
	}
}

static const struct ft_msg_counts *find_key(const struct ft_msg_table *t, uint32_t i)
{
	uint64_t comm;
	int32_t peer, tag;

	key_of(i, &comm, &peer, &tag);
	return ft_msg_counts_find(t, comm, peer, tag);
}

START_TEST(test_counts_growth)
{
	struct ft_msg_table t;

	ft_msg_table_init(&t);
	insert_range(&t, 0, 10000);
	ck_assert_uint_eq(t.used, 10000);
	ck_assert_uint_ge(t.cap, 20000);
	check_table(&t);
	for (uint32_t i = 0; i < 10000; i++)
		assert_values(find_key(&t, i), i);
	/* get of existing keys creates nothing and changes nothing. */
	for (uint32_t i = 0; i < 10000; i += 37) {
		uint64_t comm;
		int32_t peer, tag;

		key_of(i, &comm, &peer, &tag);
		assert_values(ft_msg_counts_get(&t, comm, peer, tag), i);
	}
	ck_assert_uint_eq(t.used, 10000);
	ck_assert_ptr_null(ft_msg_counts_find(&t, 999, 0, 0));
	ft_msg_table_fini(&t);
}
END_TEST

struct visits {
	int32_t peer;
	size_t n;
	bool seen[2000];
};

static void visit_peer(struct ft_msg_counts *c, void *arg)
{
	struct visits *v = arg;
	uint64_t comm = c->comm & 0xffffffffu;

	ck_assert_int_eq(c->peer, v->peer);
	ck_assert_uint_ge(comm, 1);
	ck_assert_uint_le(comm, 200);
	ck_assert_int_ge(c->tag, 0);
	ck_assert_int_lt(c->tag, 10);
	size_t k = (size_t)(comm - 1) * 10 + (size_t)c->tag;
	ck_assert_msg(!v->seen[k], "(%llu, %d, %d) visited twice", (unsigned long long)c->comm,
		      c->peer, c->tag);
	v->seen[k] = true;
	v->n++;
	c->received += 1000; /* fn may change the counts */
}

START_TEST(test_counts_each_peer)
{
	struct ft_msg_table t;
	static struct visits v;

	ft_msg_table_init(&t);
	v = (struct visits){.peer = 3};
	ft_msg_table_each_peer(&t, 3, visit_peer, &v); /* empty table */
	ck_assert_uint_eq(v.n, 0);
	/* Peers 0..7 on communicators 1..200, a tag set that depends on
	 * both: (comm + peer) % 10 + 1 tags each. */
	size_t want = 0;
	for (uint64_t comm = 1; comm <= 200; comm++) {
		for (int32_t peer = 0; peer < 8; peer++) {
			int32_t tags = (int32_t)((comm + (uint64_t)peer) % 10) + 1;
			for (int32_t tag = 0; tag < tags; tag++) {
				struct ft_msg_counts *c =
				    ft_msg_counts_get(&t, comm | UINT64_C(1) << 40, peer, tag);
				ck_assert_ptr_nonnull(c);
				c->received = (uint64_t)tag;
			}
			if (peer == 3)
				want += (size_t)tags;
		}
	}
	ft_msg_table_each_peer(&t, 3, visit_peer, &v);
	ck_assert_uint_eq(v.n, want);
	for (uint64_t comm = 1; comm <= 200; comm++) {
		int32_t tags = (int32_t)((comm + 3) % 10) + 1;
		for (int32_t tag = 0; tag < 10; tag++) {
			ck_assert(v.seen[(comm - 1) * 10 + (size_t)tag] == (tag < tags));
			const struct ft_msg_counts *c =
			    ft_msg_counts_find(&t, comm | UINT64_C(1) << 40, 3, tag);
			if (tag < tags)
				ck_assert_uint_eq(c->received, 1000 + (uint64_t)tag);
			else
				ck_assert_ptr_null(c);
			/* Other peers' entries were not touched. */
			c = ft_msg_counts_find(&t, comm | UINT64_C(1) << 40, 4, 0);
			ck_assert_uint_eq(c->received, 0);
		}
	}
	v = (struct visits){.peer = 8};
	ft_msg_table_each_peer(&t, 8, visit_peer, &v);
	ck_assert_uint_eq(v.n, 0);
	ft_msg_table_fini(&t);
}
END_TEST

START_TEST(test_counts_drop_comm)
{
	struct ft_msg_table t;

	ft_msg_table_init(&t);
	ft_msg_table_drop_comm(&t, 1); /* empty table */
	ck_assert_uint_eq(t.used, 0);
	for (uint64_t comm = 1; comm <= 3; comm++) {
		for (int32_t peer = 0; peer < 3; peer++) {
			struct ft_msg_counts *c = ft_msg_counts_get(&t, comm, peer, 9);
			ck_assert_ptr_nonnull(c);
			c->sent = comm * 10 + (uint64_t)peer;
		}
	}
	ck_assert_uint_eq(t.used, 9);
	ft_msg_table_drop_comm(&t, 2);
	ck_assert_uint_eq(t.used, 6);
	check_table(&t);
	for (uint64_t comm = 1; comm <= 3; comm++) {
		for (int32_t peer = 0; peer < 3; peer++) {
			const struct ft_msg_counts *c = ft_msg_counts_find(&t, comm, peer, 9);
			if (comm == 2) {
				ck_assert_ptr_null(c);
			} else {
				assert_key(c, comm, peer, 9);
				ck_assert_uint_eq(c->sent, comm * 10 + (uint64_t)peer);
			}
		}
	}
	/* Dropping it again, or a communicator with no entries, changes nothing. */
	ft_msg_table_drop_comm(&t, 2);
	ft_msg_table_drop_comm(&t, 4);
	ck_assert_uint_eq(t.used, 6);
	/* A dropped key comes back zeroed. */
	struct ft_msg_counts *c = ft_msg_counts_get(&t, 2, 1, 9);
	assert_key(c, 2, 1, 9);
	assert_zero(c);
	ck_assert_uint_eq(t.used, 7);
	check_table(&t);
	ft_msg_table_fini(&t);
}
END_TEST

START_TEST(test_counts_drop_comm_many)
{
	struct ft_msg_table t;

	ft_msg_table_init(&t);
	insert_range(&t, 0, 10000); /* communicators 1..10, 1000 keys each */
	ft_msg_table_drop_comm(&t, UINT64_C(0x100000000) * 5 + 5);
	ck_assert_uint_eq(t.used, 9000);
	check_table(&t);
	for (uint32_t i = 0; i < 10000; i++) {
		if (i / 1000 == 4)
			ck_assert_ptr_null(find_key(&t, i));
		else
			assert_values(find_key(&t, i), i);
	}
	/* Grows again after it: communicators 11..20, and 5 again. */
	insert_range(&t, 10000, 20000);
	insert_range(&t, 4000, 5000);
	ck_assert_uint_eq(t.used, 20000);
	check_table(&t);
	for (uint32_t i = 0; i < 20000; i++)
		assert_values(find_key(&t, i), i);
	/* Drop every other communicator, then all the rest. */
	for (uint32_t k = 0; k < 20; k += 2)
		ft_msg_table_drop_comm(&t, UINT64_C(0x100000000) * (1 + k) + 1 + k);
	ck_assert_uint_eq(t.used, 10000);
	check_table(&t);
	for (uint32_t i = 0; i < 20000; i++) {
		if (i / 1000 % 2 == 0)
			ck_assert_ptr_null(find_key(&t, i));
		else
			assert_values(find_key(&t, i), i);
	}
	for (uint32_t k = 1; k < 20; k += 2)
		ft_msg_table_drop_comm(&t, UINT64_C(0x100000000) * (1 + k) + 1 + k);
	ck_assert_uint_eq(t.used, 0);
	check_table(&t);
	for (uint32_t i = 0; i < 20000; i += 13)
		ck_assert_ptr_null(find_key(&t, i));
	insert_range(&t, 0, 3000);
	for (uint32_t i = 0; i < 3000; i++)
		assert_values(find_key(&t, i), i);
	ck_assert_uint_eq(t.used, 3000);
	ft_msg_table_fini(&t);
}
END_TEST

/* --- the send log ------------------------------------------------------------ */

/* The log is well formed: a list from oldest to newest whose data bytes
 * add up to bytes. Returns how many entries it holds. */
static size_t check_log(const struct ft_send_log *log)
{
	size_t n = 0, bytes = 0;
	const struct ft_logged *last = NULL;

	for (const struct ft_logged *m = log->oldest; m; m = m->next) {
		n++;
		bytes += m->len;
		last = m;
	}
	ck_assert_ptr_eq(log->newest, last);
	ck_assert_uint_eq(log->bytes, bytes);
	return n;
}

static struct ft_logged *append_filled(struct ft_send_log *log, uint64_t comm, int32_t peer,
				       int32_t tag, uint64_t seq, size_t len)
{
	struct ft_logged *m = ft_send_log_append(log, comm, peer, tag, seq, len);

	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(m->comm, comm);
	ck_assert_int_eq(m->peer, peer);
	ck_assert_int_eq(m->tag, tag);
	ck_assert_uint_eq(m->seq, seq);
	ck_assert_uint_eq(m->len, len);
	ck_assert_ptr_null(m->next);
	ck_assert_ptr_eq(log->newest, m);
	for (size_t i = 0; i < len; i++)
		m->data[i] = (unsigned char)(seq * 31 + i);
	return m;
}

static void assert_data(const struct ft_logged *m)
{
	for (size_t i = 0; i < m->len; i++)
		ck_assert_uint_eq(m->data[i], (unsigned char)(m->seq * 31 + i));
}

START_TEST(test_log_append)
{
	struct ft_send_log log;

	ft_send_log_init(&log, 1000);
	ck_assert_uint_eq(log.budget, 1000);
	ck_assert_uint_eq(check_log(&log), 0);
	struct ft_logged *a = append_filled(&log, 1, 2, 3, 1, 10);
	ck_assert_ptr_eq(log.oldest, a);
	ck_assert_uint_eq(log.bytes, 10);
	struct ft_logged *b = append_filled(&log, 1, 2, 3, 2, 20);
	struct ft_logged *c = append_filled(&log, 9, 0, -4, 77, 300);
	ck_assert_ptr_eq(log.oldest, a);
	ck_assert_ptr_eq(a->next, b);
	ck_assert_ptr_eq(b->next, c);
	ck_assert_uint_eq(log.bytes, 330);
	ck_assert_uint_eq(log.dropped, 0);
	ck_assert_uint_eq(check_log(&log), 3);
	assert_data(a);
	assert_data(b);
	assert_data(c);
	ft_send_log_fini(&log);
}
END_TEST

struct resend {
	uint64_t count[8]; /* per tag, what the peer's copy has */
	const struct ft_logged *got[32];
	size_t n;
};

static uint64_t resend_after(int32_t tag, void *arg)
{
	const struct resend *r = arg;

	ck_assert_int_ge(tag, 0);
	ck_assert_int_lt(tag, 8);
	return r->count[tag];
}

static void resend_fn(const struct ft_logged *m, void *arg)
{
	struct resend *r = arg;

	ck_assert_uint_lt(r->n, 32);
	r->got[r->n++] = m;
}

START_TEST(test_log_each_after)
{
	/* Sends to (1, 2) interleaved with sends to (1, 3), (2, 2) and (3, 1). */
	static const struct {
		uint64_t comm;
		int32_t peer, tag;
		uint64_t seq;
	} sends[] = {
	    {1, 2, 5, 1}, {1, 2, 6, 1}, {1, 3, 5, 1}, {1, 2, 5, 2}, {2, 2, 5, 1}, {1, 2, 5, 3},
	    {1, 2, 6, 2}, {3, 1, 5, 4}, {1, 2, 7, 1}, {1, 2, 5, 4}, {1, 3, 6, 9},
	};
	const size_t n = sizeof sends / sizeof sends[0];
	struct ft_logged *entry[sizeof sends / sizeof sends[0]];
	struct ft_send_log log;

	ft_send_log_init(&log, 1 << 20);
	for (size_t i = 0; i < n; i++)
		entry[i] = append_filled(&log, sends[i].comm, sends[i].peer, sends[i].tag,
					 sends[i].seq, 4 + i);
	/* Counts of tags 5, 6, 7 and the sends to (1, 2) past them. */
	static const struct {
		uint64_t c5, c6, c7;
		size_t want[8], n;
	} cases[] = {
	    {0, 0, 0, {0, 1, 3, 5, 6, 8, 9}, 7},
	    {2, 1, 1, {5, 6, 9}, 3},
	    {1, 2, 0, {3, 5, 8, 9}, 4},
	    {4, 2, 1, {0}, 0},
	    {UINT64_MAX, UINT64_MAX, UINT64_MAX, {0}, 0},
	    {3, 0, 5, {1, 6, 9}, 3},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		struct resend r = {.n = 0};

		r.count[5] = cases[k].c5;
		r.count[6] = cases[k].c6;
		r.count[7] = cases[k].c7;
		ck_assert_uint_eq(ft_send_log_each_after(&log, 1, 2, resend_after, resend_fn, &r),
				  cases[k].n);
		ck_assert_uint_eq(r.n, cases[k].n);
		for (size_t j = 0; j < cases[k].n; j++) {
			ck_assert_ptr_eq(r.got[j], entry[cases[k].want[j]]);
			assert_data(r.got[j]);
		}
	}
	/* Other (comm, peer) pairs, and pairs with no entries. */
	struct resend r = {.n = 0};
	ck_assert_uint_eq(ft_send_log_each_after(&log, 1, 3, resend_after, resend_fn, &r), 2);
	ck_assert_ptr_eq(r.got[0], entry[2]);
	ck_assert_ptr_eq(r.got[1], entry[10]);
	r = (struct resend){.n = 0};
	r.count[5] = 3;
	ck_assert_uint_eq(ft_send_log_each_after(&log, 3, 1, resend_after, resend_fn, &r), 1);
	ck_assert_ptr_eq(r.got[0], entry[7]);
	r = (struct resend){.n = 0};
	ck_assert_uint_eq(ft_send_log_each_after(&log, 2, 3, resend_after, resend_fn, &r), 0);
	ck_assert_uint_eq(ft_send_log_each_after(&log, 4, 2, resend_after, resend_fn, &r), 0);
	ck_assert_uint_eq(r.n, 0);
	ft_send_log_fini(&log);
	ck_assert_uint_eq(ft_send_log_each_after(&log, 1, 2, resend_after, resend_fn, &r), 0);
}
END_TEST

/* After each append of a run of messages numbered 1, 2, ... (lengths in
 * len[]), the log holds the longest run of the newest that fits the
 * budget, data intact, and dropped counts the rest. */
static void check_budget_run(size_t budget, const size_t *len, size_t n)
{
	struct ft_send_log log;

	ft_send_log_init(&log, budget);
	for (size_t i = 0; i < n; i++) {
		append_filled(&log, 1, 0, 0, i + 1, len[i]);
		ck_assert_uint_le(log.bytes, budget);
		size_t held = check_log(&log);
		ck_assert_uint_le(held, i + 1);
		ck_assert_uint_eq(log.dropped, i + 1 - held);
		uint64_t seq = i + 2 - held;
		for (const struct ft_logged *m = log.oldest; m; m = m->next) {
			ck_assert_uint_eq(m->seq, seq++);
			ck_assert_uint_eq(m->len, len[m->seq - 1]);
			assert_data(m);
		}
		/* Only as many dropped as needed: the newest one dropped would
		 * not have fitted. */
		if (held < i + 1)
			ck_assert_uint_gt(log.bytes + len[i - held], budget);
	}
	ft_send_log_fini(&log);
}

START_TEST(test_log_budget)
{
	struct ft_send_log log;

	ft_send_log_init(&log, 100);
	for (uint64_t seq = 1; seq <= 10; seq++) {
		append_filled(&log, 1, 2, 3, seq, 30);
		ck_assert_uint_eq(log.bytes, 30 * (seq < 3 ? seq : 3));
		ck_assert_uint_eq(log.dropped, seq > 3 ? seq - 3 : 0);
		ck_assert_uint_eq(check_log(&log), seq < 3 ? seq : 3);
		ck_assert_uint_eq(log.oldest->seq, seq > 3 ? seq - 2 : 1);
	}
	/* Exactly the budget is allowed, and takes the whole log. */
	struct ft_logged *m = append_filled(&log, 1, 2, 3, 11, 100);
	ck_assert_ptr_eq(log.oldest, m);
	ck_assert_uint_eq(log.bytes, 100);
	ck_assert_uint_eq(log.dropped, 10);
	ck_assert_uint_eq(check_log(&log), 1);
	ft_send_log_fini(&log);

	static const size_t sizes[] = {10, 90, 1, 99, 50, 50, 0, 100, 0, 0, 1, 0, 60, 40, 41};
	check_budget_run(100, sizes, sizeof sizes / sizeof sizes[0]);

	/* Random lengths up to the budget. */
	static size_t len[3000];
	uint64_t state = 7;
	for (size_t i = 0; i < 3000; i++) {
		state = state * 6364136223846793005ull + 1442695040888963407ull;
		len[i] = (size_t)(state >> 33) % (i % 3 ? 65 : 1001);
	}
	check_budget_run(1000, len, 3000);
}
END_TEST

START_TEST(test_log_too_big)
{
	struct ft_send_log log;

	ft_send_log_init(&log, 50);
	struct ft_logged *a = append_filled(&log, 1, 2, 3, 1, 20);
	struct ft_logged *b = append_filled(&log, 1, 2, 3, 2, 20);
	ck_assert_ptr_null(ft_send_log_append(&log, 1, 2, 3, 3, 51));
	ck_assert_ptr_null(ft_send_log_append(&log, 1, 2, 3, 3, SIZE_MAX));
	ck_assert_ptr_eq(log.oldest, a);
	ck_assert_ptr_eq(log.newest, b);
	ck_assert_uint_eq(log.bytes, 40);
	ck_assert_uint_eq(log.dropped, 0);
	ck_assert_uint_eq(check_log(&log), 2);
	assert_data(a);
	assert_data(b);
	/* What fits still goes in after a refusal. */
	append_filled(&log, 1, 2, 3, 4, 10);
	ck_assert_uint_eq(log.bytes, 50);
	ck_assert_uint_eq(log.dropped, 0);
	ft_send_log_fini(&log);

	/* A budget of 0 holds zero-length messages only. */
	ft_send_log_init(&log, 0);
	ck_assert_ptr_null(ft_send_log_append(&log, 1, 2, 3, 1, 1));
	ck_assert_uint_eq(check_log(&log), 0);
	append_filled(&log, 1, 2, 3, 1, 0);
	ck_assert_ptr_null(ft_send_log_append(&log, 1, 2, 3, 2, 1));
	ck_assert_uint_eq(check_log(&log), 1);
	ck_assert_uint_eq(log.dropped, 0);
	ft_send_log_fini(&log);
}
END_TEST

START_TEST(test_log_zero_length)
{
	struct ft_send_log log;

	ft_send_log_init(&log, 16);
	struct ft_logged *z1 = append_filled(&log, 1, 2, 3, 1, 0);
	struct ft_logged *big = append_filled(&log, 1, 2, 3, 2, 16);
	struct ft_logged *z2 = append_filled(&log, 1, 2, 3, 3, 0);
	/* Zero-length messages cost no budget: nothing was dropped. */
	ck_assert_uint_eq(log.bytes, 16);
	ck_assert_uint_eq(log.dropped, 0);
	ck_assert_ptr_eq(log.oldest, z1);
	ck_assert_ptr_eq(z1->next, big);
	ck_assert_ptr_eq(big->next, z2);

	struct resend r = {.n = 0};
	ck_assert_uint_eq(ft_send_log_each_after(&log, 1, 2, resend_after, resend_fn, &r), 3);
	ck_assert_ptr_eq(r.got[0], z1);
	ck_assert_ptr_eq(r.got[2], z2);
	r = (struct resend){.n = 0};
	r.count[3] = 2;
	ck_assert_uint_eq(ft_send_log_each_after(&log, 1, 2, resend_after, resend_fn, &r), 1);
	ck_assert_ptr_eq(r.got[0], z2);

	/* One more byte: the oldest go first, the zero-length one included,
	 * until it fits; the newer zero-length one stays. */
	struct ft_logged *one = append_filled(&log, 1, 2, 3, 4, 1);
	ck_assert_uint_eq(log.dropped, 2);
	ck_assert_uint_eq(log.bytes, 1);
	ck_assert_ptr_eq(log.oldest, z2);
	ck_assert_ptr_eq(z2->next, one);
	ck_assert_uint_eq(check_log(&log), 2);
	ft_send_log_fini(&log);
}
END_TEST

static void assert_order(const struct ft_send_log *log, const uint64_t *seqs, size_t n)
{
	size_t i = 0;

	ck_assert_uint_eq(check_log(log), n);
	for (const struct ft_logged *m = log->oldest; m; m = m->next, i++) {
		ck_assert_uint_eq(m->seq, seqs[i]);
		assert_data(m);
	}
}

START_TEST(test_log_drop_comm)
{
	struct ft_send_log log;

	ft_send_log_init(&log, 1000);
	ft_send_log_drop_comm(&log, 1); /* empty log */
	ck_assert_uint_eq(check_log(&log), 0);
	/* Communicators 1, 2, 1, 3, 2 (the newest), numbered 1..5. */
	static const uint64_t comm_of[] = {1, 2, 1, 3, 2};
	for (uint64_t i = 0; i < 5; i++)
		append_filled(&log, comm_of[i], 0, 0, i + 1, 10 * (i + 1));
	ck_assert_uint_eq(log.bytes, 150);

	ft_send_log_drop_comm(&log, 2);
	assert_order(&log, (const uint64_t[]){1, 3, 4}, 3);
	ck_assert_uint_eq(log.bytes, 80);
	ck_assert_uint_eq(log.dropped, 0); /* not dropped for the budget */
	ck_assert_uint_eq(log.newest->seq, 4);
	struct resend r = {.n = 0};
	ck_assert_uint_eq(ft_send_log_each_after(&log, 2, 0, resend_after, resend_fn, &r), 0);

	/* Appending after the newest was dropped links in order. */
	append_filled(&log, 2, 0, 0, 6, 60);
	append_filled(&log, 1, 0, 0, 7, 5);
	assert_order(&log, (const uint64_t[]){1, 3, 4, 6, 7}, 5);
	ck_assert_uint_eq(log.bytes, 145);

	/* Dropping the oldest's communicator, one with no entries, then the rest. */
	ft_send_log_drop_comm(&log, 1);
	assert_order(&log, (const uint64_t[]){4, 6}, 2);
	ft_send_log_drop_comm(&log, 9);
	assert_order(&log, (const uint64_t[]){4, 6}, 2);
	ft_send_log_drop_comm(&log, 3);
	ft_send_log_drop_comm(&log, 2);
	ck_assert_ptr_null(log.oldest);
	ck_assert_ptr_null(log.newest);
	ck_assert_uint_eq(check_log(&log), 0);
	append_filled(&log, 5, 0, 0, 8, 1000);
	append_filled(&log, 5, 0, 0, 9, 10);
	assert_order(&log, (const uint64_t[]){9}, 1);
	ck_assert_uint_eq(log.dropped, 1);
	ft_send_log_fini(&log);

	/* Many entries of many communicators: drop some, then append within
	 * the budget and see the oldest survivors go first. */
	ft_send_log_init(&log, 4000);
	for (uint64_t i = 0; i < 400; i++)
		append_filled(&log, 1 + i % 4, 0, 0, i + 1, 10);
	ck_assert_uint_eq(log.bytes, 4000);
	ft_send_log_drop_comm(&log, 4);
	ft_send_log_drop_comm(&log, 2);
	ck_assert_uint_eq(log.bytes, 2000);
	ck_assert_uint_eq(check_log(&log), 200);
	for (uint64_t i = 400; i < 600; i++)
		append_filled(&log, 1 + i % 4, 0, 0, i + 1, 10);
	ck_assert_uint_eq(log.bytes, 4000);
	ck_assert_uint_eq(log.dropped, 0);
	append_filled(&log, 1, 0, 0, 601, 25);
	ck_assert_uint_eq(log.dropped, 3);
	ck_assert_uint_eq(log.oldest->seq, 7); /* 1, 3 and 5 went */
	ck_assert_uint_eq(check_log(&log), 398);
	ft_send_log_fini(&log);
}
END_TEST

START_TEST(test_log_fini)
{
	struct ft_send_log log;

	ft_send_log_init(&log, 1 << 16);
	ft_send_log_fini(&log); /* empty log */
	for (uint64_t i = 0; i < 5000; i++)
		append_filled(&log, 1 + i % 3, (int32_t)(i % 5), 0, i + 1, i % 100);
	ck_assert_uint_gt(log.dropped, 0);
	ck_assert_uint_gt(check_log(&log), 1000);
	ft_send_log_fini(&log);
	ck_assert_ptr_null(log.oldest);
	ck_assert_ptr_null(log.newest);
	ck_assert_uint_eq(log.bytes, 0);
	ck_assert_uint_eq(log.dropped, 0);
	ck_assert_uint_eq(log.budget, 1 << 16);
	/* Usable again, and fini twice is harmless. */
	append_filled(&log, 1, 0, 0, 1, 100);
	ck_assert_uint_eq(check_log(&log), 1);
	ft_send_log_fini(&log);
	ft_send_log_fini(&log);
	ck_assert_uint_eq(check_log(&log), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("repl_log");
	TCase *tc_counts = tcase_create("counts");
	TCase *tc_log = tcase_create("send_log");

	tcase_add_test(tc_counts, test_counts_get_find);
	tcase_add_test(tc_counts, test_counts_distinct_keys);
	tcase_add_test(tc_counts, test_counts_refused);
	tcase_add_test(tc_counts, test_counts_growth);
	tcase_add_test(tc_counts, test_counts_each_peer);
	tcase_add_test(tc_counts, test_counts_drop_comm);
	tcase_add_test(tc_counts, test_counts_drop_comm_many);
	/* test_log_budget walks the log after each of 3000 appends: seconds
	 * on a loaded machine, past Check's default 4 s. */
	tcase_set_timeout(tc_log, 60);
	tcase_add_test(tc_log, test_log_append);
	tcase_add_test(tc_log, test_log_each_after);
	tcase_add_test(tc_log, test_log_budget);
	tcase_add_test(tc_log, test_log_too_big);
	tcase_add_test(tc_log, test_log_zero_length);
	tcase_add_test(tc_log, test_log_drop_comm);
	tcase_add_test(tc_log, test_log_fini);
	suite_add_tcase(s, tc_counts);
	suite_add_tcase(s, tc_log);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
