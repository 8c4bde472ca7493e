/* check_frame.c: unit tests of src/frame.c, the control-plane wire format.
 * They check that every message type survives encode then parse (lists of
 * 0, 1, 2 and FT_FRAME_MAX_ENTRIES entries, extreme field values, every
 * entry field including the 64-bit at_ns); the exact bytes of a heartbeat
 * (its last 4 payload bytes reserved, 0), a NOTICE, a SYNC and an EXCLUDED
 * against frame.h's layout of version 2 (entries of FT_ENTRY_LEN = 20
 * bytes: rank, event, how, detector, at_ns), and frames written by the
 * test's own little-endian writer decoding to their fields; that a frame
 * of version 1 (12-byte entries) is refused; that the largest list that
 * fits in FT_FRAME_MAX_PAYLOAD is accepted and a frame announcing more is
 * not; frames back to back in one buffer; that every truncation of a
 * valid frame is FT_FRAME_INCOMPLETE without a read past its end (each
 * prefix sits in a buffer malloc'ed to exactly its length, for ASan); that
 * a short prefix is already refused when it shows a bad magic, version,
 * type, reserved field or length, but the secret only when whole; every
 * rejection reason from a crafted frame and the order in which they are
 * judged; that a JOINED entry's detector and how (an endpoint's address
 * and port) take any value, and no other entry's do; that the parser
 * writes neither the message nor *consumed unless it accepts; that the
 * encoder refuses invalid messages and a too small buffer without writing
 * past it; and that every reason has a name. */
#include "ftshim_config.h"

#include <check.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/frame.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define NPROCS 8u

static const uint8_t g_secret[FT_SECRET_LEN] = { 0x5e, 0xc7, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
						 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0xfe, 0xff };

/* The test's own little-endian writer, independent of frame.c's. */
static void le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Scratch of exactly FT_FRAME_MAX_ENTRIES, on the heap so that ASan sees
 * a write beyond it. */
static struct ft_entry *new_scratch(void)
{
	struct ft_entry *s = malloc(FT_FRAME_MAX_ENTRIES * sizeof *s);

	ck_assert_ptr_nonnull(s);
	return s;
}

/* An entry's at_ns, varying: a plausible wall clock time (both halves
 * non-zero and differing from entry to entry), 0 (unknown), UINT64_MAX,
 * and a value whose low 32 bits are 0, so that a codec that drops at_ns,
 * keeps only 32 bits of it or swaps its halves gets some entry wrong. */
static uint64_t make_at_ns(uint32_t i)
{
	switch (i % 4) {
	case 0:
		return UINT64_C(1700000000123456789) + (uint64_t)i * UINT64_C(1000000007);
	case 1:
		return 0;
	case 2:
		return UINT64_MAX;
	default:
		return (uint64_t)(i | 0x80000000u) << 32;
	}
}

/* n valid entries for a job of NPROCS, all fields varying. */
static struct ft_entry *make_entries(uint32_t n)
{
	struct ft_entry *e = malloc((n ? n : 1) * sizeof *e);

	ck_assert_ptr_nonnull(e);
	for (uint32_t i = 0; i < n; i++) {
		e[i].rank = (i * 7 + 3) % NPROCS;
		e[i].event = i % 3 ? FT_EV_FAILED : FT_EV_DEPARTED;
		e[i].how = (uint16_t)(i % 3 ? i % 256 : 0);
		e[i].detector = (i * 5 + 1) % NPROCS;
		e[i].at_ns = make_at_ns(i);
	}
	return e;
}

/* Encode m into a buffer of exactly its length. */
static uint8_t *encode_exact(const struct ft_msg *m, uint32_t from, size_t *len)
{
	size_t n = ft_frame_length(m);

	ck_assert_uint_gt(n, 0);
	uint8_t *buf = malloc(n);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(ft_frame_encode(m, from, g_secret, buf, n), n);
	*len = n;
	return buf;
}

static void assert_msg_eq(const struct ft_msg *got, const struct ft_msg *want)
{
	ck_assert_int_eq(got->type, want->type);
	ck_assert_uint_eq(got->from, want->from);
	switch (want->type) {
	case FT_MSG_HEARTBEAT:
		ck_assert_uint_eq(got->hb.seq, want->hb.seq);
		ck_assert_uint_eq(got->hb.nfailed, want->hb.nfailed);
		ck_assert_uint_eq(got->hb.ndeparted, want->hb.ndeparted);
		ck_assert_uint_eq(got->hb.digest, want->hb.digest);
		break;
	case FT_MSG_EXCLUDED:
		ck_assert_uint_eq(got->excluded.how, want->excluded.how);
		ck_assert_uint_eq(got->excluded.detector, want->excluded.detector);
		break;
	case FT_MSG_PROBE:
		ck_assert_uint_eq(got->probe.round, want->probe.round);
		ck_assert_uint_eq(got->probe.flags, want->probe.flags);
		break;
	case FT_MSG_SYNC:
		ck_assert_uint_eq(got->list.flags, want->list.flags);
		/* fall through */
	case FT_MSG_NOTICE:
		ck_assert_uint_eq(got->list.count, want->list.count);
		ck_assert_ptr_nonnull(got->list.entries);
		for (uint32_t i = 0; i < want->list.count; i++) {
			const struct ft_entry *a = &got->list.entries[i], *b = &want->list.entries[i];
			ck_assert_uint_eq(a->rank, b->rank);
			ck_assert_uint_eq(a->event, b->event);
			ck_assert_uint_eq(a->how, b->how);
			ck_assert_uint_eq(a->detector, b->detector);
			ck_assert_uint_eq(a->at_ns, b->at_ns);
		}
		break;
	default:
		ck_abort_msg("unexpected type %d", (int)want->type);
	}
}

/* Encode m as sent by from, parse it back (alone, then followed by other
 * bytes) and compare; also that one byte less of room is refused. */
static void round_trip(struct ft_msg m, uint32_t from)
{
	struct ft_entry *scratch = new_scratch();
	size_t len, consumed = 0;
	uint8_t *buf = encode_exact(&m, from, &len);
	struct ft_msg got;

	ck_assert_int_eq(ft_frame_parse(buf, len, g_secret, NPROCS, &got, scratch, &consumed),
			 FT_FRAME_OK);
	ck_assert_uint_eq(consumed, len);
	m.from = from;
	assert_msg_eq(&got, &m);
	if (m.type == FT_MSG_NOTICE || m.type == FT_MSG_SYNC)
		ck_assert_ptr_eq(got.list.entries, scratch);

	/* With trailing bytes the frame still ends where it ends. */
	uint8_t *more = malloc(len + 5);
	ck_assert_ptr_nonnull(more);
	memcpy(more, buf, len);
	memset(more + len, 0xa5, 5);
	consumed = 0;
	ck_assert_int_eq(ft_frame_parse(more, len + 5, g_secret, NPROCS, &got, scratch, &consumed),
			 FT_FRAME_OK);
	ck_assert_uint_eq(consumed, len);
	assert_msg_eq(&got, &m);
	free(more);

	/* One byte short of room: refused, nothing written past it. */
	uint8_t *small = malloc(len - 1);
	ck_assert_ptr_nonnull(small);
	ck_assert_uint_eq(ft_frame_encode(&m, from, g_secret, small, len - 1), 0);
	free(small);

	free(buf);
	free(scratch);
}

/* --- round trips ---------------------------------------------------------------- */

