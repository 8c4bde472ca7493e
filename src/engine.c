/* engine.c: the detector thread (see engine.h). One epoll loop over the
 * listening socket, an eventfd for requests from the application thread,
 * and one TCP connection per peer it talks to. Input is read before the
 * detector's timers run, so that a late heartbeat already in a socket
 * buffer is never mistaken for silence.
 *
 * A connection that breaks is not yet a failure: the engine opens a new
 * connection to the peer's listening port ("probe"). A port that refuses
 * means the process is gone (its kernel closed its sockets when it died):
 * the detector is told, and acts if the peer is its ring neighbour. A
 * probe that connects means the peer is alive and the connection is kept.
 *
 * The detector's callbacks (engine_send, engine_learned) never call back
 * into the detector and never close a connection: a write that fails
 * marks the connection broken, a connect that is refused marks the rank
 * lost, and sweep() deals with both once the detector has returned.
 *
 * The rank slots are the job's capacity; a slot not joined has no
 * endpoint (port 0) and is never connected to. The endpoint of a rank
 * that joins comes with its FT_EV_JOINED entry, stored before the
 * detector may send there; ft_engine_join hands such an entry to the
 * detector thread as a NOTICE posted to this rank itself.
 *
 * A process that leaves (MPI_Finalize) first writes its departure on every
 * connection it has and on every connection it accepts afterwards, so
 * that no peer reads the end of a stream before the news that explains
 * it. */
#include "ftshim_config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "src/clock.h"
#include "src/common.h"
#include "src/engine.h"
#include "src/thread.h"
#include "src/log.h"
#include "src/proc_table.h"
#include "src/prune.h"

/* A heartbeat is not queued behind this much unsent data: the peer is not
 * reading, and a stale heartbeat proves nothing. */
#define HB_QUEUE_LIMIT (64u * 1024)
/* Beyond this, news to a peer that does not read is dropped (the
 * anti-entropy exchange repairs it once the peer reads again). */
#define SEND_QUEUE_LIMIT (4u * 1024 * 1024)
/* How long a connection to a failed rank may take to flush its EXCLUDED. */
#define CLOSE_FLUSH_NS (1 * FT_NSEC_PER_SEC)
/* Accepted connections that have not said who they are. */
#define MAX_UNKNOWN_CONNS 256

enum request { REQ_NONE, REQ_DEPART, REQ_KILL };

/* A frame posted by another thread: to whom, and its bytes. */
struct posted {
	struct posted *next;
	uint32_t to;
	size_t len;
	uint8_t frame[];
};

struct conn {
	int fd;
	uint32_t rank;       /* the peer, FT_RANK_NONE until its first frame */
	bool outbound;       /* we connected (to rank) */
	bool connecting;     /* outbound connect still in progress */
	bool probe;          /* opened to check whether rank is still there */
	bool closing;        /* close once out is flushed, or at close_by */
	bool want_out;       /* EPOLLOUT is armed */
	bool broken;         /* a write failed; sweep() closes it */
	uint64_t close_by;
	uint8_t *in;         /* FT_FRAME_MAX_LEN bytes, allocated on first read */
	size_t in_len;
	uint8_t *out;
	size_t out_len, out_cap;
	struct conn *prev, *next;
};

struct ft_engine {
	pthread_t thread;
	int epfd, listen_fd, wake_fd, bell_fd;
	uint32_t n, self;
	struct ft_endpoint *eps;
	uint8_t secret[FT_SECRET_LEN];
	struct ft_detector det;
	struct ft_engine_hooks hooks;
	struct conn **send_conn;  /* per rank: the connection we send on */
	bool *probing;            /* per rank: a probe is under way */
	bool *lost;               /* per rank: its port refused; sweep() tells the detector */
	uint32_t nlost;
	struct conn *conns;       /* every open connection */
	uint32_t unknown_conns;   /* accepted, peer not yet known */
	struct ft_entry *scratch; /* FT_FRAME_MAX_ENTRIES, for parsing */
	uint8_t *frame;           /* FT_FRAME_MAX_LEN, for encoding */
	_Atomic int request;      /* enum request, from the application thread */
	_Atomic int abort_status; /* from the application thread: -1, or the status
				     to flood (ft_engine_abort) */
	_Atomic bool abort_sent;  /* set by the detector thread once it is out */
	_Atomic bool stopped;     /* set by the detector thread as it ends (release);
				     ft_engine_finish waits for it (acquire) */
	/* Set by the application thread in ft_engine_finish while its
	 * wait_step still needs the control plane (release, after what it
	 * posted); the detector thread leaves only once it is clear
	 * (acquire). */
	_Atomic bool held;
	/* Set by the detector thread once this process departs and every
	 * other rank has left (release); read by any thread. */
	_Atomic bool everyone_left;
	bool aborting;            /* detector thread: the abort is queued, not yet out */
	int exit_status;          /* -1, or ft_engine_exit_soon's (detector thread) */
	/* Frames other threads ask it to send (ft_engine_post): appended by
	 * any thread under post_lock, taken by the detector thread. */
	pthread_mutex_t post_lock;
	struct posted *posted, **posted_tail;
	bool departing;
	uint64_t leave_by;
	uint64_t last_words_by; /* once every rank left: until then, flush; 0 before */
	bool timed_out;
	struct ft_engine_stats stats;
	/* The processes of this host it watches (detector thread). */
	struct pid_watch *pid_watches;
	uint32_t npid_watches;
};

