/* ckpt_link.c: the checkpoint link (see ckpt_link.h): the header codec,
 * blobs, the table of operations and the copier thread's poll loop.
 *
 * Who touches what: the operation table, the queue of operations the
 * copier has not taken yet, the requests (forget, cancel) and the notes
 * received are shared, under l->lock, held only briefly. The sockets, the
 * frames in and out and the per-peer outbound connections are the
 * copier's alone; the application thread never touches a socket. The
 * copier names an operation by its slot and serial number, so that a slot
 * released and reused meanwhile is never taken for the old operation. A
 * frame being sent holds a blob reference of the copier's own, so the
 * application thread may end an operation (and drop the operation's
 * reference) at any time; only cancel_all waits for the copier, to know
 * that it holds none of the cancelled blobs any more. */
#include "ftshim_config.h"

#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "src/ckpt_link.h"
#include "src/thread.h"
#include "src/common.h"
#include "src/log.h"

/* Header fields (see ckpt_link.h). */
#define OFF_MAGIC 0
#define OFF_VERSION 4
#define OFF_TYPE 5
#define OFF_RESERVED 6
#define OFF_LENGTH 8
#define OFF_FROM 16
#define OFF_OWNER 20
#define OFF_COUNT 24
#define OFF_EPOCH 32
#define OFF_ROUND 36
#define OFF_STATUS 40
#define OFF_RESERVED2 44
#define OFF_SECRET 48

#define DATA_FOUND 0
#define DATA_NOT_FOUND 1

/* The most payload bytes one connection reads or writes per turn of the
 * loop: between chunks of a large copy the copier sees requests (a
 * cancel_all waits for it) and serves its other connections. */
#define CHUNK ((size_t)1 << 20)

#define NO_PEER UINT32_MAX

/* Blobs from this size on are aligned for transparent huge pages and
 * advised to use them: a blob is filled once, right after it is made,
 * and on a VM filling fresh 4 KiB pages costs more than the copy. */
#define HUGE_FROM ((uint64_t)4 << 20)
#define HUGE_ALIGN ((size_t)2 << 20)

/* --- the header ----------------------------------------------------------- */

static void put_le(uint8_t *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	while (n-- > 0)
		v = v << 8 | p[n];
	return v;
}

void ft_ckpt_hdr_encode(const struct ft_ckpt_hdr *h, const uint8_t secret[FT_SECRET_LEN],
			uint8_t out[FT_CKPT_HDR_LEN])
{
	memset(out, 0, FT_CKPT_HDR_LEN);
	put_le(out + OFF_MAGIC, FT_CKPT_LINK_MAGIC, 4);
	out[OFF_VERSION] = FT_CKPT_LINK_VERSION;
	out[OFF_TYPE] = h->type;
	put_le(out + OFF_LENGTH, h->len, 8);
	put_le(out + OFF_FROM, h->from, 4);
	put_le(out + OFF_OWNER, h->owner, 4);
	put_le(out + OFF_COUNT, h->tag.count, 8);
	put_le(out + OFF_EPOCH, h->tag.epoch, 4);
	put_le(out + OFF_ROUND, h->round, 4);
	put_le(out + OFF_STATUS, h->status, 4);
	memcpy(out + OFF_SECRET, secret, FT_SECRET_LEN);
}

/* The type's name as the reasons say it ("an ACK"). */
static const char *type_phrase(const struct ft_ckpt_hdr *h)
{
	switch (h->type) {
	case FT_CKPT_STORE:
		return "a STORE";
	case FT_CKPT_ACK:
		return "an ACK";
	case FT_CKPT_FETCH:
		return "a FETCH";
	case FT_CKPT_DATA:
		return h->status == DATA_FOUND ? "a DATA" : "a DATA not found";
	default:
		return "a NOTE";
	}
}

/* The longest payload a frame of h's type (and status) may carry. */
static uint64_t payload_limit(const struct ft_ckpt_hdr *h, uint64_t max_len)
{
	if (h->type == FT_CKPT_STORE || (h->type == FT_CKPT_DATA && h->status == DATA_FOUND))
		return max_len;
	return h->type == FT_CKPT_NOTE ? FT_CKPT_NOTE_MAX : 0;
}

/* The reason for a frame dropped, always non-NULL. */
static int reject(const char **why, const char *reason)
{
	*why = reason;
	return -EPROTO;
}

