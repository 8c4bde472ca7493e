/* rts_state.h: run-through stabilization's state of a communicator
 * (pmpi/rts_state.c), and what the rest of the library asks of it: a
 * recognized rank's translation, whether a failure was recognized, and
 * whether a collective runs among the members that MPI_Comm_validate_all
 * left. Each is one load and a test on an entry that no
 * MPI_Comm_validate* call has touched. The calls themselves are
 * pmpi/rts.c.
 *
 * Sharing: an entry's state is made by the first call of the interface
 * on it (ftp_rts_get) and freed with the entry (ftp_rts_release). Its
 * flags are atomic bytes: any application thread sets them (only ever
 * from 0 to 1), any reads. Its live members and collective count belong
 * to the communicator's collective calls, which MPI orders; each live
 * set is published with release order and kept until the entry goes, so
 * a nonblocking collective started on an older one still reads it. */
#ifndef FTSHIM_PMPI_RTS_STATE_H
#define FTSHIM_PMPI_RTS_STATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "pmpi/comm_lookup.h"
#include "pmpi/cover.h"

struct ftp_call;

/* A rank's flags on one communicator. */
enum {
	FTP_RTS_RECOGNIZED = 1, /* this process recognized its failure: MPI_RANK_NULL */
	FTP_RTS_AGREED = 2,	/* an MPI_Comm_validate_all agreed it failed */
};

/* The live members as of one MPI_Comm_validate_all: member i is program
 * rank prog[i], job rank job[i], rank world[i] on ftp.private_world. */
struct ftp_rts_live {
	struct ftp_rts_live *older; /* kept for collectives started on it */
	uint32_t n, me;
	/* Where its collectives' tags come from (ftp_coll_p2p_tag_seq): not
	 * the communicator's id, whose tags the MPI's collectives on it
	 * used before the failure (Open MPI's run over point-to-point on the
	 * private channel, and a round abandoned at the failure can leave
	 * a message there); one per validation, the same at every member. */
	uint64_t tag_id;
	uint32_t colls; /* collectives started on it */
	int32_t *world, *job, *prog;
	int32_t pos[]; /* per program rank: its member index, or -1 */
};

struct ftp_rts {
	struct ftp_cover cover;		   /* the entry's once a validation found a failure */
	uint32_t size;			   /* the communicator's ranks */
	struct ftp_rts_live *_Atomic live; /* NULL until a validation found a failure */
	uint32_t validations;		   /* those that found one */
	/* ftp.events when every failed member was last found agreed. */
	_Atomic uint64_t agreed_at;
	_Atomic uint8_t flags[];
};

static inline struct ftp_rts *ftp_rts_of(const struct ftp_comm *e)
{
	return atomic_load_explicit(&e->rts, memory_order_acquire);
}

static inline uint8_t ftp_rts_flags(const struct ftp_rts *r, uint32_t rank)
{
	return r ? atomic_load_explicit(&r->flags[rank], memory_order_acquire) : 0;
}

/* e's state, made on first use with a cover of kind (not yet e's); NULL
 * if memory ran out. */
struct ftp_rts *ftp_rts_get(struct ftp_comm *e, const struct ftp_cover_kind *kind);

/* Program rank r of e as the MPI should see it: MPI_PROC_NULL once this
 * process recognized r's failure on e, else r. */
int ftp_rts_rank_in(const struct ftp_comm *e, int r);

/* Whether this process recognized job rank j's failure on e. */
bool ftp_rts_recognized(const struct ftp_comm *e, int32_t j);

/* Before a collective (or collective creation) on c->comm that found a
 * failed member (err): if every failed member is one that
 * MPI_Comm_validate_all agreed on, MPI_SUCCESS for a collective that
 * run-through stabilization runs among the others (c then watches
 * FTP_WATCH_LIVE), or the refusal's error for any other; else err. */
int ftp_rts_pre_coll(struct ftp_call *c, int err);

/* FTP_WATCH_LIVE: every failed member of e, as of events, is one that
 * MPI_Comm_validate_all agreed on. */
bool ftp_rts_agreed_all(struct ftp_comm *e, uint64_t events);

/* Free e's state, with the entry. */
void ftp_rts_release(struct ftp_comm *e);

#endif
