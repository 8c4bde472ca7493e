/* check_ckpt_link.c: unit tests for src/ckpt_link.c. The header codec:
 * a round trip, the bytes where ckpt_link.h puts them, and every reason
 * to reject one. Two links in one process over loopback: copies of 3
 * bytes and of 64 MiB stored, acknowledged and fetched back whole, a
 * fetch of a copy nobody has, notes and the rounds that drop them. A
 * frame without the secret closes its connection and is counted, and the
 * link goes on serving. A peer that takes a copy's first bytes and then
 * nothing: forget and cancel_all end the operation at once, cancel_all
 * with the link's references dropped, also while the copier streams to a
 * peer that reads; stop with operations pending frees everything (run
 * under ASan for the proof). A rank without an endpoint is unreachable. */
#include "ftshim_config.h"

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "src/ckpt_link.h"
#include "src/clock.h"
#include "src/common.h"
#include "src/fdio.h"

/* ThreadSanitizer's shadow memory makes every MiB copied slow: a quarter
 * of the sizes there, still far more than the socket buffers take. */
#ifdef __SANITIZE_THREAD__
#define SIZE_SHIFT 2
#else
#define SIZE_SHIFT 0
#endif
#define BIG_LEN (((uint64_t)64 << 20) >> SIZE_SHIFT)
/* Far more than a silent peer's buffers take (its receive buffer is made
 * small; the sender's grows to tcp_wmem's maximum, 4 MiB by default). */
#define SILENT_LEN (((uint64_t)32 << 20) >> SIZE_SHIFT)
#define MAX_LEN ((uint64_t)128 << 20)
/* The longest any test waits for something to happen. */
#define WAIT_NS (10 * FT_NSEC_PER_SEC)

static const uint8_t secret[FT_SECRET_LEN] = { 0x5e, 0xc2, 0xe7, 4, 5, 6, 7, 8,
					       9, 10, 11, 12, 13, 14, 15, 16 };

/* --- the header ----------------------------------------------------------- */

static uint8_t good[FT_CKPT_HDR_LEN];

static const struct ft_ckpt_hdr store_hdr = { .type = FT_CKPT_STORE, .len = 1000, .from = 2,
					      .owner = 3, .tag = { .count = 0x0102030405060708ull,
								   .epoch = 9 } };

static void setup_good(void)
{
	ft_ckpt_hdr_encode(&store_hdr, secret, good);
}

START_TEST(test_hdr_round_trip)
{
	const struct ft_ckpt_hdr hs[] = {
		store_hdr,
		{ .type = FT_CKPT_ACK, .from = 0, .owner = 3, .tag = { 7, 1 } },
		{ .type = FT_CKPT_FETCH, .from = 3, .owner = 1, .tag = { UINT64_MAX, UINT32_MAX } },
		{ .type = FT_CKPT_DATA, .len = 4096, .from = 1, .owner = 1, .tag = { 2, 0 } },
		{ .type = FT_CKPT_DATA, .from = 1, .owner = 1, .tag = { 2, 0 }, .status = 1 },
		{ .type = FT_CKPT_NOTE, .len = FT_CKPT_NOTE_MAX, .from = 3, .round = 77 },
	};
	uint8_t buf[FT_CKPT_HDR_LEN];

	for (size_t i = 0; i < FT_ARRAY_SIZE(hs); i++) {
		struct ft_ckpt_hdr got;
		const char *why = NULL;

		memset(&got, 0xa5, sizeof got);
		ft_ckpt_hdr_encode(&hs[i], secret, buf);
		ck_assert_msg(ft_ckpt_hdr_decode(buf, secret, 4, 4096, &got, &why) == 0, "%zu: %s", i, why);
		ck_assert_uint_eq(got.type, hs[i].type);
		ck_assert_uint_eq(got.len, hs[i].len);
		ck_assert_uint_eq(got.from, hs[i].from);
		ck_assert_uint_eq(got.owner, hs[i].owner);
		ck_assert(ft_ckpt_tag_eq(got.tag, hs[i].tag));
		ck_assert_uint_eq(got.round, hs[i].round);
		ck_assert_uint_eq(got.status, hs[i].status);
	}
}
END_TEST