START_TEST(test_round_trip_heartbeat)
{
	const uint64_t u64s[] = { 0, 1, UINT64_C(0x0123456789abcdef), UINT64_MAX };
	const uint32_t u32s[] = { 0, 1, 0x80000000u, UINT32_MAX };

	for (size_t i = 0; i < ARRAY_SIZE(u64s); i++) {
		struct ft_msg m = { .type = FT_MSG_HEARTBEAT };
		m.hb.seq = u64s[i];
		m.hb.nfailed = u32s[i];
		m.hb.ndeparted = u32s[ARRAY_SIZE(u32s) - 1 - i];
		m.hb.digest = u64s[ARRAY_SIZE(u64s) - 1 - i] ^ UINT64_C(0x5555aaaa5555aaaa);
		round_trip(m, 0);
		round_trip(m, NPROCS - 1);
		round_trip(m, (uint32_t)i);
	}
	struct ft_msg m = { .type = FT_MSG_HEARTBEAT };
	ck_assert_uint_eq(ft_frame_length(&m), FT_FRAME_HEADER_LEN + 28);
}
END_TEST

START_TEST(test_round_trip_excluded)
{
	const uint32_t vals[] = { 0, 5, 255, 0xdeadbeef, UINT32_MAX };

	for (size_t i = 0; i < ARRAY_SIZE(vals); i++) {
		struct ft_msg m = { .type = FT_MSG_EXCLUDED };
		m.excluded.how = vals[i];
		m.excluded.detector = vals[ARRAY_SIZE(vals) - 1 - i];
		round_trip(m, 3);
	}
	struct ft_msg m = { .type = FT_MSG_EXCLUDED };
	ck_assert_uint_eq(ft_frame_length(&m), FT_FRAME_HEADER_LEN + 8);
}
END_TEST

START_TEST(test_round_trip_probe)
{
	const uint32_t rounds[] = { 0, 1, 0xdeadbeef, UINT32_MAX };
	const uint32_t flags[] = { 0, FT_PROBE_REPLY, FT_PROBE_RECHECK, FT_PROBE_FLAGS };

	for (size_t i = 0; i < ARRAY_SIZE(rounds); i++) {
		for (size_t j = 0; j < ARRAY_SIZE(flags); j++) {
			struct ft_msg m = { .type = FT_MSG_PROBE };
			m.probe.round = rounds[i];
			m.probe.flags = flags[j];
			round_trip(m, 2);
		}
	}
	struct ft_msg m = { .type = FT_MSG_PROBE };
	ck_assert_uint_eq(ft_frame_length(&m), FT_FRAME_HEADER_LEN + 8);
}
END_TEST

START_TEST(test_round_trip_notice)
{
	const uint32_t counts[] = { 0, 1, 2, 17, FT_FRAME_MAX_ENTRIES };

	for (size_t i = 0; i < ARRAY_SIZE(counts); i++) {
		struct ft_entry *e = make_entries(counts[i]);
		struct ft_msg m = { .type = FT_MSG_NOTICE };
		m.list.count = counts[i];
		m.list.entries = e;
		ck_assert_uint_eq(ft_frame_length(&m),
				  FT_FRAME_HEADER_LEN + 4 + (size_t)counts[i] * FT_ENTRY_LEN);
		round_trip(m, 1);
		free(e);
	}
	/* A NULL list of nothing is fine too. */
	struct ft_msg m = { .type = FT_MSG_NOTICE };
	round_trip(m, 2);
}
END_TEST

START_TEST(test_round_trip_sync)
{
	const uint32_t counts[] = { 0, 1, 2, 100, FT_FRAME_MAX_ENTRIES };
	const uint32_t flags[] = { 0, FT_SYNC_REPLY, UINT32_MAX };

	for (size_t i = 0; i < ARRAY_SIZE(counts); i++)
		for (size_t f = 0; f < ARRAY_SIZE(flags); f++) {
			struct ft_entry *e = make_entries(counts[i]);
			struct ft_msg m = { .type = FT_MSG_SYNC };
			m.list.flags = flags[f];
			m.list.count = counts[i];
			m.list.entries = e;
			ck_assert_uint_eq(ft_frame_length(&m), FT_FRAME_HEADER_LEN + 8 +
									(size_t)counts[i] *
										FT_ENTRY_LEN);
			round_trip(m, NPROCS - 1);
			free(e);
		}
}
END_TEST

START_TEST(test_round_trip_entry_extremes)
{
	/* The widest values an entry may carry in a job of NPROCS; at_ns is
	 * not checked by the parser, so any value goes, and each half of it
	 * must survive alone. */
	struct ft_entry e[] = {
		{ .rank = 0, .event = FT_EV_FAILED, .how = 0, .detector = 0, .at_ns = 0 },
		{ .rank = NPROCS - 1,
		  .event = FT_EV_DEPARTED,
		  .how = 255,
		  .detector = NPROCS - 1,
		  .at_ns = UINT64_MAX },
		{ .rank = NPROCS - 1,
		  .event = FT_EV_FAILED,
		  .how = 0x80,
		  .detector = 0,
		  .at_ns = 1 },
		{ .rank = 1,
		  .event = FT_EV_ABORT,
		  .how = 1,
		  .detector = 2,
		  .at_ns = UINT64_C(0x8000000000000000) },
		{ .rank = 2,
		  .event = FT_EV_FAILED,
		  .how = 3,
		  .detector = 4,
		  .at_ns = UINT64_C(0x00000000ffffffff) },
		{ .rank = 3,
		  .event = FT_EV_DEPARTED,
		  .how = 0,
		  .detector = 5,
		  .at_ns = UINT64_C(0xffffffff00000000) },
	};
	struct ft_msg m = { .type = FT_MSG_NOTICE };

	m.list.count = ARRAY_SIZE(e);
	m.list.entries = e;
	round_trip(m, 0);
	m.type = FT_MSG_SYNC;
	m.list.flags = FT_SYNC_REPLY;
	round_trip(m, 0);
}
END_TEST

/* --- exact bytes -------------------------------------------------------------------- */

START_TEST(test_heartbeat_layout)
{
	struct ft_msg m = { .type = FT_MSG_HEARTBEAT };
	uint8_t buf[FT_FRAME_HEADER_LEN + 28 + 8];

	m.hb.seq = UINT64_C(0x1122334455667788);
	m.hb.nfailed = 0xa1a2a3a4u;
	m.hb.ndeparted = 0xb1b2b3b4u;
	m.hb.digest = UINT64_C(0xc1c2c3c4c5c6c7c8);
	memset(buf, 0xee, sizeof buf);
	ck_assert_uint_eq(ft_frame_encode(&m, 0x01020304u, g_secret, buf, sizeof buf), 60);

	const uint8_t want[60] = {
		/* magic "FTSH", version 2, type HEARTBEAT, reserved 0 */
		'F', 'T', 'S', 'H', 2, 1, 0, 0,
		/* payload length 28 */
		28, 0, 0, 0,
		/* sender */
		0x04, 0x03, 0x02, 0x01,
		/* secret */
		0x5e, 0xc7, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c,
		0xfe, 0xff,
		/* seq */
		0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
		/* nfailed */
		0xa4, 0xa3, 0xa2, 0xa1,
		/* ndeparted */
		0xb4, 0xb3, 0xb2, 0xb1,
		/* digest */
		0xc8, 0xc7, 0xc6, 0xc5, 0xc4, 0xc3, 0xc2, 0xc1,
		/* 4 reserved bytes that make up the 28 of frame.h */
		0, 0, 0, 0,
	};
	for (size_t i = 0; i < sizeof want; i++)
		ck_assert_msg(buf[i] == want[i], "byte %zu is 0x%02x, want 0x%02x", i, buf[i],
			      want[i]);
	/* Nothing written past the frame. */
	for (size_t i = sizeof want; i < sizeof buf; i++)
		ck_assert_uint_eq(buf[i], 0xee);
	/* The magic as a little-endian u32 is FT_FRAME_MAGIC. */
	ck_assert_uint_eq((uint32_t)buf[0] | (uint32_t)buf[1] << 8 | (uint32_t)buf[2] << 16 |
				  (uint32_t)buf[3] << 24,
			  FT_FRAME_MAGIC);
}
END_TEST

