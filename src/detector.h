/* detector.h: the failure detector of one process, as a pure state
 * machine: time and messages go in (ft_det_tick, ft_det_receive, ...),
 * messages to send and what was learned come out through the callbacks of
 * struct ft_det_ops. It does no I/O, reads no clock and starts no thread,
 * so the detector thread (src/engine.c) and the simulator (tools/sim.c)
 * drive the same code.
 *
 * What it does:
 *  - Heartbeats on the ring (src/ring.h): every period it sends a
 *    heartbeat to its successor (the next rank in the ring that it does
 *    not know failed) and watches its predecessor; silence for longer
 *    than the timeout makes it declare the predecessor failed. When a
 *    neighbour fails, the next one along the ring takes its place.
 *  - News of a failure (or of a rank entering MPI_Finalize: "departed")
 *    is flooded: whoever learns it first sends it to its broadcast targets
 *    (chord, BMG or hypercube over the ring), each process forwards each
 *    piece of news once, and duplicates are dropped.
 *  - Anti-entropy: each heartbeat carries a digest of the sender's view;
 *    a digest that differs on two heartbeats in a row triggers a SYNC
 *    exchange of whole views, so news lost with a forwarder that died
 *    mid-flood still reaches everyone.
 *  - A rank that ends the job (MPI_Abort, a fatal error) floods that too,
 *    as news with event FT_EV_ABORT; everyone learns it like a failure.
 *  - Fail-stop: news that this process failed, or an EXCLUDED message,
 *    is reported through ops.excluded; a message from a rank this process
 *    knows failed is answered with EXCLUDED and otherwise ignored, except
 *    the sender's own abort in a NOTICE (sent as it exited, and read
 *    after its death was seen), which is learned and passed on.
 *  - Partitions (cfg.quorum): a silence is not proof of death, so a rank
 *    declared by heartbeat timeout is first a suspect. Its observer starts
 *    a quorum round: it probes every rank it does not know failed and
 *    counts the answers. When the ranks that answered, with itself, are a
 *    strict majority of the membership (the ranks joined minus the ranks
 *    known failed), or exactly half of it and they hold its lowest rank, the
 *    suspects are declared failed as before. If the round's deadline (one
 *    timeout) passes first, this process is on the losing side of a
 *    partition: it stops, tells the ranks that answered to check their
 *    own side (PROBE with FT_PROBE_RECHECK), and reports ops.lost_quorum.
 *    Failures proven by a refused connection (ft_det_declare,
 *    ft_det_connection_lost) need no round: a dead process is on no side.
 *    Two sides cannot both win: each would need more than half of a
 *    membership that, failures aside, holds both.
 *  - Re-admission (cfg.readmit, OCFTL's "false positive"): a message from
 *    a rank declared failed by heartbeat timeout (a silence; a refused
 *    connection proves death) makes whoever gets it flood news READMITTED
 *    and send the rank its view; the rank is back in the ring and
 *    no longer counts as failed. The rank itself, told it failed, waits
 *    for that instead of reporting ops.excluded. Once only: a re-admitted
 *    rank that fails again (FT_EV_FAILED_AGAIN) stays failed. Whoever
 *    sends either entry sends the entries it follows first (FAILED, then
 *    READMITTED), and an entry that arrives without them is dropped, so no
 *    process learns them out of order. The news set still only grows, so
 *    the flood, the digests and the anti-entropy work unchanged.
 *  - Joining (MPI_Comm_spawn): cfg.nprocs is the job's capacity of rank
 *    slots, every table is that size, and only [0, cfg.njoined) (and this
 *    process) are members from the start. A rank that joins later is news
 *    with event FT_EV_JOINED, carrying its endpoint: learned where the
 *    spawn happened (ft_det_join), then flooded and anti-entropied like
 *    any news. A rank not joined is out of the ring, never sent to nor
 *    probed, counts in no membership, and its messages are dropped; news
 *    about it other than its JOINED is dropped too, so every sender puts
 *    a rank's JOINED first, as for re-admissions. Learning that a rank
 *    joined reports it (ops.learned) before anything is sent to it, then
 *    puts it in the ring, where its new observer gives it a whole timeout.
 *    A JOINED entry for a rank already joined is recorded and reported
 *    (the first time, for its endpoint: a spawned process starts with
 *    the ranks before it as members, not all their endpoints) and
 *    changes nothing else. A spawned process starts with its parents' view
 *    (cfg.known), learned silently: no ops.learned, no flood.
 *
 * Thread rule: one thread drives a detector; nothing here is shared. */
