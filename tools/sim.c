/* sim: a discrete-event simulator that drives the real failure detector
 * (src/detector.c, one struct ft_detector per simulated rank) to measure
 * two claims of the OCFTL thesis. Broadcast mode (the default): k random
 * ranks fail at once, the live ring successor of each declares it at round
 * 0, and the news floods with each kind of broadcast (chord, BMG,
 * hypercube); it measures the rounds until every live rank knows all k
 * failures, the NOTICE messages sent, those lost to dead ranks, and whether
 * every live rank ends knowing exactly the k failures (the thesis: chord is
 * as fast as the others with about 30% fewer messages). Host-loss mode
 * (--host-loss): every rank of one host dies silently and the live ones
 * find out by heartbeat timeouts; it measures the time until every live
 * rank knows the whole host failed, with shuffled and with unshuffled ring
 * positions (the thesis: shuffled takes about one timeout, unshuffled up to
 * 2(n-1)+1 of them for n ranks per host). Simplifications: in broadcast
 * mode all detectors read one shared ring, the view at the time of the
 * failures (they skip the ranks they know failed but never rebuild it), the
 * failures are declared without a timeout (as if the connections broke),
 * there are no heartbeats, every message takes exactly one round, and the
 * messages of a round are delivered in receiver order; in host-loss mode
 * every message takes 1 ms, none is lost or reordered except those sent to
 * the dead host, the host dies at time 0 with no start-up grace, and each
 * detector runs exactly when it asks to (ft_det_tick) or a message
 * arrives, as in the detector thread (src/engine.c). --skip-known leaves
 * out the deliveries that cannot change what a detector knows or sends
 * (every entry already known): the same table, ten times faster at 1M
 * ranks; only the detectors' duplicate counters differ. Revoke mode
 * (--revoke) floods a revocation over one communicator's members with
 * src/spread.c, one struct ft_spread per member, a random set of members
 * dead and known to all, from a random live revoker, every message
 * taking one round: it prints the rounds until the last live member is
 * told, the messages sent per revoke and per live member, and, for
 * comparison, how many live members the forwarding before it (to index
 * distances 2^k over all members, skipping the dead) never told.
 * Agreement mode (--agree=N) runs one agreement of src/agreement.c, one
 * struct ft_agreements per member of an N-member communicator, each
 * member calling it in round 0 or 1, every message taking one round and
 * delivered in a random order; --kill=K members die at random rounds
 * (half of them among the first 2K, where the coordinators are), each
 * losing a random part of what it sends in its death round (a
 * coordinator half-way through its decision), and each survivor learns
 * of each death one to four rounds later; --jitter=J holds each message
 * up to J rounds more, never past a later one between the same two
 * members (the control plane is TCP). It prints the rounds to the
 * first and last decision and the messages sent by kind, and checks that
 * every survivor decided the same flag (the AND of a set of contributors
 * holding every survivor), rc and failed set (victims only): the exit
 * status is 1 if not. */
#include "ftshim_config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "src/agreement.h"
#include "src/common.h"
#include "src/detector.h"
#include "src/frame.h"
#include "src/hash.h"
#include "src/proc_table.h"
#include "src/ring.h"
#include "src/spread.h"

/* 16M detectors of about 1 KiB each is already more than most machines
 * hold; larger N would only fail later, in malloc. */
#define SIM_MAX_N (1u << 24)
/* Receivers are bucket-sorted by rank >> shift into at most this many
 * buckets: few enough that the scatter stays in cache, enough that one
 * bucket's detectors do too. */
#define SORT_BUCKETS 4096u
#define HOST_LATENCY_NS FT_NSEC_PER_MSEC

static const char *const kind_names[] = {
	[FT_BCAST_CHORD] = "chord",
	[FT_BCAST_BMG] = "bmg",
	[FT_BCAST_HYPERCUBE] = "hypercube",
};

static const char *const msg_names[FT_MSG_TYPE_END] = {
	[FT_MSG_HEARTBEAT] = "HEARTBEAT",
	[FT_MSG_NOTICE] = "NOTICE",
	[FT_MSG_SYNC] = "SYNC",
	[FT_MSG_EXCLUDED] = "EXCLUDED",
	[FT_MSG_PROBE] = "PROBE",
};

/* --- small helpers ------------------------------------------------------ */

static _Noreturn void vdie(int status, const char *fmt, va_list ap)
{
	fputs("sim: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	exit(status);
}

/* A bad command line: one line naming the option and what it accepts. */
static _Noreturn void FT_PRINTF(1, 2) usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdie(2, fmt, ap);
}

static _Noreturn void FT_PRINTF(1, 2) fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdie(1, fmt, ap);
}

/* p with room for need elements of size elem (*cap of them now);
 * doubling keeps the appends of a round amortised O(1). */
static void *reserve(void *p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return p;
	size_t cap2 = *cap ? *cap : 1024;
	while (cap2 < need)
		cap2 *= 2;
	void *q = realloc(p, cap2 * elem);
	if (!q)
		fatal("out of memory (%zu bytes for a queue)", cap2 * elem);
	*cap = cap2;
	return q;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		fatal("out of memory (%zu x %zu bytes)", n, size);
	return p;
}

/* Uniform in [0, bound) from splitmix64, rejecting the biased low end. */
static uint64_t rand_below(uint64_t *state, uint64_t bound)
{
	uint64_t threshold = -bound % bound;
	uint64_t x;

	do
		x = ft_splitmix64_next(state);
	while (x < threshold);
	return x % bound;
}

static double wall_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* What one detector holds on the heap. The ring is not counted when it
 * is shared: the simulator's own memory, once for all. */
static size_t det_heap_bytes(const struct ft_detector *d)
{
	size_t bytes = (size_t)d->known.cap * (sizeof *d->known.ranks + sizeof *d->known.events) +
		       (size_t)d->news_cap * (sizeof *d->news + sizeof *d->fresh) +
		       (ft_ring_max_targets(d->cfg.nprocs) + 1) * sizeof *d->targets;

	if (d->owns_ring)
		bytes += sizeof *d->ring + (size_t)d->cfg.nprocs * (3 * sizeof(uint32_t) + 1);
	return bytes;
}

/* --- broadcast mode: rounds over a shared ring -------------------------- */

/* What every kind of one (N, k) shares, read-only while they run: the
 * ring and the failures, drawn once so that each kind floods the same
 * failures over the same positions. */
struct bworld {
	uint32_t n, k;
	uint64_t seed;
	struct ft_ring ring;  /* shared by every detector */
	uint8_t *failed;      /* failed[rank]: 1 if it failed at time 0 */
	uint32_t *failures;   /* the k failed ranks, in the order drawn */
};

/* A message in flight: its receiver and the list it carries. Every
 * target of one flood gets the same list, stored once. */
struct qmsg {
	uint32_t to;
	uint32_t list; /* index in round_q.slots of the list's header */
};

/* A list is its header followed by its entries, in consecutive slots, so
 * that delivering a message costs one cache miss for the list, not two. */
union qslot {
	struct {
		uint32_t from, count;
		uint16_t type, flags;
	} h;
	struct ft_entry e;
};

_Static_assert(sizeof(union qslot) == sizeof(struct ft_entry),
	       "the entries of a list must be an array of struct ft_entry");

/* The messages sent in one round, to be delivered in the next. */
struct round_q {
	struct qmsg *msgs;
	size_t nmsgs, msgs_cap;
	union qslot *slots;
	size_t nslots, slots_cap;
	size_t last;   /* the header of the list queued last, if nslots */
};

struct bresult {
	enum ft_bcast_kind kind;
	uint32_t rounds;
	uint64_t notices, lost, excluded_lost;
	bool consistent;
	uint64_t delivered;     /* NOTICEs handed to a live detector (or skipped) */
	uint64_t fresh;         /* of those, the ones that taught something */
	uint64_t skipped;       /* of those, the ones --skip-known did not hand over */
	size_t peak_inflight;
	double det_heap_avg;
	size_t det_heap_max;
	double secs;
};

/* One kind's run: the detectors and the queues. Independent of the other
 * kinds, so that they can run in parallel. */
struct bsim {
	const struct bworld *w;
	enum ft_bcast_kind kind;
	bool skip_known;
	uint32_t n;                  /* what dets and nlearned are sized for */
	struct ft_detector *dets;    /* one per rank, indexed by rank */
	uint32_t *nlearned;          /* failures each rank has learned */
	uint64_t learned_total;
	struct round_q q[2];
	struct round_q *cur, *next;  /* delivered this round / sent this round */
	uint32_t *buckets;
	unsigned shift;              /* bucket of rank r: r >> shift */
	uint32_t round, last_round;  /* last_round: when the last failure was learned */
	uint32_t driving;            /* the rank whose detector is running */
	uint64_t sent[FT_MSG_TYPE_END], lost[FT_MSG_TYPE_END];
	uint64_t wrong, excluded;    /* must stay 0: news of a live rank, fail-stop of one */
	struct bresult res;
};

