/* views.c: applying the failures this process learns to the views of
 * its replicated communicators (ftp_repl_views, called by ftp_check and
 * before a replicated call picks its peers): a dead replica leaves every
 * view, its receivers settle what they had from it and its primary goes
 * on alone; a dead primary whose replica lives is promoted (promote.c),
 * and the teams are rebuilt (team.c). ftp_repl_await_view (for the core)
 * and ftp_repl_await_applied (for this folder) wait until a death is
 * applied. Application thread. */
#include "ftshim_config.h"

#include "pmpi/mode/replication/internal.h"
#include "src/events.h"
#include "src/log.h"

/* Failures of ftp.procs.order[0 .. views_applied) are applied here
 * (ftp_repl_in_views, state.c, is set while one is). */
static uint32_t views_applied;

/* Settle every pending receive posted to world rank dead: a last look
 * (what it sent before it died may be here), else it waits, unposted,
 * to move. */
void ftp_repl_settle_recvs_from(int32_t dead)
{
	struct peer_recv *p, *next;

	for (p = ftp_repl_recvs_head; p; p = next) {
		next = p->next;
		if (p->from != dead || p->req == MPI_REQUEST_NULL)
			continue;
		MPI_Status st;
		int rc = ftp_cancel_p2p(&p->req, dead, FTP_P2P_RECV, FTP_ERR_PROC_FAILED, &st);
		ft_debug("a receive from rank %d (tag %d) posted to process %d: %s", p->source, p->tag,
			 dead, rc == MPI_SUCCESS ? "matched" : "cancelled");
		if (rc == MPI_SUCCESS)
			ftp_repl_recv_finish(p, rc, &st);
	}
}

/* Post again the receives ftp_repl_settle_recvs_from left waiting (the
 * view now sends them to the copy that took over). */
void ftp_repl_repost_recvs_from(int32_t dead)
{
	for (struct peer_recv *p = ftp_repl_recvs_head; p; p = p->next)
		if (p->from == dead && p->req == MPI_REQUEST_NULL)
			ftp_repl_recv_post(p);
}

/* Copy `dead` leaves every replicated communicator's view: its slot
 * empties, and where this process addressed it, the program rank now
 * addresses the other copy. */
void ftp_repl_view_forget(int32_t dead)
{
	for (size_t i = 0; i < ftp_repl_ncomms; i++) {
		struct ftp_comm *e = ftp_repl_comms[i];
		ft_rank_map_forget(e->map, ftp_member_index(e->core, dead));
	}
}

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

/* Wait until the death of w has been applied to the view here. */
void ftp_repl_await_applied(int32_t w)
{
	uint64_t polls = 0;

	if (ftp_repl_in_views || w < 0)
		return;
	for (ftp_repl_views(); !death_applied(w); ftp_repl_views())
		ftp_poll_pause(&polls);
}

void ftp_repl_await_view(int32_t w)
{
	if (ftp_repl_has_copy(w))
		ftp_repl_await_applied(w);
}