/* Where ckpt_link.h says, little-endian. */
START_TEST(test_hdr_layout)
{
	static const uint8_t head[] = { 'F', 'T', 'C', 'K', FT_CKPT_LINK_VERSION, FT_CKPT_STORE, 0, 0,
					0xe8, 3, 0, 0, 0, 0, 0, 0, /* length 1000 */
					2, 0, 0, 0, 3, 0, 0, 0,    /* from, owner */
					8, 7, 6, 5, 4, 3, 2, 1,    /* tag.count */
					9, 0, 0, 0 };              /* tag.epoch */

	ck_assert_mem_eq(good, head, sizeof head);
	for (size_t i = sizeof head; i < 48; i++)
		ck_assert_uint_eq(good[i], 0);
	ck_assert_mem_eq(good + 48, secret, FT_SECRET_LEN);
}
END_TEST

/* A frame spoiled one way: -EPROTO and a reason. */
struct spoiled {
	const char *what;
	size_t off;      /* the byte to change... */
	uint8_t value;   /* ...to this */
	const struct ft_ckpt_hdr *h; /* or a whole header (off ignored) */
	uint64_t max_len;
};

static const struct ft_ckpt_hdr ack_long = { .type = FT_CKPT_ACK, .len = 99 };
static const struct ft_ckpt_hdr fetch_long = { .type = FT_CKPT_FETCH, .len = 1 };
static const struct ft_ckpt_hdr data_long = { .type = FT_CKPT_DATA, .len = 1001 };
static const struct ft_ckpt_hdr missing_long = { .type = FT_CKPT_DATA, .len = 1, .status = 1 };
static const struct ft_ckpt_hdr note_long = { .type = FT_CKPT_NOTE, .len = FT_CKPT_NOTE_MAX + 1 };
static const struct ft_ckpt_hdr stranger = { .type = FT_CKPT_FETCH, .from = 4 };
static const struct ft_ckpt_hdr bad_status = { .type = FT_CKPT_DATA, .status = 2 };
static const struct ft_ckpt_hdr ack_status = { .type = FT_CKPT_ACK, .status = 1 };
static const struct ft_ckpt_hdr round_in_store = { .type = FT_CKPT_STORE, .round = 1 };
static const struct ft_ckpt_hdr owner_in_note = { .type = FT_CKPT_NOTE, .owner = 1 };

static const struct spoiled spoiled[] = {
	{ "magic", 0, 'G', NULL, 1000 },
	{ "magic's last byte", 3, 'L', NULL, 1000 },
	{ "version", 4, FT_CKPT_LINK_VERSION + 1, NULL, 1000 },
	{ "type 0", 5, 0, NULL, 1000 },
	{ "type 6", 5, 6, NULL, 1000 },
	{ "reserved at 6", 6, 1, NULL, 1000 },
	{ "reserved at 7", 7, 0x80, NULL, 1000 },
	{ "reserved at 47", 47, 1, NULL, 1000 },
	{ "secret's first byte", 48, 0, NULL, 1000 },
	{ "secret's last byte", 63, 0, NULL, 1000 },
	{ "STORE too long", 0, 0, NULL, 999 },
	{ "ACK with a length", 0, 0, &ack_long, 1000 },
	{ "FETCH with a length", 0, 0, &fetch_long, 1000 },
	{ "DATA too long", 0, 0, &data_long, 1000 },
	{ "DATA not found with a length", 0, 0, &missing_long, 1000 },
	{ "NOTE too long", 0, 0, &note_long, UINT64_MAX },
	{ "from outside the job", 0, 0, &stranger, 1000 },
	{ "DATA status 2", 0, 0, &bad_status, 1000 },
	{ "ACK with a status", 0, 0, &ack_status, 1000 },
	{ "round in a STORE", 0, 0, &round_in_store, 1000 },
	{ "owner in a NOTE", 0, 0, &owner_in_note, 1000 },
};

