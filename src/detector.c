/* detector.c: the failure detector's state machine (see detector.h): the
 * heartbeat ring, flooding of news, anti-entropy, fail-stop and joining.
 * Everything it does to the outside world goes through d->ops.
 *
 * The joined set costs nothing per rank slot: it is [0, cfg.njoined),
 * self, and the ranks whose JOINED entry is in d->known, so that the
 * simulator's many detectors stay O(news) each. */
#include "ftshim_config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/detector.h"
#include "src/hash.h"
#include "src/proc_table.h"

#define KNOWN_MIN_CAP 16u
/* The most entries one entry is sent after (see with_history): JOINED,
 * FAILED and READMITTED before a FAILED_AGAIN. */
#define HISTORY_MAX 3u

/* --- what this process knows ------------------------------------------- */

static int known_init(struct ft_known *k, uint32_t cap)
{
	k->cap = cap;
	k->count = 0;
	k->ranks = malloc(cap * sizeof *k->ranks);
	k->events = calloc(cap, sizeof *k->events);
	if (!k->ranks || !k->events) {
		free(k->ranks);
		free(k->events);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < cap; i++)
		k->ranks[i] = FT_RANK_NONE;
	return 0;
}

static void known_destroy(struct ft_known *k)
{
	free(k->ranks);
	free(k->events);
	memset(k, 0, sizeof *k);
}

/* The slot holding rank, or the empty slot where it would go. */
static uint32_t known_slot(const struct ft_known *k, uint32_t rank)
{
	uint32_t i = (uint32_t)ft_mix64(rank) & (k->cap - 1);

	while (k->ranks[i] != rank && k->ranks[i] != FT_RANK_NONE)
		i = (i + 1) & (k->cap - 1);
	return i;
}

static uint8_t known_events(const struct ft_known *k, uint32_t rank)
{
	return k->events[known_slot(k, rank)];
}

static int known_grow(struct ft_known *k)
{
	struct ft_known bigger;

	if (known_init(&bigger, k->cap * 2) != 0)
		return -ENOMEM;
	for (uint32_t i = 0; i < k->cap; i++) {
		if (k->ranks[i] == FT_RANK_NONE)
			continue;
		uint32_t j = known_slot(&bigger, k->ranks[i]);
		bigger.ranks[j] = k->ranks[i];
		bigger.events[j] = k->events[i];
		bigger.count++;
	}
	known_destroy(k);
	*k = bigger;
	return 0;
}

/* 1 if (rank, event) is new, 0 if known, -ENOMEM. */
static int known_add(struct ft_known *k, uint32_t rank, uint16_t event)
{
	uint32_t i = known_slot(k, rank);
	uint8_t bit = (uint8_t)(1u << event);

	if (k->events[i] & bit)
		return 0;
	if (k->ranks[i] == FT_RANK_NONE && 2 * (k->count + 1) > k->cap) {
		if (known_grow(k) != 0)
			return -ENOMEM;
		i = known_slot(k, rank);
	}
	if (k->ranks[i] == FT_RANK_NONE) {
		k->ranks[i] = rank;
		k->count++;
	}
	k->events[i] |= bit;
	return 1;
}

#define EV_BIT(ev) (1u << (ev))

/* Failed, by the events known of a rank: FAILED and not re-admitted, or
 * failed again since. */
static bool events_failed(uint8_t ev)
{
	return (ev & EV_BIT(FT_EV_FAILED)) &&
	       (!(ev & EV_BIT(FT_EV_READMITTED)) || (ev & EV_BIT(FT_EV_FAILED_AGAIN)));
}

static bool events_left(uint8_t ev)
{
	return events_failed(ev) || (ev & EV_BIT(FT_EV_DEPARTED));
}

bool ft_det_knows_failed(const struct ft_detector *d, uint32_t rank)
{
	return events_failed(known_events(&d->known, rank));
}

bool ft_det_knows_departed(const struct ft_detector *d, uint32_t rank)
{
	return known_events(&d->known, rank) & (1u << FT_EV_DEPARTED);
}

bool ft_det_is_joined(const struct ft_detector *d, uint32_t rank)
{
	if (rank < d->cfg.njoined || rank == d->cfg.self)
		return true;
	return rank < d->cfg.nprocs && (known_events(&d->known, rank) & EV_BIT(FT_EV_JOINED));
}

static uint64_t news_hash(uint32_t rank, uint16_t event)
{
	return ft_mix64(((uint64_t)rank << 8 | event) + UINT64_C(0x6e657773)); /* "news" */
}