START_TEST(test_list_layout)
{
	struct ft_entry e[2] = {
		{ .rank = 0x04030201u,
		  .event = FT_EV_FAILED,
		  .how = 0x0605,
		  .detector = 0x0a090807u,
		  .at_ns = UINT64_C(0x1211100f0e0d0c0b) },
		{ .rank = 7,
		  .event = FT_EV_DEPARTED,
		  .how = 0,
		  .detector = 2,
		  .at_ns = UINT64_MAX },
	};
	struct ft_msg m = { .type = FT_MSG_NOTICE };
	uint8_t buf[128];

	ck_assert_int_eq(FT_ENTRY_LEN, 20);
	m.list.count = 2;
	m.list.entries = e;
	ck_assert_uint_eq(ft_frame_encode(&m, 5, g_secret, buf, sizeof buf), 32 + 4 + 2 * 20);
	const uint8_t notice_hdr[12] = { 'F', 'T', 'S', 'H', 2, 2, 0, 0, 44, 0, 0, 0 };
	ck_assert_mem_eq(buf, notice_hdr, sizeof notice_hdr);
	const uint8_t notice_payload[44] = {
		2,    0,    0,    0,	/* count */
		0x01, 0x02, 0x03, 0x04, /* rank */
		1,    0,		/* event */
		0x05, 0x06,		/* how */
		0x07, 0x08, 0x09, 0x0a, /* detector */
		0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, /* at_ns */
		7,    0,    0,    0,	/* rank */
		2,    0,		/* event */
		0,    0,		/* how */
		2,    0,    0,    0,	/* detector */
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* at_ns */
	};
	ck_assert_mem_eq(buf + 32, notice_payload, sizeof notice_payload);

	m.type = FT_MSG_SYNC;
	m.list.flags = 0x11223344u;
	ck_assert_uint_eq(ft_frame_encode(&m, 5, g_secret, buf, sizeof buf), 32 + 8 + 2 * 20);
	const uint8_t sync_hdr[12] = { 'F', 'T', 'S', 'H', 2, 3, 0, 0, 48, 0, 0, 0 };
	ck_assert_mem_eq(buf, sync_hdr, sizeof sync_hdr);
	const uint8_t flags[4] = { 0x44, 0x33, 0x22, 0x11 };
	ck_assert_mem_eq(buf + 32, flags, 4);
	ck_assert_mem_eq(buf + 36, notice_payload, sizeof notice_payload);

	struct ft_msg x = { .type = FT_MSG_EXCLUDED };
	x.excluded.how = 0x04030201u;
	x.excluded.detector = 0x08070605u;
	ck_assert_uint_eq(ft_frame_encode(&x, 0, g_secret, buf, sizeof buf), 40);
	const uint8_t excl[12] = { 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	ck_assert_mem_eq(buf + 8, excl, 8); /* length 8, sender 0 */
	ck_assert_uint_eq(buf[5], FT_MSG_EXCLUDED);
	const uint8_t excl_payload[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	ck_assert_mem_eq(buf + 32, excl_payload, 8);
}
END_TEST

/* --- streams -------------------------------------------------------------------------- */

START_TEST(test_back_to_back)
{
	struct ft_entry *scratch = new_scratch();
	struct ft_entry *e = make_entries(3);
	struct ft_msg hb = { .type = FT_MSG_HEARTBEAT }, no = { .type = FT_MSG_NOTICE };
	struct ft_msg ex = { .type = FT_MSG_EXCLUDED }, got;
	size_t l1 = ft_frame_length(&hb), l2, l3 = ft_frame_length(&ex), consumed;

	hb.hb.seq = 42;
	hb.hb.digest = 99;
	no.list.count = 3;
	no.list.entries = e;
	l2 = ft_frame_length(&no);
	ex.excluded.how = 5;
	ex.excluded.detector = 6;

	size_t total = l1 + l2 + l3;
	uint8_t *buf = malloc(total);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(ft_frame_encode(&hb, 1, g_secret, buf, total), l1);
	ck_assert_uint_eq(ft_frame_encode(&no, 2, g_secret, buf + l1, total - l1), l2);
	ck_assert_uint_eq(ft_frame_encode(&ex, 3, g_secret, buf + l1 + l2, total - l1 - l2), l3);

	size_t off = 0;
	ck_assert_int_eq(
		ft_frame_parse(buf, total - off, g_secret, NPROCS, &got, scratch, &consumed),
		FT_FRAME_OK);
	ck_assert_uint_eq(consumed, l1);
	hb.from = 1;
	assert_msg_eq(&got, &hb);
	off += consumed;

	ck_assert_int_eq(ft_frame_parse(buf + off, total - off, g_secret, NPROCS, &got, scratch,
					&consumed),
			 FT_FRAME_OK);
	ck_assert_uint_eq(consumed, l2);
	no.from = 2;
	assert_msg_eq(&got, &no);
	off += consumed;

	ck_assert_int_eq(ft_frame_parse(buf + off, total - off, g_secret, NPROCS, &got, scratch,
					&consumed),
			 FT_FRAME_OK);
	ck_assert_uint_eq(consumed, l3);
	ex.from = 3;
	assert_msg_eq(&got, &ex);
	off += consumed;
	ck_assert_uint_eq(off, total);

	/* Nothing left: more bytes needed. */
	ck_assert_int_eq(ft_frame_parse(buf + off, 0, g_secret, NPROCS, &got, scratch, &consumed),
			 FT_FRAME_INCOMPLETE);

	/* Two frames, the second cut short: the first parses, then INCOMPLETE. */
	ck_assert_int_eq(ft_frame_parse(buf, l1 + l2 - 1, g_secret, NPROCS, &got, scratch,
					&consumed),
			 FT_FRAME_OK);
	ck_assert_uint_eq(consumed, l1);
	ck_assert_int_eq(ft_frame_parse(buf + l1, l2 - 1, g_secret, NPROCS, &got, scratch,
					&consumed),
			 FT_FRAME_INCOMPLETE);
	free(buf);
	free(e);
	free(scratch);
}
END_TEST

/* Parse the first len bytes of frame from a buffer of exactly len bytes:
 * INCOMPLETE, and neither *m nor *consumed touched. */
static void assert_prefix_incomplete(const uint8_t *frame, size_t len, struct ft_entry *scratch)
{
	uint8_t *b = malloc(len);
	struct ft_msg m, before;
	size_t consumed = 12345;

	ck_assert(len == 0 || b != NULL);
	if (len)
		memcpy(b, frame, len);
	memset(&m, 0x6b, sizeof m);
	memcpy(&before, &m, sizeof m);
	ck_assert_msg(ft_frame_parse(b, len, g_secret, NPROCS, &m, scratch, &consumed) ==
			      FT_FRAME_INCOMPLETE,
		      "prefix of %zu bytes not INCOMPLETE", len);
	ck_assert_uint_eq(consumed, 12345);
	ck_assert_mem_eq(&m, &before, sizeof m);
	free(b);
}

START_TEST(test_truncations)
{
	struct ft_entry *scratch = new_scratch();
	struct ft_entry *e = make_entries(FT_FRAME_MAX_ENTRIES);
	struct ft_msg msgs[7] = {
		{ .type = FT_MSG_HEARTBEAT },
		{ .type = FT_MSG_EXCLUDED },
		{ .type = FT_MSG_NOTICE },
		{ .type = FT_MSG_NOTICE },
		{ .type = FT_MSG_SYNC },
		{ .type = FT_MSG_SYNC },
		{ .type = FT_MSG_SYNC },
	};

	msgs[0].hb.seq = UINT64_MAX;
	msgs[1].excluded.detector = 4;
	msgs[3].list.count = 3;
	msgs[3].list.entries = e;
	msgs[4].list.flags = FT_SYNC_REPLY;
	msgs[5].list.count = 5;
	msgs[5].list.entries = e;
	msgs[6].list.count = FT_FRAME_MAX_ENTRIES;
	msgs[6].list.entries = e;

	for (size_t i = 0; i < ARRAY_SIZE(msgs); i++) {
		size_t n;
		uint8_t *frame = encode_exact(&msgs[i], NPROCS - 1, &n);
		bool big = n > 1024;

		for (size_t len = 0; len < n; len++) {
			/* Of the largest frame, the lengths near each end and a
			 * sample in between: every one would copy gigabytes. */
			if (big && len >= 256 && len < n - 256 && len % 509)
				continue;
			assert_prefix_incomplete(frame, len, scratch);
		}
		free(frame);
	}
	free(e);
	free(scratch);
}
END_TEST

/* Parse buf[0..len) copied into an exact-size buffer and return the result,
 * checking that nothing is written on a refusal. */
static enum ft_frame_error parse_exact(const uint8_t *frame, size_t len, uint32_t nprocs)
{
	struct ft_entry *scratch = new_scratch();
	uint8_t *b = malloc(len ? len : 1);
	struct ft_msg m;
	size_t consumed = 777;

	ck_assert_ptr_nonnull(b);
	memcpy(b, frame, len);
	memset(&m, 0x3c, sizeof m);
	enum ft_frame_error err = ft_frame_parse(b, len, g_secret, nprocs, &m, scratch, &consumed);
	if (err != FT_FRAME_OK) {
		ck_assert_uint_eq(consumed, 777);
		ck_assert_int_eq(m.type, 0x3c3c3c3c);
	} else {
		ck_assert_uint_eq(consumed, len);
	}
	free(b);
	free(scratch);
	return err;
}

START_TEST(test_short_prefix_refused)
{
	uint8_t b[32];
	struct ft_msg m = { .type = FT_MSG_HEARTBEAT };

	ck_assert_uint_eq(ft_frame_encode(&m, 0, g_secret, b, sizeof b), 0);
	uint8_t hb[60];
	ck_assert_uint_eq(ft_frame_encode(&m, 0, g_secret, hb, sizeof hb), 60);

	/* A wrong first byte is refused at once. */
	memcpy(b, hb, 32);
	b[0] = 'X';
	ck_assert_int_eq(parse_exact(b, 1, NPROCS), FT_FRAME_BAD_MAGIC);
	memcpy(b, hb, 32);
	b[3] = 'h';
	ck_assert_int_eq(parse_exact(b, 3, NPROCS), FT_FRAME_INCOMPLETE);
	ck_assert_int_eq(parse_exact(b, 4, NPROCS), FT_FRAME_BAD_MAGIC);
	memcpy(b, hb, 32);
	b[4] = 1; /* the old version, of 12-byte entries */
	ck_assert_int_eq(parse_exact(b, 4, NPROCS), FT_FRAME_INCOMPLETE);
	ck_assert_int_eq(parse_exact(b, 5, NPROCS), FT_FRAME_BAD_VERSION);
	memcpy(b, hb, 32);
	b[5] = 0;
	ck_assert_int_eq(parse_exact(b, 6, NPROCS), FT_FRAME_BAD_TYPE);
	b[5] = FT_MSG_TYPE_END;
	ck_assert_int_eq(parse_exact(b, 6, NPROCS), FT_FRAME_BAD_TYPE);
	memcpy(b, hb, 32);
	b[6] = 1;
	ck_assert_int_eq(parse_exact(b, 7, NPROCS), FT_FRAME_BAD_MAGIC);
	memcpy(b, hb, 32);
	b[7] = 0x80;
	ck_assert_int_eq(parse_exact(b, 7, NPROCS), FT_FRAME_INCOMPLETE);
	ck_assert_int_eq(parse_exact(b, 8, NPROCS), FT_FRAME_BAD_MAGIC);
	memcpy(b, hb, 32);
	le32(b + 8, FT_FRAME_MAX_PAYLOAD + 1);
	ck_assert_int_eq(parse_exact(b, 11, NPROCS), FT_FRAME_INCOMPLETE);
	ck_assert_int_eq(parse_exact(b, 12, NPROCS), FT_FRAME_TOO_LONG);

	/* The secret is judged only when whole, the sender after it. */
	memcpy(b, hb, 32);
	b[16] ^= 1;
	for (size_t len = 17; len < 32; len++)
		ck_assert_int_eq(parse_exact(b, len, NPROCS), FT_FRAME_INCOMPLETE);
	ck_assert_int_eq(parse_exact(b, 32, NPROCS), FT_FRAME_BAD_SECRET);
	memcpy(b, hb, 32);
	le32(b + 12, NPROCS);
	ck_assert_int_eq(parse_exact(b, 31, NPROCS), FT_FRAME_INCOMPLETE);
	ck_assert_int_eq(parse_exact(b, 32, NPROCS), FT_FRAME_BAD_SENDER);
}
END_TEST

/* --- rejection reasons ------------------------------------------------------------------- */

/* A valid heartbeat from rank 1, 60 bytes, to be spoilt. */
static void valid_heartbeat(uint8_t frame[60])
{
	struct ft_msg m = { .type = FT_MSG_HEARTBEAT };

	m.hb.seq = 9;
	ck_assert_uint_eq(ft_frame_encode(&m, 1, g_secret, frame, 60), 60);
	ck_assert_int_eq(parse_exact(frame, 60, NPROCS), FT_FRAME_OK);
}

START_TEST(test_reject_header)
{
	uint8_t f[60];

	for (int i = 0; i < 4; i++) {
		valid_heartbeat(f);
		f[i] ^= 0x20;
		ck_assert_int_eq(parse_exact(f, 60, NPROCS), FT_FRAME_BAD_MAGIC);
	}
	/* 1 is the old version (12-byte entries, no at_ns): a peer still
	 * speaking it must be refused, not misread. */
	ck_assert_int_eq(FT_FRAME_VERSION, 2);
	const uint8_t versions[] = { 0, 1, 3, 255 };
	for (size_t i = 0; i < ARRAY_SIZE(versions); i++) {
		valid_heartbeat(f);
		f[4] = versions[i];
		ck_assert_int_eq(parse_exact(f, 60, NPROCS), FT_FRAME_BAD_VERSION);
	}
	const uint8_t types[] = { 0, FT_MSG_TYPE_END, 8, 255 };
	for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
		valid_heartbeat(f);
		f[5] = types[i];
		ck_assert_int_eq(parse_exact(f, 60, NPROCS), FT_FRAME_BAD_TYPE);
	}
	/* The reserved field is part of what identifies the protocol. */
	for (int i = 6; i < 8; i++) {
		valid_heartbeat(f);
		f[i] = 1;
		ck_assert_int_eq(parse_exact(f, 60, NPROCS), FT_FRAME_BAD_MAGIC);
	}
	/* Oversized: told by the header alone, with no payload present. */
	const uint32_t lens[] = { FT_FRAME_MAX_PAYLOAD + 1, 0x00010100u, 0x01000000u, UINT32_MAX };
	for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
		valid_heartbeat(f);
		le32(f + 8, lens[i]);
		ck_assert_int_eq(parse_exact(f, 32, NPROCS), FT_FRAME_TOO_LONG);
		ck_assert_int_eq(parse_exact(f, 60, NPROCS), FT_FRAME_TOO_LONG);
	}
	/* The largest length allowed is only waited for. */
	valid_heartbeat(f);
	le32(f + 8, FT_FRAME_MAX_PAYLOAD);
	ck_assert_int_eq(parse_exact(f, 60, NPROCS), FT_FRAME_INCOMPLETE);

	/* Each secret byte matters. */
	for (int i = 16; i < 32; i++) {
		valid_heartbeat(f);
		f[i] ^= 0x01;
		ck_assert_int_eq(parse_exact(f, 60, NPROCS), FT_FRAME_BAD_SECRET);
		f[i] ^= 0x81;
		ck_assert_int_eq(parse_exact(f, 60, NPROCS), FT_FRAME_BAD_SECRET);
	}
	/* Sender: the last rank is in, nprocs is out. */
	valid_heartbeat(f);
	le32(f + 12, NPROCS - 1);
	ck_assert_int_eq(parse_exact(f, 60, NPROCS), FT_FRAME_OK);
	le32(f + 12, NPROCS);
	ck_assert_int_eq(parse_exact(f, 60, NPROCS), FT_FRAME_BAD_SENDER);
	le32(f + 12, UINT32_MAX);
	ck_assert_int_eq(parse_exact(f, 60, NPROCS), FT_FRAME_BAD_SENDER);
	le32(f + 12, 0);
	ck_assert_int_eq(parse_exact(f, 60, 0), FT_FRAME_BAD_SENDER);
	ck_assert_int_eq(parse_exact(f, 60, 1), FT_FRAME_OK);
}
END_TEST