/* A process of this host, watched with a pidfd; fd -1 once it ended. */
struct pid_watch {
	int fd;
	uint32_t rank;
};

/* Markers for the non-connection fds in epoll. */
static char listen_marker, wake_marker, bell_marker;

static void stat_add(_Atomic uint64_t *counter, uint64_t v)
{
	/* relaxed: statistics, read for reports only. */
	atomic_fetch_add_explicit(counter, v, memory_order_relaxed);
}

/* Wake the detector thread from its wait (any thread). */
static void poke(struct ft_engine *e)
{
	uint64_t one = 1;
	ssize_t w = write(e->wake_fd, &one, sizeof one);
	(void)w;
}

/* --- connections -------------------------------------------------------- */

static void conn_watch(struct ft_engine *e, struct conn *c, bool want_out)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP | (want_out ? EPOLLOUT : 0),
				  .data.ptr = c };

	if (c->want_out == want_out)
		return;
	c->want_out = want_out;
	epoll_ctl(e->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

static void conn_send(struct ft_engine *e, struct conn *c, const struct ft_msg *m, uint64_t now);
static void self_msg(struct ft_engine *e, struct ft_msg *m, struct ft_entry *entry, uint16_t event,
		     uint16_t how);

static struct conn *conn_add(struct ft_engine *e, int fd, uint32_t rank, bool outbound, bool connecting)
{
	struct conn *c = calloc(1, sizeof *c);
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP | (connecting ? EPOLLOUT : 0) };

	if (!c) {
		close(fd);
		return NULL;
	}
	c->fd = fd;
	c->rank = rank;
	c->outbound = outbound;
	c->connecting = connecting;
	c->want_out = connecting;
	ev.data.ptr = c;
	if (epoll_ctl(e->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		close(fd);
		free(c);
		return NULL;
	}
	c->next = e->conns;
	if (e->conns)
		e->conns->prev = c;
	e->conns = c;
	if (rank == FT_RANK_NONE)
		e->unknown_conns++;
	stat_add(&e->stats.connections, 1);
	if (e->departing) {
		/* A connection made after tell_everyone: the peer must read
		 * the departure on it too before it can read its end. */
		struct ft_msg m;
		struct ft_entry entry;
		self_msg(e, &m, &entry, FT_EV_DEPARTED, 0);
		conn_send(e, c, &m, 0);
	}
	return c;
}

static void conn_close(struct ft_engine *e, struct conn *c)
{
	epoll_ctl(e->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	if (c->prev)
		c->prev->next = c->next;
	else
		e->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	if (c->rank == FT_RANK_NONE)
		e->unknown_conns--;
	else if (e->send_conn[c->rank] == c)
		e->send_conn[c->rank] = NULL;
	if (c->probe && c->rank != FT_RANK_NONE)
		e->probing[c->rank] = false;
	free(c->in);
	free(c->out);
	free(c);
}

/* Write what is queued. Returns false if the connection broke. */
static bool conn_flush(struct ft_engine *e, struct conn *c)
{
	size_t off = 0;

	while (off < c->out_len) {
		ssize_t w = send(c->fd, c->out + off, c->out_len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			off += (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		return false;
	}
	/* Nothing queued may mean no buffer yet (c->out NULL). */
	if (off > 0 && off < c->out_len)
		memmove(c->out, c->out + off, c->out_len - off);
	c->out_len -= off;
	conn_watch(e, c, c->out_len > 0);
	return true;
}

/* Queue an encoded frame on c and try to send it at once. */
static void conn_queue(struct ft_engine *e, struct conn *c, const uint8_t *frame, size_t len,
		       bool heartbeat)
{
	if ((heartbeat && c->out_len > HB_QUEUE_LIMIT) || c->out_len + len > SEND_QUEUE_LIMIT) {
		stat_add(&e->stats.send_overflow, 1);
		return;
	}
	if (c->out_len + len > c->out_cap) {
		size_t cap = c->out_cap ? c->out_cap : 4096;
		while (cap < c->out_len + len)
			cap *= 2;
		uint8_t *out = realloc(c->out, cap);
		if (!out) {
			stat_add(&e->stats.send_overflow, 1);
			return;
		}
		c->out = out;
		c->out_cap = cap;
	}
	memcpy(c->out + c->out_len, frame, len);
	c->out_len += len;
	stat_add(&e->stats.frames_out, 1);
	if (!c->connecting && !c->broken && !conn_flush(e, c))
		c->broken = true;
}

static void conn_send(struct ft_engine *e, struct conn *c, const struct ft_msg *m, uint64_t now)
{
	size_t len = ft_frame_encode(m, e->self, e->secret, e->frame, FT_FRAME_MAX_LEN);

	(void)now;
	if (len)
		conn_queue(e, c, e->frame, len, m->type == FT_MSG_HEARTBEAT);
}

/* The port of rank refused: tell the detector from sweep(). */
static void mark_lost(struct ft_engine *e, uint32_t rank)
{
	if (!e->lost[rank]) {
		e->lost[rank] = true;
		e->nlost++;
	}
}

/* News about this process (its departure, its abort), as a NOTICE. */
static void self_msg(struct ft_engine *e, struct ft_msg *m, struct ft_entry *entry, uint16_t event,
		     uint16_t how)
{
	*entry = (struct ft_entry){ .rank = e->self, .event = event, .how = how, .detector = e->self };
	*m = (struct ft_msg){ .type = FT_MSG_NOTICE, .from = e->self };
	m->list.count = 1;
	m->list.entries = entry;
}

/* Open a connection to rank (a probe if probe is set). NULL if it could
 * not even start; for a probe that means the peer is gone. Never to a rank
 * slot whose endpoint is unknown (port 0: not joined, as far as this
 * process knows). */
static struct conn *open_outbound(struct ft_engine *e, uint32_t rank, bool probe, uint64_t now)
{
	struct conn *c;

	if (e->eps[rank].port == 0)
		return NULL;
	int fd = ft_overlay_connect(&e->eps[e->self], &e->eps[rank]);
	if (probe)
		stat_add(&e->stats.probes, 1);
	if (fd < 0) {
		if (fd == -ECONNREFUSED)
			mark_lost(e, rank);
		return NULL;
	}
	c = conn_add(e, fd, rank, true, true);
	if (!c)
		return NULL;
	c->probe = probe;
	if (probe)
		e->probing[rank] = true;
	else if (!e->send_conn[rank])
		e->send_conn[rank] = c;
	if (e->departing) {
		struct ft_msg m;
		struct ft_entry entry;
		self_msg(e, &m, &entry, FT_EV_DEPARTED, 0);
		conn_send(e, c, &m, now);
	}
	return c;
}

/* A connection ended or failed; err: the error of a connect that failed,
 * else 0. If its peer is not known to have failed or departed, find out
 * whether the peer is still there. Only a refused connect proves that it
 * is gone: an unreachable host or network, or a connect that timed out,
 * may be a partition, which the heartbeats and a quorum round judge. */
static void conn_broken(struct ft_engine *e, struct conn *c, int err, uint64_t now)
{
	uint32_t rank = c->rank;
	bool was_probe = c->probe, was_connecting = c->connecting;

	if (c->closing) {
		conn_close(e, c);
		return;
	}
	conn_close(e, c);
	if (rank == FT_RANK_NONE || ft_det_knows_failed(&e->det, rank) ||
	    ft_det_knows_departed(&e->det, rank) || e->det.excluded)
		return;
	if (was_probe || was_connecting) {
		if (was_connecting && err == ECONNREFUSED)
			mark_lost(e, rank); /* the host is there, the process is not */
		return;
	}
	if (!e->probing[rank])
		open_outbound(e, rank, true, now);
}

/* --- the detector's callbacks ------------------------------------------- */

/* The connection to send to rank on, opened if need be (not for an
 * EXCLUDED, which goes on a connection the failed rank already has: the
 * one its heartbeats came in on). NULL if none. */
static struct conn *conn_to(struct ft_engine *e, uint32_t to, bool excluded, uint64_t now)
{
	struct conn *c;

	if (to >= e->n || to == e->self)
		return NULL;
	if (!excluded && ft_det_knows_failed(&e->det, to))
		return NULL;
	c = e->send_conn[to];
	if (!c && excluded)
		for (c = e->conns; c && c->rank != to; c = c->next)
			;
	else if (!c)
		c = open_outbound(e, to, false, now);
	return c;
}

static void engine_send(void *ctx, uint32_t to, const struct ft_msg *m)
{
	struct ft_engine *e = ctx;
	uint64_t now = ft_clock_now();
	struct conn *c = conn_to(e, to, m->type == FT_MSG_EXCLUDED, now);

	if (c)
		conn_send(e, c, m, now);
}

static void engine_learned(void *ctx, const struct ft_entry *entry, uint32_t told_by)
{
	struct ft_engine *e = ctx;

	/* The detector may send to it as soon as this returns. */
	if (entry->event == FT_EV_JOINED)
		ft_overlay_join_endpoint(entry, &e->eps[entry->rank]);
	if (entry->event == FT_EV_FAILED || entry->event == FT_EV_FAILED_AGAIN) {
		/* Stop talking to it once what is queued (its EXCLUDED) is out. */
		for (struct conn *c = e->conns; c; c = c->next) {
			if (c->rank == entry->rank && !c->closing) {
				c->closing = true;
				c->close_by = ft_clock_now() + CLOSE_FLUSH_NS;
			}
		}
		if (e->send_conn[entry->rank])
			e->send_conn[entry->rank] = NULL;
	}
	if (e->hooks.learned)
		e->hooks.learned(e->hooks.ctx, entry, told_by);
}

static void engine_excluded(void *ctx, uint32_t by, uint32_t how)
{
	struct ft_engine *e = ctx;

	if (e->hooks.excluded)
		e->hooks.excluded(e->hooks.ctx, by, how);
}

static void engine_declared_self(void *ctx, uint32_t by, uint32_t how)
{
	struct ft_engine *e = ctx;

	if (e->hooks.declared_self)
		e->hooks.declared_self(e->hooks.ctx, by, how);
}

static void engine_lost_quorum(void *ctx, uint32_t reached, uint32_t members, uint32_t lowest)
{
	struct ft_engine *e = ctx;

	if (e->hooks.lost_quorum)
		e->hooks.lost_quorum(e->hooks.ctx, reached, members, lowest);
}

/* --- input -------------------------------------------------------------- */

static void drop_frame(struct ft_engine *e, struct conn *c, enum ft_frame_error err)
{
	stat_add(&e->stats.dropped[err], 1);
	ft_debug("control frame from %s rejected (%s); closing that connection",
		 c->rank == FT_RANK_NONE ? "an unknown peer" : "a peer", ft_frame_error_names[err]);
}

/* Read what is there and hand every whole frame to the detector. Returns
 * false if the connection is gone (closed here). */
static bool conn_read(struct ft_engine *e, struct conn *c, uint64_t now)
{
	if (!c->in && !(c->in = malloc(FT_FRAME_MAX_LEN))) {
		conn_close(e, c);
		return false;
	}
	for (;;) {
		ssize_t r = recv(c->fd, c->in + c->in_len, FT_FRAME_MAX_LEN - c->in_len, MSG_DONTWAIT);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return true;
		if (r <= 0) {
			if (c->in_len > 0)
				stat_add(&e->stats.dropped[FT_FRAME_INCOMPLETE], 1);
			conn_broken(e, c, 0, now);
			return false;
		}
		c->in_len += (size_t)r;
		size_t off = 0;
		for (;;) {
			struct ft_msg m;
			size_t used;
			enum ft_frame_error err = ft_frame_parse(c->in + off, c->in_len - off, e->secret,
								 e->n, &m, e->scratch, &used);
			if (err == FT_FRAME_INCOMPLETE)
				break;
			if (err == FT_FRAME_OK && (m.from == e->self ||
						   (c->rank != FT_RANK_NONE && m.from != c->rank)))
				err = FT_FRAME_BAD_SENDER;
			if (err != FT_FRAME_OK) {
				drop_frame(e, c, err);
				conn_close(e, c);
				return false;
			}
			off += used;
			stat_add(&e->stats.frames_in, 1);
			if (c->rank == FT_RANK_NONE) {
				c->rank = m.from;
				e->unknown_conns--;
				if (!e->send_conn[c->rank] && !ft_det_knows_failed(&e->det, c->rank))
					e->send_conn[c->rank] = c;
			}
			if (m.type == FT_MSG_APP) {
				if (!ft_det_knows_failed(&e->det, m.from) && e->hooks.app)
					e->hooks.app(e->hooks.ctx, &m);
			} else {
				ft_det_receive(&e->det, &m, now);
			}
			if (e->det.excluded)
				return true;
		}
		memmove(c->in, c->in + off, c->in_len - off);
		c->in_len -= off;
	}
}

static void accept_all(struct ft_engine *e, uint64_t now)
{
	for (;;) {
		int fd = accept4(e->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), one = 1;
		if (fd < 0)
			return;
		/* Replies go out on accepted connections too: no Nagle delay. */
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		if (e->unknown_conns >= MAX_UNKNOWN_CONNS) {
			close(fd);
			continue;
		}
		struct conn *c = conn_add(e, fd, FT_RANK_NONE, false, false);
		if (c && e->departing) {
			struct ft_msg m;
			struct ft_entry entry;
			self_msg(e, &m, &entry, FT_EV_DEPARTED, 0);
			conn_send(e, c, &m, now);
		}
	}
}

static void on_event(struct ft_engine *e, struct epoll_event *ev, uint64_t now)
{
	struct conn *c = ev->data.ptr;

	if (c->connecting && (ev->events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
		int err = 0;
		socklen_t len = sizeof err;
		getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
		if (err != 0) {
			conn_broken(e, c, err, now);
			return;
		}
		c->connecting = false;
		if (c->probe) {
			/* The peer answers: it is alive; keep the connection. */
			c->probe = false;
			e->probing[c->rank] = false;
			if (!e->send_conn[c->rank])
				e->send_conn[c->rank] = c;
		}
	}
	if ((ev->events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) && !conn_read(e, c, now))
		return;
	if (ev->events & EPOLLOUT && !c->connecting && !c->broken && !conn_flush(e, c))
		c->broken = true;
}

/* What the detector's callbacks left for later: broken connections,
 * refused ranks, connections to failed ranks once flushed or overdue.
 * Telling the detector may break or refuse more, so go round until
 * nothing is left. */
static void sweep(struct ft_engine *e, uint64_t now)
{
	bool again = true;

	while (again && !e->det.excluded) {
		again = false;
		for (struct conn *c = e->conns, *next; c; c = next) {
			next = c->next;
			if (c->broken) {
				conn_broken(e, c, 0, now);
				again = true;
				break; /* the list may have changed beyond next */
			}
		}
		for (uint32_t r = 0; e->nlost && r < e->n; r++) {
			if (!e->lost[r])
				continue;
			e->lost[r] = false;
			e->nlost--;
			ft_det_connection_lost(&e->det, r, now);
			again = true;
		}
	}
	for (struct conn *c = e->conns, *next; c; c = next) {
		next = c->next;
		if (!c->closing)
			continue;
		if (!c->connecting && c->out_len > 0 && !conn_flush(e, c))
			c->out_len = 0;
		if (c->out_len == 0 || now >= c->close_by)
			conn_close(e, c);
	}
}

/* --- processes of this host ------------------------------------------------ */

/* A watched process ended. Unless this process is leaving itself (then a
 * peer that ends has left too: it goes only once every other rank left),
 * that is a failure, known now rather than when a socket or a heartbeat
 * tells: what that rank said last is read first, in case it was its
 * departure or an abort. */
static void pid_ended(struct ft_engine *e, struct pid_watch *w, uint64_t now)
{
	uint32_t rank = w->rank;

	epoll_ctl(e->epfd, EPOLL_CTL_DEL, w->fd, NULL);
	close(w->fd);
	w->fd = -1;
	for (struct conn *c = e->conns, *next; c; c = next) {
		next = c->next;
		if (c->rank == rank && !c->connecting && !c->broken)
			conn_read(e, c, now);
	}
	if (e->departing || e->det.excluded || ft_det_knows_failed(&e->det, rank) ||
	    ft_det_knows_departed(&e->det, rank))
		return;
	ft_det_declare(&e->det, rank, FT_HOW_EXITED, now);
}

/* Watch the processes of this host that cfg names; one that cannot be
 * watched (no pidfd_open, or its pid names another process already) is
 * left to the sockets and heartbeats. */
static void watch_local_procs(struct ft_engine *e, const struct ft_local_proc *procs)
{
	if (!procs)
		return;
	e->pid_watches = calloc(e->n, sizeof *e->pid_watches);
	if (!e->pid_watches)
		return;
	for (uint32_t r = 0; r < e->n; r++) {
		if (r == e->self || procs[r].pid <= 0)
			continue;
		int fd = ft_process_pidfd((pid_t)procs[r].pid, procs[r].start_ticks);
		if (fd < 0)
			continue;
		struct pid_watch *w = &e->pid_watches[e->npid_watches];
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = w };
		if (epoll_ctl(e->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
			close(fd);
			continue;
		}
		*w = (struct pid_watch){ .fd = fd, .rank = r };
		e->npid_watches++;
	}
}

static struct pid_watch *pid_watch_of(struct ft_engine *e, void *ptr)
{
	struct pid_watch *w = ptr;

	return e->npid_watches && w >= e->pid_watches && w < e->pid_watches + e->npid_watches ? w : NULL;
}

/* --- the loop ----------------------------------------------------------- */

/* How long a departing rank waits for its queued frames to leave. */
#define LAST_WORDS_NS (200 * FT_NSEC_PER_MSEC)

static bool output_pending(const struct ft_engine *e)
{
	for (const struct conn *c = e->conns; c; c = c->next)
		if (c->out_len && !c->broken && !c->closing)
			return true;
	return false;
}

/* Whether this process, which means to go, may go now: once what is
 * queued has left, or LAST_WORDS_NS after it first asked. */
static bool last_words_said(struct ft_engine *e, uint64_t now)
{
	if (!e->last_words_by)
		e->last_words_by = now + LAST_WORDS_NS;
	return !output_pending(e) || now >= e->last_words_by;
}

/* Whether the application thread still needs the control plane before
 * this process leaves: it holds it, or posted frames not yet queued. */
static bool still_needed(struct ft_engine *e)
{
	if (atomic_load_explicit(&e->held, memory_order_acquire))
		return true;
	pthread_mutex_lock(&e->post_lock);
	bool pending = e->posted != NULL;
	pthread_mutex_unlock(&e->post_lock);
	return pending;
}

/* News about this process goes on every connection first, so that each
 * peer reads it before it can read the end of the stream, then the usual
 * flood. */
static void tell_everyone(struct ft_engine *e, uint16_t event, uint16_t how, uint64_t now)
{
	struct ft_msg m;
	struct ft_entry entry;

	self_msg(e, &m, &entry, event, how);
	for (struct conn *c = e->conns, *next; c; c = next) {
		next = c->next;
		if (c->rank != FT_RANK_NONE && !c->closing)
			conn_send(e, c, &m, now);
	}
}

static void start_departure(struct ft_engine *e, uint64_t now)
{
	e->departing = true;
	tell_everyone(e, FT_EV_DEPARTED, 0, now);
	ft_det_depart(&e->det, now);
}

static void start_abort(struct ft_engine *e, int status, uint64_t now)
{
	tell_everyone(e, FT_EV_ABORT, (uint16_t)status, now);
	ft_det_abort(&e->det, (uint16_t)status, now);
	sweep(e, now);
	e->aborting = true;
}

/* The abort is out once nothing is left queued (connections still being
 * made to flood targets included): then the frames are in the kernel,
 * which delivers them even after this process is gone. */
static void abort_progress(struct ft_engine *e)
{
	if (e->aborting && !output_pending(e)) {
		e->aborting = false;
		atomic_store_explicit(&e->abort_sent, true, memory_order_release);
	}
}

/* At the end: what the control plane did, and what the thread cost. */
static void log_summary(struct ft_engine *e, uint64_t started)
{
	struct timespec cpu;
	uint64_t dropped = 0, wall = ft_clock_now() - started;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
	uint64_t cpu_ns = (uint64_t)cpu.tv_sec * FT_NSEC_PER_SEC + (uint64_t)cpu.tv_nsec;
	for (int i = FT_FRAME_INCOMPLETE; i < FT_FRAME_ERR_COUNT; i++)
		dropped += atomic_load(&e->stats.dropped[i]);
	ft_debug("control plane: %llu frames in, %llu out, %llu rejected, %llu connections, "
		 "%llu probes; detector thread used %.1f ms of CPU in %.1f s (%.3f%% of a core)",
		 (unsigned long long)atomic_load(&e->stats.frames_in),
		 (unsigned long long)atomic_load(&e->stats.frames_out), (unsigned long long)dropped,
		 (unsigned long long)atomic_load(&e->stats.connections),
		 (unsigned long long)atomic_load(&e->stats.probes), cpu_ns / 1e6, wall / 1e9,
		 wall ? 100.0 * (double)cpu_ns / (double)wall : 0.0);
	uint64_t unsent = atomic_load(&e->stats.unsent_at_exit);
	if (unsent)
		ft_debug("control plane: %llu bytes were still queued as this process left", (unsigned long long)unsent);
}

/* The detector thread sleeps nearly all the time, but when it wakes it
 * must run soon, even when the application keeps every core busy: a
 * heartbeat sent late by a starved thread is a false alarm elsewhere. Ask
 * the scheduler for that, as far as this process may: a higher priority
 * (nice -10; only with CAP_SYS_NICE or a permissive RLIMIT_NICE), and a
 * short time slice, which lets a waking thread preempt at once under the
 * EEVDF scheduler (Linux 6.12 and later; older kernels ignore it). */
static void ask_for_low_latency(void)
{
	struct {
		uint32_t size, policy;
		uint64_t flags;
		int32_t nice;
		uint32_t priority;
		uint64_t runtime, deadline, period;
	} attr = { .size = 48, .policy = 0 /* SCHED_OTHER */ };
	pid_t tid = (pid_t)syscall(SYS_gettid);

	if (setpriority(PRIO_PROCESS, (id_t)tid, -10) != 0)
		ft_debug("detector thread keeps its priority (setpriority: %s)", strerror(errno));
	errno = 0;
	attr.nice = getpriority(PRIO_PROCESS, (id_t)tid);
	attr.runtime = 100 * FT_NSEC_PER_USEC;
	if (errno == 0 && syscall(SYS_sched_setattr, tid, &attr, 0) != 0)
		ft_debug("detector thread keeps its time slice (sched_setattr: %s)", strerror(errno));
}

/* A frame posted to this rank itself: an APP goes to the hook, a NOTICE
 * (ft_engine_join) to the detector as news learned outside the control
 * plane. */
static void take_own_frame(struct ft_engine *e, const struct posted *p, uint64_t now)
{
	struct ft_msg m;
	size_t used;

	if (ft_frame_parse(p->frame, p->len, e->secret, e->n, &m, e->scratch, &used) != FT_FRAME_OK)
		return;
	if (m.type == FT_MSG_APP && e->hooks.app)
		e->hooks.app(e->hooks.ctx, &m);
	else if (m.type == FT_MSG_NOTICE)
		for (uint32_t i = 0; i < m.list.count; i++)
			ft_det_join(&e->det, &m.list.entries[i], now);
}

/* Send what other threads posted. */
static void drain_posted(struct ft_engine *e, uint64_t now)
{
	pthread_mutex_lock(&e->post_lock);
	struct posted *p = e->posted;
	e->posted = NULL;
	e->posted_tail = &e->posted;
	pthread_mutex_unlock(&e->post_lock);
	while (p) {
		struct posted *next = p->next;
		if (p->to == e->self) {
			take_own_frame(e, p, now);
		} else {
			struct conn *c = conn_to(e, p->to, false, now);
			if (c)
				conn_queue(e, c, p->frame, p->len, false);
		}
		free(p);
		p = next;
	}
}

int ft_engine_post(struct ft_engine *e, uint32_t to, const struct ft_msg *m)
{
	size_t len = ft_frame_length(m);
	struct posted *p = len ? malloc(sizeof *p + len) : NULL;

	if (!p)
		return -ENOMEM;
	p->next = NULL;
	p->to = to;
	p->len = ft_frame_encode(m, e->self, e->secret, p->frame, len);
	pthread_mutex_lock(&e->post_lock);
	*e->posted_tail = p;
	e->posted_tail = &p->next;
	pthread_mutex_unlock(&e->post_lock);
	poke(e);
	return 0;
}

int ft_engine_join(struct ft_engine *e, uint32_t rank, const struct ft_endpoint *ep)
{
	struct ft_entry entry;
	struct ft_msg m = { .type = FT_MSG_NOTICE, .from = e->self };

	if (rank >= e->n || ep->port == 0)
		return -EINVAL;
	ft_overlay_join_entry(&entry, rank, ep);
	m.list.count = 1;
	m.list.entries = &entry;
	return ft_engine_post(e, e->self, &m);
}

static void *engine_main(void *arg)
{
	struct ft_engine *e = arg;
	struct epoll_event evs[64];
	uint64_t now = ft_clock_now(), started = now;

	ask_for_low_latency();
	ft_det_start(&e->det, now);
	for (;;) {
		int req = atomic_load_explicit(&e->request, memory_order_acquire);
		if (req == REQ_KILL)
			break;
		int status = atomic_exchange_explicit(&e->abort_status, -1, memory_order_acquire);
		if (status >= 0)
			start_abort(e, status, now);
		if (req == REQ_DEPART && !e->departing)
			start_departure(e, now);
		drain_posted(e, now);
		uint64_t next = ft_det_tick(&e->det, now);
		sweep(e, now);
		abort_progress(e);
		if (e->exit_status >= 0) {
			/* What was queued (the abort passed on, to flood targets
			 * it may still be connecting to) leaves first. */
			for (struct conn *c = e->conns; c; c = c->next)
				if (!c->connecting && c->out_len)
					conn_flush(e, c);
			if (last_words_said(e, now)) {
				struct timespec pause = { 0, 2000000 };
				nanosleep(&pause, NULL);
				if (e->hooks.leave)
					e->hooks.leave(e->hooks.ctx, e->exit_status);
				_exit(e->exit_status);
			}
		}
		next = ft_det_tick(&e->det, now);
		if (e->exit_status >= 0 && e->last_words_by < next)
			next = e->last_words_by;
		if (e->det.excluded)
			break;
		/* Every rank left: go once what is queued (this rank's
		 * departure above all) has left, so that no peer reads the
		 * end of a stream before the departure on it. */
		bool all_left = e->departing && ft_det_all_left(&e->det);
		if (all_left)
			atomic_store_explicit(&e->everyone_left, true, memory_order_release);
		if (all_left && !still_needed(e)) {
			if (last_words_said(e, now))
				break;
			if (e->last_words_by < next)
				next = e->last_words_by;
		}
		if (e->departing && now >= e->leave_by) {
			e->timed_out = true;
			break;
		}
		if (e->departing && e->leave_by < next)
			next = e->leave_by;
		/* At most a second, clamped before it becomes an int. */
		uint64_t wait_ms = next <= now ? 0 : (next - now + FT_NSEC_PER_MSEC - 1) / FT_NSEC_PER_MSEC;
		int timeout_ms = wait_ms > 1000 ? 1000 : (int)wait_ms;
		int n = epoll_wait(e->epfd, evs, (int)FT_ARRAY_SIZE(evs), timeout_ms);
		now = ft_clock_now();
		for (int i = 0; i < n && !e->det.excluded; i++) {
			if (evs[i].data.ptr == &listen_marker) {
				accept_all(e, now);
			} else if (evs[i].data.ptr == &wake_marker) {
				uint64_t v;
				ssize_t r = read(e->wake_fd, &v, sizeof v);
				(void)r;
			} else if (evs[i].data.ptr == &bell_marker) {
				char drop[64];
				while (recv(e->bell_fd, drop, sizeof drop, MSG_DONTWAIT) >= 0)
					;
				if (e->hooks.bell)
					e->hooks.bell(e->hooks.ctx);
			} else if (pid_watch_of(e, evs[i].data.ptr)) {
				struct pid_watch *w = evs[i].data.ptr;
				if (w->fd >= 0)
					pid_ended(e, w, now);
			} else {
				/* An earlier event of this batch may have closed
				 * this connection; check that it is still listed. */
				struct conn *c = e->conns;
				while (c && c != evs[i].data.ptr)
					c = c->next;
				if (c)
					on_event(e, &evs[i], now);
			}
		}
	}
	/* Last words: what is queued (departures, EXCLUDEDs) goes out if the
	 * socket takes it now. */
	uint64_t unsent = 0;
	for (struct conn *c = e->conns; c; c = c->next) {
		if (!c->connecting && !c->broken && c->out_len)
			conn_flush(e, c);
		unsent += c->out_len;
	}
	stat_add(&e->stats.unsent_at_exit, unsent);
	log_summary(e, started);
	atomic_store_explicit(&e->stopped, true, memory_order_release);
	return NULL;
}

/* --- life cycle ----------------------------------------------------------- */

static void engine_free(struct ft_engine *e)
{
	while (e->conns)
		conn_close(e, e->conns);
	while (e->posted) {
		struct posted *next = e->posted->next;
		free(e->posted);
		e->posted = next;
	}
	pthread_mutex_destroy(&e->post_lock);
	for (uint32_t i = 0; i < e->npid_watches; i++)
		if (e->pid_watches[i].fd >= 0)
			close(e->pid_watches[i].fd);
	free(e->pid_watches);
	if (e->det.ring)
		ft_det_destroy(&e->det);
	if (e->listen_fd >= 0)
		close(e->listen_fd);
	if (e->wake_fd >= 0)
		close(e->wake_fd);
	if (e->bell_fd >= 0)
		close(e->bell_fd);
	if (e->epfd >= 0)
		close(e->epfd);
	free(e->eps);
	free(e->send_conn);
	free(e->probing);
	free(e->lost);
	free(e->scratch);
	free(e->frame);
	free(e);
}

int ft_engine_start(struct ft_engine **out, const struct ft_engine_config *cfg,
		    const struct ft_engine_hooks *hooks)
{
	struct ft_engine *e = calloc(1, sizeof *e);
	struct ft_det_ops ops = { .send = engine_send, .learned = engine_learned,
				  .excluded = engine_excluded, .lost_quorum = engine_lost_quorum,
				  .declared_self = engine_declared_self };
	uint32_t n = cfg->det.nprocs;
	int rc = -ENOMEM;

	if (!e) {
		close(cfg->listen_fd);
		if (cfg->bell_fd >= 0)
			close(cfg->bell_fd);
		return -ENOMEM;
	}
	e->listen_fd = cfg->listen_fd;
	e->bell_fd = cfg->bell_fd;
	e->wake_fd = e->epfd = -1;
	pthread_mutex_init(&e->post_lock, NULL);
	e->posted_tail = &e->posted;
	atomic_init(&e->abort_status, -1);
	e->exit_status = -1;
	e->n = n;
	e->self = cfg->det.self;
	e->hooks = *hooks;
	memcpy(e->secret, cfg->secret, FT_SECRET_LEN);
	e->eps = malloc(n * sizeof *e->eps);
	e->send_conn = calloc(n, sizeof *e->send_conn);
	e->probing = calloc(n, sizeof *e->probing);
	e->lost = calloc(n, sizeof *e->lost);
	e->scratch = malloc(FT_FRAME_MAX_ENTRIES * sizeof *e->scratch);
	e->frame = malloc(FT_FRAME_MAX_LEN);
	if (!e->eps || !e->send_conn || !e->probing || !e->lost || !e->scratch || !e->frame)
		goto out_free;
	memcpy(e->eps, cfg->endpoints, n * sizeof *e->eps);
	/* The detector learns the view it starts with without reporting it:
	 * the endpoints of the ranks that joined are taken from it here. */
	for (uint32_t i = 0; i < cfg->det.nknown; i++) {
		const struct ft_entry *k = &cfg->det.known[i];
		if (k->event == FT_EV_JOINED && k->rank < n && e->eps[k->rank].port == 0)
			ft_overlay_join_endpoint(k, &e->eps[k->rank]);
	}
	ops.ctx = e;
	if (ft_det_init(&e->det, &cfg->det, &ops, NULL) != 0)
		goto out_free;
	e->epfd = epoll_create1(EPOLL_CLOEXEC);
	e->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (e->epfd < 0 || e->wake_fd < 0) {
		rc = -errno;
		goto out_free;
	}
	struct epoll_event lev = { .events = EPOLLIN, .data.ptr = &listen_marker };
	struct epoll_event wev = { .events = EPOLLIN, .data.ptr = &wake_marker };
	if (epoll_ctl(e->epfd, EPOLL_CTL_ADD, e->listen_fd, &lev) != 0 ||
	    epoll_ctl(e->epfd, EPOLL_CTL_ADD, e->wake_fd, &wev) != 0) {
		rc = -errno;
		goto out_free;
	}
	struct epoll_event bev = { .events = EPOLLIN, .data.ptr = &bell_marker };
	if (e->bell_fd >= 0 && epoll_ctl(e->epfd, EPOLL_CTL_ADD, e->bell_fd, &bev) != 0) {
		close(e->bell_fd);
		e->bell_fd = -1;
	}
	watch_local_procs(e, cfg->local_procs);
	/* Before the thread starts: its hooks may use the caller's pointer
	 * (to ask for an exit) as soon as the first frame arrives. */
	*out = e;
	rc = -ft_thread_start(&e->thread, engine_main, e);
	if (rc != 0) {
		*out = NULL;
		goto out_free;
	}
	return 0;

out_free:
	engine_free(e);
	return rc;
}

static void wake(struct ft_engine *e, enum request req)
{
	atomic_store_explicit(&e->request, req, memory_order_release);
	poke(e);
}

int ft_engine_finish(struct ft_engine *e, uint64_t timeout_ns, bool (*wait_step)(void *), void *arg)
{
	struct timespec pause = { 0, 1000000 };

	e->leave_by = ft_clock_now() + timeout_ns;
	/* Held until the first wait_step says otherwise. */
	atomic_store_explicit(&e->held, wait_step != NULL, memory_order_release);
	wake(e, REQ_DEPART);
	while (wait_step && !atomic_load_explicit(&e->stopped, memory_order_acquire)) {
		bool hold = wait_step(arg);
		/* Let go: the thread may be waiting for nothing else. */
		if (atomic_exchange_explicit(&e->held, hold, memory_order_acq_rel) && !hold)
			poke(e);
		nanosleep(&pause, NULL);
	}
	pthread_join(e->thread, NULL);
	int rc = e->timed_out ? -ETIMEDOUT : 0;
	engine_free(e);
	return rc;
}

void ft_engine_exit_soon(struct ft_engine *e, int status)
{
	if (e->exit_status < 0)
		e->exit_status = status;
}

void ft_engine_abort(struct ft_engine *e, int status, uint64_t timeout_ns)
{
	uint64_t until = ft_clock_now() + timeout_ns;
	struct timespec pause = { 0, 1000000 };

	atomic_store_explicit(&e->abort_status, status & 0xffff, memory_order_release);
	poke(e);
	while (!atomic_load_explicit(&e->abort_sent, memory_order_acquire) && ft_clock_now() < until)
		nanosleep(&pause, NULL);
	/* A moment for the frames to leave the socket buffers. */
	nanosleep(&pause, NULL);
}

void ft_engine_kill(struct ft_engine *e)
{
	wake(e, REQ_KILL);
	pthread_join(e->thread, NULL);
	engine_free(e);
}

bool ft_engine_everyone_left(struct ft_engine *e)
{
	return atomic_load_explicit(&e->everyone_left, memory_order_acquire);
}

const struct ft_engine_stats *ft_engine_stats(const struct ft_engine *e)
{
	return &e->stats;
}