int ft_ckpt_hdr_decode(const uint8_t in[FT_CKPT_HDR_LEN], const uint8_t secret[FT_SECRET_LEN],
		       uint32_t nprocs, uint64_t max_len, struct ft_ckpt_hdr *h, const char **why)
{
	/* The one formatted reason; the caller uses it before the next call
	 * on its thread. */
	static _Thread_local char long_why[80];
	volatile uint8_t secret_diff = 0; /* volatile: no loop that stops early */

	*h = (struct ft_ckpt_hdr){ .type = in[OFF_TYPE], .len = get_le(in + OFF_LENGTH, 8),
				   .from = (uint32_t)get_le(in + OFF_FROM, 4),
				   .owner = (uint32_t)get_le(in + OFF_OWNER, 4),
				   .tag = { .count = get_le(in + OFF_COUNT, 8),
					    .epoch = (uint32_t)get_le(in + OFF_EPOCH, 4) },
				   .round = (uint32_t)get_le(in + OFF_ROUND, 4),
				   .status = (uint32_t)get_le(in + OFF_STATUS, 4) };
	if (get_le(in + OFF_MAGIC, 4) != FT_CKPT_LINK_MAGIC)
		return reject(why, "bad magic");
	if (in[OFF_VERSION] != FT_CKPT_LINK_VERSION)
		return reject(why, "unknown version");
	if (h->type < FT_CKPT_STORE || h->type > FT_CKPT_NOTE)
		return reject(why, "unknown type");
	if (get_le(in + OFF_RESERVED, 2) != 0 || get_le(in + OFF_RESERVED2, 4) != 0)
		return reject(why, "reserved field not 0");
	/* Every byte, whatever the first ones say: the time taken must not
	 * tell how much of a guess was right. */
	for (size_t i = 0; i < FT_SECRET_LEN; i++)
		secret_diff |= (uint8_t)(in[OFF_SECRET + i] ^ secret[i]);
	if (secret_diff != 0)
		return reject(why, "bad secret");
	if (h->from >= nprocs)
		return reject(why, "sender outside the job");
	if (h->type == FT_CKPT_DATA ? h->status > DATA_NOT_FOUND : h->status != 0)
		return reject(why, "bad status");
	if (h->type != FT_CKPT_NOTE && h->round != 0)
		return reject(why, "round set outside a NOTE");
	if (h->type == FT_CKPT_NOTE && h->owner != 0)
		return reject(why, "owner set in a NOTE");
	if (h->len > payload_limit(h, max_len)) {
		snprintf(long_why, sizeof long_why, "length %llu too long for %s",
			 (unsigned long long)h->len, type_phrase(h));
		return reject(why, long_why);
	}
	return 0;
}

/* --- blobs ---------------------------------------------------------------- */

void ft_ckpt_advise_huge(void *base, size_t len)
{
	uintptr_t from = ((uintptr_t)base + HUGE_ALIGN - 1) & ~(uintptr_t)(HUGE_ALIGN - 1);
	uintptr_t to = ((uintptr_t)base + len) & ~(uintptr_t)(HUGE_ALIGN - 1);

	/* Advice only: where the kernel has no huge pages, or the memory is
	 * not anonymous, nothing changes. */
	if (len >= HUGE_FROM && to > from)
		(void)madvise((void *)from, to - from, MADV_HUGEPAGE);
}

struct ft_ckpt_blob *ft_ckpt_blob_new(uint64_t len)
{
	struct ft_ckpt_blob *b;

	if (len > SIZE_MAX - sizeof *b - HUGE_ALIGN)
		return NULL;
	size_t size = sizeof *b + (size_t)len;
	if (len < HUGE_FROM) {
		b = malloc(size);
		if (!b)
			return NULL;
	} else {
		void *p = NULL;
		if (posix_memalign(&p, HUGE_ALIGN, size) != 0)
			return NULL;
		ft_ckpt_advise_huge(p, size);
		b = p;
	}
	atomic_init(&b->refs, 1);
	b->len = len;
	return b;
}

struct ft_ckpt_blob *ft_ckpt_blob_ref(struct ft_ckpt_blob *b)
{
	/* relaxed: whoever passes b on orders its bytes (a lock, a queue). */
	if (b)
		atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
	return b;
}

void ft_ckpt_blob_unref(struct ft_ckpt_blob *b)
{
	/* acq_rel rather than release and an acquire fence before free:
	 * the same ordering (the last one sees every other holder's use),
	 * and one ThreadSanitizer understands. */
	if (b && atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1)
		free(b);
}

/* --- state ---------------------------------------------------------------- */

/* An operation queued by the application thread. */
struct op {
	uint64_t serial; /* 0: the slot is free */
	enum ft_ckpt_op_state state;
	uint8_t kind;    /* FT_CKPT_STORE, FT_CKPT_FETCH or FT_CKPT_NOTE */
	uint32_t peer, owner, round;
	struct ft_ckpt_tag tag;
	struct ft_ckpt_blob *payload; /* STORE, NOTE: the operation's reference while pending */
	struct ft_ckpt_blob *result;  /* FETCH once DONE: the copy, until the caller takes it */
};

/* An operation queued and not yet taken by the copier. */
struct ticket {
	size_t slot;
	uint64_t serial;
};

/* What the link knows of each peer. */
struct peer {
	bool forget;       /* shared, under the lock: close its connections */
	bool forgetting;   /* the copier's: forget, taken */
	struct conn *out;  /* the copier's: the connection requests go on, or NULL */
};

/* A note received, until take_note. */
struct note {
	struct note *next;
	uint32_t from, round;
	struct ft_ckpt_blob *bytes;
};

/* A frame to write: a request (on an outbound connection, carrying an
 * operation) or a reply (on an inbound one). */
struct frame_out {
	struct frame_out *next;
	uint8_t hdr[FT_CKPT_HDR_LEN];
	struct ft_ckpt_blob *payload; /* the copier's reference; NULL: no payload or written */
	uint64_t off;                 /* bytes of header and payload written */
	/* Requests only: the operation, and what its reply must match. */
	size_t slot;
	uint64_t serial;
	uint8_t kind;
	uint32_t peer, owner;
	struct ft_ckpt_tag tag;
	uint64_t len; /* STORE: the payload's length, counted once acknowledged */
};

struct frame_queue {
	struct frame_out *head, **tail;
};