#ifndef FTSHIM_DETECTOR_H
#define FTSHIM_DETECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "src/frame.h"
#include "src/ring.h"

struct ft_det_config {
	uint32_t nprocs;          /* rank slots in the job (its capacity) */
	uint32_t njoined;         /* members at start: ranks [0, njoined); 0: all */
	uint32_t self;            /* this process's job rank, a member */
	uint64_t period_ns;       /* between two heartbeats */
	uint64_t timeout_ns;      /* silence after which the predecessor is failed */
	uint64_t grace_ns;        /* extra silence allowed at start-up */
	enum ft_bcast_kind bcast; /* the flooding topology */
	bool shuffle;             /* ring positions drawn from seed */
	uint64_t seed;            /* job-wide */
	int64_t wall_offset_ns;   /* the clock's time plus this is the wall clock
				     (ns since the epoch), for entries' at_ns */
	bool quorum;              /* heartbeat timeouts need a majority (see above) */
	bool readmit;             /* re-admit a failed rank heard again (see above) */
	/* News this process knows at start (a spawned process: its parents'
	 * view), learned silently by ft_det_init, which keeps no pointer. */
	const struct ft_entry *known;
	uint32_t nknown;
};

struct ft_det_ops {
	void *ctx;
	/* Send m to job rank to. May be called for a rank that is dead. */
	void (*send)(void *ctx, uint32_t to, const struct ft_msg *m);
	/* This process has just learned that e->rank failed (or, with
	 * e->event == FT_EV_DEPARTED, entered MPI_Finalize; with FT_EV_JOINED,
	 * joined, before anything is sent to it); told_by is the rank it heard
	 * it from (itself if it saw it). */
	void (*learned)(void *ctx, const struct ft_entry *e, uint32_t told_by);
	/* The others declared this process failed; by told it. */
	void (*excluded)(void *ctx, uint32_t by, uint32_t how);
	/* A quorum round failed: this process and the reached - 1 ranks that
	 * answered are not a majority of the members ranks still in the job
	 * (lowest: the lowest of them, which wins an even split). The
	 * detector has stopped, as after excluded. May be NULL without
	 * cfg.quorum. */
	void (*lost_quorum)(void *ctx, uint32_t reached, uint32_t members, uint32_t lowest);
	/* cfg.readmit: the others declared this process failed (by told it,
	 * how); it goes on and waits to be re-admitted (ops.learned with
	 * FT_EV_READMITTED for itself). May be NULL. */
	void (*declared_self)(void *ctx, uint32_t by, uint32_t how);
};

struct ft_det_stats {
	uint64_t sent[FT_MSG_TYPE_END];     /* messages sent, by type */
	uint64_t received[FT_MSG_TYPE_END]; /* messages received, by type */
	uint64_t news_forwarded;            /* entries sent in NOTICEs */
	uint64_t duplicates;                /* entries received that were known */
	uint64_t from_failed;               /* messages from ranks known failed */
	uint64_t from_unjoined;             /* messages from ranks not joined, dropped */
	uint64_t quorum_rounds;             /* rounds started */
	uint64_t suspects_cleared;          /* suspects heard again before a verdict */
	uint64_t readmitted;                /* failed ranks this process heard and re-admitted */
};

/* What this process knows about other ranks: an open-addressing set, so
 * that a simulated process costs O(news), not O(ranks). */
struct ft_known {
	uint32_t cap, count;  /* cap: a power of two */
	uint32_t *ranks;      /* FT_RANK_NONE for an empty slot */
	uint8_t *events;      /* bit (1 << event) for each event known */
};

struct ft_detector {
	struct ft_det_config cfg;
	struct ft_det_ops ops;
	struct ft_ring *ring;      /* positions; own view unless shared */
	bool owns_ring;            /* false: a read-only ring shared by many */
	struct ft_known known;
	struct ft_entry *news;     /* every entry known, in the order learned */
	uint32_t nnews, news_cap;
	uint32_t nfailed, ndeparted, nleft; /* nleft: other ranks failed or departed */
	uint32_t njoined;          /* ranks joined, self and those failed included */
	uint64_t digest;           /* XOR over news of a hash of (rank, event) */

