/* agreement.h: the agreement protocol of one process (MPIX_Comm_agree,
 * MPIX_Comm_shrink, ftshim's own agreements), as pure logic: the caller's
 * start, the protocol's messages, failures learned and communicators made
 * go in; messages to send and decisions come out through the callbacks of
 * struct ft_agree_ops. It does no I/O, reads no clock and takes no lock,
 * so the MPI side (pmpi/agree.c, on the detector thread and the
 * application's), the unit tests and the simulator (tools/sim.c) drive
 * the same code.
 *
 * A uniform, fault-tolerant agreement among the live members of a
 * communicator, numbered per communicator (every member calls them in the
 * same order). Each member sends its contribution (its flag, the members
 * it knows failed, those it has acknowledged) to the coordinator: the
 * member of lowest index it does not know failed. The coordinator waits
 * for every member it does not know failed, then decides the bitwise AND
 * of the flags received, the union of the failures reported (and of those
 * it knows), and whether every one of those was acknowledged by every
 * contributor; it sends the decision to every live member.
 *
 * If the coordinator dies, the members send their contributions to the
 * next one. A new coordinator (any but index 0) first asks every member
 * for a decision it may hold: a decision that reached anyone alive is
 * adopted and sent on, so every survivor returns the same result even
 * when the coordinator dies half-way through sending it. Decisions are
 * kept after the caller took them, to answer such questions.
 *
 * Ballots keep that uniform when messages race: a coordinator's ballot
 * is its index. A member that answers coordinator c's question promises
 * c to take no decision sent with a lower ballot from then on (a dead
 * coordinator's, still on its way), and c counts only contributions sent
 * under a promise of c or higher, so that it decides anew only when no
 * live member holds, or can still take, an older decision. A process
 * that takes a decision while others wait for it as their coordinator
 * (they knew of a failure before it did) sends it to them. Messages
 * about a communicator this process has not made yet (creation is not
 * ordered across processes) are kept and replayed when it is made.
 *
 * Members are indices in agreement order (ft_agree_order); the control
 * plane's addresses are world ranks, which the view maps them to.
 *
 * Thread rule: one thread at a time per struct ft_agreements (the caller
 * serialises every call, and the callbacks run inside them); nothing
 * here is shared. */
#ifndef FTSHIM_AGREEMENT_H
#define FTSHIM_AGREEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/comm_table.h"
#include "src/frame.h"

/* The protocol's messages (FT_MSG_APP, key: the communicator's id, seq:
 * the agreement's number on it). The values are the MPI side's kinds
 * (pmpi/state.h), which pmpi/agree.c asserts. CONTRIB: value the flag,
 * data u32 n, u32 the sender's promise, then the failed and the
 * acknowledged bitmaps. DECIDE: value the flag decided, data u32 n, u32
 * rc, u32 ballot (the sender's index, or FT_AGREE_REPORT for a member's
 * answer to a question), then the failed bitmap. ASK: no data. */
enum ft_agree_kind {
	FT_AGREE_CONTRIB = 2, /* a member's contribution */
	FT_AGREE_DECIDE = 3,  /* the decision */
	FT_AGREE_ASK = 4,     /* a new coordinator asks for decisions */
};

/* The ballot of a decision sent as an answer to a question: taken only by
 * the coordinator that asked. */
#define FT_AGREE_REPORT UINT32_MAX

/* One communicator as this process sees it, filled by ops.view. */
struct ft_agree_view {
	uint32_t n;       /* members, both groups of an intercommunicator */
	uint32_t self;    /* this process's index among them */
	int32_t *members; /* members[i]: member i's world rank, in agreement order */
};

struct ft_agreement;

struct ft_agree_ops {
	void *ctx;
	/* Fill v for communicator id, if this process has made it and is
	 * among its members; false otherwise (messages about it are kept). */
	bool (*view)(void *ctx, uint64_t id, struct ft_agree_view *v);
	/* Release what view filled in; may be NULL. */
	void (*view_done)(void *ctx, struct ft_agree_view *v);
	/* Whether this process knows world rank rank failed (ever: a rank
	 * re-admitted since stays out of agreements). */
	bool (*failed)(void *ctx, uint32_t rank);
	/* Send m to world rank to (never this process). */
	void (*send)(void *ctx, uint32_t to, const struct ft_msg *m);
	/* a has just been decided (a->value, a->rc, a->decided_failed);
	 * may be NULL. */
	void (*decided)(void *ctx, const struct ft_agreement *a);
};

/* One agreement, as a participant and (if it becomes one) as the
 * coordinator. Bitmaps have a bit per member, in agreement order. */