struct conn {
	struct conn *next;
	int fd;
	bool outbound;   /* we connected, to send requests */
	bool connecting; /* outbound connect still in progress */
	uint32_t peer;   /* outbound: the peer; inbound: the sender of its frames, NO_PEER before */
	struct sockaddr_in addr; /* the other end, for messages */
	/* The frame coming in: its header so far, then its payload. */
	uint8_t in_hdr[FT_CKPT_HDR_LEN];
	size_t in_hdr_len;
	struct ft_ckpt_hdr in;
	struct ft_ckpt_blob *in_blob; /* NULL: the frame has no payload */
	uint64_t in_len;
	struct frame_queue tx;      /* to write, in order */
	struct frame_queue waiting; /* outbound: written, awaiting their replies, in order */
};

struct ft_ckpt_link {
	struct ft_ckpt_link_config cfg; /* endpoints: our copy, eps */
	struct ft_endpoint *eps;
	pthread_t thread;
	int wake_fd;
	_Atomic bool stopping;
	struct ft_ckpt_link_stats stats;

	/* Shared between the application thread and the copier. */
	pthread_mutex_t lock;
	pthread_cond_t cancel_done_cond; /* signalled when cancel_done moves */
	struct op *ops;
	size_t nops;
	uint64_t last_serial;
	struct ticket *queue; /* operations not yet taken, in the order queued */
	size_t nqueue, queue_cap;
	struct peer *peers; /* nprocs; see struct peer for who touches what */
	bool forget_asked;
	uint64_t cancel_asked, cancel_done; /* cancel_all's requests, and the last one carried out */
	struct note *notes, **notes_tail;
	uint32_t note_floor; /* notes for a lower round are dropped */

	/* The copier's alone. */
	struct conn *conns;
	struct pollfd *pfds; /* the wake fd, the listening fd, then conns */
	struct conn **pconns;
	size_t pcap;
};

/* Wake the copier from poll (any thread). It cannot fail short of a
 * counter near 2^64. */
static void poke(struct ft_ckpt_link *l)
{
	eventfd_write(l->wake_fd, 1);
}

/* End a pending operation (under the lock): its payload reference goes. */
static void op_finish(struct op *op, enum ft_ckpt_op_state state)
{
	op->state = state;
	ft_ckpt_blob_unref(op->payload);
	op->payload = NULL;
}

/* --- the copier: frames out ------------------------------------------------ */

static void queue_init(struct frame_queue *q)
{
	q->head = NULL;
	q->tail = &q->head;
}

static void queue_push(struct frame_queue *q, struct frame_out *f)
{
	f->next = NULL;
	*q->tail = f;
	q->tail = &f->next;
}

static struct frame_out *queue_pop(struct frame_queue *q)
{
	struct frame_out *f = q->head;

	if (f && !(q->head = f->next))
		q->tail = &q->head;
	return f;
}

static void frame_free(struct frame_out *f)
{
	ft_ckpt_blob_unref(f->payload);
	free(f);
}

/* The operation a request carries ends as state, with result for a
 * FETCH (moved to the operation, or dropped if it ended already). */
static void request_end(struct ft_ckpt_link *l, const struct frame_out *f,
			enum ft_ckpt_op_state state, struct ft_ckpt_blob *result)
{
	pthread_mutex_lock(&l->lock);
	struct op *op = &l->ops[f->slot];
	if (op->serial == f->serial && op->state == FT_CKPT_OP_PENDING) {
		op_finish(op, state);
		op->result = result;
		result = NULL;
	}
	pthread_mutex_unlock(&l->lock);
	ft_ckpt_blob_unref(result);
}

static void conn_close(struct ft_ckpt_link *l, struct conn *c)
{
	struct frame_out *f;

	for (struct conn **p = &l->conns; *p; p = &(*p)->next) {
		if (*p == c) {
			*p = c->next;
			break;
		}
	}
	if (c->outbound && l->peers[c->peer].out == c)
		l->peers[c->peer].out = NULL;
	/* Requests written or not: their operations fail (a frame cut
	 * short cannot be resumed on another connection). */
	while ((f = queue_pop(&c->waiting)) || (f = queue_pop(&c->tx))) {
		if (c->outbound)
			request_end(l, f, FT_CKPT_OP_FAILED, NULL);
		frame_free(f);
	}
	ft_ckpt_blob_unref(c->in_blob);
	close(c->fd);
	free(c);
}

/* "a.b.c.d:port" of c's other end. */
static void conn_format(const struct conn *c, char *out, size_t outlen)
{
	struct ft_endpoint ep = { .addr = c->addr.sin_addr.s_addr, .port = c->addr.sin_port };

	ft_overlay_format(&ep, out, outlen);
}

static void bad_frame(struct ft_ckpt_link *l, struct conn *c, const char *why)
{
	char addr[64];

	/* relaxed, like stored_bytes: totals for reports. */
	atomic_fetch_add_explicit(&l->stats.bad_frames, 1, memory_order_relaxed);
	conn_format(c, addr, sizeof addr);
	ft_warn("checkpoint link: dropped a frame from %s (%s); connection closed", addr, why);
	conn_close(l, c);
}

/* The connection broke (err: errno, 0 for the end of the stream). */
static void conn_lost(struct ft_ckpt_link *l, struct conn *c, int err)
{
	char addr[64];

	conn_format(c, addr, sizeof addr);
	/* A frame cut short is dropped with a line, as the header says, but
	 * not counted as malformed: a peer that dies in a copy sends one. */
	if (c->in_hdr_len > 0)
		ft_warn("checkpoint link: dropped a frame from %s (short); connection closed", addr);
	else
		ft_debug("checkpoint link: connection %s %s closed (%s)", c->outbound ? "to" : "from",
			 addr, err ? strerror(err) : "end of stream");
	conn_close(l, c);
}

