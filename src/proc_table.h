/* proc_table.h: the process table, one entry per job rank, and the
 * global failure epoch.
 *
 * Sharing: the detector thread (and, for its own rank, the application
 * thread) marks ranks failed; any thread reads. A rank's state only moves
 * forward, ALIVE -> FAILED, by compare-and-swap, except with re-admission
 * (FTSHIM_READMIT): FAILED -> READMITTED -> FAILED, once, written by the
 * detector thread only. A re-admitted rank is alive for point-to-point
 * (ft_proc_is_failed is false) but stays failed for every communicator
 * that had it (ft_proc_ever_failed), and keeps its place in the order
 * list: what ULFM acknowledged stays acknowledged. The details of the failure
 * (how, when, who told us) are written by the one caller that wins the
 * swap, before it publishes FAILED with release order, so a reader that
 * sees FAILED with acquire order also sees the details. After each change
 * the epoch is bumped with release order: a wrapper's fast path is one
 * acquire load of the epoch, compared with the value it saw last. */
#ifndef FTSHIM_PROC_TABLE_H
#define FTSHIM_PROC_TABLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* How a failure was learned; X(enum, keyword used in logs and reports). */
/* The values travel in frames (u16): append, never renumber. */
#define FT_FAIL_HOWS(X) \
	X(FT_HOW_NONE, "unknown") \
	X(FT_HOW_CONN_LOST, "crash (its sockets closed and its port refuses)") \
	X(FT_HOW_HB_TIMEOUT, "heartbeat timeout") \
	X(FT_HOW_NOTICE, "notice from another rank") \
	X(FT_HOW_EXITED, "crash (its process ended, seen on its host)")

#define FT_HOW_ENUM(e, s) e,
enum ft_fail_how { FT_FAIL_HOWS(FT_HOW_ENUM) FT_HOW_COUNT };
#undef FT_HOW_ENUM

extern const char *const ft_fail_how_names[FT_HOW_COUNT];

/* Whether a failure learned so is a death seen (a crash), not silence. */
static inline bool ft_how_is_crash(uint32_t how)
{
	return how == FT_HOW_CONN_LOST || how == FT_HOW_EXITED;
}

enum ft_proc_state {
	FT_PROC_ALIVE = 0,
	FT_PROC_CLAIMED = 1, /* a writer is filling in the details; reads as alive */
	FT_PROC_FAILED = 2,
	FT_PROC_READMITTED = 3, /* failed, then heard again and re-admitted */
};

struct ft_proc {
	_Atomic uint32_t state;  /* enum ft_proc_state; see the header comment */
	uint32_t how;            /* enum ft_fail_how: how it was first seen; valid once FAILED */
	int32_t detector;        /* the job rank that first saw it; valid once FAILED */
	int32_t told_by;         /* the job rank this process heard it from (itself
				    if it saw it); valid once FAILED */
	uint64_t learned_ns;     /* ft_clock_now() when this process learned it */
};

struct ft_proc_table {
	uint32_t size;             /* world size; immutable after init */
	_Atomic uint64_t epoch;    /* bumped (release) after every change */
	_Atomic uint32_t nfailed;  /* number of FAILED entries, and of order[] */
	_Atomic uint32_t nreserved; /* slots of order[] taken by writers */
	struct ft_proc *procs;     /* size entries; immutable pointer */
	int32_t *order;            /* the failed ranks in the order this process
				      learned them; order[i] is written before
				      nfailed passes i (release), so readers load
				      nfailed (acquire) first. Prefixes of it are
				      what ULFM acknowledges. */
};

/* Thread rule: init and destroy from one thread, while no other uses it. */
int ft_proc_table_init(struct ft_proc_table *t, uint32_t size);
void ft_proc_table_destroy(struct ft_proc_table *t);

/* Mark rank failed. Returns true if this call made the change (the first
 * report wins), false if it was already failed or is out of range. Safe
 * from any thread (concurrent writers wait for each other only to publish
 * the order list in order); not meant for signal handlers. */
bool ft_proc_mark_failed(struct ft_proc_table *t, uint32_t rank, enum ft_fail_how how,
			 int32_t detector, int32_t told_by, uint64_t learned_ns);

static inline bool ft_proc_is_failed(const struct ft_proc_table *t, uint32_t rank)
{
	/* acquire: pairs with the release store in ft_proc_mark_failed, so the
	 * details are visible to whoever sees FAILED. */
	return rank < t->size &&
	       atomic_load_explicit(&t->procs[rank].state, memory_order_acquire) == FT_PROC_FAILED;
}

/* ft_proc_is_failed in sequentially consistent order: for a reader that
 * wrote a flag just before, and needs either to see the failure or to
 * have its flag seen by whoever records it (pmpi/hangwatch.c). */
static inline bool ft_proc_is_failed_sc(const struct ft_proc_table *t, uint32_t rank)
{
	return rank < t->size && atomic_load(&t->procs[rank].state) == FT_PROC_FAILED;
}

/* Failed now, or failed and re-admitted since: what communicators go by. */
static inline bool ft_proc_ever_failed(const struct ft_proc_table *t, uint32_t rank)
{
	if (rank >= t->size)
		return false;
	uint32_t s = atomic_load_explicit(&t->procs[rank].state, memory_order_acquire);

	return s == FT_PROC_FAILED || s == FT_PROC_READMITTED;
}

/* FTSHIM_READMIT: a failed rank is back (true), or has failed again
 * (ft_proc_mark_failed_again, true if it was re-admitted). Each bumps
 * the epoch; neither touches the order list. Detector thread only. */
bool ft_proc_readmit(struct ft_proc_table *t, uint32_t rank);
bool ft_proc_mark_failed_again(struct ft_proc_table *t, uint32_t rank);

static inline uint64_t ft_proc_epoch(const struct ft_proc_table *t)
{
	/* acquire: whoever sees the new epoch sees every state change before it. */
	return atomic_load_explicit(&t->epoch, memory_order_acquire);
}

/* The failed ranks, in the order learned: n = ft_proc_nfailed(t), then
 * t->order[0..n). */
static inline uint32_t ft_proc_nfailed(const struct ft_proc_table *t)
{
	return atomic_load_explicit(&t->nfailed, memory_order_acquire);
}

/* Copy the ranks failed now (re-admitted ones aside) in ascending order
 * into out (room for max); returns how many there are (which may exceed
 * max). */
uint32_t ft_proc_failed_list(const struct ft_proc_table *t, int32_t *out, uint32_t max);

#endif
