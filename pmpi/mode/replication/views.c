/* views.c: applying the failures this process learns to the views of
 * its replicated communicators (ftp_repl_views, called by ftp_check and
 * before a replicated call picks its peers): a dead replica leaves every
 * view, its receivers settle what they had from it and its primary goes
 * on alone; a dead primary whose replica lives is promoted (promote.c),
 * and the teams are rebuilt (team.c). ftp_repl_await_view waits until a
 * death is applied. Both are the mode's hooks (hooks.c): the core calls
 * them, and so do this folder's lower files, through the contract
 * (ftp_mode_failures, ftp_mode_await_peer). Application thread. */
#include "ftshim_config.h"

#include "pmpi/mode/replication/views.h"
#include "pmpi/mode/replication/comm.h"
#include "pmpi/mode/replication/counts.h"
#include "pmpi/mode/replication/promote.h"
#include "pmpi/mode/replication/recv.h"
#include "pmpi/mode/replication/stream.h"
#include "pmpi/mode/replication/team.h"
#include "src/events.h"
#include "src/log.h"

/* Failures of ftp.procs.order[0 .. views_applied) are applied here
 * (ftp_repl_in_views, state.c, is set while one is). */
static uint32_t views_applied;

/* Replica `dead` (of logical rank l) died: nobody addresses it any more.
 * A replica settles its receives from it and tells l's primary what it
 * has; the primary goes on alone and serves those counts. */
static void drop_copy(int32_t dead)
{
	int32_t l = ftp_repl.plan.logical_of[dead];

	if (ftp_repl_replica_class())
		ftp_repl_settle_recvs_from(dead);
	ftp_repl.dropped[dead] = 1;
	ftp_repl.plan.replica_of[l] = -1;
	ftp_repl_view_forget(dead);
	if (ftp_repl_replica_class()) {
		ftp_repl_tell_counts(l, l);
		ftp_repl_repost_recvs_from(dead);
	} else if (ftp.rank == l) {
		ftp_repl.partner = -1;
		ftp_repl.copy = FTP_COPY_SINGLE;
		ftp_repl_serve_counts(dead);
		ft_info("the replica of rank %d (process %d) is gone: rank %d goes on alone", l, dead,
			l);
		ft_events_add(ftp_wall_now(), "replica_lost", ",\"program_rank\":%d,\"replica\":%d", l,
			      dead);
	}
}

/* Failures of ftp.procs.order[0 .. views_applied) are applied. */
static bool death_applied(int32_t w)
{
	for (uint32_t i = 0; i < views_applied; i++)
		if (ftp.procs.order[i] == w)
			return true;
	return false;
}

void ftp_repl_views(void)
{
	if (ftp_repl.r == 0 || ftp_repl_in_views || !ftp_active())
		return;
	if (ftp_repl_resends)
		ftp_repl_resends_progress(false);
	uint32_t n = ft_proc_nfailed(&ftp.procs);
	if (views_applied >= n)
		return;
	ftp_repl_in_views = true;
	for (;;) {
		while (views_applied < (n = ft_proc_nfailed(&ftp.procs))) {
			int32_t dead = (int32_t)ftp.procs.order[views_applied++];
			int32_t l = dead >= 0 ? ftp_repl.plan.logical_of[dead] : -1;
			if (l < 0)
				continue;
			int32_t rw = ftp_repl.plan.replica_of[l];
			if (ftp_repl_is_replica_world(dead) && !ftp_repl.dropped[dead] &&
			    rw == dead)
				drop_copy(dead);
			else if (!ftp_repl_is_replica_world(dead) && rw >= 0 &&
				 !ft_proc_is_failed(&ftp.procs, (uint32_t)rw))
				ftp_repl_promote(dead);
		}
		/* Rebuilt once every death known here is applied; a member that
		 * dies meanwhile is applied, and the teams rebuilt again. */
		if (!ftp_repl_rebuild_pending || ftp_repl.copy == FTP_COPY_REPLICA ||
		    ftp_repl_teams_rebuild())
			break;
	}
	ftp_repl_rebuild_pending = false;
	if (ftp_repl.copy == FTP_COPY_PROMOTED && ftp_repl_following() &&
	    !ftp_repl_records_left(ftp_repl.partner))
		ftp_repl_carry_on();
	ftp_repl_in_views = false;
	/* Answers cached under the old value counted the dropped copies. */
	atomic_fetch_add_explicit(&ftp.events, 1, memory_order_release);
}

void ftp_repl_await_view(int32_t w)
{
	uint64_t polls = 0;

	if (ftp_repl_in_views || !ftp_repl_has_copy(w))
		return;
	for (ftp_repl_views(); !death_applied(w); ftp_repl_views())
		ftp_poll_pause(&polls);
}
