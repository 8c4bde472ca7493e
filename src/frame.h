/* frame.h: the wire format of ftshim's control plane, and the messages the
 * detector exchanges. Pure: no I/O, no clock.
 *
 * Every frame is a 32-byte header followed by a payload, all integers
 * little-endian:
 *
 *   offset size  field
 *   0      4     magic   0x48535446 ("FTSH" in memory)
 *   4      1     version FT_FRAME_VERSION
 *   5      1     type    enum ft_msg_type
 *   6      2     reserved, 0
 *   8      4     payload length in bytes (at most FT_FRAME_MAX_PAYLOAD)
 *   12     4     sender's job rank
 *   16     16    the job's secret
 *
 * Payloads:
 *   HEARTBEAT  u64 seq, u32 nfailed, u32 ndeparted, u64 digest, u32 reserved 0
 *              (28 bytes)
 *   NOTICE     u32 count, then count entries (flooded news)
 *   SYNC       u32 flags, u32 count, then count entries (a whole view)
 *   EXCLUDED   u32 how, u32 detector (8 bytes): "you were declared failed"
 *   PROBE      u32 round, u32 flags (8 bytes; flags FT_PROBE_*, other bits 0):
 *              a quorum round's "who can hear me?", its answer, or a
 *              request to check one's own side (see detector.h)
 *   APP        u64 key, u32 seq, u16 kind, u16 reserved 0, u32 value,
 *              u32 len, then len bytes: a message of the MPI side (revoke,
 *              agreement), which the engine hands to it unread
 * An entry is u32 rank, u16 event (enum ft_event), u16 how (enum
 * ft_fail_how), u32 detector (the rank that first saw it), u64 at (when
 * the event happened by the detector's wall clock, ns since the epoch; 0
 * if unknown): 20 bytes. An FT_EV_JOINED entry carries the joining rank's
 * control-plane endpoint in the same 20 bytes instead (see
 * ft_overlay_join_entry): detector its IPv4 address and how its port, both
 * as stored in struct ft_endpoint (network order), and at its host
 * identity with bit 63 set if it listens on every interface; so neither
 * field is judged as a rank or a how.
 *
 * A frame that is short, oversized, of unknown type or version, from a
 * rank outside the job, without the secret, or whose payload does not
 * match its type is rejected with a reason; the caller drops the
 * connection it came on and counts the reason. */
#ifndef FTSHIM_FRAME_H
#define FTSHIM_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FT_FRAME_MAGIC UINT32_C(0x48535446)
#define FT_FRAME_VERSION 2
#define FT_SECRET_LEN 16
#define FT_FRAME_HEADER_LEN 32
#define FT_FRAME_MAX_PAYLOAD 65536u
#define FT_ENTRY_LEN 20
/* The most entries one NOTICE or SYNC frame carries; longer lists are
 * split over several frames. */
#define FT_FRAME_MAX_ENTRIES ((FT_FRAME_MAX_PAYLOAD - 8) / FT_ENTRY_LEN)
#define FT_FRAME_MAX_LEN (FT_FRAME_HEADER_LEN + FT_FRAME_MAX_PAYLOAD)
#define FT_APP_FIXED_LEN 24
#define FT_APP_MAX_DATA (FT_FRAME_MAX_PAYLOAD - FT_APP_FIXED_LEN)

enum ft_msg_type {
	FT_MSG_HEARTBEAT = 1,
	FT_MSG_NOTICE = 2,
	FT_MSG_SYNC = 3,
	FT_MSG_EXCLUDED = 4,
	FT_MSG_APP = 5,
	FT_MSG_PROBE = 6,
	FT_MSG_TYPE_END
};

/* What an entry says about its rank. */
enum ft_event {
	FT_EV_FAILED = 1,   /* the rank failed */
	FT_EV_DEPARTED = 2, /* the rank entered MPI_Finalize and will leave */
	FT_EV_ABORT = 3,    /* the rank ends the job (MPI_Abort, a fatal error);
			       how carries the exit status */
	FT_EV_READMITTED = 4, /* FTSHIM_READMIT: the rank, failed by heartbeat
				 timeout, was heard again and is back;
				 detector: the rank that heard it */
	FT_EV_FAILED_AGAIN = 5, /* a re-admitted rank failed again, for good */
	FT_EV_JOINED = 6,   /* the rank joined the job (a spawned process); the
			       entry carries its control-plane endpoint, see
			       ft_overlay_join_entry */
};