/* --- set-up ------------------------------------------------------------- */

static bool learn_quietly(struct ft_detector *d, const struct ft_entry *e);

int ft_det_init(struct ft_detector *d, const struct ft_det_config *cfg,
		const struct ft_det_ops *ops, struct ft_ring *shared_ring)
{
	memset(d, 0, sizeof *d);
	d->cfg = *cfg;
	d->cfg.known = NULL;
	d->cfg.nknown = 0;
	if (d->cfg.njoined == 0 || d->cfg.njoined > d->cfg.nprocs)
		d->cfg.njoined = d->cfg.nprocs;
	d->njoined = d->cfg.njoined + (d->cfg.self >= d->cfg.njoined ? 1 : 0);
	d->ops = *ops;
	d->emit_to = d->observed = FT_RANK_NONE;
	if (shared_ring) {
		d->ring = shared_ring;
	} else {
		d->ring = malloc(sizeof *d->ring);
		if (!d->ring)
			return -ENOMEM;
		if (ft_ring_init(d->ring, cfg->nprocs, cfg->shuffle, cfg->seed) != 0)
			goto out_free_ring;
		d->owns_ring = true;
		for (uint32_t r = d->cfg.njoined; r < d->cfg.nprocs; r++)
			if (r != d->cfg.self)
				ft_ring_remove(d->ring, r);
	}
	if (known_init(&d->known, KNOWN_MIN_CAP) != 0)
		goto out_ring;
	d->targets = malloc((ft_ring_max_targets(cfg->nprocs) + 1) * sizeof *d->targets);
	if (!d->targets)
		goto out_known;
	/* An entry lost to a lack of memory comes back by anti-entropy. */
	for (uint32_t i = 0; i < cfg->nknown; i++)
		learn_quietly(d, &cfg->known[i]);
	return 0;

out_known:
	known_destroy(&d->known);
out_ring:
	if (d->owns_ring)
		ft_ring_destroy(d->ring);
out_free_ring:
	if (d->owns_ring || !shared_ring)
		free(d->ring);
	d->ring = NULL;
	return -ENOMEM;
}

void ft_det_destroy(struct ft_detector *d)
{
	if (d->owns_ring) {
		ft_ring_destroy(d->ring);
		free(d->ring);
	}
	known_destroy(&d->known);
	known_destroy(&d->q.answered);
	free(d->q.suspects);
	free(d->news);
	free(d->fresh);
	free(d->targets);
	memset(d, 0, sizeof *d);
}

/* --- sending ------------------------------------------------------------ */

static void send_msg(struct ft_detector *d, uint32_t to, const struct ft_msg *m)
{
	d->stats.sent[m->type]++;
	d->ops.send(d->ops.ctx, to, m);
}

/* Send a list of entries, in as many frames as it takes. */
static void send_list(struct ft_detector *d, uint32_t to, enum ft_msg_type type, uint32_t flags,
		      const struct ft_entry *entries, uint32_t n)
{
	do {
		uint32_t chunk = n < FT_FRAME_MAX_ENTRIES ? n : FT_FRAME_MAX_ENTRIES;
		struct ft_msg m = { .type = type, .from = d->cfg.self };
		m.list.flags = flags;
		m.list.count = chunk;
		m.list.entries = entries;
		send_msg(d, to, &m);
		if (type == FT_MSG_NOTICE)
			d->stats.news_forwarded += chunk;
		entries += chunk;
		n -= chunk;
	} while (n > 0);
}

static void send_excluded(struct ft_detector *d, uint32_t to, uint32_t how, uint32_t detector)
{
	struct ft_msg m = { .type = FT_MSG_EXCLUDED, .from = d->cfg.self };

	m.excluded.how = how;
	m.excluded.detector = detector;
	send_msg(d, to, &m);
}

static void send_view(struct ft_detector *d, uint32_t to, uint32_t flags)
{
	send_list(d, to, FT_MSG_SYNC, flags, d->news, d->nnews);
}

/* The in-ring rank `dir` steps away from self that this process knows
 * joined and does not know failed (the shared ring of the simulator still
 * holds the others). */
static uint32_t live_neighbour(const struct ft_detector *d, int dir)
{
	uint32_t others = d->ring->nin - (ft_ring_contains(d->ring, d->cfg.self) ? 1 : 0);

	for (uint32_t k = 1; k <= others; k++) {
		uint32_t r = ft_ring_step(d->ring, d->cfg.self, dir * (int64_t)k);
		if (r == FT_RANK_NONE)
			break;
		if (ft_det_is_joined(d, r) && !ft_det_knows_failed(d, r))
			return r;
	}
	return FT_RANK_NONE;
}