static void bcast_send(void *ctx, uint32_t to, const struct ft_msg *m)
{
	struct bsim *s = ctx;
	struct round_q *q = s->next;

	if (to >= s->n)
		fatal("rank %" PRIu32 " sent to rank %" PRIu32 ", outside the job", m->from, to);
	s->sent[m->type]++;
	if (s->w->failed[to]) {
		s->lost[m->type]++;
		return;
	}
	/* Without ticks nothing but floods can happen: a heartbeat, a SYNC or
	 * an EXCLUDED to a live rank means the model is broken. */
	if (m->type != FT_MSG_NOTICE)
		fatal("rank %" PRIu32 " sent a %s to live rank %" PRIu32 " in broadcast mode",
		      m->from, msg_names[m->type], to);

	/* The entries pointer is only valid during this call: copy the list,
	 * unless it is the one the previous call (the same flood) queued. */
	const union qslot *last = q->nslots ? &q->slots[q->last] : NULL;
	if (!last || last->h.from != m->from || last->h.type != m->type ||
	    last->h.flags != m->list.flags || last->h.count != m->list.count ||
	    memcmp(&last[1].e, m->list.entries, m->list.count * sizeof *m->list.entries) != 0) {
		if (q->nslots + 1 + m->list.count > UINT32_MAX)
			fatal("more than %" PRIu32 " list slots in one round", UINT32_MAX);
		q->slots = reserve(q->slots, &q->slots_cap, q->nslots + 1 + m->list.count,
				   sizeof *q->slots);
		union qslot *h = &q->slots[q->nslots];
		h->h.from = m->from;
		h->h.count = m->list.count;
		h->h.type = (uint16_t)m->type;
		h->h.flags = 0; /* a NOTICE has none */
		memcpy(&h[1].e, m->list.entries, m->list.count * sizeof *m->list.entries);
		q->last = q->nslots;
		q->nslots += 1 + m->list.count;
	}
	q->msgs = reserve(q->msgs, &q->msgs_cap, q->nmsgs + 1, sizeof *q->msgs);
	q->msgs[q->nmsgs].to = to;
	q->msgs[q->nmsgs].list = (uint32_t)q->last;
	q->nmsgs++;
}

static void bcast_learned(void *ctx, const struct ft_entry *e, uint32_t told_by)
{
	struct bsim *s = ctx;

	if (e->event != FT_EV_FAILED || e->rank >= s->n || !s->w->failed[e->rank]) {
		s->wrong++;
		return;
	}
	s->nlearned[s->driving]++;
	s->learned_total++;
	s->last_round = s->round;
}

static void bcast_excluded(void *ctx, uint32_t by, uint32_t how)
{
	struct bsim *s = ctx;

	s->excluded++;
}

/* Deliver in receiver order: the targets of a flood are spread over the
 * whole ring, and visiting 1M detectors at random costs a cache miss or
 * more per message; in order, neighbours share lines and pages. A stable
 * bucket sort on the high bits of the rank is enough for that. It sorts
 * into the buffer of the next round, empty until delivery starts, and
 * hands the unsorted one over to it: two buffers of messages, not three. */
static void sort_by_receiver(struct bsim *s)
{
	struct round_q *q = s->cur, *nq = s->next;
	uint32_t nb = ((s->n - 1) >> s->shift) + 1;

	nq->msgs = reserve(nq->msgs, &nq->msgs_cap, q->nmsgs, sizeof *nq->msgs);
	memset(s->buckets, 0, (nb + 1) * sizeof *s->buckets);
	for (size_t i = 0; i < q->nmsgs; i++)
		s->buckets[(q->msgs[i].to >> s->shift) + 1]++;
	for (uint32_t b = 1; b <= nb; b++)
		s->buckets[b] += s->buckets[b - 1];
	for (size_t i = 0; i < q->nmsgs; i++)
		nq->msgs[s->buckets[q->msgs[i].to >> s->shift]++] = q->msgs[i];

	struct qmsg *t = q->msgs;
	size_t tcap = q->msgs_cap;
	q->msgs = nq->msgs;
	q->msgs_cap = nq->msgs_cap;
	nq->msgs = t;
	nq->msgs_cap = tcap;
}

/* Whether handing m to d could change anything but its counters: it
 * could if the sender is known failed (d answers EXCLUDED) or if one
 * entry is news to d (which includes news of d itself). */
static bool teaches(const struct ft_detector *d, const struct ft_msg *m)
{
	if (d->excluded)
		return false;
	if (ft_det_knows_failed(d, m->from))
		return true;
	for (uint32_t i = 0; i < m->list.count; i++) {
		const struct ft_entry *e = &m->list.entries[i];
		if (e->event == FT_EV_FAILED ? !ft_det_knows_failed(d, e->rank) :
					       !ft_det_knows_departed(d, e->rank))
			return true;
	}
	return false;
}

static void deliver_round(struct bsim *s)
{
	struct round_q *q = s->cur;

	sort_by_receiver(s);
	for (size_t i = 0; i < q->nmsgs; i++) {
		const struct qmsg *qm = &q->msgs[i];
		/* Sorted by receiver, the lists are read in random order: ask
		 * for them a few messages ahead. */
		if (i + 16 < q->nmsgs)
			__builtin_prefetch(&q->slots[q->msgs[i + 16].list]);
		const union qslot *l = &q->slots[qm->list];
		struct ft_msg m = { .type = (enum ft_msg_type)l->h.type, .from = l->h.from };
		struct ft_detector *d = &s->dets[qm->to];

		m.list.flags = l->h.flags;
		m.list.count = l->h.count;
		m.list.entries = &l[1].e;
		s->res.delivered++;
		if (s->skip_known && !teaches(d, &m)) {
			s->res.skipped++;
			continue;
		}
		uint64_t before = s->learned_total;
		s->driving = qm->to;
		ft_det_receive(d, &m, s->round);
		if (s->learned_total != before)
			s->res.fresh++;
	}
}

static void queue_clear(struct round_q *q)
{
	q->nmsgs = q->nslots = q->last = 0;
}

static void queue_free(struct round_q *q)
{
	free(q->msgs);
	free(q->slots);
	memset(q, 0, sizeof *q);
}

static void bworld_init(struct bworld *w, uint32_t n, uint64_t seed)
{
	memset(w, 0, sizeof *w);
	w->n = n;
	w->seed = seed;
	if (ft_ring_init(&w->ring, n, true, seed) != 0)
		fatal("out of memory for a ring of %" PRIu32 " ranks", n);
	w->failed = xcalloc(n, sizeof *w->failed);
}

static void bworld_destroy(struct bworld *w)
{
	ft_ring_destroy(&w->ring);
	free(w->failed);
	free(w->failures);
}

/* k distinct ranks, uniformly (Floyd's sampling: k draws, no O(N) pass). */
static void bworld_choose_failures(struct bworld *w, uint32_t k)
{
	uint64_t state = ft_mix64(w->seed ^ UINT64_C(0x6661696c)); /* "fail" */
	uint32_t i = 0;

	memset(w->failed, 0, w->n * sizeof *w->failed);
	free(w->failures);
	w->failures = xcalloc(k, sizeof *w->failures);
	w->k = k;
	for (uint32_t j = w->n - k; j < w->n; j++) {
		uint32_t t = (uint32_t)rand_below(&state, (uint64_t)j + 1);
		if (w->failed[t])
			t = j;
		w->failed[t] = 1;
		w->failures[i++] = t;
	}
}

/* The live rank that watches failed rank f: the first one after it on
 * the ring. */
static uint32_t live_successor(const struct bworld *w, uint32_t f)
{
	uint32_t r = f;

	do
		r = ft_ring_successor(&w->ring, r);
	while (w->failed[r]);
	return r;
}

static void bsim_init(struct bsim *s, const struct bworld *w, enum ft_bcast_kind kind,
		      bool skip_known)
{
	memset(s, 0, sizeof *s);
	s->w = w;
	s->kind = kind;
	s->skip_known = skip_known;
	s->n = w->n;
	s->dets = xcalloc(s->n, sizeof *s->dets);
	s->nlearned = xcalloc(s->n, sizeof *s->nlearned);
	while (((s->n - 1) >> s->shift) >= SORT_BUCKETS)
		s->shift++;
	s->buckets = xcalloc(((s->n - 1) >> s->shift) + 2, sizeof *s->buckets);
	s->cur = &s->q[0];
	s->next = &s->q[1];
}

static void bsim_destroy(struct bsim *s)
{
	free(s->dets);
	free(s->nlearned);
	free(s->buckets);
	queue_free(&s->q[0]);
	queue_free(&s->q[1]);
}