START_TEST(test_hdr_rejects)
{
	const struct spoiled *s = &spoiled[_i];
	uint8_t buf[FT_CKPT_HDR_LEN];
	struct ft_ckpt_hdr got;
	const char *why = NULL;

	if (s->h) {
		ft_ckpt_hdr_encode(s->h, secret, buf);
	} else {
		memcpy(buf, good, sizeof buf);
		if (s->off || s->value)
			buf[s->off] = s->value;
	}
	ck_assert_msg(ft_ckpt_hdr_decode(buf, secret, 4, s->max_len, &got, &why) == -EPROTO, "%s accepted",
		      s->what);
	ck_assert_msg(why && why[0], "%s: no reason", s->what);
}
END_TEST

START_TEST(test_hdr_reasons)
{
	uint8_t buf[FT_CKPT_HDR_LEN];
	struct ft_ckpt_hdr got;
	const char *why = NULL;

	ft_ckpt_hdr_encode(&ack_long, secret, buf);
	ck_assert_int_eq(ft_ckpt_hdr_decode(buf, secret, 4, 1000, &got, &why), -EPROTO);
	ck_assert_str_eq(why, "length 99 too long for an ACK");
	memcpy(buf, good, sizeof buf);
	buf[50] ^= 1;
	ck_assert_int_eq(ft_ckpt_hdr_decode(buf, secret, 4, 1000, &got, &why), -EPROTO);
	ck_assert_str_eq(why, "bad secret");
}
END_TEST

/* --- two links ------------------------------------------------------------ */

/* What a process keeps: the copies stored to it (the callbacks run on its
 * copier, the test reads on its own thread). */
struct holder {
	pthread_mutex_t lock;
	size_t n;
	struct {
		uint32_t from, owner;
		struct ft_ckpt_tag tag;
		struct ft_ckpt_blob *blob;
	} kept[8];
};

static bool holder_stored(void *arg, uint32_t from, uint32_t owner, struct ft_ckpt_tag tag,
			  struct ft_ckpt_blob *blob)
{
	struct holder *h = arg;
	bool ok;

	pthread_mutex_lock(&h->lock);
	ok = h->n < FT_ARRAY_SIZE(h->kept);
	if (ok) {
		h->kept[h->n].from = from;
		h->kept[h->n].owner = owner;
		h->kept[h->n].tag = tag;
		h->kept[h->n++].blob = blob;
	}
	pthread_mutex_unlock(&h->lock);
	if (!ok)
		ft_ckpt_blob_unref(blob);
	return ok;
}

static struct ft_ckpt_blob *holder_lookup(void *arg, uint32_t owner, struct ft_ckpt_tag tag)
{
	struct holder *h = arg;
	struct ft_ckpt_blob *found = NULL;

	pthread_mutex_lock(&h->lock);
	for (size_t i = 0; i < h->n && !found; i++)
		if (h->kept[i].owner == owner && ft_ckpt_tag_eq(h->kept[i].tag, tag))
			found = ft_ckpt_blob_ref(h->kept[i].blob);
	pthread_mutex_unlock(&h->lock);
	return found;
}

/* The copy kept for owner and tag (the holder keeps its reference). */
static struct ft_ckpt_blob *holder_find(struct holder *h, uint32_t owner, struct ft_ckpt_tag tag)
{
	struct ft_ckpt_blob *b = holder_lookup(h, owner, tag);

	ft_ckpt_blob_unref(b);
	return b;
}

static void holder_free(struct holder *h)
{
	for (size_t i = 0; i < h->n; i++)
		ft_ckpt_blob_unref(h->kept[i].blob);
	pthread_mutex_destroy(&h->lock);
}

/* A job of two ranks, both on loopback; endpoint 1 may be a stand-in (a
 * socket that listens and is never read). */
struct pair {
	struct ft_endpoint eps[2];
	int fds[2];
	struct holder holders[2];
	struct ft_ckpt_link *links[2];
};

static void pair_listen(struct pair *p, int rank)
{
	char err[256];

	p->fds[rank] = ft_overlay_listen("127.0.0.1", &p->eps[rank], err, sizeof err);
	ck_assert_msg(p->fds[rank] >= 0, "%s", err);
}

