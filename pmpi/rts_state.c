/* rts_state.c: run-through stabilization's state of a communicator
 * (pmpi/rts_state.h says who writes and who reads it): made on the first
 * MPI_Comm_validate* call, asked by the seam's translation of ranks, the
 * checks of MPI_ANY_SOURCE receives and of collectives, and freed with
 * the entry. No MPI call here: the interface's calls and the collectives
 * among the live members are pmpi/rts.c. */
#include "ftshim_config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pmpi/rts_state.h"
#include "pmpi/call_record.h"
#include "pmpi/errors.h"
#include "pmpi/ranks.h"
#include "pmpi/state.h"
#include "src/comm_table.h"

struct ftp_rts *ftp_rts_get(struct ftp_comm *e, const struct ftp_cover_kind *kind)
{
	struct ftp_rts *r = ftp_rts_of(e), *none = NULL;

	if (r)
		return r;
	uint32_t size = e->core->local_size;
	r = calloc(1, sizeof *r + size * sizeof r->flags[0]);
	if (!r)
		return NULL;
	r->size = size;
	r->cover.kind = kind;
	if (!atomic_compare_exchange_strong_explicit(&e->rts, &none, r, memory_order_acq_rel,
						     memory_order_acquire)) {
		free(r);
		return none;
	}
	return r;
}

int ftp_rts_rank_in(const struct ftp_comm *e, int r)
{
	const struct ftp_rts *s = ftp_rts_of(e);

	if (s && r >= 0 && (uint32_t)r < s->size &&
	    (ftp_rts_flags(s, (uint32_t)r) & FTP_RTS_RECOGNIZED))
		return MPI_PROC_NULL;
	return r;
}

bool ftp_rts_recognized(const struct ftp_comm *e, int32_t j)
{
	const struct ftp_rts *r = ftp_rts_of(e);
	int i = r ? ftp_member_index(e->core, j) : -1;

	return i >= 0 && (uint32_t)i < r->size &&
	       (ftp_rts_flags(r, (uint32_t)i) & FTP_RTS_RECOGNIZED);
}

bool ftp_rts_agreed_all(struct ftp_comm *e, uint64_t events)
{
	struct ftp_rts *r = ftp_rts_of(e);

	if (!r || !atomic_load_explicit(&r->live, memory_order_acquire))
		return false;
	if (atomic_load_explicit(&r->agreed_at, memory_order_acquire) == events)
		return true;
	for (uint32_t i = 0; i < r->size; i++)
		if (!(ftp_rts_flags(r, i) & FTP_RTS_AGREED) &&
		    ft_proc_ever_failed(&ftp.procs, (uint32_t)ftp_member_job(e->core, i)))
			return false;
	/* Agreed failures only grow, so the answer holds until events moves. */
	atomic_store_explicit(&r->agreed_at, events, memory_order_release);
	return true;
}

/* The collectives the cover runs, by name (a large-count form runs as its
 * base when its counts fit). */
static const char *const forms[] = {
    "MPI_Barrier",  "MPI_Bcast",     "MPI_Reduce",	   "MPI_Allreduce",
    "MPI_Scan",	    "MPI_Exscan",    "MPI_Gather",	   "MPI_Gatherv",
    "MPI_Scatter",  "MPI_Scatterv",  "MPI_Allgather",	   "MPI_Allgatherv",
    "MPI_Alltoall", "MPI_Alltoallv", "MPI_Reduce_scatter", "MPI_Reduce_scatter_block",
};

static bool form_of[FTP_FN_COUNT];
static pthread_once_t forms_once = PTHREAD_ONCE_INIT;

static void forms_init(void)
{
	for (int fn = 0; fn < FTP_FN_COUNT; fn++) {
		const char *name = ftp_fn_name((enum ftp_fn)fn);
		size_t len = strlen(name);
		if (len > 2 && strcmp(name + len - 2, "_c") == 0)
			len -= 2;
		/* The nonblocking form: MPI_Ibcast for MPI_Bcast. */
		bool nonblocking = strncmp(name, "MPI_I", 5) == 0;
		for (size_t k = 0; k < sizeof forms / sizeof forms[0]; k++) {
			const char *base = forms[k] + 4; /* after "MPI_" */
			size_t at = nonblocking ? 5 : 4;
			if (len == at + strlen(base) &&
			    strncasecmp(name + at, base, strlen(base)) == 0)
				form_of[fn] = true;
		}
	}
}

int ftp_rts_pre_coll(struct ftp_call *c, int err)
{
	struct ftp_comm *e = c->comm;
	struct ftp_rts *r = e ? ftp_rts_of(e) : NULL;

	if (!r || e->cover != &r->cover || ft_comm_is_revoked(e->core) ||
	    !ftp_rts_agreed_all(e, atomic_load_explicit(&ftp.events, memory_order_acquire)))
		return err;
	pthread_once(&forms_once, forms_init);
	/* What the cover cannot run would wait on the failed members. */
	if (!form_of[c->fn])
		return ftp_mode_refuse(c);
	c->watch = (struct ftp_watch){.kind = FTP_WATCH_LIVE};
	return MPI_SUCCESS;
}

void ftp_rts_release(struct ftp_comm *e)
{
	struct ftp_rts *r = atomic_exchange_explicit(&e->rts, NULL, memory_order_acq_rel);

	if (!r)
		return;
	for (struct ftp_rts_live *l = atomic_load_explicit(&r->live, memory_order_relaxed), *older;
	     l; l = older) {
		older = l->older;
		free(l);
	}
	free(r);
}