static void bsim_run(struct bsim *s)
{
	const struct bworld *w = s->w;
	struct ft_det_ops ops = { .ctx = s, .send = bcast_send, .learned = bcast_learned,
				  .excluded = bcast_excluded };
	struct ft_det_config cfg = { .nprocs = s->n, .bcast = s->kind, .shuffle = true,
				     .seed = w->seed };
	struct bresult *res = &s->res;
	double t0 = wall_seconds();

	memset(res, 0, sizeof *res);
	memset(s->sent, 0, sizeof s->sent);
	memset(s->lost, 0, sizeof s->lost);
	memset(s->nlearned, 0, s->n * sizeof *s->nlearned);
	s->learned_total = s->wrong = s->excluded = 0;
	s->round = s->last_round = 0;
	queue_clear(s->cur);
	queue_clear(s->next);
	for (uint32_t r = 0; r < s->n; r++) {
		cfg.self = r;
		if (ft_det_init(&s->dets[r], &cfg, &ops, (struct ft_ring *)&w->ring) != 0)
			fatal("out of memory for detector %" PRIu32, r);
	}

	/* Round 0: each failure's watcher sees it; no ft_det_start, as the
	 * flood needs no heartbeats. */
	for (uint32_t i = 0; i < w->k; i++) {
		uint32_t f = w->failures[i];
		s->driving = live_successor(w, f);
		ft_det_declare(&s->dets[s->driving], f, FT_HOW_CONN_LOST, 0);
	}
	while (s->next->nmsgs) {
		struct round_q *t = s->cur;
		s->cur = s->next;
		s->next = t;
		queue_clear(s->next);
		if (s->cur->nmsgs > res->peak_inflight)
			res->peak_inflight = s->cur->nmsgs;
		s->round++;
		deliver_round(s);
	}

	bool consistent = s->wrong == 0 && s->excluded == 0;
	uint64_t heap_sum = 0, live = 0;
	for (uint32_t r = 0; r < s->n; r++) {
		if (w->failed[r])
			continue;
		if (s->nlearned[r] != w->k || s->dets[r].nfailed != w->k)
			consistent = false;
		size_t h = det_heap_bytes(&s->dets[r]);
		heap_sum += h;
		live++;
		if (h > res->det_heap_max)
			res->det_heap_max = h;
	}
	for (uint32_t r = 0; r < s->n; r++)
		ft_det_destroy(&s->dets[r]);

	res->kind = s->kind;
	res->rounds = s->last_round;
	res->notices = s->sent[FT_MSG_NOTICE];
	res->lost = s->lost[FT_MSG_NOTICE];
	res->excluded_lost = s->lost[FT_MSG_EXCLUDED];
	res->consistent = consistent;
	res->det_heap_avg = live ? (double)heap_sum / (double)live : 0;
	res->secs = wall_seconds() - t0;
}

/* The kinds of one (N, k) share nothing writable (the ring is only read),
 * so up to `jobs` of them run at once, each on its own thread. */
struct bpool {
	struct bsim *sims;
	int nsims;
	atomic_int next;
};

static void *bpool_worker(void *arg)
{
	struct bpool *p = arg;
	int i;

	while ((i = atomic_fetch_add(&p->next, 1)) < p->nsims)
		bsim_run(&p->sims[i]);
	return NULL;
}

static void run_kinds(struct bsim *sims, int nsims, int jobs)
{
	struct bpool p = { .sims = sims, .nsims = nsims };
	pthread_t threads[3];
	int started = 0;

	atomic_init(&p.next, 0);
	if (jobs > nsims)
		jobs = nsims;
	for (int t = 1; t < jobs; t++) {
		if (pthread_create(&threads[started], NULL, bpool_worker, &p) != 0)
			break; /* fewer threads, same results */
		started++;
	}
	bpool_worker(&p);
	for (int t = 0; t < started; t++)
		pthread_join(threads[t], NULL);
}

/* Fewer messages than the other, in percent (positive: fewer). */
static double saving(uint64_t chord, uint64_t other)
{
	return other ? 100.0 * (1.0 - (double)chord / (double)other) : 0.0;
}

/* Chord against the smaller of BMG and hypercube: counting every NOTICE
 * sent, and counting only those received, as the thesis did. */
static void compare_kinds(const struct bresult *res[3], double *sent_pct, double *recv_pct,
			  const char **against)
{
	const struct bresult *c = res[FT_BCAST_CHORD], *b = res[FT_BCAST_BMG],
			     *h = res[FT_BCAST_HYPERCUBE];
	const struct bresult *best = b->notices <= h->notices ? b : h;

	*against = kind_names[best->kind];
	*sent_pct = saving(c->notices, best->notices);
	uint64_t brecv = b->notices - b->lost, hrecv = h->notices - h->lost;
	*recv_pct = saving(c->notices - c->lost, brecv < hrecv ? brecv : hrecv);
}

static void print_row(bool markdown, uint32_t n, uint32_t k, const struct bresult *r)
{
	if (markdown)
		printf("| %" PRIu32 " | %" PRIu32 " | %s | %" PRIu32 " | %" PRIu64 " | %" PRIu64
		       " | %s |\n",
		       n, k, kind_names[r->kind], r->rounds, r->notices, r->lost,
		       r->consistent ? "yes" : "no");
	else
		printf("%8" PRIu32 " %3" PRIu32 " %-9s %6" PRIu32 " %12" PRIu64 " %10" PRIu64
		       " %s\n",
		       n, k, kind_names[r->kind], r->rounds, r->notices, r->lost,
		       r->consistent ? "yes" : "no");
}

static void print_header(bool markdown)
{
	if (markdown)
		printf("| N | k | kind | rounds | notices | lost | consistent |\n"
		       "|---:|---:|---|---:|---:|---:|---|\n");
	else
		printf("%8s %3s %-9s %6s %12s %10s %s\n", "N", "k", "kind", "rounds", "notices",
		       "lost", "consistent");
}

static void print_det_memory(const struct bworld *w, const struct bresult *res, int nres)
{
	double avg = 0;
	size_t max = 0;

	for (int i = 0; i < nres; i++) {
		avg += res[i].det_heap_avg / nres;
		if (res[i].det_heap_max > max)
			max = res[i].det_heap_max;
	}
	printf("per detector (N=%" PRIu32 ", k=%" PRIu32 "): struct %zu B + heap %.0f B average, "
	       "%zu B at most (of which targets scratch %zu B); the shared ring: %zu B once\n",
	       w->n, w->k, sizeof(struct ft_detector), avg, max,
	       (ft_ring_max_targets(w->n) + 1) * sizeof(uint32_t),
	       (size_t)w->n * (3 * sizeof(uint32_t) + 1));
}

static void run_broadcast(uint32_t n, uint32_t k, uint64_t seed, int only_kind, int jobs,
			  bool skip_known)
{
	struct bworld w;
	struct bsim sims[3];
	struct bresult res[3];
	const struct bresult *byk[3];
	int nsims = 0;

	bworld_init(&w, n, seed);
	bworld_choose_failures(&w, k);
	for (int kind = FT_BCAST_CHORD; kind <= FT_BCAST_HYPERCUBE; kind++)
		if (only_kind < 0 || kind == only_kind)
			bsim_init(&sims[nsims++], &w, (enum ft_bcast_kind)kind, skip_known);
	run_kinds(sims, nsims, jobs);

	print_header(false);
	for (int i = 0; i < nsims; i++) {
		res[i] = sims[i].res;
		byk[res[i].kind] = &res[i];
		print_row(false, n, k, &res[i]);
	}
	for (int i = 0; i < nsims; i++) {
		printf("%s: %" PRIu64 " EXCLUDED lost (one per failure, to the failed rank); "
		       "%" PRIu64 " NOTICEs delivered, %" PRIu64 " taught something",
		       kind_names[res[i].kind], res[i].excluded_lost, res[i].delivered,
		       res[i].fresh);
		if (skip_known)
			printf(", %" PRIu64 " skipped", res[i].skipped);
		printf("; at most %zu in flight; %.2f s\n", res[i].peak_inflight, res[i].secs);
	}
	print_det_memory(&w, res, nsims);
	if (nsims == 3) {
		double sent_pct, recv_pct;
		const char *against;
		compare_kinds(byk, &sent_pct, &recv_pct, &against);
		printf("chord vs the smaller of bmg/hypercube (%s): %.1f%% fewer notices sent, "
		       "%.1f%% fewer received\n",
		       against, sent_pct, recv_pct);
	}
	for (int i = 0; i < nsims; i++)
		bsim_destroy(&sims[i]);
	bworld_destroy(&w);
}