/* Flood news: send it to every broadcast target this process knows joined
 * and alive. */
static void flood(struct ft_detector *d, const struct ft_entry *news, uint32_t n)
{
	if (n == 0)
		return; /* most messages bring nothing new: skip the targets */
	uint32_t max = ft_ring_max_targets(d->cfg.nprocs);
	uint32_t nt = ft_ring_bcast_targets(d->ring, d->cfg.self, d->cfg.bcast, d->targets, max);

	for (uint32_t i = 0; i < nt; i++)
		if (ft_det_is_joined(d, d->targets[i]) && !ft_det_knows_failed(d, d->targets[i]))
			send_list(d, d->targets[i], FT_MSG_NOTICE, 0, news, n);
}

/* --- quorum rounds ------------------------------------------------------ */

static void send_probe(struct ft_detector *d, uint32_t to, uint32_t round, uint32_t flags)
{
	struct ft_msg m = { .type = FT_MSG_PROBE, .from = d->cfg.self };

	m.probe.round = round;
	m.probe.flags = flags;
	send_msg(d, to, &m);
}

static bool is_suspect(const struct ft_detector *d, uint32_t rank)
{
	for (uint32_t i = 0; i < d->q.nsuspects; i++)
		if (d->q.suspects[i].rank == rank)
			return true;
	return false;
}

static void drop_suspect(struct ft_detector *d, uint32_t rank)
{
	for (uint32_t i = 0; i < d->q.nsuspects; i++) {
		if (d->q.suspects[i].rank == rank) {
			d->q.suspects[i] = d->q.suspects[--d->q.nsuspects];
			return;
		}
	}
}

/* Start a round: every member not known failed, suspects aside, is asked
 * to answer. A recheck round (for a RECHECK, with no suspects) only
 * checks the side. */
static void start_round(struct ft_detector *d, bool recheck, uint64_t now)
{
	known_destroy(&d->q.answered);
	if (known_init(&d->q.answered, KNOWN_MIN_CAP) != 0)
		return; /* no memory: the next tick tries again */
	d->q.active = true;
	d->q.recheck = recheck;
	d->q.round++;
	d->q.nanswered = 0;
	d->q.deadline_ns = now + d->cfg.timeout_ns;
	d->stats.quorum_rounds++;
	for (uint32_t r = 0; r < d->cfg.nprocs; r++)
		if (r != d->cfg.self && ft_det_is_joined(d, r) && !ft_det_knows_failed(d, r) &&
		    !is_suspect(d, r))
			send_probe(d, r, d->q.round, 0);
}

/* The lowest member not known failed: it breaks an even split.
 * O(failures): the ranks joined at start come first. */
static uint32_t lowest_member(const struct ft_detector *d)
{
	uint32_t r = 0;

	while (r < d->cfg.nprocs && (!ft_det_is_joined(d, r) || ft_det_knows_failed(d, r)))
		r++;
	return r;
}

static void end_round(struct ft_detector *d)
{
	d->q.active = false;
	known_destroy(&d->q.answered);
}

static void declare(struct ft_detector *d, uint32_t rank, uint16_t how, uint64_t failed_ns, uint64_t now);

/* Decide the round if its answers or its deadline allow. */
static void check_quorum(struct ft_detector *d, uint64_t now)
{
	if (!d->q.active || d->excluded)
		return;
	/* Only members fail (news about other ranks is dropped). */
	uint32_t members = d->njoined - d->nfailed, reached = 1 + d->q.nanswered;
	uint32_t lowest = lowest_member(d);
	bool holds_lowest = lowest == d->cfg.self ||
			    (known_events(&d->q.answered, lowest) & 1u) != 0;

	if ((uint64_t)2 * reached > members || ((uint64_t)2 * reached == members && holds_lowest)) {
		end_round(d);
		/* Each suspect leaves the list before it is declared. */
		while (d->q.nsuspects > 0 && !d->excluded) {
			struct ft_suspect s = d->q.suspects[d->q.nsuspects - 1];
			d->q.nsuspects--;
			declare(d, s.rank, FT_HOW_HB_TIMEOUT, s.silent_since_ns, now);
		}
		return;
	}
	if (now < d->q.deadline_ns)
		return;
	/* Lost: tell the ranks on this side to look at theirs, then stop. */
	for (uint32_t i = 0; i < d->q.answered.cap; i++) {
		uint32_t r = d->q.answered.ranks[i];
		if (r != FT_RANK_NONE && !ft_det_knows_failed(d, r))
			send_probe(d, r, d->q.round, FT_PROBE_RECHECK);
	}
	end_round(d);
	d->excluded = true;
	if (d->ops.lost_quorum)
		d->ops.lost_quorum(d->ops.ctx, reached, members, lowest);
}