static void pair_start(struct pair *p, int rank)
{
	struct ft_ckpt_link_config cfg = { .self = (uint32_t)rank, .nprocs = 2, .endpoints = p->eps,
					   .listen_fd = p->fds[rank], .max_len = MAX_LEN,
					   .stored = holder_stored, .lookup = holder_lookup,
					   .arg = &p->holders[rank] };
	char err[256];

	memcpy(cfg.secret, secret, sizeof secret);
	pthread_mutex_init(&p->holders[rank].lock, NULL);
	p->holders[rank].n = 0;
	ck_assert_msg(ft_ckpt_link_start(&p->links[rank], &cfg, err, sizeof err) == 0, "%s", err);
}

/* Both ranks with links. */
static void pair_up(struct pair *p)
{
	pair_listen(p, 0);
	pair_listen(p, 1);
	pair_start(p, 0);
	pair_start(p, 1);
}

static void pair_down(struct pair *p)
{
	for (int r = 0; r < 2; r++) {
		if (p->links[r]) {
			ft_ckpt_link_stop(p->links[r]);
			holder_free(&p->holders[r]);
		}
	}
}

static void pause_1ms(void)
{
	struct timespec ts = { 0, 1000000 };

	nanosleep(&ts, NULL);
}

/* The operation's end, waited for (at most WAIT_NS). */
static int wait_op(struct ft_ckpt_link *l, int op, struct ft_ckpt_blob **data)
{
	uint64_t until = ft_clock_now() + WAIT_NS;
	int state;

	ck_assert_int_ge(op, 0);
	while ((state = ft_ckpt_link_op(l, op, data)) == FT_CKPT_OP_PENDING && ft_clock_now() < until)
		pause_1ms();
	return state;
}

static uint64_t wait_count(const _Atomic uint64_t *counter, uint64_t want)
{
	uint64_t until = ft_clock_now() + WAIT_NS, v;

	while ((v = atomic_load(counter)) < want && ft_clock_now() < until)
		pause_1ms();
	return v;
}

/* A blob of len bytes that repeat with a prime period, so that a chunk
 * of a power-of-two size lost, doubled or moved shows. Filled by copies
 * of what is there, quick under the sanitizers. */
#define PATTERN_PERIOD 65521u

static struct ft_ckpt_blob *blob_pattern(uint64_t len, uint64_t seed)
{
	struct ft_ckpt_blob *b = ft_ckpt_blob_new(len);
	uint64_t x = seed, done;

	ck_assert_ptr_nonnull(b);
	for (done = 0; done < len && done < PATTERN_PERIOD; done++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		b->data[done] = (unsigned char)(x >> 56);
	}
	/* done is a whole number of periods: copy them after themselves. */
	while (done < len) {
		uint64_t n = done < len - done ? done : len - done;
		memcpy(b->data + done, b->data, (size_t)n);
		done += n;
	}
	return b;
}

static void assert_same(const struct ft_ckpt_blob *got, const struct ft_ckpt_blob *want)
{
	ck_assert_ptr_nonnull(got);
	ck_assert_uint_eq(got->len, want->len);
	ck_assert(memcmp(got->data, want->data, (size_t)want->len) == 0);
}

