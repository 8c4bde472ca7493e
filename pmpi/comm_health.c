/* comm_health.c: what failures did to a communicator ftshim tracks: a
 * member failed (cached per value of ftp.events in the entry's checked
 * and failed_member, which any application thread may write: the same
 * answer for the same value), one failed that it has not acknowledged,
 * it was revoked. Read by the checks before and during calls
 * (pmpi/block.c) and by MPI_Comm_free (pmpi/retire.c). */
#include "ftshim_config.h"

#include "pmpi/comm_health.h"
#include "pmpi/mode/mode.h"
#include "pmpi/ranks.h"
#include "pmpi/rts_state.h"
#include "pmpi/seam.h"

/* A member whose failure matters: not one whose program rank another
 * process carries on (the recovery mode covers it). */
static bool is_member(const struct ft_comm *core, int32_t job)
{
	return ftp_member_index(core, job) >= 0 && !ftp_mode_covered(job);
}

bool ftp_comm_failed_member(struct ftp_comm *e, uint64_t events)
{
	if (atomic_load_explicit(&e->checked, memory_order_acquire) == events)
		return atomic_load_explicit(&e->failed_member, memory_order_relaxed);
	const struct ft_comm *core = e->core;
	bool any = false;
	for (uint32_t i = 0; i < ftp_members(core) && !any; i++) {
		int32_t j = ftp_member_job(core, i);
		any = ft_proc_ever_failed(&ftp.procs, (uint32_t)j) && !ftp_mode_covered(j);
	}
	atomic_store_explicit(&e->failed_member, any, memory_order_relaxed);
	atomic_store_explicit(&e->checked, events, memory_order_release);
	return any;
}

bool ftp_comm_tainted(struct ftp_comm *e)
{
	uint64_t events = ftp_events();

	return events != 0 && (ft_comm_is_revoked(e->core) || ftp_comm_failed_member(e, events));
}

bool ftp_comm_unacked_failure(struct ftp_comm *e)
{
	uint32_t n = ft_proc_nfailed(&ftp.procs);

	for (uint32_t i = atomic_load_explicit(&e->acked, memory_order_acquire); i < n; i++)
		if (is_member(e->core, ftp.procs.order[i]) && !ftp_rts_recognized(e, ftp.procs.order[i]))
			return true;
	return false;
}
