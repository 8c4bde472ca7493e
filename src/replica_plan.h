/* replica_plan.h: which launched process serves which logical rank under
 * transparent partial replication (FTSHIM_REPLICAS). The program sees n
 * ranks; ftshim launches n + r processes and runs r of the logical ranks
 * twice, as a primary and a replica that takes over when the primary
 * dies. Real ranks 0 .. n-1 are the primaries (or only copies) of logical
 * ranks 0 .. n-1; real ranks n .. n+r-1 are the replicas, each placed on
 * a host other than its primary's wherever that is possible, so that one
 * lost host takes as few logical ranks as it can. Every process computes
 * the same plan from the same inputs: the FTSHIM_REPLICAS value, the
 * launch size and the host of every rank, which every process learns at
 * MPI_Init. The communicator seam (pmpi/) is to build its rank maps from
 * it. Pure arithmetic: no MPI. A plan is built once and read only
 * afterwards, from any thread. */
#ifndef FTSHIM_REPLICA_PLAN_H
#define FTSHIM_REPLICA_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest count FTSHIM_REPLICAS accepts. */
#define FT_REPLICAS_MAX 1048576u

/* What a launch is split for, as the messages name it: the variable
 * that asks, the processes it adds and those that run the program.
 * Replicas are at most one per logical rank; spares leave at least one
 * program rank. */
struct ft_split_kind {
	const char *variable; /* "FTSHIM_REPLICAS" */
	const char *extra;    /* "replica" */
	const char *base;     /* "logical rank" */
	bool one_per_base;    /* a count may not exceed the base ranks */
};
extern const struct ft_split_kind ft_split_replicas, ft_split_spares;

/* FTSHIM_REPLICAS (or FTSHIM_SPARES), parsed: a count of the added
 * processes, or a percentage of the ranks that run the program. */
struct ft_replica_spec {
	uint32_t value;
	bool percent;
};

/* Parse kind's variable: "" or "0" (none), a count "4" (0 to
 * FT_REPLICAS_MAX) or a percentage "50%" (1% to 100%), with no blanks.
 * Returns 0, or -EINVAL with one line in err naming the value and what is
 * accepted. */
int ft_replica_spec_parse(const struct ft_split_kind *kind, const char *text,
			  struct ft_replica_spec *spec, char *err, size_t errlen);

/* Split `launched` processes into *n logical ranks and *r replicas (or
 * spares, by kind). A count R gives n = launched - R, refused if R > n
 * (replicas) or n is 0 (spares). A percentage p gives
 * r = ceil(n p / 100) for the one n with n + r == launched (n + r grows
 * strictly with n), refused if there is none, naming the nearest launch
 * sizes that have one. Returns 0, or -EINVAL with one line in err. */
int ft_replica_split(const struct ft_split_kind *kind, const struct ft_replica_spec *spec,
		     uint32_t launched, uint32_t *n, uint32_t *r, char *err, size_t errlen);

struct ft_replica_plan {
	uint32_t n, r;	     /* logical ranks; replicas */
	int32_t *replica_of; /* [n]: the real rank of logical rank l's replica, or -1 */
	int32_t *logical_of; /* [n + r]: the logical rank real rank k serves (k for k < n) */
};

/* Give each replica its logical rank. host_of[k] (n + r entries) is an
 * opaque host id of real rank k. The plan puts as many replicas as
 * possible on a host other than their primary's: a maximum bipartite
 * matching between replicas and logical ranks on different hosts, grown
 * by augmenting paths (Kuhn) with the replicas taken in real-rank order,
 * each taking the lowest free logical rank off its host when there is
 * one. Replicas left unmatched then take the lowest logical ranks left,
 * in real-rank order: on one host, replica n + j serves logical rank j.
 * Deterministic: the same inputs give the same plan on every process.
 * Returns 0, -EINVAL (r > n, n + r past INT32_MAX, or no host_of), or
 * -ENOMEM; the plan is zeroed on failure. */
int ft_replica_plan_make(struct ft_replica_plan *plan, uint32_t n, uint32_t r,
			 const uint32_t *host_of);

/* Free and zero the plan; harmless on a zeroed or finished plan. */
void ft_replica_plan_fini(struct ft_replica_plan *plan);

/* Whether real rank k is a replica (n <= k < n + r). */
static inline bool ft_replica_plan_is_replica(const struct ft_replica_plan *plan, int32_t k)
{
	return k >= 0 && (uint32_t)k >= plan->n && (uint32_t)k - plan->n < plan->r;
}

/* The real rank of the other copy of real rank k's logical rank (a
 * primary's replica, a replica's primary), or -1 if it has one copy or k
 * is no real rank. */
static inline int32_t ft_replica_plan_partner(const struct ft_replica_plan *plan, int32_t k)
{
	if (k < 0)
		return -1;
	if ((uint32_t)k < plan->n)
		return plan->replica_of[k];
	return ft_replica_plan_is_replica(plan, k) ? plan->logical_of[k] : -1;
}

#endif
