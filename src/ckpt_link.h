/* ckpt_link.h: the channel that in-memory checkpoints travel on, apart
 * from the control plane's sockets (a copy of many MiB must not delay a
 * heartbeat) and from the MPI (ftshim's threads cannot call it below
 * MPI_THREAD_MULTIPLE). Each process listens on a TCP port of its own;
 * one thread of the link's own (the copier) moves every frame: a rank's
 * copy to the process that keeps it (STORE, answered by ACK once kept),
 * a copy asked back after a failure (FETCH, answered by DATA), and small
 * notes between the application threads of a restore (NOTE, no answer).
 * The application thread only queues operations and looks at their
 * state; nothing it calls blocks on the network.
 *
 * Every frame is a 64-byte header and a payload, integers little-endian:
 *
 *   offset size  field
 *   0      4     magic   0x4b435446 ("FTCK" in memory)
 *   4      1     version FT_CKPT_LINK_VERSION
 *   5      1     type    enum ft_ckpt_type
 *   6      2     reserved, 0
 *   8      8     payload length in bytes
 *   16     4     sender's job rank
 *   20     4     owner: the program rank whose copy it is (NOTE: 0)
 *   24     8     tag.count
 *   32     4     tag.epoch
 *   36     4     round (NOTE: the restore's round; else 0)
 *   40     4     status (DATA: 0 found, 1 not found; else 0)
 *   44     4     reserved, 0
 *   48     16    the job's secret
 *
 * Payloads: STORE and DATA (found) the copy's bytes; NOTE the note's
 * bytes (at most FT_CKPT_NOTE_MAX); ACK, FETCH and DATA (not found)
 * none. A frame that is short, of unknown type or version, from a rank
 * outside the job, without the secret, longer than the link accepts, or
 * whose length does not fit its type is dropped with one line naming
 * the peer's address and the reason, and its connection closed.
 *
 * Thread rule: start and stop from one thread; the operations from one
 * application thread at a time (they take the link's lock briefly); the
 * config's callbacks run on the copier thread. */
#ifndef FTSHIM_CKPT_LINK_H
#define FTSHIM_CKPT_LINK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/frame.h"
#include "src/overlay.h"

#define FT_CKPT_LINK_MAGIC 0x4b435446u
#define FT_CKPT_LINK_VERSION 1
#define FT_CKPT_HDR_LEN 64
#define FT_CKPT_NOTE_MAX (1u << 20)

enum ft_ckpt_type {
	FT_CKPT_STORE = 1, /* keep this copy of owner's (payload) */
	FT_CKPT_ACK = 2,   /* kept (answers a STORE) */
	FT_CKPT_FETCH = 3, /* send back owner's copy tagged tag */
	FT_CKPT_DATA = 4,  /* answers a FETCH: the copy, or status 1 */
	FT_CKPT_NOTE = 5,  /* for the application thread */
};

/* Which checkpoint a copy is of: its number in the job's sequence of
 * checkpoints and the repair during which it was taken (a number is
 * taken again after a restart to an older one; the pair is not). */
struct ft_ckpt_tag {
	uint64_t count;
	uint32_t epoch;
};

static inline bool ft_ckpt_tag_eq(struct ft_ckpt_tag a, struct ft_ckpt_tag b)
{
	return a.count == b.count && a.epoch == b.epoch;
}

/* Immutable bytes shared between threads by reference count: a rank's
 * copy, kept by the holder that received it and read by the copier while
 * it sends it. */
struct ft_ckpt_blob {
	_Atomic uint32_t refs;
	uint64_t len;
	unsigned char data[];
};

/* A blob of len bytes (contents undefined), one reference; NULL if out of
 * memory. */
struct ft_ckpt_blob *ft_ckpt_blob_new(uint64_t len);
/* Ask the kernel to back the whole 2 MiB blocks of [base, base + len)
 * with huge pages, when len is several MiB: memory about to be filled
 * whole (a blob, a region being restored), where fresh 4 KiB pages cost
 * more to fault in than the copy. Advice only. */
void ft_ckpt_advise_huge(void *base, size_t len);
/* Take and drop a reference (the last drop frees). NULL: nothing. Any
 * thread. */
struct ft_ckpt_blob *ft_ckpt_blob_ref(struct ft_ckpt_blob *b);
void ft_ckpt_blob_unref(struct ft_ckpt_blob *b);

/* A frame's header as fields. */
struct ft_ckpt_hdr {
	uint8_t type; /* enum ft_ckpt_type */
	uint64_t len;
	uint32_t from, owner;
	struct ft_ckpt_tag tag;
	uint32_t round, status;
};

/* Write h's 64 bytes into out. Pure. */
void ft_ckpt_hdr_encode(const struct ft_ckpt_hdr *h, const uint8_t secret[FT_SECRET_LEN],
			uint8_t out[FT_CKPT_HDR_LEN]);