START_TEST(test_store_fetch)
{
	struct pair p = { 0 };
	struct ft_ckpt_tag t1 = { 1, 0 }, t2 = { 2, 0 };
	struct ft_ckpt_blob *small = blob_pattern(3, 42), *big = blob_pattern(BIG_LEN, 7), *got = NULL;
	const struct ft_ckpt_link_stats *st;

	pair_up(&p);
	st = ft_ckpt_link_stats(p.links[0]);
	int a = ft_ckpt_link_store(p.links[0], 1, 0, t1, small);
	int b = ft_ckpt_link_store(p.links[0], 1, 0, t2, big);
	ck_assert_int_ne(a, b);
	ck_assert_int_eq(wait_op(p.links[0], a, NULL), FT_CKPT_OP_DONE);
	ck_assert_int_eq(wait_op(p.links[0], b, NULL), FT_CKPT_OP_DONE);
	/* Released once seen. */
	ck_assert_int_eq(ft_ckpt_link_op(p.links[0], a, NULL), -ENOENT);
	ck_assert_uint_eq(atomic_load(&st->stored_bytes), 3 + BIG_LEN);
	ck_assert_uint_eq(atomic_load(&st->bad_frames), 0);
	/* The link let its references go; the holder has the bytes. */
	ck_assert_uint_eq(atomic_load(&small->refs), 1);
	ck_assert_uint_eq(atomic_load(&big->refs), 1);
	assert_same(holder_find(&p.holders[1], 0, t1), small);
	assert_same(holder_find(&p.holders[1], 0, t2), big);
	pthread_mutex_lock(&p.holders[1].lock);
	ck_assert_uint_eq(p.holders[1].kept[0].from, 0);
	pthread_mutex_unlock(&p.holders[1].lock);

	/* Back again. */
	int f = ft_ckpt_link_fetch(p.links[0], 1, 0, t2);
	ck_assert_int_eq(wait_op(p.links[0], f, &got), FT_CKPT_OP_DONE);
	assert_same(got, big);
	ck_assert_uint_eq(atomic_load(&got->refs), 1);
	ft_ckpt_blob_unref(got);
	got = NULL;
	f = ft_ckpt_link_fetch(p.links[0], 1, 0, t1);
	ck_assert_int_eq(wait_op(p.links[0], f, &got), FT_CKPT_OP_DONE);
	assert_same(got, small);
	ft_ckpt_blob_unref(got);
	/* Nobody has it. */
	got = small;
	f = ft_ckpt_link_fetch(p.links[0], 1, 5, t1);
	ck_assert_int_eq(wait_op(p.links[0], f, &got), FT_CKPT_OP_FAILED);
	ck_assert_ptr_null(got);
	/* The other way, and to itself: each link serves both sides. */
	a = ft_ckpt_link_store(p.links[1], 0, 1, t1, small);
	ck_assert_int_eq(wait_op(p.links[1], a, NULL), FT_CKPT_OP_DONE);
	assert_same(holder_find(&p.holders[0], 1, t1), small);
	a = ft_ckpt_link_store(p.links[1], 1, 1, t2, small);
	ck_assert_int_eq(wait_op(p.links[1], a, NULL), FT_CKPT_OP_DONE);
	/* Bad arguments. */
	ck_assert_int_eq(ft_ckpt_link_store(p.links[0], 2, 0, t1, small), -EINVAL);
	ck_assert_int_eq(ft_ckpt_link_fetch(p.links[0], 2, 0, t1), -EINVAL);
	ck_assert_int_eq(ft_ckpt_link_op(p.links[0], -1, NULL), -ENOENT);
	ck_assert_int_eq(ft_ckpt_link_op(p.links[0], 1000, NULL), -ENOENT);
	pair_down(&p);
	ck_assert_uint_eq(atomic_load(&small->refs), 1);
	ft_ckpt_blob_unref(small);
	ft_ckpt_blob_unref(big);
}
END_TEST

/* The note of round `round` taken from l, waited for; NULL if none came. */
static struct ft_ckpt_blob *wait_note(struct ft_ckpt_link *l, uint32_t round, uint32_t *from)
{
	uint64_t until = ft_clock_now() + WAIT_NS;
	struct ft_ckpt_blob *note = NULL;

	while (!ft_ckpt_link_take_note(l, round, from, &note) && ft_clock_now() < until)
		pause_1ms();
	return note;
}