/* The observed rank has been silent for a timeout: without quorum rounds
 * it is failed at once; with them it waits for a round's verdict. */
static void suspect(struct ft_detector *d, uint32_t rank, uint64_t silent_since, uint64_t now)
{
	if (!d->cfg.quorum) {
		declare(d, rank, FT_HOW_HB_TIMEOUT, silent_since, now);
		return;
	}
	if (!is_suspect(d, rank)) {
		if (d->q.nsuspects == d->q.suspects_cap) {
			uint32_t cap = d->q.suspects_cap ? 2 * d->q.suspects_cap : 4;
			struct ft_suspect *s = realloc(d->q.suspects, cap * sizeof *s);
			if (!s)
				return; /* the next tick tries again */
			d->q.suspects = s;
			d->q.suspects_cap = cap;
		}
		d->q.suspects[d->q.nsuspects++] = (struct ft_suspect){ rank, silent_since };
	}
	if (!d->q.active)
		start_round(d, false, now);
	check_quorum(d, now); /* a job of one or two may need no answer */
}

static void on_probe(struct ft_detector *d, const struct ft_msg *m, uint64_t now)
{
	if (m->probe.flags & FT_PROBE_REPLY) {
		if (d->q.active && m->probe.round == d->q.round &&
		    known_add(&d->q.answered, m->from, 0) == 1) {
			d->q.nanswered++;
			check_quorum(d, now);
		}
		return;
	}
	if (m->probe.flags & FT_PROBE_RECHECK) {
		if (d->cfg.quorum && !d->q.active) {
			start_round(d, true, now);
			check_quorum(d, now);
		}
		return;
	}
	send_probe(d, m->from, m->probe.round, FT_PROBE_REPLY);
}

/* --- learning ----------------------------------------------------------- */

/* Re-derive the ring neighbours after the view changed. A new predecessor
 * gets our view and a whole timeout to start sending to us; a new
 * successor gets a heartbeat at once. */
static void update_neighbours(struct ft_detector *d, uint64_t now)
{
	uint32_t succ = live_neighbour(d, +1), pred = live_neighbour(d, -1);

	if (succ != d->emit_to) {
		d->emit_to = succ;
		d->next_emit_ns = now;
	}
	if (pred != d->observed) {
		d->observed = pred;
		d->deadline_ns = now + d->cfg.timeout_ns;
		d->heard_ns = now;
		d->mismatches = 0;
		/* Tell the new predecessor directly why it must now send to us:
		 * when the ranks between us died together, neither the flood
		 * nor the heartbeats' digests reach it, and its silence would be
		 * taken for a failure. */
		if (pred != FT_RANK_NONE && d->nnews > 0)
			send_view(d, pred, FT_SYNC_REPLY);
	}
}

static int append_news(struct ft_detector *d, const struct ft_entry *e)
{
	if (d->nnews == d->news_cap) {
		uint32_t cap = d->news_cap ? 2 * d->news_cap : 16;
		struct ft_entry *news = realloc(d->news, cap * sizeof *news);
		/* Room for each new entry and the history it carries (see
		 * with_history). */
		struct ft_entry *fresh = realloc(d->fresh, (HISTORY_MAX + 1) * cap * sizeof *fresh);
		if (fresh)
			d->fresh = fresh;
		if (!news || !fresh) {
			if (news)
				d->news = news;
			return -ENOMEM;
		}
		d->news = news;
		d->news_cap = cap;
	}
	d->news[d->nnews++] = *e;
	return 0;
}

/* This process is told that it failed (by, how). Fail-stop: it is out
 * (ops.excluded), unless re-admission may bring it back: with
 * cfg.readmit, a first failure by heartbeat timeout, it goes on and waits
 * for it. Returns true if it goes on. */
static bool told_failed(struct ft_detector *d, uint32_t by, uint32_t how, bool again)
{
	if (d->cfg.readmit && !again && how == FT_HOW_HB_TIMEOUT) {
		/* Late word of the first failure, undone already. */
		if (known_events(&d->known, d->cfg.self) & EV_BIT(FT_EV_READMITTED))
			return true;
		if (!d->awaiting_readmission) {
			d->awaiting_readmission = true;
			if (d->ops.declared_self)
				d->ops.declared_self(d->ops.ctx, by, how);
		}
		return true;
	}
	if (!d->excluded) {
		d->excluded = true;
		d->ops.excluded(d->ops.ctx, by, how);
	}
	return false;
}