START_TEST(test_reject_order)
{
	uint8_t f[60];

	/* Several faults at once: the one judged first is reported. */
	valid_heartbeat(f);
	f[0] = 0;
	f[4] = 9;
	f[5] = 9;
	ck_assert_int_eq(parse_exact(f, 60, NPROCS), FT_FRAME_BAD_MAGIC);
	valid_heartbeat(f);
	f[4] = 9;
	f[5] = 9;
	ck_assert_int_eq(parse_exact(f, 60, NPROCS), FT_FRAME_BAD_VERSION);
	valid_heartbeat(f);
	f[5] = 9;
	f[6] = 1;
	ck_assert_int_eq(parse_exact(f, 60, NPROCS), FT_FRAME_BAD_TYPE);
	valid_heartbeat(f);
	f[6] = 1;
	le32(f + 8, UINT32_MAX);
	ck_assert_int_eq(parse_exact(f, 60, NPROCS), FT_FRAME_BAD_MAGIC);
	valid_heartbeat(f);
	le32(f + 8, UINT32_MAX);
	f[20] ^= 1;
	ck_assert_int_eq(parse_exact(f, 60, NPROCS), FT_FRAME_TOO_LONG);
	valid_heartbeat(f);
	f[20] ^= 1;
	le32(f + 12, NPROCS);
	ck_assert_int_eq(parse_exact(f, 60, NPROCS), FT_FRAME_BAD_SECRET);
	valid_heartbeat(f);
	le32(f + 12, NPROCS);
	le32(f + 8, 27);
	ck_assert_int_eq(parse_exact(f, 59, NPROCS), FT_FRAME_BAD_SENDER);
	/* A bad sender is told before the payload is awaited. */
	valid_heartbeat(f);
	le32(f + 12, NPROCS);
	ck_assert_int_eq(parse_exact(f, 40, NPROCS), FT_FRAME_BAD_SENDER);
}
END_TEST

