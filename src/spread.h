/* spread.h: how one process passes on a piece of news meant for every
 * member of one communicator (a revocation) over the control plane, so
 * that it reaches every live member whatever set of members is dead.
 * Pure: no I/O, no clock, no threads; the MPI side (pmpi/revoke.c) and
 * the unit tests drive it.
 *
 * Whoever learns the news first sends it to its broadcast targets (the
 * topologies of src/ring.h: chord, BMG or hypercube), computed over the
 * members it does not know failed, indexed in communicator order; each
 * member forwards the news once, when it first learns it. A dead member
 * leaves no hole: the targets are indices among the live members, so the
 * next live member takes its index. While failures spread, members see
 * different dead sets, and a message to a member that just died is lost;
 * so a member that learns of a failure later computes its targets again
 * and sends to those it has not sent to yet (ft_spread_failed, then
 * ft_spread_due). Once every survivor knows the same dead set, every
 * informed survivor has sent to all its targets over that set, whose
 * graph is connected: every survivor is informed. Without failures while
 * it spreads, it takes at most ceil(log2 m) rounds for m live members,
 * and each member sends at most ceil(log2 m) messages (chord, hypercube)
 * or twice that (BMG).
 *
 * Thread rule: one thread at a time per struct ft_spread. */
#ifndef FTSHIM_SPREAD_H
#define FTSHIM_SPREAD_H

#include <stdbool.h>
#include <stdint.h>

#include "src/ring.h"

struct ft_spread {
	uint32_t self;          /* this process's index among the members */
	enum ft_bcast_kind kind;
	struct ft_ring live;    /* member indices; those known failed removed */
	uint8_t *sent;          /* bit i set: the news went to member i */
};

/* n members, this process at index self. 0, -EINVAL or -ENOMEM. */
int ft_spread_init(struct ft_spread *s, uint32_t n, uint32_t self, enum ft_bcast_kind kind);
void ft_spread_destroy(struct ft_spread *s);

/* Member i is known failed; true if that changed this view. Ignored for
 * this process itself and for indices out of range. */
bool ft_spread_failed(struct ft_spread *s, uint32_t i);

/* The members to send the news to now: this view's targets that it has
 * not gone to yet, at most max of them written to out (room for
 * ft_ring_max_targets(n) is always enough); they count as sent from now
 * on. Returns how many. */
uint32_t ft_spread_due(struct ft_spread *s, uint32_t *out, uint32_t max);

#endif