/* Record one entry. Returns true if it was news to this process. tell:
 * report it (ops.learned, ops.excluded) and send what it calls for; false
 * for the view a process starts with (cfg.known), which only fills the
 * tables. */
static bool record(struct ft_detector *d, const struct ft_entry *e, uint32_t told_by, uint64_t now,
		   bool tell)
{
	if (e->rank >= d->cfg.nprocs || !ft_event_valid(e->event))
		return false;
	bool self = e->rank == d->cfg.self, joined_before = ft_det_is_joined(d, e->rank);
	uint8_t before = known_events(&d->known, e->rank);
	/* Every sender puts a re-admission's history first, and a rank's
	 * JOINED before anything else about it (with_history): without it,
	 * the entry is dropped, and anti-entropy brings both. */
	if ((e->event == FT_EV_READMITTED && !(before & EV_BIT(FT_EV_FAILED))) ||
	    (e->event == FT_EV_FAILED_AGAIN && !(before & EV_BIT(FT_EV_READMITTED))) ||
	    (e->event != FT_EV_JOINED && !joined_before))
		return false;
	/* News that this process failed: recorded like any news (so that its
	 * view and digest agree with the others') only if it goes on. In the
	 * view it starts with, it is left for anti-entropy to bring, told. */
	if (self && (e->event == FT_EV_FAILED || e->event == FT_EV_FAILED_AGAIN) &&
	    !(before & EV_BIT(e->event)) &&
	    (!tell || !told_failed(d, told_by, e->how, e->event == FT_EV_FAILED_AGAIN)))
		return false;
	int rc = known_add(&d->known, e->rank, e->event);
	if (rc == 0)
		d->stats.duplicates++;
	if (rc <= 0 || append_news(d, e) != 0)
		return false;
	uint8_t after = (uint8_t)(before | EV_BIT(e->event));
	bool failed_before = events_failed(before), failed_now = events_failed(after);
	if (!self && events_left(before) != events_left(after)) {
		if (events_left(after))
			d->nleft++;
		else
			d->nleft--;
	}
	if (failed_now && !failed_before)
		d->nfailed++;
	else if (failed_before && !failed_now)
		d->nfailed--;
	d->digest ^= news_hash(e->rank, e->event);
	if (e->event == FT_EV_JOINED) {
		/* A member already (a rank this process started with): reported
		 * all the same, for its endpoint, which a process spawned later
		 * may not have had. */
		if (joined_before) {
			if (tell && !self)
				d->ops.learned(d->ops.ctx, e, told_by);
			return true;
		}
		d->njoined++;
		/* First the report, which gives the engine the rank's endpoint,
		 * then the ring, which may make the rank a neighbour (a view is
		 * sent to a new predecessor at once). Not known failed: news
		 * about a rank is dropped until it joined. */
		if (tell)
			d->ops.learned(d->ops.ctx, e, told_by);
		if (d->owns_ring)
			ft_ring_insert(d->ring, e->rank);
		if (d->started)
			update_neighbours(d, now);
		return true;
	}
	if (self) {
		if (e->event == FT_EV_READMITTED)
			d->awaiting_readmission = false;
	} else if (failed_before && !failed_now) {
		/* Re-admitted: back in the ring, maybe as a neighbour. */
		if (d->owns_ring)
			ft_ring_insert(d->ring, e->rank);
		if (d->started)
			update_neighbours(d, now);
	} else if (failed_now && !failed_before) {
		drop_suspect(d, e->rank);
		/* A rank that answered this round and has failed since counts
		 * neither among the members nor among those reached. */
		if (d->q.active && (known_events(&d->q.answered, e->rank) & 1u))
			d->q.nanswered--;
		if (d->owns_ring)
			ft_ring_remove(d->ring, e->rank);
		/* The one who saw it tells the failed rank, in case it was only
		 * paused: when it resumes, this is the first thing it reads. A
		 * second failure is told as a notice, which re-admission (see
		 * told_failed) never waits out. */
		if (tell && e->detector == d->cfg.self)
			send_excluded(d, e->rank,
				      e->event == FT_EV_FAILED_AGAIN ? FT_HOW_NOTICE : e->how,
				      d->cfg.self);
		if (d->started && (e->rank == d->observed || e->rank == d->emit_to))
			update_neighbours(d, now);
	}
	if (e->event == FT_EV_DEPARTED)
		d->ndeparted++;
	/* Its own failure went to told_failed (ops.declared_self). */
	if (tell && (!self || e->event == FT_EV_READMITTED || e->event == FT_EV_DEPARTED ||
		     e->event == FT_EV_ABORT))
		d->ops.learned(d->ops.ctx, e, told_by);
	return true;
}