/* The README's sweep: every (N, k, kind), then chord's saving per (N, k). */
static void run_broadcast_table(uint64_t seed, int jobs, bool skip_known)
{
	static const uint32_t ns[] = { 16, 1024, 65536, 1048576 };
	static const uint32_t ks[] = { 1, 4, 16 };
	struct bresult res[FT_ARRAY_SIZE(ns)][FT_ARRAY_SIZE(ks)][3];
	bool ran[FT_ARRAY_SIZE(ns)][FT_ARRAY_SIZE(ks)];
	double lo = 1e9, hi = -1e9, sum = 0, blo = 1e9, bhi = -1e9;
	int count = 0;

	memset(ran, 0, sizeof ran);
	print_header(true);
	for (size_t i = 0; i < FT_ARRAY_SIZE(ns); i++) {
		struct bworld w;
		struct bsim sims[3];
		bworld_init(&w, ns[i], seed);
		for (int kind = FT_BCAST_CHORD; kind <= FT_BCAST_HYPERCUBE; kind++)
			bsim_init(&sims[kind], &w, (enum ft_bcast_kind)kind, skip_known);
		for (size_t j = 0; j < FT_ARRAY_SIZE(ks); j++) {
			if (ks[j] >= ns[i])
				continue; /* nobody left alive to learn anything */
			bworld_choose_failures(&w, ks[j]);
			run_kinds(sims, 3, jobs);
			for (int kind = FT_BCAST_CHORD; kind <= FT_BCAST_HYPERCUBE; kind++) {
				res[i][j][kind] = sims[kind].res;
				print_row(true, ns[i], ks[j], &res[i][j][kind]);
				fprintf(stderr, "sim: N=%" PRIu32 " k=%" PRIu32 " %s: %.2f s\n",
					ns[i], ks[j], kind_names[kind], sims[kind].res.secs);
			}
			fflush(stdout);
			ran[i][j] = true;
		}
		if (i + 1 == FT_ARRAY_SIZE(ns)) {
			printf("\n");
			print_det_memory(&w, res[i][FT_ARRAY_SIZE(ks) - 1], 3);
		}
		for (int kind = FT_BCAST_CHORD; kind <= FT_BCAST_HYPERCUBE; kind++)
			bsim_destroy(&sims[kind]);
		bworld_destroy(&w);
	}

	printf("\n| N | k | chord notices | smaller of bmg/hypercube | chord saves (sent) | "
	       "chord saves (received) | chord saves vs bmg | rounds chord/bmg/hypercube |\n"
	       "|---:|---:|---:|---|---:|---:|---:|---|\n");
	for (size_t i = 0; i < FT_ARRAY_SIZE(ns); i++) {
		for (size_t j = 0; j < FT_ARRAY_SIZE(ks); j++) {
			if (!ran[i][j])
				continue;
			const struct bresult *r = res[i][j];
			const struct bresult *byk[3] = { &r[0], &r[1], &r[2] };
			double sent_pct, recv_pct;
			const char *against;
			compare_kinds(byk, &sent_pct, &recv_pct, &against);
			uint64_t best = r[FT_BCAST_BMG].notices <= r[FT_BCAST_HYPERCUBE].notices ?
						r[FT_BCAST_BMG].notices :
						r[FT_BCAST_HYPERCUBE].notices;
			double vs_bmg = saving(r[FT_BCAST_CHORD].notices, r[FT_BCAST_BMG].notices);
			printf("| %" PRIu32 " | %" PRIu32 " | %" PRIu64 " | %s %" PRIu64
			       " | %.1f%% | %.1f%% | %.1f%% | %" PRIu32 "/%" PRIu32 "/%" PRIu32
			       " |\n",
			       ns[i], ks[j], r[FT_BCAST_CHORD].notices, against, best, sent_pct,
			       recv_pct, vs_bmg, r[FT_BCAST_CHORD].rounds, r[FT_BCAST_BMG].rounds,
			       r[FT_BCAST_HYPERCUBE].rounds);
			lo = sent_pct < lo ? sent_pct : lo;
			hi = sent_pct > hi ? sent_pct : hi;
			blo = vs_bmg < blo ? vs_bmg : blo;
			bhi = vs_bmg > bhi ? vs_bmg : bhi;
			sum += sent_pct;
			count++;
		}
	}
	printf("\nchord vs the smaller of bmg/hypercube: %.1f%% to %.1f%% fewer notices "
	       "(mean %.1f%%); vs bmg alone: %.1f%% to %.1f%% fewer\n",
	       lo, hi, count ? sum / count : 0.0, blo, bhi);
}

/* --- host-loss mode: heartbeats in time --------------------------------- */

/* A detector's wake-up, or a message arriving at rank. */
struct hev {
	uint64_t at, seq;  /* seq: FIFO among equal times, so runs repeat */
	uint32_t rank;
	bool tick;
	struct ft_msg m;   /* list entries: a private copy, freed on delivery */
};

struct hsim {
	uint32_t n, hosts, per_host, dead_host;
	uint64_t period_ns, timeout_ns;
	struct ft_detector *dets;
	uint8_t *dead;
	uint32_t *nlearned;     /* dead ranks each rank has learned */
	uint64_t *wake;         /* the tick each rank has in the heap, or UINT64_MAX */
	struct hev *heap;
	size_t nheap, heap_cap;
	uint64_t seq, now;
	uint32_t driving;
	uint32_t ndone;         /* live ranks that know the whole host failed */
	uint64_t first_ns, all_ns;
	uint64_t sent[FT_MSG_TYPE_END], lost[FT_MSG_TYPE_END];
	uint64_t wrong, excluded;
};

struct hresult {
	bool shuffle, reached;
	uint64_t first_ns, all_ns;
	uint64_t sent[FT_MSG_TYPE_END];
	uint64_t wrong, excluded;
};

static bool hev_before(const struct hev *a, const struct hev *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static void heap_push(struct hsim *s, const struct hev *ev)
{
	s->heap = reserve(s->heap, &s->heap_cap, s->nheap + 1, sizeof *s->heap);
	size_t i = s->nheap++;
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!hev_before(ev, &s->heap[parent]))
			break;
		s->heap[i] = s->heap[parent];
		i = parent;
	}
	s->heap[i] = *ev;
}

static struct hev heap_pop(struct hsim *s)
{
	struct hev top = s->heap[0], last = s->heap[--s->nheap];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= s->nheap)
			break;
		if (c + 1 < s->nheap && hev_before(&s->heap[c + 1], &s->heap[c]))
			c++;
		if (!hev_before(&s->heap[c], &last))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->nheap)
		s->heap[i] = last;
	return top;
}

/* A queued list's private copy of its entries; none for other types. */
static void hev_free(struct hev *ev)
{
	if (!ev->tick && (ev->m.type == FT_MSG_NOTICE || ev->m.type == FT_MSG_SYNC))
		free((void *)ev->m.list.entries);
}

static void host_send(void *ctx, uint32_t to, const struct ft_msg *m)
{
	struct hsim *s = ctx;
	struct hev ev = { .at = s->now + HOST_LATENCY_NS, .seq = s->seq++, .rank = to, .m = *m };

	if (to >= s->n)
		fatal("rank %" PRIu32 " sent to rank %" PRIu32 ", outside the job", m->from, to);
	s->sent[m->type]++;
	if (s->dead[to]) {
		s->lost[m->type]++;
		return;
	}
	if (m->type == FT_MSG_NOTICE || m->type == FT_MSG_SYNC) {
		struct ft_entry *copy = xcalloc(m->list.count, sizeof *copy);
		memcpy(copy, m->list.entries, m->list.count * sizeof *copy);
		ev.m.list.entries = copy;
	}
	heap_push(s, &ev);
}

static void host_learned(void *ctx, const struct ft_entry *e, uint32_t told_by)
{
	struct hsim *s = ctx;

	if (e->event != FT_EV_FAILED || e->rank >= s->n || !s->dead[e->rank]) {
		s->wrong++;
		return;
	}
	if (s->first_ns == UINT64_MAX)
		s->first_ns = s->now;
	if (++s->nlearned[s->driving] == s->per_host && ++s->ndone == s->n - s->per_host)
		s->all_ns = s->now;
}

static void host_excluded(void *ctx, uint32_t by, uint32_t how)
{
	struct hsim *s = ctx;

	s->excluded++;
}

/* After a detector ran, it may want to run at another time: keep exactly
 * one tick per rank in the heap (stale ones are skipped when popped). */
static void reschedule(struct hsim *s, uint32_t r)
{
	uint64_t next = ft_det_tick(&s->dets[r], s->now);

	if (next == s->wake[r])
		return;
	s->wake[r] = next;
	if (next != UINT64_MAX) {
		struct hev ev = { .at = next, .seq = s->seq++, .rank = r, .tick = true };
		heap_push(s, &ev);
	}
}

static void host_run(uint32_t n, uint32_t hosts, uint64_t period_ns, uint64_t timeout_ns,
		     uint64_t seed, bool shuffle, struct hresult *res)
{
	struct ft_det_ops ops;
	struct ft_det_config cfg = { .nprocs = n, .period_ns = period_ns, .timeout_ns = timeout_ns,
				     .grace_ns = 0, .bcast = FT_BCAST_CHORD, .shuffle = shuffle,
				     .seed = seed, .quorum = true };
	struct hsim s;
	uint64_t state = ft_mix64(seed ^ UINT64_C(0x686f7374)); /* "host" */

	memset(&s, 0, sizeof s);
	s.n = n;
	s.hosts = hosts;
	s.per_host = n / hosts;
	s.dead_host = (uint32_t)rand_below(&state, hosts);
	s.period_ns = period_ns;
	s.timeout_ns = timeout_ns;
	s.dets = xcalloc(n, sizeof *s.dets);
	s.dead = xcalloc(n, sizeof *s.dead);
	s.nlearned = xcalloc(n, sizeof *s.nlearned);
	s.wake = xcalloc(n, sizeof *s.wake);
	s.first_ns = s.all_ns = UINT64_MAX;
	ops = (struct ft_det_ops){ .ctx = &s, .send = host_send, .learned = host_learned,
				   .excluded = host_excluded };

	/* Each detector builds its own ring (N is small here), so each takes
	 * the failed ranks out of it as in a real job. */
	for (uint32_t r = 0; r < n; r++) {
		cfg.self = r;
		if (ft_det_init(&s.dets[r], &cfg, &ops, NULL) != 0)
			fatal("out of memory for detector %" PRIu32, r);
	}
	/* Ranks are placed in blocks, so the host takes consecutive ranks. */
	for (uint32_t r = s.dead_host * s.per_host; r < (s.dead_host + 1) * s.per_host; r++)
		s.dead[r] = 1;
	for (uint32_t r = 0; r < n; r++) {
		s.driving = r;
		ft_det_start(&s.dets[r], 0);
		s.wake[r] = UINT64_MAX;
		if (!s.dead[r])
			reschedule(&s, r);
	}

	/* Unshuffled, the host's ranks are found one timeout after another;
	 * give that twice over before calling it a failure to converge. */
	uint64_t limit = (2 * (uint64_t)s.per_host + 4) * (timeout_ns + period_ns);
	while (s.nheap && s.all_ns == UINT64_MAX) {
		struct hev ev = heap_pop(&s);
		if (ev.at > limit) {
			hev_free(&ev);
			break;
		}
		s.now = ev.at;
		s.driving = ev.rank;
		if (ev.tick) {
			if (ev.at != s.wake[ev.rank])
				continue; /* superseded by a later reschedule */
			s.wake[ev.rank] = UINT64_MAX;
		} else {
			ft_det_receive(&s.dets[ev.rank], &ev.m, s.now);
			hev_free(&ev);
		}
		/* As the detector thread does after every wake-up. */
		reschedule(&s, ev.rank);
	}
	while (s.nheap) {
		struct hev ev = heap_pop(&s);
		hev_free(&ev);
	}

	res->shuffle = shuffle;
	res->reached = s.all_ns != UINT64_MAX;
	res->first_ns = s.first_ns;
	res->all_ns = s.all_ns;
	memcpy(res->sent, s.sent, sizeof res->sent);
	res->wrong = s.wrong;
	res->excluded = s.excluded;
	for (uint32_t r = 0; r < n; r++)
		ft_det_destroy(&s.dets[r]);
	free(s.dets);
	free(s.dead);
	free(s.nlearned);
	free(s.wake);
	free(s.heap);
}