/* c's first frame in the queue is written whole. */
static void frame_written(struct ft_ckpt_link *l, struct conn *c)
{
	struct frame_out *f = queue_pop(&c->tx);

	if (!c->outbound) {
		frame_free(f);
	} else if (f->kind == FT_CKPT_NOTE) {
		request_end(l, f, FT_CKPT_OP_DONE, NULL);
		frame_free(f);
	} else {
		/* The operation keeps its own reference until the reply. */
		ft_ckpt_blob_unref(f->payload);
		f->payload = NULL;
		queue_push(&c->waiting, f);
	}
}

/* Write what is queued, at most about CHUNK bytes. false: the connection
 * broke (closed here). */
static bool conn_write(struct ft_ckpt_link *l, struct conn *c)
{
	size_t budget = CHUNK;

	while (c->tx.head && budget > 0) {
		struct frame_out *f = c->tx.head;
		uint64_t payload_len = f->payload ? f->payload->len : 0;
		uint64_t payload_off = f->off < FT_CKPT_HDR_LEN ? 0 : f->off - FT_CKPT_HDR_LEN;
		struct iovec iov[2];
		struct msghdr m = { .msg_iov = iov };

		if (f->off < FT_CKPT_HDR_LEN)
			iov[m.msg_iovlen++] = (struct iovec){ f->hdr + f->off, FT_CKPT_HDR_LEN - f->off };
		if (payload_off < payload_len) {
			uint64_t left = payload_len - payload_off;
			iov[m.msg_iovlen++] = (struct iovec){ f->payload->data + payload_off,
							      left < budget ? (size_t)left : budget };
		}
		/* Straight from the blob: a copy of hundreds of MiB is never
		 * copied in memory. MSG_NOSIGNAL: a peer gone is an error, not
		 * a SIGPIPE. */
		ssize_t w = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return true;
		if (w < 0) {
			conn_lost(l, c, errno);
			return false;
		}
		f->off += (uint64_t)w;
		budget -= (size_t)w < budget ? (size_t)w : budget;
		if (f->off == FT_CKPT_HDR_LEN + payload_len)
			frame_written(l, c);
	}
	return true;
}

/* Queue a reply on inbound connection c. false: out of memory (c closed). */
static bool reply(struct ft_ckpt_link *l, struct conn *c, const struct ft_ckpt_hdr *h,
		  struct ft_ckpt_blob *payload)
{
	struct frame_out *f = calloc(1, sizeof *f);

	if (!f) {
		ft_ckpt_blob_unref(payload);
		ft_warn("checkpoint link: out of memory for a reply to rank %u; connection closed", c->peer);
		conn_close(l, c);
		return false;
	}
	ft_ckpt_hdr_encode(h, l->cfg.secret, f->hdr);
	f->payload = payload;
	queue_push(&c->tx, f);
	return true;
}

/* --- the copier: frames in -------------------------------------------------- */

/* Why a frame that decoded well does not belong on c; NULL if it does. */
static const char *misplaced(const struct conn *c, const struct ft_ckpt_hdr *h)
{
	bool is_reply = h->type == FT_CKPT_ACK || h->type == FT_CKPT_DATA;
	const struct frame_out *req = c->waiting.head;

	if (!c->outbound) {
		if (is_reply)
			return "a reply where a request belongs";
		if (c->peer != NO_PEER && h->from != c->peer)
			return "sender changed";
		return NULL;
	}
	if (!is_reply)
		return "a request where a reply belongs";
	if (h->from != c->peer)
		return "reply from another rank";
	if (!req)
		return "a reply to nothing";
	if (h->type != (req->kind == FT_CKPT_STORE ? FT_CKPT_ACK : FT_CKPT_DATA))
		return "a reply of the wrong type";
	if (h->owner != req->owner || !ft_ckpt_tag_eq(h->tag, req->tag))
		return "a reply about another copy";
	return NULL;
}

/* c's header is in: check it and make room for the payload. false: c
 * was closed. */
static bool frame_started(struct ft_ckpt_link *l, struct conn *c)
{
	struct ft_ckpt_hdr *h = &c->in;
	const char *why = NULL;

	if (ft_ckpt_hdr_decode(c->in_hdr, l->cfg.secret, l->cfg.nprocs, l->cfg.max_len, h, &why) != 0 ||
	    (why = misplaced(c, h)) != NULL) {
		bad_frame(l, c, why);
		return false;
	}
	if (!c->outbound)
		c->peer = h->from;
	c->in_len = 0;
	if (h->type == FT_CKPT_ACK || h->type == FT_CKPT_FETCH ||
	    (h->type == FT_CKPT_DATA && h->status != DATA_FOUND))
		return true;
	/* Received straight into the blob that is handed on. */
	c->in_blob = ft_ckpt_blob_new(h->len);
	if (!c->in_blob) {
		ft_warn("checkpoint link: out of memory for a frame of %llu bytes from rank %u; "
			"connection closed", (unsigned long long)h->len, h->from);
		conn_close(l, c);
		return false;
	}
	return true;
}