static bool learn(struct ft_detector *d, const struct ft_entry *e, uint32_t told_by, uint64_t now)
{
	return record(d, e, told_by, now, true);
}

static bool learn_quietly(struct ft_detector *d, const struct ft_entry *e)
{
	return record(d, e, d->cfg.self, 0, false);
}

/* The entry this process holds for (rank, event), or NULL. */
static const struct ft_entry *held_entry(const struct ft_detector *d, uint32_t rank, uint16_t event)
{
	for (uint32_t i = 0; i < d->nnews; i++)
		if (d->news[i].rank == rank && d->news[i].event == event)
			return &d->news[i];
	return NULL;
}

/* Append e to out[*n], preceded by the news it follows (the rank's JOINED,
 * if it has one, before anything else about it; FAILED before a
 * READMITTED; FAILED and READMITTED before a FAILED_AGAIN), so that a
 * process never learns of a re-admission before the failure it undoes,
 * nor of anything about a rank before it joined, whatever path the news
 * takes. O(news), on re-admissions and news about ranks that joined
 * late only. */
static void with_history(const struct ft_detector *d, const struct ft_entry *e, struct ft_entry *out,
			 uint32_t *n)
{
	uint16_t before[HISTORY_MAX];
	uint32_t nb = 0;

	if (e->event != FT_EV_JOINED && (known_events(&d->known, e->rank) & EV_BIT(FT_EV_JOINED)))
		before[nb++] = FT_EV_JOINED;
	if (e->event == FT_EV_READMITTED || e->event == FT_EV_FAILED_AGAIN)
		before[nb++] = FT_EV_FAILED;
	if (e->event == FT_EV_FAILED_AGAIN)
		before[nb++] = FT_EV_READMITTED;
	for (uint32_t i = 0; i < nb; i++) {
		const struct ft_entry *h = held_entry(d, e->rank, before[i]);
		bool there = false;
		for (uint32_t j = 0; j < *n && !there; j++)
			there = out[j].rank == e->rank && out[j].event == before[i];
		if (h && !there)
			out[(*n)++] = *h;
	}
	out[(*n)++] = *e;
}

/* Learn a list from one message and flood what was new. */
static void learn_list(struct ft_detector *d, const struct ft_msg *m, uint64_t now)
{
	uint32_t nfresh = 0;

	for (uint32_t i = 0; i < m->list.count && !d->excluded; i++) {
		if (learn(d, &m->list.entries[i], m->from, now))
			with_history(d, &m->list.entries[i], d->fresh, &nfresh);
	}
	if (!d->excluded)
		flood(d, d->fresh, nfresh);
}

/* A notice from a rank known failed: only the sender's own abort counts
 * (learned and passed on as from anyone); the rest is stale. */
static void learn_last_abort(struct ft_detector *d, const struct ft_msg *m, uint64_t now)
{
	for (uint32_t i = 0; i < m->list.count && !d->excluded; i++) {
		const struct ft_entry *e = &m->list.entries[i];
		if (e->rank == m->from && e->event == FT_EV_ABORT && learn(d, e, m->from, now))
			flood(d, e, 1);
	}
}

/* Declare rank failed; failed_ns: when it failed, by the clock, as far as
 * this process can tell. */
static void declare(struct ft_detector *d, uint32_t rank, uint16_t how, uint64_t failed_ns, uint64_t now)
{
	/* A re-admitted rank that fails again does so for good. */
	bool again = known_events(&d->known, rank) & EV_BIT(FT_EV_READMITTED);
	struct ft_entry e = { .rank = rank, .event = again ? FT_EV_FAILED_AGAIN : FT_EV_FAILED,
			      .how = how, .detector = d->cfg.self,
			      .at_ns = failed_ns + (uint64_t)d->cfg.wall_offset_ns };

	if (d->excluded || rank == d->cfg.self)
		return;
	if (learn(d, &e, d->cfg.self, now)) {
		struct ft_entry out[HISTORY_MAX + 1];
		uint32_t n = 0;
		with_history(d, &e, out, &n);
		flood(d, out, n);
	}
}