/* Several seeds of one configuration: each seed draws another host and,
 * shuffled, another ring, so the worst seed shows how often the host's
 * ranks end up watching each other (the thesis's equation 4.1). */
struct hsummary {
	uint32_t n, hosts, samples, reached;
	bool shuffle;
	uint64_t first_min, all_sum, all_max;
	uint64_t notices, syncs, wrong;
};

static void print_host_header(bool markdown)
{
	if (markdown)
		printf("| N | hosts | ranks/host | ring | seeds | first (ms) | all (ms) | "
		       "all / timeout | worst / timeout | n | thesis 2(n-1)+1 | notices | syncs | "
		       "wrong |\n"
		       "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	else
		printf("%6s %5s %10s %-10s %5s %9s %9s %6s %6s %4s %6s %9s %6s %5s\n", "N", "hosts",
		       "ranks/host", "ring", "seeds", "first ms", "all ms", "all/T", "worst", "n",
		       "thesis", "notices", "syncs", "wrong");
}

/* Means over the seeds, except first (the earliest) and worst. */
static void print_host_row(bool markdown, uint64_t timeout_ns, const struct hsummary *h)
{
	uint32_t per = h->n / h->hosts;
	double t = (double)timeout_ns, samples = h->samples;
	char first[32] = "-", all[32] = "not reached", ratio[32] = "-", worst[32] = "-";

	if (h->first_min != UINT64_MAX)
		snprintf(first, sizeof first, "%.1f", (double)h->first_min / 1e6);
	if (h->reached == h->samples) {
		snprintf(all, sizeof all, "%.1f", (double)h->all_sum / samples / 1e6);
		snprintf(ratio, sizeof ratio, "%.2f", (double)h->all_sum / samples / t);
		snprintf(worst, sizeof worst, "%.2f", (double)h->all_max / t);
	}
	const char *ring = h->shuffle ? "shuffled" : "unshuffled";
	double notices = (double)h->notices / samples, syncs = (double)h->syncs / samples;
	if (markdown)
		printf("| %" PRIu32 " | %" PRIu32 " | %" PRIu32 " | %s | %" PRIu32
		       " | %s | %s | %s | %s | %" PRIu32 " | %" PRIu32 " | %.0f | %.1f | %" PRIu64
		       " |\n",
		       h->n, h->hosts, per, ring, h->samples, first, all, ratio, worst, per,
		       2 * (per - 1) + 1, notices, syncs, h->wrong);
	else
		printf("%6" PRIu32 " %5" PRIu32 " %10" PRIu32 " %-10s %5" PRIu32
		       " %9s %9s %6s %6s %4" PRIu32 " %6" PRIu32 " %9.0f %6.1f %5" PRIu64 "\n",
		       h->n, h->hosts, per, ring, h->samples, first, all, ratio, worst, per,
		       2 * (per - 1) + 1, notices, syncs, h->wrong);
}

static void run_host_loss(bool table, uint32_t n, uint32_t hosts, uint64_t period_ns,
			  uint64_t timeout_ns, uint64_t seed, uint32_t samples)
{
	/* The thesis ran 20 hosts (24 ranks each); vary the ranks per host. */
	static const uint32_t per_host[] = { 1, 2, 4, 8, 16, 24, 32, 64 };
	size_t runs = table ? FT_ARRAY_SIZE(per_host) : 1;

	print_host_header(table);
	for (size_t i = 0; i < runs; i++) {
		uint32_t nn = table ? 20 * per_host[i] : n;
		uint32_t hh = table ? 20 : hosts;
		for (int shuffle = 1; shuffle >= 0; shuffle--) {
			struct hsummary h = { .n = nn, .hosts = hh, .samples = samples,
					      .shuffle = shuffle, .first_min = UINT64_MAX };
			double t0 = wall_seconds();
			for (uint32_t j = 0; j < samples; j++) {
				struct hresult r;
				host_run(nn, hh, period_ns, timeout_ns, seed + j, shuffle, &r);
				if (r.first_ns < h.first_min)
					h.first_min = r.first_ns;
				if (r.reached) {
					h.reached++;
					h.all_sum += r.all_ns;
					if (r.all_ns > h.all_max)
						h.all_max = r.all_ns;
				}
				h.notices += r.sent[FT_MSG_NOTICE];
				h.syncs += r.sent[FT_MSG_SYNC];
				h.wrong += r.wrong + r.excluded;
			}
			print_host_row(table, timeout_ns, &h);
			fflush(stdout);
			if (table)
				fprintf(stderr, "sim: host loss N=%" PRIu32 " %s: %.2f s\n", nn,
					shuffle ? "shuffled" : "unshuffled", wall_seconds() - t0);
		}
	}
	printf("%speriod %.0f ms, timeout %.0f ms, latency 1 ms, grace 0, seeds %" PRIu64
	       "..%" PRIu64 "; all: mean time until every live rank knows the whole host "
	       "failed; all/T, worst: mean and worst in timeouts; n: ftshim's unshuffled "
	       "bound in timeouts; thesis: OCFTL's; wrong: live ranks declared failed\n",
	       table ? "\n" : "", (double)period_ns / 1e6, (double)timeout_ns / 1e6, seed,
	       seed + samples - 1);
}

/* --- revoke mode ------------------------------------------------------ */

struct revoke_result {
	uint32_t rounds;    /* until the last live member was told */
	uint64_t messages;  /* sent in all */
	uint32_t untold;    /* live members never told */
};

/* One revocation from revoker over n members, dead[i] known to all. */
static struct revoke_result revoke_flood(uint32_t n, const bool *dead, uint32_t revoker,
					 enum ft_bcast_kind kind)
{
	struct ft_spread *s = xcalloc(n, sizeof *s);
	bool *told = xcalloc(n, sizeof *told);
	uint32_t *now = xcalloc(n, sizeof *now), *next = xcalloc(n, sizeof *next);
	uint32_t out[64], nnow = 1, round = 0;
	struct revoke_result r = { 0, 0, 0 };

	now[0] = revoker;
	told[revoker] = true;
	while (nnow > 0) {
		uint32_t nnext = 0;
		/* The members told last round send; what they send arrives next. */
		for (uint32_t k = 0; k < nnow; k++) {
			uint32_t p = now[k];
			if (ft_spread_init(&s[p], n, p, kind) != 0)
				fatal("out of memory");
			for (uint32_t q = 0; q < n; q++)
				if (dead[q])
					ft_spread_failed(&s[p], q);
			uint32_t m = ft_spread_due(&s[p], out, 64);
			ft_spread_destroy(&s[p]);
			r.messages += m;
			for (uint32_t i = 0; i < m; i++)
				if (!dead[out[i]] && !told[out[i]]) {
					told[out[i]] = true;
					next[nnext++] = out[i];
				}
		}
		if (nnext)
			r.rounds = ++round;
		uint32_t *t = now;
		now = next;
		next = t;
		nnow = nnext;
	}
	for (uint32_t q = 0; q < n; q++)
		r.untold += !dead[q] && !told[q];
	free(s);
	free(told);
	free(now);
	free(next);
	return r;
}

/* The forwarding before src/spread.c: index distances 2^k over all the
 * members, dead ones skipped without anyone taking their place. Returns
 * how many live members it never told. */
static uint32_t revoke_old_untold(uint32_t n, const bool *dead, uint32_t revoker)
{
	bool *told = xcalloc(n, sizeof *told);
	uint32_t *queue = xcalloc(n, sizeof *queue), head = 0, tail = 0, untold = 0;

	told[revoker] = true;
	queue[tail++] = revoker;
	while (head < tail) {
		uint32_t p = queue[head++];
		for (uint64_t step = 1; step < n; step <<= 1) {
			uint32_t q = (uint32_t)((p + step) % n);
			if (!dead[q] && !told[q]) {
				told[q] = true;
				queue[tail++] = q;
			}
		}
	}
	for (uint32_t q = 0; q < n; q++)
		untold += !dead[q] && !told[q];
	free(told);
	free(queue);
	return untold;
}

static void run_revoke_table(uint64_t seed, uint32_t samples)
{
	static const uint32_t sizes[] = { 8, 64, 1024, 4096 };
	static const uint32_t dead_eighths[] = { 0, 1, 4 };
	uint64_t state = seed;

	printf("| N | dead | kind | rounds (max) | ceil(log2 live) | messages per revoke (mean) | "
	       "per live member | live never told | before: live never told |\n"
	       "|---:|---:|---|---:|---:|---:|---:|---:|---:|\n");
	for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
		uint32_t n = sizes[si];
		bool *dead = xcalloc(n, sizeof *dead);
		for (size_t di = 0; di < sizeof dead_eighths / sizeof dead_eighths[0]; di++) {
			uint32_t ndead = n * dead_eighths[di] / 8, live = n - ndead;
			uint32_t log2live = 0;
			while ((UINT64_C(1) << log2live) < live)
				log2live++;
			for (int kind = FT_BCAST_CHORD; kind <= FT_BCAST_HYPERCUBE; kind++) {
				uint32_t rounds = 0, untold = 0, old_untold = 0;
				uint64_t messages = 0;
				for (uint32_t t = 0; t < samples; t++) {
					memset(dead, 0, n * sizeof *dead);
					for (uint32_t d = 0; d < ndead;) {
						uint32_t q = (uint32_t)rand_below(&state, n);
						d += !dead[q];
						dead[q] = true;
					}
					uint32_t revoker;
					do
						revoker = (uint32_t)rand_below(&state, n);
					while (dead[revoker]);
					struct revoke_result r = revoke_flood(n, dead, revoker, (enum ft_bcast_kind)kind);
					rounds = r.rounds > rounds ? r.rounds : rounds;
					messages += r.messages;
					untold += r.untold;
					old_untold += revoke_old_untold(n, dead, revoker);
				}
				double mean = (double)messages / samples;
				printf("| %" PRIu32 " | %" PRIu32 " | %s | %" PRIu32 " | %" PRIu32 " | %.0f | %.2f | %" PRIu32
				       " | %" PRIu32 " |\n",
				       n, ndead, kind_names[kind], rounds, log2live, mean, mean / live, untold,
				       old_untold);
			}
		}
		free(dead);
	}
	printf("\nseed %" PRIu64 ", %" PRIu32 " samples per row (a random dead set of that size, known "
	       "to all, and a random live revoker); never-told counts are summed over the samples\n",
	       seed, samples);
}