/* Whether ev is an enum ft_event value. */
static inline bool ft_event_valid(uint32_t ev)
{
	return ev >= FT_EV_FAILED && ev <= FT_EV_JOINED;
}

#define FT_SYNC_REPLY 1u /* SYNC flag: answer with your view if it differs */
#define FT_PROBE_REPLY 1u   /* PROBE flag: the answer to round `round` */
#define FT_PROBE_RECHECK 2u /* PROBE flag: the sender lost its quorum round; check yours */
#define FT_PROBE_FLAGS (FT_PROBE_REPLY | FT_PROBE_RECHECK)

struct ft_entry {
	uint32_t rank;
	uint16_t event;    /* enum ft_event */
	uint16_t how;      /* enum ft_fail_how (FT_EV_FAILED only) */
	uint32_t detector; /* the rank that first saw it */
	uint64_t at_ns;    /* when, by the detector's wall clock (FT_EV_FAILED: its
			      estimate of the failure; 0 if unknown) */
	/* FT_EV_JOINED: how, detector and at_ns hold an endpoint instead (see
	 * the wire format above). */
};

/* A message as the detector sees it; the wire form is above. */
struct ft_msg {
	enum ft_msg_type type;
	uint32_t from; /* sender's job rank (set by the parser) */
	union {
		struct {
			uint64_t seq;
			uint32_t nfailed, ndeparted;
			uint64_t digest;
		} hb;
		struct {
			uint32_t flags; /* SYNC only */
			uint32_t count;
			const struct ft_entry *entries;
		} list;
		struct {
			uint32_t how, detector;
		} excluded;
		struct {
			uint32_t round, flags;
		} probe;
		struct {
			uint64_t key;   /* a communicator's job-wide id */
			uint32_t seq;   /* an operation's number on it */
			uint16_t kind;  /* the MPI side's message kind */
			uint32_t value;
			uint32_t len;   /* bytes at data, at most FT_APP_MAX_DATA */
			const uint8_t *data;
		} app;
	};
};

#define FT_FRAME_ERRORS(X) \
	X(FT_FRAME_OK, "ok") \
	X(FT_FRAME_INCOMPLETE, "short") \
	X(FT_FRAME_BAD_MAGIC, "bad magic") \
	X(FT_FRAME_BAD_VERSION, "unknown version") \
	X(FT_FRAME_BAD_TYPE, "unknown type") \
	X(FT_FRAME_TOO_LONG, "oversized") \
	X(FT_FRAME_BAD_SECRET, "wrong secret") \
	X(FT_FRAME_BAD_SENDER, "sender outside the job") \
	X(FT_FRAME_BAD_PAYLOAD, "malformed payload")

#define FT_FRAME_ERR_ENUM(e, s) e,
enum ft_frame_error { FT_FRAME_ERRORS(FT_FRAME_ERR_ENUM) FT_FRAME_ERR_COUNT };
#undef FT_FRAME_ERR_ENUM

extern const char *const ft_frame_error_names[FT_FRAME_ERR_COUNT];

/* Parse the frame at the start of buf[0..len). On FT_FRAME_OK, *consumed
 * is its length and m describes it; list entries are decoded into
 * scratch, which must have room for FT_FRAME_MAX_ENTRIES, and m points
 * there. FT_FRAME_INCOMPLETE: more bytes are needed (the header alone
 * already tells a bad magic, version, type, length, secret or sender).
 * Any other result: the stream is broken. Never reads past buf+len. */
enum ft_frame_error ft_frame_parse(const uint8_t *buf, size_t len,
				   const uint8_t secret[FT_SECRET_LEN], uint32_t nprocs,
				   struct ft_msg *m, struct ft_entry *scratch, size_t *consumed);

/* Encode m as sent by rank from into buf (room for cap bytes). Returns the
 * frame's length, or 0 if it does not fit or m is invalid (a list longer
 * than FT_FRAME_MAX_ENTRIES, an unknown type). */
size_t ft_frame_encode(const struct ft_msg *m, uint32_t from, const uint8_t secret[FT_SECRET_LEN],
		       uint8_t *buf, size_t cap);

/* The encoded length of m (0 if invalid). */
size_t ft_frame_length(const struct ft_msg *m);

#endif
