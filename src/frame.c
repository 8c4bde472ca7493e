/* frame.c: the encoder and the parser of the control-plane frames laid out
 * in frame.h. The parser stands between a socket and the detector, so it
 * trusts nothing it is given: it reads only within buf[0..len), decodes
 * every integer byte by byte as little-endian (no struct overlays, no
 * unaligned loads, no assumption about the host's byte order), and rejects
 * a frame as soon as the bytes received show it to be wrong, so that a
 * stray or hostile connection is dropped before the caller buffers a
 * payload for it. The encoder is its exact inverse: whatever the parser
 * accepts, the encoder gives back byte for byte. */
#include "ftshim_config.h"

#include <string.h>

#include "src/frame.h"

#define FT_FRAME_ERR_NAME(e, s) s,
const char *const ft_frame_error_names[FT_FRAME_ERR_COUNT] = {
	FT_FRAME_ERRORS(FT_FRAME_ERR_NAME)
};
#undef FT_FRAME_ERR_NAME

/* Header fields (see frame.h). */
#define OFF_MAGIC 0
#define OFF_VERSION 4
#define OFF_TYPE 5
#define OFF_RESERVED 6
#define OFF_LENGTH 8
#define OFF_SENDER 12
#define OFF_SECRET 16

/* Payload sizes, and the fixed part in front of a list's entries. A
 * heartbeat's last 4 bytes are reserved: written as 0 and required to be
 * 0, so that the encoder stays the exact inverse of the parser. */
#define HEARTBEAT_LEN 28
#define HEARTBEAT_PAD_OFF 24
#define EXCLUDED_LEN 8
#define PROBE_LEN 8
#define NOTICE_FIXED_LEN 4
#define SYNC_FIXED_LEN 8

/* The wire has 16 bits for an entry's how but enum ft_fail_how is far
 * smaller; the rest is kept free rather than accepted as garbage. */
#define ENTRY_MAX_HOW 255

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (unsigned)p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

/* The bytes of a list payload in front of its entries; 0 for a type that
 * carries no list. */
static size_t list_fixed_len(enum ft_msg_type type)
{
	if (type == FT_MSG_NOTICE)
		return NOTICE_FIXED_LEN;
	if (type == FT_MSG_SYNC)
		return SYNC_FIXED_LEN;
	return 0;
}

size_t ft_frame_length(const struct ft_msg *m)
{
	switch (m->type) {
	case FT_MSG_HEARTBEAT:
		return FT_FRAME_HEADER_LEN + HEARTBEAT_LEN;
	case FT_MSG_EXCLUDED:
		return FT_FRAME_HEADER_LEN + EXCLUDED_LEN;
	case FT_MSG_PROBE:
		if (m->probe.flags & ~FT_PROBE_FLAGS)
			return 0;
		return FT_FRAME_HEADER_LEN + PROBE_LEN;
	case FT_MSG_APP:
		if (m->app.len > FT_APP_MAX_DATA || (m->app.len && !m->app.data))
			return 0;
		return FT_FRAME_HEADER_LEN + FT_APP_FIXED_LEN + m->app.len;
	case FT_MSG_NOTICE:
	case FT_MSG_SYNC:
		if (m->list.count > FT_FRAME_MAX_ENTRIES)
			return 0;
		return FT_FRAME_HEADER_LEN + list_fixed_len(m->type) +
		       (size_t)m->list.count * FT_ENTRY_LEN;
	default:
		return 0;
	}
}

static void put_entries(uint8_t *p, const struct ft_entry *e, uint32_t count)
{
	for (uint32_t i = 0; i < count; i++, p += FT_ENTRY_LEN) {
		put32(p, e[i].rank);
		put16(p + 4, e[i].event);
		put16(p + 6, e[i].how);
		put32(p + 8, e[i].detector);
		put64(p + 12, e[i].at_ns);
	}
}