/* Read 64 bytes into *h: 0, or -EPROTO with *why set to the reason (one
 * short phrase: "bad magic", "length 99 too long for an ACK", ...).
 * nprocs bounds from; max_len bounds STORE's and DATA's length. Pure. */
int ft_ckpt_hdr_decode(const uint8_t in[FT_CKPT_HDR_LEN], const uint8_t secret[FT_SECRET_LEN],
		       uint32_t nprocs, uint64_t max_len, struct ft_ckpt_hdr *h, const char **why);

struct ft_ckpt_link_config {
	uint32_t self, nprocs;
	const struct ft_endpoint *endpoints; /* nprocs entries, copied; all-zero: unreachable */
	uint8_t secret[FT_SECRET_LEN];
	int listen_fd;    /* bound and listening; the link owns it from start on */
	uint64_t max_len; /* the longest STORE or DATA payload accepted */
	/* On the copier thread. stored: a STORE arrived whole (blob: one
	 * reference, now the callee's); return false to refuse it (no ACK is
	 * sent, and the connection is closed). lookup: a FETCH asks for
	 * owner's copy tagged tag: a new reference to it, or NULL. */
	bool (*stored)(void *arg, uint32_t from, uint32_t owner, struct ft_ckpt_tag tag,
		       struct ft_ckpt_blob *blob);
	struct ft_ckpt_blob *(*lookup)(void *arg, uint32_t owner, struct ft_ckpt_tag tag);
	void *arg;
};

struct ft_ckpt_link;

/* Start the copier thread. 0, or -errno with one line in err. */
int ft_ckpt_link_start(struct ft_ckpt_link **out, const struct ft_ckpt_link_config *cfg, char *err,
		       size_t errlen);
/* Stop the thread, close every socket, drop every reference held, free.
 * Operations not complete end as failed. NULL: nothing. */
void ft_ckpt_link_stop(struct ft_ckpt_link *l);

/* An operation the application thread queued; the copier sets state. */
enum ft_ckpt_op_state {
	FT_CKPT_OP_PENDING = 0,
	FT_CKPT_OP_DONE = 1,   /* STORE acknowledged, FETCH answered with the copy, NOTE written */
	FT_CKPT_OP_FAILED = 2, /* connection lost or refused, peer forgotten, cancelled, or not found */
};

/* Queue: send blob to process `to` as owner's copy tagged tag (the link
 * takes a reference of its own until the operation ends); fetch owner's
 * copy tagged tag from `from`; send a note (len bytes, copied) to `to`
 * for round `round`. Each returns an operation number (>= 0) to ask
 * about, or -errno (-EINVAL: bad rank or a note too long; -ENOMEM).
 * Operations to one peer are sent in the order queued. */
int ft_ckpt_link_store(struct ft_ckpt_link *l, uint32_t to, uint32_t owner, struct ft_ckpt_tag tag,
		       struct ft_ckpt_blob *blob);
int ft_ckpt_link_fetch(struct ft_ckpt_link *l, uint32_t from, uint32_t owner, struct ft_ckpt_tag tag);
int ft_ckpt_link_note(struct ft_ckpt_link *l, uint32_t to, uint32_t round, const void *note, uint32_t len);

/* An operation's state; once it is no longer pending, its number is
 * released (asking again is -ENOENT) and, for a FETCH that is DONE, *data
 * gets the copy (one reference, the caller's; data may be NULL for the
 * others). -ENOENT for a number not pending or not known. */
int ft_ckpt_link_op(struct ft_ckpt_link *l, int op, struct ft_ckpt_blob **data);

/* Take a note that arrived for round `round`: 1 (*from its sender, *note
 * a blob with its bytes, the caller's reference), or 0 if none is there.
 * Notes for a lower round than any asked for since are dropped. */
int ft_ckpt_link_take_note(struct ft_ckpt_link *l, uint32_t round, uint32_t *from,
			   struct ft_ckpt_blob **note);

/* Process `peer` failed: close its connections and fail its operations.
 * Returns at once; the operations' state changes before the next call of
 * ft_ckpt_link_op. */
void ft_ckpt_link_forget(struct ft_ckpt_link *l, uint32_t peer);
/* Fail and release every operation not complete (a restart abandons
 * them); the copier drops their references before this returns. */
void ft_ckpt_link_cancel_all(struct ft_ckpt_link *l);

/* Totals since start (any thread): bytes of STORE payload sent and
 * acknowledged, and frames dropped as malformed. */
struct ft_ckpt_link_stats {
	_Atomic uint64_t stored_bytes;
	_Atomic uint64_t bad_frames;
};
const struct ft_ckpt_link_stats *ft_ckpt_link_stats(const struct ft_ckpt_link *l);

#endif