/* --- agreement mode ------------------------------------------------------ */

/* A round is this long for ft_agree_take's re-check. */
#define AGREE_ROUND_NS (10 * FT_NSEC_PER_MSEC)
/* Deaths fall in the first rounds, while the agreement runs; each
 * survivor learns of one within this many rounds after it. */
#define AGREE_DEATH_ROUNDS 3
#define AGREE_LEARN_ROUNDS 4
#define AGREE_MAX_ROUNDS 100000

struct asim;

struct amember {
	struct asim *s;
	uint32_t rank;             /* also its index: the communicator is the world */
	uint32_t start_round;      /* when it calls the agreement */
	uint32_t value;            /* its flag */
	struct ft_agreements t;
	struct ft_agreement *a;    /* once started */
	uint32_t *known;           /* the victims it knows failed */
	uint32_t nknown;
	bool decided;
	uint32_t decided_value;
	int decided_rc;
	uint8_t *decided_failed;   /* bytes(n) */
	uint64_t keep;             /* in its death round: a send goes out if a draw
				      below 2^32 is under keep; otherwise 2^32 */
};

struct amsg {
	uint32_t to;
	struct ft_msg m;
	uint8_t *data;
	uint32_t due;              /* the round it arrives in (--jitter) */
};

struct asim {
	uint32_t n, k;
	int32_t *world;            /* identity: member i is world rank i */
	struct amember *m;
	bool *dead;
	uint32_t *victims;         /* k of them */
	uint32_t *dies_at;         /* per victim */
	uint32_t *learns_at;       /* [victim * n + member] */
	struct amsg *q, *next;     /* this round's deliveries, the next round's */
	size_t nq, nnext, qcap, nextcap;
	/* --jitter: messages held beyond the next round, and the round the
	 * last message of each pair (from * n + to) arrives in, so that no
	 * message overtakes an earlier one between the same two members (the
	 * control plane is TCP). */
	uint32_t jitter, round;
	struct amsg *later;
	size_t nlater, latercap;
	uint32_t *pair_due;
	uint64_t sent[FT_AGREE_ASK + 1], lost;
	uint64_t rand;             /* the state for losses and delivery order */
};

static bool agree_view(void *ctx, uint64_t id, struct ft_agree_view *v)
{
	struct amember *p = ctx;

	(void)id;
	v->n = p->s->n;
	v->self = p->rank;
	v->members = p->s->world;
	return true;
}

static bool agree_failed(void *ctx, uint32_t rank)
{
	const struct amember *p = ctx;

	for (uint32_t i = 0; i < p->nknown; i++)
		if (p->known[i] == rank)
			return true;
	return false;
}

static void agree_send(void *ctx, uint32_t to, const struct ft_msg *m)
{
	struct amember *p = ctx;
	struct asim *s = p->s;

	if (s->dead[p->rank] || rand_below(&s->rand, UINT64_C(1) << 32) >= p->keep)
		return; /* lost with its sender */
	uint32_t due = s->round + 1;
	if (s->jitter) {
		uint32_t *last = &s->pair_due[(size_t)p->rank * s->n + to];
		due += (uint32_t)rand_below(&s->rand, s->jitter + 1);
		if (due < *last)
			due = *last;
		*last = due;
	}
	struct amsg *x;
	if (due == s->round + 1) {
		s->next = reserve(s->next, &s->nextcap, s->nnext + 1, sizeof *s->next);
		x = &s->next[s->nnext++];
	} else {
		s->later = reserve(s->later, &s->latercap, s->nlater + 1, sizeof *s->later);
		x = &s->later[s->nlater++];
	}
	x->due = due;
	x->to = to;
	x->m = *m;
	x->m.from = p->rank;
	x->data = malloc(m->app.len + 1);
	if (!x->data)
		fatal("out of memory (a message of %u bytes)", m->app.len);
	if (m->app.len)
		memcpy(x->data, m->app.data, m->app.len);
	x->m.app.data = x->data;
	s->sent[m->app.kind <= FT_AGREE_ASK ? m->app.kind : 0]++;
}

/* Every live member that called the agreement looks for its decision,
 * as its caller does. Returns how many found it this round. */
static uint32_t agree_take_all(struct asim *s, uint32_t round)
{
	uint32_t found = 0;

	for (uint32_t i = 0; i < s->n; i++) {
		struct amember *p = &s->m[i];
		if (s->dead[i] || !p->a || p->decided)
			continue;
		p->decided = ft_agree_take(&p->t, p->a, (uint64_t)round * AGREE_ROUND_NS, &p->decided_value,
					   &p->decided_rc, p->decided_failed);
		found += p->decided;
	}
	return found;
}

/* Every survivor decided the same; the flag is the AND of a set of
 * contributors that holds every survivor; the failed set holds only
 * victims. Returns the number of survivors, or 0 after printing why not. */
static uint32_t agree_check(const struct asim *s)
{
	const struct amember *first = NULL;
	uint32_t all = UINT32_MAX, survivors_and = UINT32_MAX, survivors = 0;
	size_t b = ft_agree_bytes(s->n);

	for (uint32_t i = 0; i < s->n; i++) {
		const struct amember *p = &s->m[i];
		all &= p->value;
		if (s->dead[i])
			continue;
		survivors++;
		survivors_and &= p->value;
		if (!p->decided) {
			printf("member %" PRIu32 " never decided\n", i);
			return 0;
		}
		if (!first) {
			first = p;
		} else if (p->decided_value != first->decided_value || p->decided_rc != first->decided_rc ||
			   memcmp(p->decided_failed, first->decided_failed, b) != 0) {
			printf("members %" PRIu32 " and %" PRIu32 " decided differently\n", first->rank, i);
			return 0;
		}
	}
	if (!first)
		return 0;
	uint32_t v = first->decided_value;
	if ((v & all) != all || (v & ~survivors_and) != 0) {
		printf("flag 0x%08" PRIx32 " is not the AND of a set holding every survivor\n", v);
		return 0;
	}
	for (uint32_t i = 0; i < s->n; i++)
		if (ft_agree_bit(first->decided_failed, i) && !s->dead[i]) {
			printf("member %" PRIu32 " decided failed, but it lives\n", i);
			return 0;
		}
	return survivors;
}

/* One agreement among n members, k of them killed at random rounds
 * (half of them among the first 2k members, where the coordinators are),
 * each losing a random part of what it sends in its death round (each
 * victim its own share). Returns the exit status. */
