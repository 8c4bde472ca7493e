/* seam.h: the communicator seam, the one way between the program's view
 * of a communicator and the MPI's. A wrapper finds what ftshim knows of
 * the program's handle only through ftp_seam_comm (or its cache-only fast
 * form, ftp_seam_cached), hands the MPI the entry's real handle, and
 * translates the parameters that pmpi/ftshim-api.tsv gives a role:
 * program ranks to the MPI's going in (dest, source, root, rank), the
 * MPI's to the program's coming out (rank_out, a status's MPI_SOURCE, a
 * group in program order). An entry with no rank map (every
 * communicator unless a recovery mode covers it) translates nothing: each
 * translation is then one test of a pointer, on the general path only,
 * since ftp_seam_cached never returns a mapped entry. A recovery mode
 * that hands the MPI a communicator of its own gives the entry a map
 * (src/rank_map.h) and a cover (ftp_seam_covered); what it does beyond
 * translating, its forms and each call's role say (pmpi/mode/mode.h). */
#ifndef FTSHIM_PMPI_SEAM_H
#define FTSHIM_PMPI_SEAM_H

#include <mpi.h>

#include "pmpi/comm_lookup.h"
#include "pmpi/state.h"
#include "pmpi/inject.h"
#include "pmpi/rts_state.h"
#include "src/rank_map.h"

/* The failure-free path of a wrapper is inlined whole: in a file of some
 * 400 wrappers GCC would otherwise call these out of line, and at a few
 * hundred instructions per small message every call and spill shows. */
#define FTP_HOT static inline __attribute__((always_inline))

/* ftp.events, with acquire order: whoever sees it change sees the process
 * table and revoked flags that changed before. */
FTP_HOT uint64_t ftp_events(void)
{
	return atomic_load_explicit(&ftp.events, memory_order_acquire);
}

/* The entrance: the entry of the program's handle, or NULL when ftshim
 * does not track it (or is not running), and the call passes straight
 * through. */
FTP_HOT struct ftp_comm *ftp_seam_comm(MPI_Comm handle)
{
	return ftp_active() ? ftp_comm_lookup(handle) : NULL;
}

/* e is covered by the active recovery mode (pmpi/mode/mode.h): every
 * wrapper with a communicator asks, on its general path, and hands a
 * covered call to the mode's form, runs it as on any communicator, or
 * refuses it, as the mode says. */
FTP_HOT bool ftp_seam_covered(const struct ftp_comm *e)
{
	return __builtin_expect(e && e->cover, 0);
}

/* The handle to give the MPI for a program's handle: a call's second
 * communicator (role other_comm). */
static inline MPI_Comm ftp_seam_real(MPI_Comm handle)
{
	struct ftp_comm *e = ftp_seam_comm(handle);

	return e ? e->real : handle;
}

/* The same entrance for the fast path of the blocking point-to-point
 * wrappers (pmpi/call.h): the entry of the communicator this thread used
 * last, if it is handle's and nothing has happened since (no failure or
 * revocation known, no injection counting calls); else NULL, and the
 * wrapper takes the general path. The cache holds no handle without its
 * entry, no entry with a rank map, and no communicator has the handle a
 * zeroed cache holds. */
FTP_HOT struct ftp_comm *ftp_seam_cached(MPI_Comm handle)
{
	const struct ftp_comm_cache *k = &ftp_comm_cache;

	if (k->handle != handle || ftp_events() != 0 ||
	    k->erasures != atomic_load_explicit(&ftp_comm_erasures, memory_order_acquire) ||
	    !ftp_active() || atomic_load_explicit(&ftp_inject_counting, memory_order_relaxed))
		return NULL;
	return k->entry;
}

/* Whether any entry has a rank map (ftp_seam_maps, pmpi/state.h). */
static inline bool ftp_seam_mapped(void)
{
	return atomic_load_explicit(&ftp_seam_maps, memory_order_relaxed) != 0;
}

/* --- translations, by parameter role (e: the call's entry, or NULL) ------ */

/* Roles dest, source, root, rank: the MPI's rank for a program rank. */
FTP_HOT int ftp_rank_in(const struct ftp_comm *e, int r)
{
	if (!e)
		return r;
	if (e->map)
		return ft_rank_map_in(e->map, r);
	/* A rank whose failure this process recognized (pmpi/rts.c). */
	if (__builtin_expect(atomic_load_explicit(&e->rts, memory_order_acquire) != NULL, 0))
		return ftp_rts_rank_in(e, r);
	return r;
}

/* Role peer_rank: a rank of the call's other communicator. */
static inline int ftp_peer_rank_in(MPI_Comm other, int r)
{
	return ftp_rank_in(ftp_seam_comm(other), r);
}

/* Role rank_out: the program's rank for the MPI's rank *r; a process
 * that no program rank addresses is MPI_UNDEFINED. */
FTP_HOT void ftp_rank_out(const struct ftp_comm *e, int *r)
{
	if (e && e->map && *r >= 0) {
		int32_t p = ft_rank_map_out(e->map, *r);
		*r = p >= 0 ? p : MPI_UNDEFINED;
	}
}

/* Role size_out: the number of the program's ranks. */
FTP_HOT void ftp_size_out(const struct ftp_comm *e, int *size)
{
	if (e && e->map)
		*size = (int)e->map->size;
}

/* The number of the program's ranks of e's communicator (the length of
 * a v-form's count arrays). */
static inline int ftp_seam_size(const struct ftp_comm *e)
{
	int size = 0;

	ftp_mpi.PMPI_Comm_size(e->real, &size);
	ftp_size_out(e, &size);
	return size;
}

/* Role status_out: MPI_SOURCE, unless the status is ignored. */
FTP_HOT void ftp_status_out(const struct ftp_comm *e, MPI_Status *status)
{
	if (e && e->map && status != MPI_STATUS_IGNORE)
		ftp_rank_out(e, &status->MPI_SOURCE);
}

/* Role group_out: the group a call returned (*group, the MPI's
 * communicator's) in the program's order: member r is what program rank r
 * addresses. */
static inline int ftp_group_out_mapped(const struct ftp_comm *e, MPI_Group *group)
{
	MPI_Group ordered;
	int rc = ftp_mpi.PMPI_Group_incl(*group, (int)e->map->size, e->map->real_of, &ordered);

	if (rc != MPI_SUCCESS)
		return rc;
	ftp_mpi.PMPI_Group_free(group);
	*group = ordered;
	return MPI_SUCCESS;
}

FTP_HOT int ftp_group_out(const struct ftp_comm *e, int rc, MPI_Group *group)
{
	return rc == MPI_SUCCESS && e && e->map ? ftp_group_out_mapped(e, group) : rc;
}

/* Roles ranks, ranks_out: arrays of ranks (topologies) are not translated;
 * a call with them on a mapped communicator is refused, but for a
 * creation on a covered one, where the cover decides (a view makes
 * graph topologies on its base, whose ranks are the view's), and a call
 * the cover has a form of (replication answers its graph queries in the
 * program's ranks). */
FTP_HOT int ftp_ranks_unmapped(const struct ftp_comm *e)
{
	return e && e->map ? MPI_ERR_UNSUPPORTED_OPERATION : MPI_SUCCESS;
}

#endif