/* A frame of type with the given payload bytes, sender 0. */
static size_t craft(uint8_t *f, uint8_t type, const uint8_t *payload, uint32_t plen)
{
	memcpy(f, "FTSH", 4);
	f[4] = FT_FRAME_VERSION;
	f[5] = type;
	le16(f + 6, 0);
	le32(f + 8, plen);
	le32(f + 12, 0);
	memcpy(f + 16, g_secret, FT_SECRET_LEN);
	if (plen)
		memcpy(f + 32, payload, plen);
	return 32 + (size_t)plen;
}

START_TEST(test_parse_crafted)
{
	/* Frames written by the test's own encoder decode to their fields. */
	struct ft_entry *scratch = new_scratch();
	uint8_t payload[64], f[128];
	struct ft_msg m;
	size_t consumed, n;

	le64(payload, UINT64_C(0x0102030405060708));
	le32(payload + 8, 0x11121314u);
	le32(payload + 12, 0x21222324u);
	le64(payload + 16, UINT64_C(0xf1f2f3f4f5f6f7f8));
	le32(payload + 24, 0);
	n = craft(f, FT_MSG_HEARTBEAT, payload, 28);
	le32(f + 12, 6);
	ck_assert_int_eq(ft_frame_parse(f, n, g_secret, NPROCS, &m, scratch, &consumed),
			 FT_FRAME_OK);
	ck_assert_uint_eq(consumed, 60);
	ck_assert_int_eq(m.type, FT_MSG_HEARTBEAT);
	ck_assert_uint_eq(m.from, 6);
	ck_assert_uint_eq(m.hb.seq, UINT64_C(0x0102030405060708));
	ck_assert_uint_eq(m.hb.nfailed, 0x11121314u);
	ck_assert_uint_eq(m.hb.ndeparted, 0x21222324u);
	ck_assert_uint_eq(m.hb.digest, UINT64_C(0xf1f2f3f4f5f6f7f8));

	le32(payload, 0xcafe0001u);
	le32(payload + 4, 7);
	n = craft(f, FT_MSG_EXCLUDED, payload, 8);
	ck_assert_int_eq(ft_frame_parse(f, n, g_secret, NPROCS, &m, scratch, &consumed),
			 FT_FRAME_OK);
	ck_assert_uint_eq(consumed, 40);
	ck_assert_int_eq(m.type, FT_MSG_EXCLUDED);
	ck_assert_uint_eq(m.from, 0);
	ck_assert_uint_eq(m.excluded.how, 0xcafe0001u);
	ck_assert_uint_eq(m.excluded.detector, 7);

	/* PROBE: u32 round, u32 flags; flags outside FT_PROBE_FLAGS refused. */
	le32(payload, 0xabcd0102u);
	le32(payload + 4, FT_PROBE_REPLY);
	n = craft(f, FT_MSG_PROBE, payload, 8);
	ck_assert_int_eq(ft_frame_parse(f, n, g_secret, NPROCS, &m, scratch, &consumed),
			 FT_FRAME_OK);
	ck_assert_uint_eq(consumed, 40);
	ck_assert_int_eq(m.type, FT_MSG_PROBE);
	ck_assert_uint_eq(m.probe.round, 0xabcd0102u);
	ck_assert_uint_eq(m.probe.flags, FT_PROBE_REPLY);
	le32(payload + 4, FT_PROBE_FLAGS + 1);
	n = craft(f, FT_MSG_PROBE, payload, 8);
	ck_assert_int_eq(ft_frame_parse(f, n, g_secret, NPROCS, &m, scratch, &consumed),
			 FT_FRAME_BAD_PAYLOAD);
	n = craft(f, FT_MSG_PROBE, payload, 4);
	ck_assert_int_eq(ft_frame_parse(f, n, g_secret, NPROCS, &m, scratch, &consumed),
			 FT_FRAME_BAD_PAYLOAD);
	struct ft_msg bad_probe = { .type = FT_MSG_PROBE };
	bad_probe.probe.flags = 4;
	ck_assert_uint_eq(ft_frame_length(&bad_probe), 0);

	/* SYNC of two entries: the second starts FT_ENTRY_LEN = 20 bytes after
	 * the first, each ends with its u64 at_ns at offset 12. */
	le32(payload, 0x80000001u); /* flags */
	le32(payload + 4, 2);
	le32(payload + 8, 5);
	le16(payload + 12, FT_EV_FAILED);
	le16(payload + 14, 0xfe);
	le32(payload + 16, 4);
	le64(payload + 20, UINT64_C(0x8877665544332211));
	le32(payload + 28, 6);
	le16(payload + 32, FT_EV_ABORT);
	le16(payload + 34, 3);
	le32(payload + 36, 7);
	le64(payload + 40, UINT64_MAX);
	n = craft(f, FT_MSG_SYNC, payload, 8 + 2 * 20);
	ck_assert_int_eq(ft_frame_parse(f, n, g_secret, NPROCS, &m, scratch, &consumed),
			 FT_FRAME_OK);
	ck_assert_uint_eq(consumed, 80);
	ck_assert_int_eq(m.type, FT_MSG_SYNC);
	ck_assert_uint_eq(m.list.flags, 0x80000001u);
	ck_assert_uint_eq(m.list.count, 2);
	ck_assert_ptr_eq(m.list.entries, scratch);
	ck_assert_uint_eq(scratch[0].rank, 5);
	ck_assert_uint_eq(scratch[0].event, FT_EV_FAILED);
	ck_assert_uint_eq(scratch[0].how, 0xfe);
	ck_assert_uint_eq(scratch[0].detector, 4);
	ck_assert_uint_eq(scratch[0].at_ns, UINT64_C(0x8877665544332211));
	ck_assert_uint_eq(scratch[1].rank, 6);
	ck_assert_uint_eq(scratch[1].event, FT_EV_ABORT);
	ck_assert_uint_eq(scratch[1].how, 3);
	ck_assert_uint_eq(scratch[1].detector, 7);
	ck_assert_uint_eq(scratch[1].at_ns, UINT64_MAX);
	free(scratch);
}
END_TEST