static int run_agree(uint32_t n, uint32_t k, uint32_t jitter, uint64_t seed)
{
	static const struct ft_agree_ops ops = {
		.view = agree_view,
		.failed = agree_failed,
		.send = agree_send,
	};
	struct asim s = { .n = n, .k = k, .jitter = jitter, .rand = ft_mix64(seed) };
	uint64_t state = seed;
	size_t b = ft_agree_bytes(n);

	s.world = xcalloc(n, sizeof *s.world);
	s.m = xcalloc(n, sizeof *s.m);
	s.dead = xcalloc(n, sizeof *s.dead);
	s.victims = xcalloc(k, sizeof *s.victims);
	s.dies_at = xcalloc(k, sizeof *s.dies_at);
	s.learns_at = xcalloc((size_t)k * n, sizeof *s.learns_at);
	if (jitter)
		s.pair_due = xcalloc((size_t)n * n, sizeof *s.pair_due);
	bool *victim = xcalloc(n, sizeof *victim);
	for (uint32_t i = 0; i < n; i++) {
		struct amember *p = &s.m[i];
		struct ft_agree_ops o = ops;
		s.world[i] = (int32_t)i;
		p->s = &s;
		p->rank = i;
		p->start_round = (uint32_t)rand_below(&state, 2);
		p->value = UINT32_MAX;
		p->known = xcalloc(k, sizeof *p->known);
		p->decided_failed = xcalloc(b, 1);
		p->keep = UINT64_C(1) << 32;
		o.ctx = p;
		ft_agree_init(&p->t, &o, 1);
	}
	for (uint32_t j = 0; j < 8; j++)
		s.m[rand_below(&state, n)].value &= ~(UINT32_C(1) << rand_below(&state, 32));
	uint32_t low = 2 * k < n ? 2 * k : n;
	for (uint32_t j = 0; j < k; j++) {
		uint32_t v;
		do
			v = (uint32_t)(j % 2 ? rand_below(&state, n) : rand_below(&state, low));
		while (victim[v]);
		victim[v] = true;
		s.victims[j] = v;
		s.dies_at[j] = (uint32_t)rand_below(&state, AGREE_DEATH_ROUNDS);
		for (uint32_t i = 0; i < n; i++)
			s.learns_at[(size_t)j * n + i] =
				s.dies_at[j] + 1 + (uint32_t)rand_below(&state, AGREE_LEARN_ROUNDS);
	}
	uint32_t coordinators = 0;
	for (uint32_t i = 0; i < n && victim[i]; i++)
		coordinators++;

	uint32_t round, first_decision = UINT32_MAX, last_decision = 0;
	for (round = 0; round < AGREE_MAX_ROUNDS; round++) {
		/* What was sent last round arrives in this one, in any order;
		 * what is sent in this one, in the next (or later: --jitter). */
		struct amsg *sent = s.next;
		size_t nsent = s.nnext, sentcap = s.nextcap;
		s.round = round;
		s.next = s.q;
		s.nextcap = s.qcap;
		s.nnext = 0;
		s.q = sent;
		s.qcap = sentcap;
		for (size_t x = 0; x < s.nlater;) {
			if (s.later[x].due != round) {
				x++;
				continue;
			}
			s.q = reserve(s.q, &s.qcap, nsent + 1, sizeof *s.q);
			s.q[nsent++] = s.later[x];
			s.later[x] = s.later[--s.nlater];
		}
		for (size_t x = nsent; x > 1; x--) {
			size_t y = (size_t)rand_below(&s.rand, x);
			struct amsg tmp = s.q[x - 1];
			s.q[x - 1] = s.q[y];
			s.q[y] = tmp;
		}
		for (uint32_t j = 0; j < k; j++)
			if (s.dies_at[j] == round)
				s.m[s.victims[j]].keep = rand_below(&state, UINT64_C(1) << 32);
		for (uint32_t i = 0; i < n; i++) {
			struct amember *p = &s.m[i];
			if (p->start_round != round || s.dead[i])
				continue;
			p->a = ft_agree_start(&p->t, 1, 0, p->value, NULL, NULL, (uint64_t)round * AGREE_ROUND_NS);
			if (!p->a)
				fatal("out of memory (an agreement of %" PRIu32 " members)", n);
		}
		for (uint32_t j = 0; j < k; j++)
			for (uint32_t i = 0; i < n; i++) {
				struct amember *p = &s.m[i];
				if (s.learns_at[(size_t)j * n + i] != round || s.dead[i])
					continue;
				p->known[p->nknown++] = s.victims[j];
				ft_agree_failure(&p->t);
			}
		for (size_t x = 0; x < nsent; x++) {
			if (s.dead[s.q[x].to])
				s.lost++;
			else
				ft_agree_receive(&s.m[s.q[x].to].t, &s.q[x].m);
			free(s.q[x].data);
		}
		if (agree_take_all(&s, round)) {
			if (first_decision == UINT32_MAX)
				first_decision = round;
			last_decision = round;
		}
		for (uint32_t j = 0; j < k; j++)
			if (s.dies_at[j] == round)
				s.dead[s.victims[j]] = true;
		/* Done when nothing is in flight and no death, learning or
		 * start is still to come. */
		if (s.nnext == 0 && s.nlater == 0 && round > AGREE_DEATH_ROUNDS + AGREE_LEARN_ROUNDS)
			break;
	}

	uint32_t survivors = agree_check(&s);
	uint64_t total = s.sent[FT_AGREE_CONTRIB] + s.sent[FT_AGREE_DECIDE] + s.sent[FT_AGREE_ASK];
	printf("agreement of %" PRIu32 " members, %" PRIu32 " killed (%" PRIu32
	       " coordinators in a row among them), seed %" PRIu64 "\n",
	       n, k, coordinators, seed);
	if (first_decision == UINT32_MAX)
		printf("no decision in %" PRIu32 " rounds\n", round);
	else
		printf("rounds: first decision %" PRIu32 ", last %" PRIu32 "\n", first_decision, last_decision);
	printf("messages: %" PRIu64 " (CONTRIB %" PRIu64 ", DECIDE %" PRIu64 ", ASK %" PRIu64
	       "), %.2f per member, %" PRIu64 " lost to dead members\n",
	       total, s.sent[FT_AGREE_CONTRIB], s.sent[FT_AGREE_DECIDE], s.sent[FT_AGREE_ASK],
	       (double)total / n, s.lost);
	if (survivors) {
		const struct amember *p = NULL;
		uint32_t nfailed = 0;
		for (uint32_t i = 0; i < n && !p; i++)
			if (!s.dead[i])
				p = &s.m[i];
		for (uint32_t i = 0; i < n; i++)
			nfailed += ft_agree_bit(p->decided_failed, i);
		printf("all %" PRIu32 " survivors decided the same: flag 0x%08" PRIx32 ", %" PRIu32
		       " failed, %s\n",
		       survivors, p->decided_value, nfailed,
		       p->decided_rc ? "not all acknowledged" : "all acknowledged");
	}
	for (uint32_t i = 0; i < n; i++) {
		ft_agree_destroy(&s.m[i].t);
		free(s.m[i].known);
		free(s.m[i].decided_failed);
	}
	for (size_t x = 0; x < s.nnext; x++)
		free(s.next[x].data);
	free(s.q);
	free(s.next);
	free(s.later);
	free(s.pair_due);
	free(s.world);
	free(s.m);
	free(s.dead);
	free(s.victims);
	free(s.dies_at);
	free(s.learns_at);
	free(victim);
	return survivors ? 0 : 1;
}

/* --- command line ------------------------------------------------------- */

static uint64_t parse_uint(const char *what, const char *s, uint64_t min, uint64_t max,
			   const char *accepted)
{
	char *end;

	errno = 0;
	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		usage_error("%s: expected %s, got '%s'", what, accepted, s ? s : "");
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		usage_error("%s: expected %s, got '%s'", what, accepted, s);
	return v;
}

static void usage(void)
{
	printf("usage: sim [--seed=S] [--kind=chord|bmg|hypercube|all] [--jobs=J] [--skip-known] "
	       "[N [K]]\n"
	       "       sim --table [--seed=S] [--jobs=J] [--skip-known]\n"
	       "       sim --host-loss [--hosts=H] [--samples=S] [--period=MS] [--timeout=MS] "
	       "[--seed=S] [N]\n"
	       "       sim --host-loss --table [--samples=S] [--period=MS] [--timeout=MS] "
	       "[--seed=S]\n"
	       "       sim --revoke [--samples=S] [--seed=S]\n"
	       "       sim --agree=N [--kill=K] [--jitter=J] [--seed=S]\n"
	       "Broadcast mode (default N=1024, K=4): K random ranks fail, each kind floods\n"
	       "the news; prints rounds, NOTICEs sent and lost, and consistency.\n"
	       "--table: the sweep N in {16, 1024, 65536, 1048576} x K in {1, 4, 16}, Markdown.\n"
	       "--jobs: kinds simulated at once, one thread each (default 1).\n"
	       "--skip-known: do not hand a detector a NOTICE it knows all of (same table).\n"
	       "--host-loss (default N=480, H=20, period 100, timeout 1000): one host of N/H\n"
	       "ranks dies; prints the time until all live ranks know, shuffled and not,\n"
	       "over S seeds (default 1, 10 with --table).\n"
	       "--revoke: a revocation flooded over N members in {8, 64, 1024, 4096} with\n"
	       "none, 1/8 or 1/2 of them dead; rounds, messages, members never told, now\n"
	       "and with the forwarding before (S samples a row, default 20).\n"
	       "--agree: one agreement among N members (at most 32768), K of them (default\n"
	       "0, at most 1024) killed at random rounds; rounds, messages, and whether every\n"
	       "survivor decided the same (exit status 1 if not).\n");
}