struct ft_agreement {
	uint64_t id;          /* the communicator's job-wide id */
	uint32_t seq;         /* the agreement's number on it */
	uint32_t n;           /* members (both groups) */
	/* as a participant */
	bool joined;          /* this process started it */
	bool wanted;          /* its caller has not taken the decision yet */
	uint64_t checked_ns;  /* when ft_agree_take last looked at the coordinator */
	uint32_t my_value;
	uint8_t *my_bits;     /* 2 * bytes(n): failed, then acknowledged */
	uint32_t sent_to;     /* the member the contribution went to, or UINT32_MAX */
	bool decided;
	uint32_t value;
	int rc;               /* 0, or ft_agreements.unacked_rc */
	uint8_t *decided_failed; /* bytes(n) */
	/* The highest coordinator this process answered (or is, having
	 * asked): decisions sent with a lower ballot are not taken. */
	uint32_t promised;
	uint8_t *heard;       /* bytes(n): members that sent a contribution here */
	/* as the coordinator */
	uint8_t *got;         /* bytes(n): contributions counted (under a promise) */
	uint32_t and_value;
	uint8_t *failed;      /* bytes(n): union of failures reported */
	uint8_t *acked;       /* bytes(n): intersection of acknowledgements */
	bool asked;           /* asked everyone for a decision (took over) */
	struct ft_agreement *next;
};

/* A message kept for a communicator not made yet. */
struct ft_agree_held {
	struct ft_agree_held *next;
	struct ft_msg m;
	uint8_t data[];
};

/* Every agreement one process knows, and the messages it keeps. */
struct ft_agreements {
	struct ft_agree_ops ops;
	int unacked_rc;           /* a decision's rc when a failure was not
				     acknowledged by every contributor */
	struct ft_agreement *all;
	struct ft_agree_held *held, **held_tail; /* oldest first */
	uint32_t nheld;
};

static inline size_t ft_agree_bytes(uint32_t n)
{
	return (n + 7) / 8;
}

static inline bool ft_agree_bit(const uint8_t *b, uint32_t i)
{
	return b[i / 8] & (1u << (i % 8));
}

void ft_agree_init(struct ft_agreements *t, const struct ft_agree_ops *ops, int unacked_rc);
/* Frees every agreement and kept message. */
void ft_agree_destroy(struct ft_agreements *t);

/* Start agreement seq of communicator id with this process's value, at
 * now (ns): contribute, with the members acked(arg, world rank) says this
 * process acknowledged (acked may be NULL: none). Returns the agreement,
 * kept until ft_agree_take has taken its decision, or NULL if the
 * communicator has no view or memory ran out. */
struct ft_agreement *ft_agree_start(struct ft_agreements *t, uint64_t id, uint32_t seq,
				    uint32_t value, bool (*acked)(void *arg, uint32_t rank),
				    void *arg, uint64_t now);

/* If a is decided, take the decision (*value, *rc and, when failed is not
 * NULL, the failed members into room for bytes(n)) and let the agreement
 * be forgotten in time; true then. While it is not, and at most every
 * FT_AGREE_RECHECK_NS, re-send the contribution if its coordinator is
 * known failed (in case that failure was learned without
 * ft_agree_failure). */
#define FT_AGREE_RECHECK_NS (50 * UINT64_C(1000000))
bool ft_agree_take(struct ft_agreements *t, struct ft_agreement *a, uint64_t now, uint32_t *value,
		   int *rc, uint8_t *failed);

/* A protocol message (m->app.kind an enum ft_agree_kind) from world rank
 * m->from. Kept if its communicator has no view yet. */
void ft_agree_receive(struct ft_agreements *t, const struct ft_msg *m);

/* Communicator id was made: the messages kept for it are received now. */
void ft_agree_created(struct ft_agreements *t, uint64_t id);

/* A process failed: contributions sent to a failed coordinator go to the
 * next one, and a coordinator may now have all it waits for. */
void ft_agree_failure(struct ft_agreements *t);

/* The order every member uses for agreements (and their bitmaps): an
 * intercommunicator's two groups each list their own group first, so the
 * group whose first member has the lower world rank goes first, as it
 * does on the other side. ft_agree_order writes c's members in that
 * order to out (room for both groups); ft_agree_index is the agreement
 * index of member j of c's local group (or, if remote, of its remote
 * group). */
void ft_agree_order(const struct ft_comm *c, int32_t *out);
uint32_t ft_agree_index(const struct ft_comm *c, bool remote, uint32_t j);

#endif
