/* ring.h: the heartbeat ring of the detector and the broadcast topology
 * built on it. Pure: no I/O, no clock, no threads.
 *
 * Every job rank has a position on the ring. With shuffling the
 * positions are a permutation drawn from a job-wide seed (every process
 * draws the same one), so that the ranks of one host, which are usually
 * consecutive, do not observe each other: losing a host then costs about
 * one heartbeat timeout, not one per rank (OCFTL thesis, section 4.2).
 *
 * A ring holds one process's view of who is still in it; a rank leaves
 * the ring when that process learns it failed. A job with room for
 * spawned processes has a ring over all its rank slots, positions drawn
 * as above, from which the detector removes the slots not yet joined; a
 * rank that joins is inserted at its position, so every process still
 * sees the same order. All queries count only the ranks still in the
 * ring, in position order, and run in O(log n) (a Fenwick tree over the
 * positions). */
#ifndef FTSHIM_RING_H
#define FTSHIM_RING_H

#include <stdbool.h>
#include <stdint.h>

#define FT_RANK_NONE UINT32_MAX

enum ft_bcast_kind {
	FT_BCAST_CHORD = 0,     /* to in-ring index i + 2^k (mod n), 2^k < n */
	FT_BCAST_BMG = 1,       /* to i + 2^k and i - 2^k (mod n), 2^k < n */
	FT_BCAST_HYPERCUBE = 2, /* to i XOR 2^k, when that is < n */
};

struct ft_ring {
	uint32_t n;          /* rank slots in the job; immutable */
	uint32_t nin;        /* ranks still in the ring */
	uint32_t *rank_at;   /* rank_at[pos]: the job rank at ring position pos */
	uint32_t *pos_of;    /* pos_of[rank]: the position of a job rank */
	uint8_t *in;         /* in[pos]: 1 while the rank at pos is in the ring */
	uint32_t *tree;      /* Fenwick tree over in[] (1-based, n entries) */
};

/* Positions are the identity (position = rank) unless shuffle is set, then
 * a permutation drawn from seed. 0 or -ENOMEM. */
int ft_ring_init(struct ft_ring *r, uint32_t n, bool shuffle, uint64_t seed);
void ft_ring_destroy(struct ft_ring *r);

/* Take rank out of the ring; true if it was in. */
bool ft_ring_remove(struct ft_ring *r, uint32_t rank);
/* Put a removed rank back at its position (re-admission, a rank that
 * joined); true if it was out. */
bool ft_ring_insert(struct ft_ring *r, uint32_t rank);
bool ft_ring_contains(const struct ft_ring *r, uint32_t rank);

/* The in-ring rank d steps from rank (d > 0 forward, d < 0 backward),
 * counting only the m in-ring ranks other than rank itself: steps 1..m
 * visit each of them once, step m + 1 is step 1 again. rank need not be
 * in the ring (then its position is the starting point). d == 0 gives
 * rank if it is in the ring. FT_RANK_NONE if no other rank is in the
 * ring, or rank is out of range. */
uint32_t ft_ring_step(const struct ft_ring *r, uint32_t rank, int64_t d);

static inline uint32_t ft_ring_successor(const struct ft_ring *r, uint32_t rank)
{
	return ft_ring_step(r, rank, 1);
}

static inline uint32_t ft_ring_predecessor(const struct ft_ring *r, uint32_t rank)
{
	return ft_ring_step(r, rank, -1);
}

/* Where rank sends a broadcast it starts or forwards: distinct in-ring
 * ranks other than itself, at most max of them written to out. Returns the
 * number written. rank must be in the ring. Indices are rank's index
 * among in-ring ranks in position order. */
uint32_t ft_ring_bcast_targets(const struct ft_ring *r, uint32_t rank, enum ft_bcast_kind kind,
			       uint32_t *out, uint32_t max);

/* The most targets any kind produces for n ranks (2 * ceil(log2 n)). */
uint32_t ft_ring_max_targets(uint32_t n);

#endif