START_TEST(test_reject_fixed_payloads)
{
	uint8_t payload[64], f[128];

	memset(payload, 0, sizeof payload);
	/* HEARTBEAT is exactly 28 bytes. */
	ck_assert_int_eq(parse_exact(f, craft(f, FT_MSG_HEARTBEAT, payload, 28), NPROCS),
			 FT_FRAME_OK);
	const uint32_t bad_hb[] = { 0, 8, 27, 29, 36, 64 };
	for (size_t i = 0; i < ARRAY_SIZE(bad_hb); i++)
		ck_assert_int_eq(parse_exact(f, craft(f, FT_MSG_HEARTBEAT, payload, bad_hb[i]),
					     NPROCS),
				 FT_FRAME_BAD_PAYLOAD);
	/* Its last 4 bytes are reserved and must be 0. */
	for (int i = 24; i < 28; i++) {
		payload[i] = 0x10;
		ck_assert_int_eq(parse_exact(f, craft(f, FT_MSG_HEARTBEAT, payload, 28), NPROCS),
				 FT_FRAME_BAD_PAYLOAD);
		payload[i] = 0;
	}
	/* EXCLUDED is exactly 8 bytes. */
	ck_assert_int_eq(parse_exact(f, craft(f, FT_MSG_EXCLUDED, payload, 8), NPROCS),
			 FT_FRAME_OK);
	const uint32_t bad_ex[] = { 0, 4, 7, 9, 28 };
	for (size_t i = 0; i < ARRAY_SIZE(bad_ex); i++)
		ck_assert_int_eq(parse_exact(f, craft(f, FT_MSG_EXCLUDED, payload, bad_ex[i]),
					     NPROCS),
				 FT_FRAME_BAD_PAYLOAD);
}
END_TEST

START_TEST(test_reject_list_lengths)
{
	uint8_t payload[64], f[128];

	memset(payload, 0, sizeof payload);
	/* NOTICE with count 0 and no entries is fine; shorter than the count
	 * field is not. */
	ck_assert_int_eq(parse_exact(f, craft(f, FT_MSG_NOTICE, payload, 4), NPROCS), FT_FRAME_OK);
	for (uint32_t n = 0; n < 4; n++)
		ck_assert_int_eq(parse_exact(f, craft(f, FT_MSG_NOTICE, payload, n), NPROCS),
				 FT_FRAME_BAD_PAYLOAD);
	/* One valid entry (rank 1, FAILED, how 2, detector 3, at_ns
	 * 0x8877665544332211) after the count: 4 + 20 bytes. */
	const uint8_t entry[FT_ENTRY_LEN] = {
		1,    0,    0,    0,				/* rank */
		1,    0,					/* event */
		2,    0,					/* how */
		3,    0,    0,    0,				/* detector */
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, /* at_ns */
	};
	memcpy(payload + 4, entry, FT_ENTRY_LEN);
	le32(payload, 1);
	ck_assert_int_eq(parse_exact(f, craft(f, FT_MSG_NOTICE, payload, 24), NPROCS), FT_FRAME_OK);
	/* Count not matching the length, either way. A 32-bit count * 20
	 * wraps back to 20 when 20 * (count - 1) is a multiple of 2^32, that
	 * is (20 = 4 * 5, 5 odd) when count - 1 is a multiple of 2^30:
	 * 0x40000001 * 20 = 5 * 2^32 + 20 and 0xc0000001 * 20 = 15 * 2^32 + 20
	 * both wrap to 20, the length of one entry. */
	ck_assert_uint_eq((uint32_t)(UINT32_C(0x40000001) * (uint32_t)FT_ENTRY_LEN), FT_ENTRY_LEN);
	ck_assert_uint_eq((uint32_t)(UINT32_C(0xc0000001) * (uint32_t)FT_ENTRY_LEN), FT_ENTRY_LEN);
	const uint32_t counts[] = { 0, 2, 3, UINT32_MAX, 0x40000001u, 0xc0000001u };
	for (size_t i = 0; i < ARRAY_SIZE(counts); i++) {
		le32(payload, counts[i]);
		ck_assert_int_eq(parse_exact(f, craft(f, FT_MSG_NOTICE, payload, 24), NPROCS),
				 FT_FRAME_BAD_PAYLOAD);
	}
	le32(payload, 1);
	ck_assert_int_eq(parse_exact(f, craft(f, FT_MSG_NOTICE, payload, 23), NPROCS),
			 FT_FRAME_BAD_PAYLOAD);
	ck_assert_int_eq(parse_exact(f, craft(f, FT_MSG_NOTICE, payload, 25), NPROCS),
			 FT_FRAME_BAD_PAYLOAD);
	/* An entry of version 1 (12 bytes, no at_ns) is not one. */
	ck_assert_int_eq(parse_exact(f, craft(f, FT_MSG_NOTICE, payload, 4 + 12), NPROCS),
			 FT_FRAME_BAD_PAYLOAD);

	/* SYNC: flags, count, entries. */
	uint8_t sp[64];
	memset(sp, 0, sizeof sp);
	le32(sp, FT_SYNC_REPLY);
	ck_assert_int_eq(parse_exact(f, craft(f, FT_MSG_SYNC, sp, 8), NPROCS), FT_FRAME_OK);
	for (uint32_t n = 0; n < 8; n++)
		ck_assert_int_eq(parse_exact(f, craft(f, FT_MSG_SYNC, sp, n), NPROCS),
				 FT_FRAME_BAD_PAYLOAD);
	le32(sp + 4, 1);
	memcpy(sp + 8, entry, FT_ENTRY_LEN);
	ck_assert_int_eq(parse_exact(f, craft(f, FT_MSG_SYNC, sp, 28), NPROCS), FT_FRAME_OK);
	ck_assert_int_eq(parse_exact(f, craft(f, FT_MSG_SYNC, sp, 27), NPROCS),
			 FT_FRAME_BAD_PAYLOAD);
	ck_assert_int_eq(parse_exact(f, craft(f, FT_MSG_SYNC, sp, 29), NPROCS),
			 FT_FRAME_BAD_PAYLOAD);
	ck_assert_int_eq(parse_exact(f, craft(f, FT_MSG_SYNC, sp, 8 + 12), NPROCS),
			 FT_FRAME_BAD_PAYLOAD);
	le32(sp + 4, 2);
	ck_assert_int_eq(parse_exact(f, craft(f, FT_MSG_SYNC, sp, 28), NPROCS),
			 FT_FRAME_BAD_PAYLOAD);
	/* The count is the second word: a NOTICE reading of it (count 1 from
	 * the flags, then 20 bytes after the 8 of flags and count) would
	 * accept. */
	le32(sp, 1);
	le32(sp + 4, 0);
	ck_assert_int_eq(parse_exact(f, craft(f, FT_MSG_SYNC, sp, 28), NPROCS),
			 FT_FRAME_BAD_PAYLOAD);
}
END_TEST