START_TEST(test_notes)
{
	struct pair p = { 0 };
	struct ft_ckpt_blob *note;
	uint32_t from = 99;
	int op;

	pair_up(&p);
	ck_assert_int_eq(ft_ckpt_link_take_note(p.links[1], 7, &from, &note), 0);
	op = ft_ckpt_link_note(p.links[0], 1, 7, "seven", 5);
	ck_assert_int_eq(wait_op(p.links[0], op, NULL), FT_CKPT_OP_DONE);
	note = wait_note(p.links[1], 7, &from);
	ck_assert_ptr_nonnull(note);
	ck_assert_uint_eq(from, 0);
	ck_assert_uint_eq(note->len, 5);
	ck_assert_mem_eq(note->data, "seven", 5);
	ft_ckpt_blob_unref(note);
	/* Round 7 was asked for: a note of round 3 is dropped, one of round
	 * 8 sent after it is kept (and proves that the first arrived). An
	 * empty note is a note. */
	op = ft_ckpt_link_note(p.links[0], 1, 3, "three", 5);
	ck_assert_int_eq(wait_op(p.links[0], op, NULL), FT_CKPT_OP_DONE);
	op = ft_ckpt_link_note(p.links[0], 1, 8, NULL, 0);
	ck_assert_int_eq(wait_op(p.links[0], op, NULL), FT_CKPT_OP_DONE);
	note = wait_note(p.links[1], 8, &from);
	ck_assert_ptr_nonnull(note);
	ck_assert_uint_eq(note->len, 0);
	ft_ckpt_blob_unref(note);
	ck_assert_int_eq(ft_ckpt_link_take_note(p.links[1], 3, &from, &note), 0);
	/* A note waiting for its round is dropped once a later round is
	 * asked for. */
	op = ft_ckpt_link_note(p.links[0], 1, 9, "nine", 4);
	ck_assert_int_eq(wait_op(p.links[0], op, NULL), FT_CKPT_OP_DONE);
	op = ft_ckpt_link_note(p.links[0], 1, 10, "ten", 3);
	ck_assert_int_eq(wait_op(p.links[0], op, NULL), FT_CKPT_OP_DONE);
	note = wait_note(p.links[1], 10, &from);
	ck_assert_ptr_nonnull(note);
	ft_ckpt_blob_unref(note);
	ck_assert_int_eq(ft_ckpt_link_take_note(p.links[1], 9, &from, &note), 0);
	/* Too long; a note left untaken is freed by stop. */
	static char huge[FT_CKPT_NOTE_MAX + 1];
	ck_assert_int_eq(ft_ckpt_link_note(p.links[0], 1, 11, huge, sizeof huge), -EINVAL);
	op = ft_ckpt_link_note(p.links[0], 1, 11, huge, FT_CKPT_NOTE_MAX);
	ck_assert_int_eq(wait_op(p.links[0], op, NULL), FT_CKPT_OP_DONE);
	pair_down(&p);
}
END_TEST

START_TEST(test_bad_secret)
{
	struct pair p = { 0 };
	struct ft_ckpt_hdr h = { .type = FT_CKPT_FETCH, .from = 0 };
	uint8_t wrong[FT_SECRET_LEN] = { 0 }, frame[FT_CKPT_HDR_LEN], byte;
	struct ft_ckpt_tag t = { 3, 1 };
	struct ft_ckpt_blob *small = blob_pattern(3, 1);

	pair_up(&p);
	int fd = ft_overlay_connect(&p.eps[0], &p.eps[1]);
	ck_assert_int_ge(fd, 0);
	ft_ckpt_hdr_encode(&h, wrong, frame);
	/* Non-blocking: wait for the connect through a deadline-bound read. */
	uint64_t until = ft_clock_now() + WAIT_NS;
	int rc;
	while ((rc = (int)send(fd, frame, sizeof frame, MSG_NOSIGNAL)) < 0 && ft_clock_now() < until)
		pause_1ms();
	ck_assert_int_eq(rc, sizeof frame);
	rc = ft_read_by(fd, &byte, 1, ft_clock_now() + WAIT_NS);
	ck_assert_msg(rc == -EPROTO || rc == -ECONNRESET, "read: %d", rc);
	close(fd);
	ck_assert_uint_eq(wait_count(&ft_ckpt_link_stats(p.links[1])->bad_frames, 1), 1);
	/* Still serving. */
	int op = ft_ckpt_link_store(p.links[0], 1, 0, t, small);
	ck_assert_int_eq(wait_op(p.links[0], op, NULL), FT_CKPT_OP_DONE);
	ck_assert_uint_eq(atomic_load(&ft_ckpt_link_stats(p.links[1])->bad_frames), 1);
	pair_down(&p);
	ft_ckpt_blob_unref(small);
}
END_TEST