void ft_det_declare(struct ft_detector *d, uint32_t rank, uint16_t how, uint64_t now)
{
	declare(d, rank, how, now, now);
}

bool ft_det_connection_lost(struct ft_detector *d, uint32_t peer, uint64_t now)
{
	if (peer >= d->cfg.nprocs || ft_det_knows_failed(d, peer) || ft_det_knows_departed(d, peer))
		return false;
	if (peer != d->observed && peer != d->emit_to)
		return false;
	ft_det_declare(d, peer, FT_HOW_CONN_LOST, now);
	return true;
}

void ft_det_join(struct ft_detector *d, const struct ft_entry *e, uint64_t now)
{
	if (d->excluded || e->event != FT_EV_JOINED)
		return;
	if (learn(d, e, d->cfg.self, now))
		flood(d, e, 1);
}

void ft_det_abort(struct ft_detector *d, uint16_t status, uint64_t now)
{
	struct ft_entry e = { .rank = d->cfg.self, .event = FT_EV_ABORT, .how = status,
			      .detector = d->cfg.self, .at_ns = now + (uint64_t)d->cfg.wall_offset_ns };

	if (d->excluded)
		return;
	if (learn(d, &e, d->cfg.self, now))
		flood(d, &e, 1);
}

void ft_det_depart(struct ft_detector *d, uint64_t now)
{
	struct ft_entry e = { .rank = d->cfg.self, .event = FT_EV_DEPARTED, .detector = d->cfg.self,
			      .at_ns = now + (uint64_t)d->cfg.wall_offset_ns };

	if (d->departing || d->excluded)
		return;
	d->departing = true;
	if (learn(d, &e, d->cfg.self, now))
		flood(d, &e, 1);
}

/* --- time and messages -------------------------------------------------- */

void ft_det_start(struct ft_detector *d, uint64_t now)
{
	d->started = true;
	d->observed = d->emit_to = FT_RANK_NONE;
	update_neighbours(d, now);
	d->deadline_ns = now + d->cfg.grace_ns + d->cfg.timeout_ns;
	d->next_emit_ns = now;
	d->last_tick_ns = now;
}

static void send_heartbeat(struct ft_detector *d)
{
	struct ft_msg m = { .type = FT_MSG_HEARTBEAT, .from = d->cfg.self };

	m.hb.seq = ++d->hb_seq;
	m.hb.nfailed = d->nfailed;
	m.hb.ndeparted = d->ndeparted;
	m.hb.digest = d->digest;
	send_msg(d, d->emit_to, &m);
}

uint64_t ft_det_tick(struct ft_detector *d, uint64_t now)
{
	if (!d->started || d->excluded)
		return UINT64_MAX;
	/* If this thread did not run for half a timeout (descheduled, or the
	 * whole process stopped), the silence it sees may be its own: give the
	 * predecessor two more periods before judging it. */
	if (now > d->last_tick_ns + d->cfg.timeout_ns / 2) {
		if (d->deadline_ns < now + 2 * d->cfg.period_ns)
			d->deadline_ns = now + 2 * d->cfg.period_ns;
		if (d->q.active && d->q.deadline_ns < now + 2 * d->cfg.period_ns)
			d->q.deadline_ns = now + 2 * d->cfg.period_ns;
	}
	d->last_tick_ns = now;

	if (d->emit_to != FT_RANK_NONE && now >= d->next_emit_ns) {
		send_heartbeat(d);
		d->next_emit_ns += d->cfg.period_ns;
		if (d->next_emit_ns <= now)
			d->next_emit_ns = now + d->cfg.period_ns;
	}
	/* A departed rank stops its heartbeats only when every rank has
	 * departed; its silence is not a failure. A process waiting to be
	 * re-admitted suspects nobody: the others have left it out of their
	 * ring, and its first heartbeat brings it back. */
	if (d->observed != FT_RANK_NONE && now >= d->deadline_ns &&
	    !ft_det_knows_departed(d, d->observed) && !is_suspect(d, d->observed) &&
	    !d->awaiting_readmission)
		suspect(d, d->observed, d->heard_ns, now); /* silent since */
	if (d->q.active)
		check_quorum(d, now);
	else if (d->q.nsuspects > 0)
		start_round(d, false, now); /* the last one could not start */

	uint64_t next = d->emit_to != FT_RANK_NONE ? d->next_emit_ns : UINT64_MAX;
	if (d->observed != FT_RANK_NONE && !ft_det_knows_departed(d, d->observed) &&
	    !is_suspect(d, d->observed) && d->deadline_ns < next)
		next = d->deadline_ns;
	if (d->q.active && d->q.deadline_ns < next)
		next = d->q.deadline_ns;
	return d->excluded ? UINT64_MAX : next;
}