/* The run's cost since t0 (wall clock seconds), after a blank line if
 * spaced. CPU time too: on a shared machine the wall time says little. */
static void print_resources(bool spaced, double t0)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	printf("%swall time %.2f s, CPU time %.2f s, peak memory %.1f MiB (ru_maxrss)\n",
	       spaced ? "\n" : "", wall_seconds() - t0, cpu, (double)ru.ru_maxrss / 1024.0);
}

/* --name=value or --name value. */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
	size_t len = strlen(name);
	const char *a = argv[*i];

	if (strncmp(a, name, len) != 0)
		return NULL;
	if (a[len] == '=')
		return a + len + 1;
	if (a[len] != '\0')
		return NULL;
	if (*i + 1 >= argc)
		usage_error("%s: needs a value", name);
	return argv[++*i];
}

int main(int argc, char **argv)
{
	bool table = false, host_loss = false, revoke = false;
	uint64_t seed = 1, period_ms = 100, timeout_ms = 1000;
	const char *hosts_arg = NULL, *kind_arg = NULL;
	const char *pos[2] = { NULL, NULL };
	int npos = 0, only_kind = -1;
	bool period_set = false, timeout_set = false, skip_known = false;
	const char *jobs_arg = NULL, *samples_arg = NULL, *agree_arg = NULL, *kill_arg = NULL;
	const char *jitter_arg = NULL;
	int jobs = 1;
	double t0 = wall_seconds();

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage();
			return 0;
		} else if (strcmp(a, "--table") == 0) {
			table = true;
		} else if (strcmp(a, "--host-loss") == 0) {
			host_loss = true;
		} else if (strcmp(a, "--revoke") == 0) {
			revoke = true;
		} else if (strcmp(a, "--skip-known") == 0) {
			skip_known = true;
		} else if ((v = option_value(argc, argv, &i, "--agree"))) {
			agree_arg = v;
		} else if ((v = option_value(argc, argv, &i, "--kill"))) {
			kill_arg = v;
		} else if ((v = option_value(argc, argv, &i, "--jitter"))) {
			jitter_arg = v;
		} else if ((v = option_value(argc, argv, &i, "--jobs"))) {
			jobs_arg = v;
			jobs = (int)parse_uint("--jobs", v, 1, 3, "1, 2 or 3 (kinds run at once)");
		} else if ((v = option_value(argc, argv, &i, "--seed"))) {
			seed = parse_uint("--seed", v, 0, UINT64_MAX, "an unsigned integer");
		} else if ((v = option_value(argc, argv, &i, "--kind"))) {
			kind_arg = v;
		} else if ((v = option_value(argc, argv, &i, "--hosts"))) {
			hosts_arg = v;
		} else if ((v = option_value(argc, argv, &i, "--samples"))) {
			samples_arg = v;
		} else if ((v = option_value(argc, argv, &i, "--period"))) {
			period_ms = parse_uint("--period", v, 1, 3600000,
					       "milliseconds from 1 to 3600000");
			period_set = true;
		} else if ((v = option_value(argc, argv, &i, "--timeout"))) {
			timeout_ms = parse_uint("--timeout", v, 1, 3600000,
						"milliseconds from 1 to 3600000");
			timeout_set = true;
		} else if (a[0] == '-' && a[1] != '\0') {
			usage_error("unknown option '%s' (accepted: --seed, --kind, --table, "
				    "--jobs, --skip-known, --host-loss, --revoke, --agree, --kill, --jitter, --hosts, "
				    "--samples, --period, --timeout, --help)",
				    a);
		} else if (npos < 2) {
			pos[npos++] = a;
		} else {
			usage_error("too many arguments at '%s' (accepted: N [K])", a);
		}
	}

	if (agree_arg) {
		if (revoke || host_loss || table || kind_arg || jobs_arg || skip_known || hosts_arg ||
		    samples_arg || period_set || timeout_set || npos)
			usage_error("--agree takes only --kill, --jitter and --seed");
		char accepted[64];
		uint32_t n = (uint32_t)parse_uint("--agree", agree_arg, 1, 32768, "an integer from 1 to 32768");
		uint32_t max_kill = n - 1 < 1024 ? n - 1 : 1024;
		snprintf(accepted, sizeof accepted, "an integer from 0 to %" PRIu32, max_kill);
		uint32_t k = kill_arg ? (uint32_t)parse_uint("--kill", kill_arg, 0, max_kill, accepted) : 0;
		uint32_t jitter = jitter_arg ? (uint32_t)parse_uint("--jitter", jitter_arg, 0, 8,
								    "rounds from 0 to 8") : 0;
		if (jitter && n > 1024)
			usage_error("--jitter with --agree=%" PRIu32 ": accepted: at most 1024 members", n);
		int status = run_agree(n, k, jitter, seed);
		print_resources(false, t0);
		return status;
	}
	if (kill_arg || jitter_arg)
		usage_error("%s: only with --agree", kill_arg ? "--kill" : "--jitter");
	if (revoke) {
		if (host_loss || table || kind_arg || jobs_arg || skip_known || hosts_arg || period_set ||
		    timeout_set || npos)
			usage_error("--revoke takes only --samples and --seed");
		uint32_t samples = samples_arg ? (uint32_t)parse_uint("--samples", samples_arg, 1, 1000,
								      "an integer from 1 to 1000")
					       : 20;
		run_revoke_table(seed, samples);
		return 0;
	}
	if (kind_arg) {
		if (host_loss || table)
			usage_error("--kind: only in broadcast mode without --table");
		for (int kind = FT_BCAST_CHORD; kind <= FT_BCAST_HYPERCUBE; kind++)
			if (strcmp(kind_arg, kind_names[kind]) == 0)
				only_kind = kind;
		if (only_kind < 0 && strcmp(kind_arg, "all") != 0)
			usage_error("--kind: expected chord, bmg, hypercube or all, got '%s'",
				    kind_arg);
	}
	if (!host_loss) {
		const char *only = NULL;
		if (hosts_arg)
			only = "--hosts";
		else if (samples_arg)
			only = "--samples";
		else if (period_set)
			only = "--period";
		else if (timeout_set)
			only = "--timeout";
		if (only)
			usage_error("%s: only with --host-loss", only);
	}
	if (host_loss && (jobs_arg || skip_known))
		usage_error("%s: only in broadcast mode", jobs_arg ? "--jobs" : "--skip-known");
	if (table && npos)
		usage_error("--table runs a fixed sweep and takes no N or K (got '%s')", pos[0]);

	if (host_loss) {
		if (npos > 1)
			usage_error("too many arguments at '%s' (accepted with --host-loss: N)",
				    pos[1]);
		if (table && hosts_arg)
			usage_error("--hosts: not with --table (the sweep uses 20 hosts)");
		/* Every detector has its own ring here: N^2 memory. */
		uint32_t n = pos[0] ? (uint32_t)parse_uint("N", pos[0], 2, 8192,
							   "an integer from 2 to 8192") :
				      480;
		uint32_t hosts = 20;
		if (hosts_arg) {
			hosts = (uint32_t)parse_uint("--hosts", hosts_arg, 2, n,
						     "an integer from 2 to N");
			if (n % hosts)
				usage_error("--hosts: expected a divisor of N=%" PRIu32
					    " (ranks are placed in equal blocks), got '%s'",
					    n, hosts_arg);
		} else if (!table && n % hosts) {
			usage_error("N: expected a multiple of the default 20 hosts (or set "
				    "--hosts), got '%s'",
				    pos[0]);
		}
		uint32_t samples = table ? 10 : 1;
		if (samples_arg)
			samples = (uint32_t)parse_uint("--samples", samples_arg, 1, 1000,
						       "an integer from 1 to 1000");
		run_host_loss(table, n, hosts, period_ms * FT_NSEC_PER_MSEC,
			      timeout_ms * FT_NSEC_PER_MSEC, seed, samples);
	} else if (table) {
		run_broadcast_table(seed, jobs, skip_known);
	} else {
		char accepted[64];
		uint32_t n = pos[0] ? (uint32_t)parse_uint("N", pos[0], 2, SIM_MAX_N,
							   "an integer from 2 to 16777216") :
				      1024;
		snprintf(accepted, sizeof accepted, "an integer from 1 to N-1 = %" PRIu32, n - 1);
		uint32_t k = pos[1] ? (uint32_t)parse_uint("K", pos[1], 1, n - 1, accepted) : 4;
		if (k >= n)
			usage_error("K: expected %s, got the default 4", accepted);
		run_broadcast(n, k, seed, only_kind, jobs, skip_known);
	}

	print_resources(table, t0);
	return 0;
}