/* A request came in whole on inbound connection c. false: c was closed. */
static bool request_in(struct ft_ckpt_link *l, struct conn *c, struct ft_ckpt_blob *payload)
{
	const struct ft_ckpt_hdr *h = &c->in;
	struct ft_ckpt_hdr answer = { .from = l->cfg.self, .owner = h->owner, .tag = h->tag };

	if (h->type == FT_CKPT_STORE) {
		if (!l->cfg.stored || !l->cfg.stored(l->cfg.arg, h->from, h->owner, h->tag, payload)) {
			if (!l->cfg.stored)
				ft_ckpt_blob_unref(payload);
			ft_debug("checkpoint link: refused a copy of rank %u's from rank %u; connection closed",
				 h->owner, h->from);
			conn_close(l, c);
			return false;
		}
		answer.type = FT_CKPT_ACK;
		return reply(l, c, &answer, NULL);
	}
	if (h->type == FT_CKPT_FETCH) {
		struct ft_ckpt_blob *copy = l->cfg.lookup ? l->cfg.lookup(l->cfg.arg, h->owner, h->tag) : NULL;
		answer.type = FT_CKPT_DATA;
		answer.status = copy ? DATA_FOUND : DATA_NOT_FOUND;
		answer.len = copy ? copy->len : 0;
		return reply(l, c, &answer, copy);
	}
	/* A NOTE. */
	struct note *n = malloc(sizeof *n);
	pthread_mutex_lock(&l->lock);
	if (n && h->round >= l->note_floor) {
		*n = (struct note){ .from = h->from, .round = h->round, .bytes = payload };
		*l->notes_tail = n;
		l->notes_tail = &n->next;
		n = NULL;
		payload = NULL;
	}
	pthread_mutex_unlock(&l->lock);
	free(n);
	ft_ckpt_blob_unref(payload);
	return true;
}

/* A reply came in whole on outbound connection c: it answers the first
 * request waiting (misplaced() checked that it matches). */
static void reply_in(struct ft_ckpt_link *l, struct conn *c, struct ft_ckpt_blob *payload)
{
	struct frame_out *req = queue_pop(&c->waiting);

	if (c->in.type == FT_CKPT_ACK) {
		/* relaxed: a total for reports. Counted before the operation
		 * is DONE: the lock request_end takes makes whoever sees it
		 * DONE see it counted. */
		atomic_fetch_add_explicit(&l->stats.stored_bytes, req->len, memory_order_relaxed);
		request_end(l, req, FT_CKPT_OP_DONE, NULL);
	} else if (c->in.status == DATA_FOUND) {
		request_end(l, req, FT_CKPT_OP_DONE, payload);
	} else {
		request_end(l, req, FT_CKPT_OP_FAILED, NULL);
	}
	frame_free(req);
}

/* Read what is there, at most about CHUNK bytes, and act on every whole
 * frame. false: c was closed. */
static bool conn_read(struct ft_ckpt_link *l, struct conn *c)
{
	size_t budget = CHUNK;

	while (budget > 0) {
		bool in_header = c->in_hdr_len < FT_CKPT_HDR_LEN;
		uint8_t *to = in_header ? c->in_hdr + c->in_hdr_len : c->in_blob->data + c->in_len;
		uint64_t left = in_header ? FT_CKPT_HDR_LEN - c->in_hdr_len : c->in_blob->len - c->in_len;
		ssize_t r = recv(c->fd, to, left < budget ? (size_t)left : budget, MSG_DONTWAIT);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return true;
		if (r <= 0) {
			conn_lost(l, c, r < 0 ? errno : 0);
			return false;
		}
		budget -= (size_t)r < budget ? (size_t)r : budget;
		if (!in_header)
			c->in_len += (uint64_t)r;
		else if ((c->in_hdr_len += (size_t)r) < FT_CKPT_HDR_LEN)
			continue;
		else if (!frame_started(l, c))
			return false;
		if (c->in_blob && c->in_len < c->in_blob->len)
			continue;
		/* Whole: the payload (if any) is the handler's now. */
		struct ft_ckpt_blob *payload = c->in_blob;
		c->in_blob = NULL;
		c->in_hdr_len = 0;
		if (c->outbound)
			reply_in(l, c, payload);
		else if (!request_in(l, c, payload))
			return false;
	}
	return true;
}

/* --- the copier: connections and requests ------------------------------------ */

static struct conn *conn_new(struct ft_ckpt_link *l, int fd, bool outbound, uint32_t peer)
{
	struct conn *c = calloc(1, sizeof *c);

	if (!c) {
		close(fd);
		return NULL;
	}
	c->fd = fd;
	c->outbound = outbound;
	c->peer = peer;
	queue_init(&c->tx);
	queue_init(&c->waiting);
	c->next = l->conns;
	l->conns = c;
	return c;
}

static void accept_all(struct ft_ckpt_link *l)
{
	for (;;) {
		struct sockaddr_in sa = { 0 };
		socklen_t len = sizeof sa;
		int one = 1;
		int fd = accept4(l->cfg.listen_fd, (struct sockaddr *)&sa, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 && errno == EINTR)
			continue;
		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				ft_debug("checkpoint link: accept4: %s", strerror(errno));
			return;
		}
		/* ACKs and FETCHes are small and awaited: no Nagle delay. */
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		struct conn *c = conn_new(l, fd, false, NO_PEER);
		if (c)
			c->addr = sa;
	}
}

/* The connection that requests to peer go on, opened if need be; NULL if
 * it cannot be (unreachable, or the connect failed at once). */
static struct conn *conn_to(struct ft_ckpt_link *l, uint32_t peer)
{
	const struct ft_endpoint *ep = &l->eps[peer];
	struct conn *c;