	uint32_t emit_to;          /* the rank we send heartbeats to, or FT_RANK_NONE */
	uint32_t observed;         /* the rank whose heartbeats we watch, or FT_RANK_NONE */
	uint64_t hb_seq;           /* sequence number of our last heartbeat */
	uint64_t next_emit_ns;     /* when our next heartbeat is due */
	uint64_t deadline_ns;      /* observed is failed if silent until then */
	uint64_t heard_ns;         /* when observed was last heard, or became observed */
	uint64_t last_tick_ns;     /* when ft_det_tick last ran, 0 before start */
	uint32_t mismatches;       /* heartbeats in a row whose digest differed */
	bool started, departing, excluded;
	bool awaiting_readmission; /* cfg.readmit: told this process failed */

	/* The quorum round (cfg.quorum), while active: the suspects waiting
	 * for its verdict and the ranks that answered it. */
	struct ft_quorum {
		bool active;
		bool recheck;             /* started by a RECHECK, with no suspects */
		uint32_t round;           /* this round's number; rounds count up */
		uint64_t deadline_ns;     /* lost if no majority by then */
		struct ft_known answered; /* ranks that answered this round */
		uint32_t nanswered;
		struct ft_suspect {
			uint32_t rank;
			uint64_t silent_since_ns;
		} *suspects;
		uint32_t nsuspects, suspects_cap;
	} q;

	uint32_t *targets;         /* scratch: broadcast targets */
	struct ft_entry *fresh;    /* scratch: news learned from one message */
	struct ft_det_stats stats;
};

/* shared_ring: NULL to build the detector's own ring from cfg, or a ring
 * that many detectors read (the simulator); the detector then never
 * changes it and skips the ranks it knows failed or not joined. 0 or
 * -ENOMEM. */
int ft_det_init(struct ft_detector *d, const struct ft_det_config *cfg,
		const struct ft_det_ops *ops, struct ft_ring *shared_ring);
void ft_det_destroy(struct ft_detector *d);

/* Begin heartbeats at now; the first silence allowed is grace + timeout. */
void ft_det_start(struct ft_detector *d, uint64_t now);

/* Do what is due at now (send a heartbeat, declare a silent predecessor
 * failed). Returns the next time it wants to run. */
uint64_t ft_det_tick(struct ft_detector *d, uint64_t now);

/* A message from m->from. */
void ft_det_receive(struct ft_detector *d, const struct ft_msg *m, uint64_t now);

/* This process saw rank fail (a dropped connection that the engine
 * confirmed, a supervisor's report, ...): learn it and flood it. Ignored
 * for ranks already known failed. */
void ft_det_declare(struct ft_detector *d, uint32_t rank, uint16_t how, uint64_t now);

/* The connection to peer broke and peer refuses new ones: only a ring
 * neighbour (the rank we watch or the one we send heartbeats to) acts on
 * it, and never for a rank that departed. Returns true if peer was
 * declared failed. */
bool ft_det_connection_lost(struct ft_detector *d, uint32_t peer, uint64_t now);

/* This process learned outside the control plane (the spawn handshake)
 * that e->rank joined (e: an FT_EV_JOINED entry, see
 * ft_overlay_join_entry): learn it and flood it. Ignored if known. */
void ft_det_join(struct ft_detector *d, const struct ft_entry *e, uint64_t now);

/* This process ends the job (MPI_Abort, a fatal error) with exit status
 * status: flood it, so that every rank ends too. */
void ft_det_abort(struct ft_detector *d, uint16_t status, uint64_t now);

/* This process entered MPI_Finalize: flood that it departs. */
void ft_det_depart(struct ft_detector *d, uint64_t now);

/* Every other rank joined has failed or departed: this process may leave. */
static inline bool ft_det_all_left(const struct ft_detector *d)
{
	return d->nleft + 1 >= d->njoined;
}

/* Whether rank is a member: in [0, cfg.njoined), this process, or known
 * to have joined. */
bool ft_det_is_joined(const struct ft_detector *d, uint32_t rank);

/* Whether this process knows rank failed (and not re-admitted since, or
 * failed again) / departed. */
bool ft_det_knows_failed(const struct ft_detector *d, uint32_t rank);
bool ft_det_knows_departed(const struct ft_detector *d, uint32_t rank);

#endif