/* Rank 0 has a link; rank 1 is a socket that listens and is never read,
 * so a big copy to it stays pending, partly written. */
static int store_to_silent(struct pair *p, struct ft_ckpt_blob *big)
{
	int small_buffer = 64 << 10;

	pair_listen(p, 0);
	pair_listen(p, 1);
	/* Connections the kernel accepts for it inherit this. */
	ck_assert_int_eq(setsockopt(p->fds[1], SOL_SOCKET, SO_RCVBUF, &small_buffer, sizeof small_buffer), 0);
	pair_start(p, 0);
	int op = ft_ckpt_link_store(p->links[0], 1, 0, (struct ft_ckpt_tag){ 1, 0 }, big);
	/* On its way: the copier has a reference of its own until it is
	 * written whole, which it never is. */
	uint64_t until = ft_clock_now() + WAIT_NS;
	while (atomic_load(&big->refs) < 3 && ft_clock_now() < until)
		pause_1ms();
	ck_assert_uint_eq(atomic_load(&big->refs), 3);
	ck_assert_int_eq(ft_ckpt_link_op(p->links[0], op, NULL), FT_CKPT_OP_PENDING);
	return op;
}

/* The end of a test with a silent peer: the copy is back to the test's
 * one reference. */
static void silent_down(struct pair *p, struct ft_ckpt_blob *big)
{
	pair_down(p);
	close(p->fds[1]);
	ck_assert_uint_eq(atomic_load(&big->refs), 1);
	ft_ckpt_blob_unref(big);
}

START_TEST(test_forget)
{
	struct pair p = { 0 };
	struct ft_ckpt_blob *big = blob_pattern(SILENT_LEN, 3);
	int op = store_to_silent(&p, big);

	ft_ckpt_link_forget(p.links[0], 1);
	ck_assert_int_eq(ft_ckpt_link_op(p.links[0], op, NULL), FT_CKPT_OP_FAILED);
	ck_assert_int_eq(ft_ckpt_link_op(p.links[0], op, NULL), -ENOENT);
	/* The copier lets go of it soon after. */
	uint64_t until = ft_clock_now() + WAIT_NS;
	while (atomic_load(&big->refs) > 1 && ft_clock_now() < until)
		pause_1ms();
	ck_assert_uint_eq(atomic_load(&big->refs), 1);
	silent_down(&p, big);
}
END_TEST

START_TEST(test_cancel_all)
{
	struct pair p = { 0 };
	struct ft_ckpt_blob *big = blob_pattern(SILENT_LEN, 4);
	int op = store_to_silent(&p, big);
	int fetch = ft_ckpt_link_fetch(p.links[0], 1, 0, (struct ft_ckpt_tag){ 1, 0 });

	ft_ckpt_link_cancel_all(p.links[0]);
	ck_assert_uint_eq(atomic_load(&big->refs), 1);
	/* Failed and released: the numbers are free again. */
	ck_assert_int_eq(ft_ckpt_link_op(p.links[0], op, NULL), -ENOENT);
	ck_assert_int_eq(ft_ckpt_link_op(p.links[0], fetch, NULL), -ENOENT);
	ck_assert_int_eq(ft_ckpt_link_fetch(p.links[0], 1, 0, (struct ft_ckpt_tag){ 1, 0 }), 0);
	silent_down(&p, big);
}
END_TEST

/* The copier streaming to a peer that reads: cancel_all waits for one
 * chunk at most, and the link then opens a new connection. */
