/* coll_sched.h: MPI's collectives as schedules of point-to-point steps,
 * for a communicator whose collectives the MPI cannot run because some
 * of its real members are dead (a view: the live ranks of a real
 * communicator, renumbered, that recovery makes without entering the
 * MPI's blocking constructors; docs/DESIGN.md, "Recovery without the
 * MPI's constructors"). For one rank `me` of n, ft_coll_sched lists the
 * steps that rank takes, in order: sends and receives of spans of its
 * buffers, copies between them, and reductions. The sends and receives
 * of one group are posted together and completed together before the
 * next group starts, so a pairwise exchange cannot deadlock; a local
 * step runs when it is reached. Every rank's schedule for the same
 * call matches every other's, message for message, in the order MPI's
 * non-overtaking rule matches them (one tag per call).
 *
 * A span counts elements of its buffer's type, from an offset in
 * elements of that type's extent (as MPI's displacements do): the send
 * buffer has the send type, the receive buffer the receive type, and
 * the two scratch buffers the receive type (which is the reduction's
 * one type). A copy between buffers of different types is a typed copy
 * (the executor may run it as a send to itself); a reduction applies the
 * operation as MPI_Reduce_local does, inout := in op inout, with `in`
 * always holding the lower ranks' contribution, so a non-commutative
 * operation gets the order MPI requires.
 *
 * Algorithms: a dissemination barrier; a binomial broadcast; a binomial
 * reduction towards rank 0 that keeps rank order (then to the root);
 * allreduce by recursive doubling (pairs folded first when n is not a
 * power of two) up to FT_COLL_ALLREDUCE_RD_BYTES, above as that
 * reduction and a broadcast; linear gathers and
 * scatters at the root; a ring allgather; a pairwise alltoall, its
 * pairs posted ft_coll_sched_alltoall_batch at a time;
 * reduce-scatter as a reduction and a scatter; a chain for scan and
 * exscan. Correct first: these are for the few communicators that
 * recovery made, not for the failure-free path.
 *
 * Pure: no MPI, no locks; one thread builds and reads a schedule. */
#ifndef FTSHIM_COLL_SCHED_H
#define FTSHIM_COLL_SCHED_H

#include <stdbool.h>
#include <stdint.h>

enum ft_coll_kind {
	FT_COLL_BARRIER,
	FT_COLL_BCAST,
	FT_COLL_REDUCE,
	FT_COLL_ALLREDUCE,
	FT_COLL_GATHER,
	FT_COLL_GATHERV,
	FT_COLL_SCATTER,
	FT_COLL_SCATTERV,
	FT_COLL_ALLGATHER,
	FT_COLL_ALLGATHERV,
	FT_COLL_ALLTOALL,
	FT_COLL_ALLTOALLV,
	/* MPI_Alltoallw: as ALLTOALLV, but its spans count bytes of its
	 * buffers (the displacements are in bytes) and each step's peer
	 * names the type of its block (the executor's, per peer); a copy
	 * of raw bytes has peer -1. */
	FT_COLL_ALLTOALLW,
	FT_COLL_REDUCE_SCATTER_BLOCK,
	FT_COLL_REDUCE_SCATTER,
	FT_COLL_SCAN,
	FT_COLL_EXSCAN,
};

/* A collective's arguments, as MPI names them (the types are the
 * executor's). Counts and displacements are the program's arrays of n,
 * read only while the schedule is built; NULL where the call has none.
 * in_place: the program passed MPI_IN_PLACE (as the send buffer; as the
 * receive buffer for MPI_Scatter(v) at the root). */
struct ft_coll_args {
	enum ft_coll_kind kind;
	int32_t root;
	int64_t scount, rcount; /* MPI_Bcast, the reductions: rcount */
	const int *scounts, *sdispls, *rcounts, *rdispls;
	bool in_place;
	/* FT_COLL_ALLTOALLW in place: the bytes of the receive buffer, from
	 * its start, that its blocks span (copied out first). */
	int64_t w_span;
	/* The bytes of one element of the receive type (0: not known), for
	 * choosing between algorithms. */
	int64_t elem_bytes;
};

enum ft_coll_buf {
	FT_CB_NONE = 0, /* an empty message (the barrier's) */
	FT_CB_SEND,
	FT_CB_RECV,
	FT_CB_TMP_A,
	FT_CB_TMP_B,
};

struct ft_coll_span {
	enum ft_coll_buf buf;
	int64_t off, count;
};

enum ft_coll_op {
	FT_CS_SEND,   /* a to peer */
	FT_CS_RECV,   /* a from peer */
	FT_CS_COPY,   /* a to b */
	FT_CS_REDUCE, /* b := a op b (a: the lower ranks') */
};

struct ft_coll_step {
	enum ft_coll_op op;
	int32_t peer;
	/* Steps with the same group run together: consecutive sends and
	 * receives of one group are posted at once; a local step is a
	 * group of its own. */
	uint32_t group;
	struct ft_coll_span a, b;
};

struct ft_coll_sched {
	struct ft_coll_step *steps;
	uint32_t nsteps, cap;
	/* Elements each scratch buffer must hold (of the receive type). */
	int64_t tmp_count[2];
};

/* The schedule of rank me of n for a's collective, in s (which
 * ft_coll_sched_fini frees): 0, -EINVAL (n 0, me or the root out of
 * range, a negative count, a v-form without its arrays), -ENOMEM. */
int ft_coll_sched(const struct ft_coll_args *a, uint32_t n, uint32_t me, struct ft_coll_sched *s);

/* The largest allreduce (bytes at each rank) run by recursive doubling,
 * which sends the whole vector each round, log2 n rounds; a larger one
 * is a reduction and a broadcast. */
#define FT_COLL_ALLREDUCE_RD_BYTES 8192

/* How many pairs of an alltoall one group holds: 32, or what the unit
 * tests set (they simulate fewer ranks). Set before any schedule is
 * built; read by every builder. */
extern uint32_t ft_coll_sched_alltoall_batch;
void ft_coll_sched_fini(struct ft_coll_sched *s);

#endif