	if (l->peers[peer].out || ep->port == 0)
		return l->peers[peer].out;
	int fd = ft_overlay_connect(&l->eps[l->cfg.self], ep);
	if (fd < 0) {
		ft_debug("checkpoint link: connect to rank %u: %s", peer, strerror(-fd));
		return NULL;
	}
	c = conn_new(l, fd, true, peer);
	if (!c)
		return NULL;
	c->connecting = true;
	c->addr = (struct sockaddr_in){ .sin_family = AF_INET, .sin_addr.s_addr = ep->addr,
					.sin_port = ep->port };
	l->peers[peer].out = c;
	return c;
}

/* The request frame of a pending operation (under the lock); NULL if out
 * of memory. */
static struct frame_out *request_new(struct ft_ckpt_link *l, const struct op *op, size_t slot)
{
	struct frame_out *f = calloc(1, sizeof *f);
	struct ft_ckpt_hdr h = { .type = op->kind, .from = l->cfg.self, .owner = op->owner,
				 .tag = op->tag, .round = op->round };

	if (!f)
		return NULL;
	f->payload = ft_ckpt_blob_ref(op->payload);
	h.len = f->len = f->payload ? f->payload->len : 0;
	ft_ckpt_hdr_encode(&h, l->cfg.secret, f->hdr);
	f->slot = slot;
	f->serial = op->serial;
	f->kind = op->kind;
	f->peer = op->peer;
	f->owner = op->owner;
	f->tag = op->tag;
	return f;
}

/* Carry out a cancel_all: close every outbound connection with requests
 * on it (all of them cancelled), then let the caller go. */
static void cancel_requests(struct ft_ckpt_link *l, uint64_t asked)
{
	for (struct conn *c = l->conns, *next; c; c = next) {
		next = c->next;
		if (c->outbound && (c->tx.head || c->waiting.head))
			conn_close(l, c);
	}
	pthread_mutex_lock(&l->lock);
	l->cancel_done = asked;
	pthread_cond_broadcast(&l->cancel_done_cond);
	pthread_mutex_unlock(&l->lock);
}

/* What the application thread asked for since the last turn: cancels,
 * peers forgotten, and new operations, in that order (an operation queued
 * after forget(peer) goes on a new connection). */
static void take_requests(struct ft_ckpt_link *l)
{
	struct frame_queue requests;
	bool forget_asked;
	uint64_t cancel_asked;
	struct frame_out *f;

	queue_init(&requests);
	pthread_mutex_lock(&l->lock);
	cancel_asked = l->cancel_asked;
	forget_asked = l->forget_asked;
	if (forget_asked) {
		for (uint32_t r = 0; r < l->cfg.nprocs; r++) {
			l->peers[r].forgetting = l->peers[r].forget;
			l->peers[r].forget = false;
		}
		l->forget_asked = false;
	}
	for (size_t i = 0; i < l->nqueue; i++) {
		struct op *op = &l->ops[l->queue[i].slot];
		if (op->serial != l->queue[i].serial || op->state != FT_CKPT_OP_PENDING)
			continue; /* ended before it was taken (forget, cancel_all) */
		if ((f = request_new(l, op, l->queue[i].slot)))
			queue_push(&requests, f);
		else
			op_finish(op, FT_CKPT_OP_FAILED);
	}
	l->nqueue = 0;
	pthread_mutex_unlock(&l->lock);

	/* Only the copier writes cancel_done: reading it unlocked is safe. */
	if (cancel_asked != l->cancel_done)
		cancel_requests(l, cancel_asked);
	for (struct conn *c = l->conns, *next; forget_asked && c; c = next) {
		next = c->next;
		if (c->peer != NO_PEER && l->peers[c->peer].forgetting)
			conn_close(l, c);
	}
	while ((f = queue_pop(&requests))) {
		struct conn *c = conn_to(l, f->peer);
		if (c) {
			queue_push(&c->tx, f);
		} else {
			request_end(l, f, FT_CKPT_OP_FAILED, NULL);
			frame_free(f);
		}
	}
}

/* Fill l->pfds: the wake fd, the listening fd, then every connection.
 * Returns how many. */
static nfds_t watch_list(struct ft_ckpt_link *l)
{
	size_t n = 2;

	for (struct conn *c = l->conns; c; c = c->next)
		n++;
	if (n > l->pcap) {
		struct pollfd *pfds = realloc(l->pfds, n * sizeof *pfds);
		if (pfds)
			l->pfds = pfds;
		struct conn **pconns = realloc(l->pconns, n * sizeof *pconns);
		if (pconns)
			l->pconns = pconns;
		if (pfds && pconns)
			l->pcap = n;
	}
	l->pfds[0] = (struct pollfd){ .fd = l->wake_fd, .events = POLLIN };
	l->pfds[1] = (struct pollfd){ .fd = l->cfg.listen_fd, .events = POLLIN };
	n = 2;
	/* Out of memory above: the connections that fit are served now, the
	 * others on a later turn. */
	for (struct conn *c = l->conns; c && n < l->pcap; c = c->next, n++) {
		short events = c->connecting ? POLLOUT : POLLIN;
		if (c->tx.head)
			events |= POLLOUT;
		l->pfds[n] = (struct pollfd){ .fd = c->fd, .events = events };
		l->pconns[n] = c;
	}
	return n;
}