START_TEST(test_cancel_busy)
{
	struct pair p = { 0 };
	struct ft_ckpt_blob *big = blob_pattern(SILENT_LEN, 6), *small = blob_pattern(3, 6);
	struct ft_ckpt_tag t = { 1, 0 };

	pair_up(&p);
	int op = ft_ckpt_link_store(p.links[0], 1, 0, t, big);
	uint64_t until = ft_clock_now() + WAIT_NS;
	while (atomic_load(&big->refs) < 3 && ft_clock_now() < until)
		pause_1ms();
	ft_ckpt_link_cancel_all(p.links[0]);
	ck_assert_uint_eq(atomic_load(&big->refs), 1);
	/* Cancelled (released), or done already on a fast machine. */
	int state = ft_ckpt_link_op(p.links[0], op, NULL);
	ck_assert(state == -ENOENT || state == FT_CKPT_OP_DONE);
	op = ft_ckpt_link_store(p.links[0], 1, 0, t, small);
	ck_assert_int_eq(wait_op(p.links[0], op, NULL), FT_CKPT_OP_DONE);
	pair_down(&p);
	ft_ckpt_blob_unref(big);
	ft_ckpt_blob_unref(small);
}
END_TEST

START_TEST(test_stop_pending)
{
	struct pair p = { 0 };
	struct ft_ckpt_blob *big = blob_pattern(SILENT_LEN, 5);

	store_to_silent(&p, big);
	ck_assert_int_ge(ft_ckpt_link_fetch(p.links[0], 1, 0, (struct ft_ckpt_tag){ 1, 0 }), 0);
	ck_assert_int_ge(ft_ckpt_link_note(p.links[0], 1, 1, "x", 1), 0);
	silent_down(&p, big);
}
END_TEST

/* A rank with no endpoint (all zero) is unreachable: its operations fail. */
START_TEST(test_unreachable)
{
	struct pair p = { 0 };
	struct ft_ckpt_blob *small = blob_pattern(3, 9);

	pair_listen(&p, 0);
	pair_start(&p, 0);
	int op = ft_ckpt_link_store(p.links[0], 1, 0, (struct ft_ckpt_tag){ 1, 0 }, small);
	ck_assert_int_eq(wait_op(p.links[0], op, NULL), FT_CKPT_OP_FAILED);
	ck_assert_uint_eq(atomic_load(&small->refs), 1);
	pair_down(&p);
	ft_ckpt_blob_unref(small);
}
END_TEST

START_TEST(test_start_errors)
{
	struct ft_endpoint eps[2] = { 0 };
	struct ft_ckpt_link_config cfg = { .self = 2, .nprocs = 2, .endpoints = eps, .listen_fd = -1 };
	struct ft_ckpt_link *l = (struct ft_ckpt_link *)&cfg;
	char err[128] = "";

	ck_assert_int_eq(ft_ckpt_link_start(&l, &cfg, err, sizeof err), -EINVAL);
	ck_assert_ptr_null(l);
	ck_assert_str_ne(err, "");
	ft_ckpt_link_stop(NULL);
	ft_ckpt_blob_unref(NULL);
	ck_assert_ptr_null(ft_ckpt_blob_ref(NULL));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ckpt_link");
	TCase *hdr = tcase_create("header"), *link = tcase_create("link");

	tcase_add_checked_fixture(hdr, setup_good, NULL);
	tcase_add_test(hdr, test_hdr_round_trip);
	tcase_add_test(hdr, test_hdr_layout);
	tcase_add_loop_test(hdr, test_hdr_rejects, 0, (int)FT_ARRAY_SIZE(spoiled));
	tcase_add_test(hdr, test_hdr_reasons);
	suite_add_tcase(s, hdr);
	/* Copies of 64 MiB, under sanitizers too. */
	tcase_set_timeout(link, 30);
	tcase_add_test(link, test_store_fetch);
	tcase_add_test(link, test_notes);
	tcase_add_test(link, test_bad_secret);
	tcase_add_test(link, test_forget);
	tcase_add_test(link, test_cancel_all);
	tcase_add_test(link, test_cancel_busy);
	tcase_add_test(link, test_stop_pending);
	tcase_add_test(link, test_unreachable);
	tcase_add_test(link, test_start_errors);
	suite_add_tcase(s, link);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