/* Scratch holds FT_FRAME_MAX_ENTRIES. With 12-byte entries one entry more
 * still fitted in a NOTICE under FT_FRAME_MAX_PAYLOAD; with 20-byte ones it
 * does not: (65536 - 8) / 20 = 3276 entries, and 4 + 3277 * 20 = 65544 >
 * 65536. So for both list types the largest list that fits in
 * FT_FRAME_MAX_PAYLOAD is FT_FRAME_MAX_ENTRIES: it must be accepted, and a
 * frame announcing more must be refused, not decoded past scratch: with
 * only the entries that fit, padded to FT_FRAME_MAX_PAYLOAD, or with every
 * entry it announces (oversized). Should FT_ENTRY_LEN change again so that
 * one more entry fits, the second assertion below fails: then a full list
 * of FT_FRAME_MAX_ENTRIES + 1 entries must be tested to be a bad payload. */
START_TEST(test_reject_too_many_entries)
{
	const uint32_t max = FT_FRAME_MAX_ENTRIES, over = max + 1;
	const uint32_t max_plen = FT_FRAME_MAX_PAYLOAD;

	for (int type = FT_MSG_NOTICE; type <= FT_MSG_SYNC; type++) {
		size_t fixed = type == FT_MSG_SYNC ? 8 : 4;
		size_t fits = fixed + (size_t)max * FT_ENTRY_LEN;
		size_t full = fixed + (size_t)over * FT_ENTRY_LEN;
		size_t room = full > FT_FRAME_MAX_PAYLOAD ? full : FT_FRAME_MAX_PAYLOAD;

		/* The largest list fits; one entry more does not. */
		ck_assert_uint_le(fits, FT_FRAME_MAX_PAYLOAD);
		ck_assert_uint_gt(full, FT_FRAME_MAX_PAYLOAD);

		uint8_t *payload = calloc(1, room), *f = malloc(32 + room);
		ck_assert_ptr_nonnull(payload);
		ck_assert_ptr_nonnull(f);
		if (type == FT_MSG_SYNC)
			le32(payload, FT_SYNC_REPLY);
		for (uint32_t i = 0; i < over; i++) {
			uint8_t *p = payload + fixed + (size_t)i * FT_ENTRY_LEN;
			le32(p, i % NPROCS);
			le16(p + 4, FT_EV_FAILED);
			le16(p + 6, 1);
			le32(p + 8, 0);
			le64(p + 12, make_at_ns(i));
		}
		uint8_t *count = payload + fixed - 4;

		/* FT_FRAME_MAX_ENTRIES entries: accepted. */
		le32(count, max);
		ck_assert_int_eq(parse_exact(f, craft(f, (uint8_t)type, payload, (uint32_t)fits),
					     NPROCS),
				 FT_FRAME_OK);
		/* One more announced, with only those that fit, or padded up to
		 * FT_FRAME_MAX_PAYLOAD: refused. */
		le32(count, over);
		ck_assert_int_eq(parse_exact(f, craft(f, (uint8_t)type, payload, (uint32_t)fits),
					     NPROCS),
				 FT_FRAME_BAD_PAYLOAD);
		ck_assert_int_eq(parse_exact(f, craft(f, (uint8_t)type, payload, max_plen), NPROCS),
				 FT_FRAME_BAD_PAYLOAD);
		/* With all of them: the header already says too long. */
		ck_assert_int_eq(parse_exact(f, craft(f, (uint8_t)type, payload, (uint32_t)full),
					     NPROCS),
				 FT_FRAME_TOO_LONG);
		/* Far more announced than any frame could hold. */
		le32(count, UINT32_MAX);
		ck_assert_int_eq(parse_exact(f, craft(f, (uint8_t)type, payload, max_plen), NPROCS),
				 FT_FRAME_BAD_PAYLOAD);
		free(payload);
		free(f);
	}
}
END_TEST

START_TEST(test_reject_entries)
{
	uint8_t payload[4 + 3 * FT_ENTRY_LEN], f[128];
	/* Which field of the middle entry to spoil, and with what. */
	const struct {
		size_t off;
		int width;
		uint64_t value;
		bool ok;
	} cases[] = {
		{ 0, 4, NPROCS - 1, true },
		{ 0, 4, NPROCS, false },
		{ 0, 4, UINT32_MAX, false },
		{ 4, 2, FT_EV_FAILED, true },
		{ 4, 2, FT_EV_DEPARTED, true },
		{ 4, 2, FT_EV_ABORT, true },
		{ 4, 2, FT_EV_READMITTED, true },
		{ 4, 2, FT_EV_FAILED_AGAIN, true },
		{ 4, 2, FT_EV_JOINED, true },
		{ 4, 2, 0, false },
		{ 4, 2, 7, false },
		{ 4, 2, 0xffff, false },
		{ 6, 2, 0, true },
		{ 6, 2, 255, true },
		{ 6, 2, 256, false },
		{ 6, 2, 0xffff, false },
		{ 8, 4, NPROCS - 1, true },
		{ 8, 4, NPROCS, false },
		{ 8, 4, 0x80000000u, false },
		/* at_ns: any value is valid. */
		{ 12, 8, 0, true },
		{ 12, 8, 1, true },
		{ 12, 8, UINT64_MAX, true },
	};

	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		for (int type = FT_MSG_NOTICE; type <= FT_MSG_SYNC; type++) {
			size_t fixed = type == FT_MSG_SYNC ? 8 : 4;
			uint8_t body[8 + 3 * FT_ENTRY_LEN];

			memset(payload, 0, sizeof payload);
			le32(payload, 3);
			for (int i = 0; i < 3; i++) {
				uint8_t *p = payload + 4 + i * FT_ENTRY_LEN;
				le32(p, (uint32_t)i);
				le16(p + 4, FT_EV_DEPARTED);
				le32(p + 8, (uint32_t)i + 1);
				/* none of the values the cases write */
				le64(p + 12, UINT64_C(0x0123456789abcdef) + (uint64_t)i);
			}
			uint8_t *mid = payload + 4 + FT_ENTRY_LEN + cases[c].off;
			if (cases[c].width == 8)
				le64(mid, cases[c].value);
			else if (cases[c].width == 4)
				le32(mid, (uint32_t)cases[c].value);
			else
				le16(mid, (uint16_t)cases[c].value);
			/* SYNC: flags in front of the same list. */
			memset(body, 0, sizeof body);
			memcpy(body + fixed - 4, payload, sizeof payload);
			uint32_t plen = (uint32_t)(fixed + 3 * FT_ENTRY_LEN);
			ck_assert_msg(parse_exact(f, craft(f, (uint8_t)type, body, plen), NPROCS) ==
					      (cases[c].ok ? FT_FRAME_OK : FT_FRAME_BAD_PAYLOAD),
				      "case %zu type %d", c, type);
		}
	}
	/* Rank and detector are judged against nprocs, not a constant. */
	uint8_t body[4 + FT_ENTRY_LEN];
	le32(body, 1);
	le32(body + 4, 100);
	le16(body + 8, FT_EV_FAILED);
	le16(body + 10, 2);
	le32(body + 12, 99);
	le64(body + 16, UINT64_C(1700000000000000000));
	ck_assert_int_eq(parse_exact(f, craft(f, FT_MSG_NOTICE, body, sizeof body), 101),
			 FT_FRAME_OK);
	ck_assert_int_eq(parse_exact(f, craft(f, FT_MSG_NOTICE, body, sizeof body), 100),
			 FT_FRAME_BAD_PAYLOAD);
}
END_TEST