static void on_heartbeat(struct ft_detector *d, const struct ft_msg *m, uint64_t now)
{
	if (m->from == d->observed) {
		d->deadline_ns = now + d->cfg.timeout_ns;
		d->heard_ns = now;
		if (is_suspect(d, m->from)) {
			/* Only slow: no verdict needed on it any more. */
			drop_suspect(d, m->from);
			d->stats.suspects_cleared++;
			if (d->q.active && d->q.nsuspects == 0 && !d->q.recheck)
				end_round(d);
		}
	}
	if (m->hb.nfailed == d->nfailed && m->hb.ndeparted == d->ndeparted && m->hb.digest == d->digest) {
		d->mismatches = 0;
		return;
	}
	/* One differing digest is usually a flood still under way; two in a
	 * row mean that news got lost: exchange whole views. */
	if (++d->mismatches >= 2) {
		d->mismatches = 0;
		send_view(d, m->from, FT_SYNC_REPLY);
	}
}

/* Whether a failed rank that was just heard from comes back: only with
 * cfg.readmit, once, and only after a silence (a refused connection
 * proves death; a rank that departed or aborted is done). */
static bool readmittable(const struct ft_detector *d, uint32_t rank)
{
	uint8_t ev = known_events(&d->known, rank);

	if (!d->cfg.readmit ||
	    (ev & (EV_BIT(FT_EV_READMITTED) | EV_BIT(FT_EV_DEPARTED) | EV_BIT(FT_EV_ABORT))))
		return false;
	const struct ft_entry *f = held_entry(d, rank, FT_EV_FAILED);
	return f && f->how == FT_HOW_HB_TIMEOUT;
}

/* Re-admit rank, flooding the news with its history; the rank gets this
 * process's whole view, its own failure and re-admission included. */
static void readmit(struct ft_detector *d, uint32_t rank, uint64_t now)
{
	struct ft_entry e = { .rank = rank, .event = FT_EV_READMITTED, .detector = d->cfg.self,
			      .at_ns = now + (uint64_t)d->cfg.wall_offset_ns };
	struct ft_entry out[HISTORY_MAX + 1];
	uint32_t n = 0;

	if (!learn(d, &e, d->cfg.self, now))
		return;
	d->stats.readmitted++;
	with_history(d, &e, out, &n);
	flood(d, out, n);
	send_view(d, rank, 0);
}

void ft_det_receive(struct ft_detector *d, const struct ft_msg *m, uint64_t now)
{
	if (m->type <= 0 || m->type >= FT_MSG_TYPE_END || m->from >= d->cfg.nprocs ||
	    m->from == d->cfg.self || d->excluded)
		return;
	d->stats.received[m->type]++;
	/* Not a member (yet): heard again once its JOINED arrives. */
	if (!ft_det_is_joined(d, m->from)) {
		d->stats.from_unjoined++;
		return;
	}
	if (ft_det_knows_failed(d, m->from)) {
		if (readmittable(d, m->from)) {
			readmit(d, m->from, now); /* then take the message as from any rank */
		} else {
			/* Fail-stop: a rank we know failed does not come back.
			 * But its own abort, sent just before it exited, still
			 * ends the job: its death may have been seen first. */
			d->stats.from_failed++;
			if (m->type == FT_MSG_NOTICE)
				learn_last_abort(d, m, now);
			if (m->type != FT_MSG_EXCLUDED)
				send_excluded(d, m->from, FT_HOW_NOTICE, d->cfg.self);
			return;
		}
	}
	switch (m->type) {
	case FT_MSG_HEARTBEAT:
		on_heartbeat(d, m, now);
		break;
	case FT_MSG_NOTICE:
		learn_list(d, m, now);
		break;
	case FT_MSG_SYNC:
		learn_list(d, m, now);
		/* Answer if we know more than the sender said. */
		if ((m->list.flags & FT_SYNC_REPLY) && !d->excluded && d->nnews > m->list.count)
			send_view(d, m->from, 0);
		break;
	case FT_MSG_PROBE:
		on_probe(d, m, now);
		break;
	case FT_MSG_EXCLUDED:
		/* One for a heartbeat timeout is about a first failure (see
		 * learn); a second one comes as a notice. */
		told_failed(d, m->from, m->excluded.how, false);
		break;
	default:
		break;
	}
}