static void conn_event(struct ft_ckpt_link *l, struct conn *c, short revents)
{
	if (c->connecting) {
		int err = 0;
		socklen_t len = sizeof err;
		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
			err = errno;
		if (err != 0) {
			ft_debug("checkpoint link: connect to rank %u: %s", c->peer, strerror(err));
			conn_close(l, c);
			return;
		}
		c->connecting = false;
	}
	if ((revents & (POLLIN | POLLHUP | POLLERR)) && !conn_read(l, c))
		return;
	/* Replies just queued go out without waiting for a turn. */
	if (c->tx.head)
		conn_write(l, c);
}

static void *copier_main(void *arg)
{
	struct ft_ckpt_link *l = arg;

	while (!atomic_load_explicit(&l->stopping, memory_order_acquire)) {
		take_requests(l);
		nfds_t n = watch_list(l);
		if (poll(l->pfds, n, -1) < 0) {
			if (errno != EINTR)
				ft_debug("checkpoint link: poll: %s", strerror(errno));
			continue;
		}
		if (l->pfds[0].revents) {
			eventfd_t v;
			eventfd_read(l->wake_fd, &v);
		}
		if (l->pfds[1].revents)
			accept_all(l);
		/* A connection only ever closes itself here, so the others
		 * listed stay valid; those just accepted wait for the next turn. */
		for (nfds_t i = 2; i < n; i++)
			if (l->pfds[i].revents)
				conn_event(l, l->pconns[i], l->pfds[i].revents);
	}
	return NULL;
}

/* --- the application thread's side ------------------------------------------ */

/* Queue an operation; payload: its reference, dropped on failure.
 * Returns its number or -errno. */
static int op_new(struct ft_ckpt_link *l, uint8_t kind, uint32_t peer, uint32_t owner,
		  struct ft_ckpt_tag tag, uint32_t round, struct ft_ckpt_blob *payload)
{
	size_t slot;

	pthread_mutex_lock(&l->lock);
	for (slot = 0; slot < l->nops && l->ops[slot].serial; slot++)
		;
	if (slot == l->nops) {
		size_t n = l->nops ? 2 * l->nops : 16;
		struct op *ops = n <= INT_MAX ? realloc(l->ops, n * sizeof *ops) : NULL;
		if (!ops)
			goto out_of_memory;
		memset(ops + l->nops, 0, (n - l->nops) * sizeof *ops);
		l->ops = ops;
		l->nops = n;
	}
	if (l->nqueue == l->queue_cap) {
		size_t n = l->queue_cap ? 2 * l->queue_cap : 16;
		struct ticket *queue = realloc(l->queue, n * sizeof *queue);
		if (!queue)
			goto out_of_memory;
		l->queue = queue;
		l->queue_cap = n;
	}
	l->ops[slot] = (struct op){ .serial = ++l->last_serial, .state = FT_CKPT_OP_PENDING,
				    .kind = kind, .peer = peer, .owner = owner, .round = round,
				    .tag = tag, .payload = payload };
	l->queue[l->nqueue++] = (struct ticket){ .slot = slot, .serial = l->last_serial };
	pthread_mutex_unlock(&l->lock);
	poke(l);
	return (int)slot;

out_of_memory:
	pthread_mutex_unlock(&l->lock);
	ft_ckpt_blob_unref(payload);
	return -ENOMEM;
}

int ft_ckpt_link_store(struct ft_ckpt_link *l, uint32_t to, uint32_t owner, struct ft_ckpt_tag tag,
		       struct ft_ckpt_blob *blob)
{
	/* A copy longer than max_len would only be dropped by the holder. */
	if (to >= l->cfg.nprocs || !blob || blob->len > l->cfg.max_len)
		return -EINVAL;
	return op_new(l, FT_CKPT_STORE, to, owner, tag, 0, ft_ckpt_blob_ref(blob));
}

int ft_ckpt_link_fetch(struct ft_ckpt_link *l, uint32_t from, uint32_t owner, struct ft_ckpt_tag tag)
{
	if (from >= l->cfg.nprocs)
		return -EINVAL;
	return op_new(l, FT_CKPT_FETCH, from, owner, tag, 0, NULL);
}

int ft_ckpt_link_note(struct ft_ckpt_link *l, uint32_t to, uint32_t round, const void *note, uint32_t len)
{
	struct ft_ckpt_blob *bytes;

	if (to >= l->cfg.nprocs || len > FT_CKPT_NOTE_MAX || (len && !note))
		return -EINVAL;
	bytes = ft_ckpt_blob_new(len);
	if (!bytes)
		return -ENOMEM;
	if (len)
		memcpy(bytes->data, note, len);
	return op_new(l, FT_CKPT_NOTE, to, 0, (struct ft_ckpt_tag){ 0 }, round, bytes);
}

int ft_ckpt_link_op(struct ft_ckpt_link *l, int op, struct ft_ckpt_blob **data)
{
	struct ft_ckpt_blob *result = NULL;
	int state = -ENOENT;

	pthread_mutex_lock(&l->lock);
	if (op >= 0 && (size_t)op < l->nops && l->ops[op].serial) {
		struct op *o = &l->ops[op];
		state = (int)o->state;
		if (o->state != FT_CKPT_OP_PENDING) {
			result = o->result;
			*o = (struct op){ 0 };
		}
	}
	pthread_mutex_unlock(&l->lock);
	if (data)
		*data = result;
	else
		ft_ckpt_blob_unref(result);
	return state;
}