/* A JOINED entry carries an endpoint: its detector (an address) and how
 * (a port) take any value, which no other event allows; its rank is still
 * judged against nprocs. */
START_TEST(test_joined_entry)
{
	struct ft_entry e[] = {
		{ .rank = NPROCS - 1, .event = FT_EV_JOINED, .how = 0xffff, .detector = UINT32_MAX,
		  .at_ns = UINT64_MAX },
		{ .rank = 0, .event = FT_EV_JOINED, .how = 0x3412, .detector = 0x0100007fu,
		  .at_ns = UINT64_C(0x8000000000000001) },
	};
	struct ft_msg m = { .type = FT_MSG_NOTICE };
	uint8_t body[4 + FT_ENTRY_LEN], f[128];

	m.list.count = ARRAY_SIZE(e);
	m.list.entries = e;
	round_trip(m, 1);
	m.type = FT_MSG_SYNC;
	round_trip(m, 1);

	le32(body, 1);
	le32(body + 4, NPROCS);
	le16(body + 8, FT_EV_JOINED);
	le16(body + 10, 0xffff);
	le32(body + 12, UINT32_MAX);
	le64(body + 16, 0);
	ck_assert_int_eq(parse_exact(f, craft(f, FT_MSG_NOTICE, body, sizeof body), NPROCS),
			 FT_FRAME_BAD_PAYLOAD);
	le32(body + 4, NPROCS - 1);
	ck_assert_int_eq(parse_exact(f, craft(f, FT_MSG_NOTICE, body, sizeof body), NPROCS),
			 FT_FRAME_OK);
	/* The same fields under another event are refused. */
	le16(body + 8, FT_EV_DEPARTED);
	ck_assert_int_eq(parse_exact(f, craft(f, FT_MSG_NOTICE, body, sizeof body), NPROCS),
			 FT_FRAME_BAD_PAYLOAD);
}
END_TEST

/* --- the encoder ---------------------------------------------------------------------- */

START_TEST(test_encode_refuses)
{
	struct ft_entry *e = make_entries(FT_FRAME_MAX_ENTRIES + 1);
	size_t cap = FT_FRAME_MAX_LEN + 64;
	uint8_t *buf = malloc(cap);

	ck_assert_ptr_nonnull(buf);
	for (int type = FT_MSG_NOTICE; type <= FT_MSG_SYNC; type++) {
		struct ft_msg m = { .type = (enum ft_msg_type)type };
		m.list.entries = e;
		m.list.count = FT_FRAME_MAX_ENTRIES + 1;
		ck_assert_uint_eq(ft_frame_length(&m), 0);
		ck_assert_uint_eq(ft_frame_encode(&m, 0, g_secret, buf, cap), 0);
		m.list.count = UINT32_MAX;
		ck_assert_uint_eq(ft_frame_length(&m), 0);
		ck_assert_uint_eq(ft_frame_encode(&m, 0, g_secret, buf, cap), 0);
		/* The largest list fits in FT_FRAME_MAX_LEN. */
		m.list.count = FT_FRAME_MAX_ENTRIES;
		size_t n = ft_frame_length(&m);
		ck_assert_uint_gt(n, 0);
		ck_assert_uint_le(n, FT_FRAME_MAX_LEN);
		ck_assert_uint_eq(ft_frame_encode(&m, 0, g_secret, buf, cap), n);
		ck_assert_uint_eq(ft_frame_encode(&m, 0, g_secret, buf, n - 1), 0);
		/* Entries promised but missing. */
		m.list.count = 1;
		m.list.entries = NULL;
		ck_assert_uint_eq(ft_frame_encode(&m, 0, g_secret, buf, cap), 0);
	}
	const int bad_types[] = { 0, FT_MSG_TYPE_END, 8, 255, -1 };
	for (size_t i = 0; i < ARRAY_SIZE(bad_types); i++) {
		struct ft_msg m = { .type = (enum ft_msg_type)bad_types[i] };
		ck_assert_uint_eq(ft_frame_length(&m), 0);
		ck_assert_uint_eq(ft_frame_encode(&m, 0, g_secret, buf, cap), 0);
	}
	/* Too little room, down to none: refused, nothing written. */
	struct ft_msg hb = { .type = FT_MSG_HEARTBEAT };
	memset(buf, 0x77, 64);
	for (size_t c = 0; c < 60; c++)
		ck_assert_uint_eq(ft_frame_encode(&hb, 0, g_secret, buf, c), 0);
	for (size_t i = 0; i < 64; i++)
		ck_assert_uint_eq(buf[i], 0x77);
	ck_assert_uint_eq(ft_frame_encode(&hb, 0, g_secret, NULL, 0), 0);
	ck_assert_uint_eq(ft_frame_encode(&hb, 0, g_secret, buf, 60), 60);
	free(buf);
	free(e);
}
END_TEST

START_TEST(test_error_names)
{
	for (int i = 0; i < FT_FRAME_ERR_COUNT; i++) {
		ck_assert_ptr_nonnull(ft_frame_error_names[i]);
		ck_assert_uint_gt(strlen(ft_frame_error_names[i]), 0);
		for (int j = 0; j < i; j++)
			ck_assert_str_ne(ft_frame_error_names[i], ft_frame_error_names[j]);
	}
	ck_assert_int_eq(FT_FRAME_ERR_COUNT, 9);
	ck_assert_str_eq(ft_frame_error_names[FT_FRAME_OK], "ok");
	ck_assert_str_eq(ft_frame_error_names[FT_FRAME_BAD_SECRET], "wrong secret");
	ck_assert_str_eq(ft_frame_error_names[FT_FRAME_BAD_PAYLOAD], "malformed payload");
}
END_TEST

static Suite *frame_suite(void)
{
	Suite *s = suite_create("frame");
	TCase *tc_rt = tcase_create("round_trip");
	TCase *tc_layout = tcase_create("layout");
	TCase *tc_stream = tcase_create("stream");
	TCase *tc_reject = tcase_create("reject");
	TCase *tc_enc = tcase_create("encode");

	tcase_add_test(tc_rt, test_round_trip_heartbeat);
	tcase_add_test(tc_rt, test_round_trip_excluded);
	tcase_add_test(tc_rt, test_round_trip_probe);
	tcase_add_test(tc_rt, test_round_trip_notice);
	tcase_add_test(tc_rt, test_round_trip_sync);
	tcase_add_test(tc_rt, test_round_trip_entry_extremes);
	suite_add_tcase(s, tc_rt);

	tcase_add_test(tc_layout, test_heartbeat_layout);
	tcase_add_test(tc_layout, test_list_layout);
	suite_add_tcase(s, tc_layout);

	tcase_add_test(tc_stream, test_back_to_back);
	tcase_add_test(tc_stream, test_truncations);
	tcase_add_test(tc_stream, test_short_prefix_refused);
	tcase_set_timeout(tc_stream, 60);
	suite_add_tcase(s, tc_stream);

	tcase_add_test(tc_reject, test_parse_crafted);
	tcase_add_test(tc_reject, test_reject_header);
	tcase_add_test(tc_reject, test_reject_order);
	tcase_add_test(tc_reject, test_reject_fixed_payloads);
	tcase_add_test(tc_reject, test_reject_list_lengths);
	tcase_add_test(tc_reject, test_reject_too_many_entries);
	tcase_add_test(tc_reject, test_reject_entries);
	tcase_add_test(tc_reject, test_joined_entry);
	suite_add_tcase(s, tc_reject);

	tcase_add_test(tc_enc, test_encode_refuses);
	tcase_add_test(tc_enc, test_error_names);
	suite_add_tcase(s, tc_enc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(frame_suite());

	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