size_t ft_frame_encode(const struct ft_msg *m, uint32_t from, const uint8_t secret[FT_SECRET_LEN],
		       uint8_t *buf, size_t cap)
{
	size_t len = ft_frame_length(m);

	if (!len || len > cap)
		return 0;
	if (list_fixed_len(m->type) && m->list.count && !m->list.entries)
		return 0;

	uint8_t *p = buf + FT_FRAME_HEADER_LEN;

	put32(buf + OFF_MAGIC, FT_FRAME_MAGIC);
	buf[OFF_VERSION] = FT_FRAME_VERSION;
	buf[OFF_TYPE] = (uint8_t)m->type;
	put16(buf + OFF_RESERVED, 0);
	put32(buf + OFF_LENGTH, (uint32_t)(len - FT_FRAME_HEADER_LEN));
	put32(buf + OFF_SENDER, from);
	memcpy(buf + OFF_SECRET, secret, FT_SECRET_LEN);

	switch (m->type) {
	case FT_MSG_HEARTBEAT:
		put64(p, m->hb.seq);
		put32(p + 8, m->hb.nfailed);
		put32(p + 12, m->hb.ndeparted);
		put64(p + 16, m->hb.digest);
		put32(p + HEARTBEAT_PAD_OFF, 0);
		break;
	case FT_MSG_EXCLUDED:
		put32(p, m->excluded.how);
		put32(p + 4, m->excluded.detector);
		break;
	case FT_MSG_PROBE:
		put32(p, m->probe.round);
		put32(p + 4, m->probe.flags);
		break;
	case FT_MSG_APP:
		put64(p, m->app.key);
		put32(p + 8, m->app.seq);
		put16(p + 12, m->app.kind);
		put16(p + 14, 0);
		put32(p + 16, m->app.value);
		put32(p + 20, m->app.len);
		if (m->app.len)
			memcpy(p + FT_APP_FIXED_LEN, m->app.data, m->app.len);
		break;
	case FT_MSG_NOTICE:
		put32(p, m->list.count);
		put_entries(p + 4, m->list.entries, m->list.count);
		break;
	case FT_MSG_SYNC:
		put32(p, m->list.flags);
		put32(p + 4, m->list.count);
		put_entries(p + 8, m->list.entries, m->list.count);
		break;
	default:
		return 0; /* ft_frame_length has refused it already */
	}
	return len;
}

/* The checks that need no secret: those of the header fields wholly
 * within the len bytes present, in header order. The magic is compared
 * byte by byte so that a stream of garbage is refused at its first byte.
 *
 * A reserved field that is not 0 counts as FT_FRAME_BAD_MAGIC: bytes 0..7
 * are fixed for a given version and type, so anything else there means
 * the peer does not speak this protocol, which is what BAD_MAGIC counts;
 * BAD_PAYLOAD is kept for frames whose header is sound. */
static enum ft_frame_error check_public_header(const uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < 4 && i < len; i++)
		if (buf[OFF_MAGIC + i] != (uint8_t)(FT_FRAME_MAGIC >> (8 * i)))
			return FT_FRAME_BAD_MAGIC;
	if (len > OFF_VERSION && buf[OFF_VERSION] != FT_FRAME_VERSION)
		return FT_FRAME_BAD_VERSION;
	if (len > OFF_TYPE && (buf[OFF_TYPE] == 0 || buf[OFF_TYPE] >= FT_MSG_TYPE_END))
		return FT_FRAME_BAD_TYPE;
	for (size_t i = OFF_RESERVED; i < OFF_LENGTH && i < len; i++)
		if (buf[i])
			return FT_FRAME_BAD_MAGIC;
	if (len >= OFF_LENGTH + 4 && get32(buf + OFF_LENGTH) > FT_FRAME_MAX_PAYLOAD)
		return FT_FRAME_TOO_LONG;
	return FT_FRAME_OK;
}

/* Constant time: how long the comparison takes must not tell an attacker
 * how many leading bytes of a guess were right. volatile keeps the
 * compiler from turning the loop into one that stops at the first
 * difference. */
static bool secret_equal(const uint8_t *a, const uint8_t *b)
{
	volatile uint8_t diff = 0;

	for (size_t i = 0; i < FT_SECRET_LEN; i++)
		diff |= (uint8_t)(a[i] ^ b[i]);
	return diff == 0;
}

/* Decode count entries from p into scratch, checking each: the caller
 * has made sure that p holds count entries and scratch has room. */
static enum ft_frame_error get_entries(const uint8_t *p, uint32_t count, uint32_t nprocs,
				       struct ft_entry *scratch)
{
	for (uint32_t i = 0; i < count; i++, p += FT_ENTRY_LEN) {
		struct ft_entry e = {
			.rank = get32(p),
			.event = get16(p + 4),
			.how = get16(p + 6),
			.detector = get32(p + 8),
			.at_ns = get64(p + 12),
		};

		if (e.rank >= nprocs || !ft_event_valid(e.event))
			return FT_FRAME_BAD_PAYLOAD;
		/* A JOINED entry's detector and how are an address and a port. */
		if (e.event != FT_EV_JOINED && (e.detector >= nprocs || e.how > ENTRY_MAX_HOW))
			return FT_FRAME_BAD_PAYLOAD;
		scratch[i] = e;
	}
	return FT_FRAME_OK;
}

/* A list payload: fixed part (flags for SYNC, then the count), then
 * exactly count entries. The count is bounded before anything else, so
 * that scratch (FT_FRAME_MAX_ENTRIES) is never overrun, whatever the
 * entry size does to what fits in FT_FRAME_MAX_PAYLOAD. */