int ft_ckpt_link_take_note(struct ft_ckpt_link *l, uint32_t round, uint32_t *from,
			   struct ft_ckpt_blob **note)
{
	struct note *found = NULL, *dropped = NULL;

	pthread_mutex_lock(&l->lock);
	if (round > l->note_floor)
		l->note_floor = round;
	/* One pass: notes below the floor go, the first of round is taken. */
	struct note **p = &l->notes;
	while (*p) {
		struct note *n = *p;
		if (n->round < l->note_floor || (!found && n->round == round)) {
			*p = n->next;
			if (n->round == round && !found) {
				found = n;
			} else {
				n->next = dropped;
				dropped = n;
			}
		} else {
			p = &n->next;
		}
	}
	l->notes_tail = p;
	pthread_mutex_unlock(&l->lock);
	while (dropped) {
		struct note *next = dropped->next;
		ft_ckpt_blob_unref(dropped->bytes);
		free(dropped);
		dropped = next;
	}
	if (!found)
		return 0;
	*from = found->from;
	*note = found->bytes;
	free(found);
	return 1;
}

void ft_ckpt_link_forget(struct ft_ckpt_link *l, uint32_t peer)
{
	if (peer >= l->cfg.nprocs)
		return;
	pthread_mutex_lock(&l->lock);
	for (size_t i = 0; i < l->nops; i++) {
		struct op *op = &l->ops[i];
		if (op->serial && op->state == FT_CKPT_OP_PENDING && op->peer == peer)
			op_finish(op, FT_CKPT_OP_FAILED);
	}
	l->peers[peer].forget = true;
	l->forget_asked = true;
	pthread_mutex_unlock(&l->lock);
	poke(l);
}

void ft_ckpt_link_cancel_all(struct ft_ckpt_link *l)
{
	pthread_mutex_lock(&l->lock);
	for (size_t i = 0; i < l->nops; i++) {
		struct op *op = &l->ops[i];
		if (op->serial && op->state == FT_CKPT_OP_PENDING) {
			op_finish(op, FT_CKPT_OP_FAILED);
			*op = (struct op){ 0 };
		}
	}
	l->nqueue = 0;
	uint64_t asked = ++l->cancel_asked;
	poke(l);
	/* The copier looks between chunks, so this waits for at most one
	 * turn of its loop. */
	while (l->cancel_done < asked)
		pthread_cond_wait(&l->cancel_done_cond, &l->lock);
	pthread_mutex_unlock(&l->lock);
}

const struct ft_ckpt_link_stats *ft_ckpt_link_stats(const struct ft_ckpt_link *l)
{
	return &l->stats;
}

/* --- life cycle ----------------------------------------------------------- */

static void link_free(struct ft_ckpt_link *l)
{
	while (l->conns)
		conn_close(l, l->conns);
	for (size_t i = 0; i < l->nops; i++) {
		ft_ckpt_blob_unref(l->ops[i].payload);
		ft_ckpt_blob_unref(l->ops[i].result);
	}
	while (l->notes) {
		struct note *next = l->notes->next;
		ft_ckpt_blob_unref(l->notes->bytes);
		free(l->notes);
		l->notes = next;
	}
	close(l->cfg.listen_fd);
	if (l->wake_fd >= 0)
		close(l->wake_fd);
	pthread_cond_destroy(&l->cancel_done_cond);
	pthread_mutex_destroy(&l->lock);
	free(l->ops);
	free(l->queue);
	free(l->eps);
	free(l->peers);
	free(l->pfds);
	free(l->pconns);
	free(l);
}

int ft_ckpt_link_start(struct ft_ckpt_link **out, const struct ft_ckpt_link_config *cfg, char *err,
		       size_t errlen)
{
	uint32_t n = cfg->nprocs;
	struct ft_ckpt_link *l;
	int rc;

	*out = NULL;
	if (cfg->self >= n || !cfg->endpoints) {
		snprintf(err, errlen, "rank %u outside a job of %u", cfg->self, n);
		close(cfg->listen_fd);
		return -EINVAL;
	}
	l = calloc(1, sizeof *l);
	if (!l) {
		snprintf(err, errlen, "out of memory");
		close(cfg->listen_fd);
		return -ENOMEM;
	}
	l->cfg = *cfg;
	l->wake_fd = -1;
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->cancel_done_cond, NULL);
	l->notes_tail = &l->notes;
	l->eps = malloc(n * sizeof *l->eps);
	l->peers = calloc(n, sizeof *l->peers);
	l->pcap = 16; /* grows with the connections */
	l->pfds = malloc(l->pcap * sizeof *l->pfds);
	l->pconns = malloc(l->pcap * sizeof *l->pconns);
	if (!l->eps || !l->peers || !l->pfds || !l->pconns) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto out_free;
	}
	memcpy(l->eps, cfg->endpoints, n * sizeof *l->eps);
	l->cfg.endpoints = l->eps;
	l->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (l->wake_fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		goto out_free;
	}
	rc = ft_thread_start(&l->thread, copier_main, l);
	if (rc != 0) {
		snprintf(err, errlen, "pthread_create: %s", strerror(rc));
		rc = -rc;
		goto out_free;
	}
	*out = l;
	return 0;

out_free:
	link_free(l);
	return rc;
}

void ft_ckpt_link_stop(struct ft_ckpt_link *l)
{
	if (!l)
		return;
	atomic_store_explicit(&l->stopping, true, memory_order_release);
	poke(l);
	pthread_join(l->thread, NULL);
	link_free(l);
}