static enum ft_frame_error get_list(struct ft_msg *m, const uint8_t *p, uint32_t plen,
				    uint32_t nprocs, struct ft_entry *scratch)
{
	size_t fixed = list_fixed_len(m->type);

	if (plen < fixed)
		return FT_FRAME_BAD_PAYLOAD;
	uint32_t count = get32(p + fixed - 4); /* the last field before the entries */
	if (count > FT_FRAME_MAX_ENTRIES || plen - fixed != (size_t)count * FT_ENTRY_LEN)
		return FT_FRAME_BAD_PAYLOAD;
	enum ft_frame_error err = get_entries(p + fixed, count, nprocs, scratch);
	if (err != FT_FRAME_OK)
		return err;
	m->list.flags = m->type == FT_MSG_SYNC ? get32(p) : 0;
	m->list.count = count;
	m->list.entries = scratch;
	return FT_FRAME_OK;
}

static enum ft_frame_error get_payload(struct ft_msg *m, const uint8_t *p, uint32_t plen,
				       uint32_t nprocs, struct ft_entry *scratch)
{
	switch (m->type) {
	case FT_MSG_HEARTBEAT:
		if (plen != HEARTBEAT_LEN || get32(p + HEARTBEAT_PAD_OFF))
			return FT_FRAME_BAD_PAYLOAD;
		m->hb.seq = get64(p);
		m->hb.nfailed = get32(p + 8);
		m->hb.ndeparted = get32(p + 12);
		m->hb.digest = get64(p + 16);
		return FT_FRAME_OK;
	case FT_MSG_EXCLUDED:
		if (plen != EXCLUDED_LEN)
			return FT_FRAME_BAD_PAYLOAD;
		m->excluded.how = get32(p);
		m->excluded.detector = get32(p + 4);
		return FT_FRAME_OK;
	case FT_MSG_PROBE:
		if (plen != PROBE_LEN || (get32(p + 4) & ~FT_PROBE_FLAGS))
			return FT_FRAME_BAD_PAYLOAD;
		m->probe.round = get32(p);
		m->probe.flags = get32(p + 4);
		return FT_FRAME_OK;
	case FT_MSG_APP:
		if (plen < FT_APP_FIXED_LEN || get16(p + 14) != 0 ||
		    get32(p + 20) != plen - FT_APP_FIXED_LEN)
			return FT_FRAME_BAD_PAYLOAD;
		m->app.key = get64(p);
		m->app.seq = get32(p + 8);
		m->app.kind = get16(p + 12);
		m->app.value = get32(p + 16);
		m->app.len = get32(p + 20);
		m->app.data = p + FT_APP_FIXED_LEN;
		return FT_FRAME_OK;
	case FT_MSG_NOTICE:
	case FT_MSG_SYNC:
		return get_list(m, p, plen, nprocs, scratch);
	default:
		return FT_FRAME_BAD_TYPE; /* check_public_header has refused it already */
	}
}

/* On any result but FT_FRAME_OK, neither *m nor *consumed is written
 * (scratch may be). */
enum ft_frame_error ft_frame_parse(const uint8_t *buf, size_t len,
				   const uint8_t secret[FT_SECRET_LEN], uint32_t nprocs,
				   struct ft_msg *m, struct ft_entry *scratch, size_t *consumed)
{
	enum ft_frame_error err = check_public_header(buf, len);

	if (err != FT_FRAME_OK)
		return err;
	/* The secret is judged only once all 16 bytes are in: judging a
	 * prefix would let a peer find it one byte at a time by watching
	 * when the connection drops. The sender waits for the secret, so
	 * that an outsider is counted as such whatever rank it claims. */
	if (len < FT_FRAME_HEADER_LEN)
		return FT_FRAME_INCOMPLETE;
	if (!secret_equal(buf + OFF_SECRET, secret))
		return FT_FRAME_BAD_SECRET;
	uint32_t from = get32(buf + OFF_SENDER);
	if (from >= nprocs)
		return FT_FRAME_BAD_SENDER;
	uint32_t plen = get32(buf + OFF_LENGTH);
	if (len - FT_FRAME_HEADER_LEN < plen)
		return FT_FRAME_INCOMPLETE;

	struct ft_msg msg = { .type = (enum ft_msg_type)buf[OFF_TYPE], .from = from };
	err = get_payload(&msg, buf + FT_FRAME_HEADER_LEN, plen, nprocs, scratch);
	if (err != FT_FRAME_OK)
		return err;
	*m = msg;
	*consumed = FT_FRAME_HEADER_LEN + (size_t)plen;
	return FT_FRAME_OK;
}
