/* block.c: what makes a blocking call unable to hang on a dead process.
 * The wrapper starts the nonblocking twin of the call; ftp_block_wait
 * polls it, and whenever ftp.events has moved it asks whether what the
 * call waits on has failed (or its communicator was revoked). Then it
 * gives up: a receive gets a last look (what a dead peer sent before it
 * died may have arrived) and is then cancelled (and if the cancel loses
 * the race to a match, the call succeeds after all), a send is cancelled
 * and freed, and a collective, which MPI lets no one cancel, is left to
 * the library: its buffers must not be reused before the communicator is
 * freed (README, "Never hang").
 *
 * Polling shares the CPU: after some polls it yields at every poll
 * (ftp_poll_pause), soon when ranks outnumber the cores of their host. */
#include "ftshim_config.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi/block.h"
#include "pmpi/ckpt_watch.h"
#include "pmpi/comm_health.h"
#include "pmpi/hangwatch.h"
#include "pmpi/mode/mode.h"
#include "pmpi/ranks.h"
#include "pmpi/requests.h"
#include "src/log.h"

int ftp_check(struct ftp_call *c, bool pending)
{
	struct ftp_comm *e = c->comm;
	uint64_t events = ftp_events();

	if (!e || events == 0)
		return MPI_SUCCESS;
	if (ftp_mode_on()) {
		ftp_mode_failures();
		events = ftp_events();
	}
	if (ft_comm_is_revoked(e->core))
		return FTP_ERR_REVOKED;
	switch (c->watch.kind) {
	case FTP_WATCH_PEER: {
		int32_t w = ftp_job_at(e, c->watch.rank);
		if (w >= 0 && ft_proc_is_failed(&ftp.procs, (uint32_t)w))
			return FTP_ERR_PROC_FAILED;
		break;
	}
	case FTP_WATCH_ANY:
		if (ftp_comm_failed_member(e, events) && ftp_comm_unacked_failure(e))
			return pending ? FTP_ERR_PROC_FAILED_PENDING : FTP_ERR_PROC_FAILED;
		break;
	case FTP_WATCH_ALL:
		if (ftp_comm_failed_member(e, events))
			return FTP_ERR_PROC_FAILED;
		break;
	case FTP_WATCH_LIVE:
		if (ftp_comm_failed_member(e, events) && !ftp_rts_agreed_all(e, events))
			return FTP_ERR_PROC_FAILED;
		break;
	case FTP_WATCH_NONE:
		break;
	}
	return MPI_SUCCESS;
}

/* Whether the process at the other end of a request may still finish it:
 * peer (a job rank) is not known failed; for peer -1 (a receive from
 * MPI_ANY_SOURCE), no failure was learned since events0. */
static bool peer_may_finish(int32_t peer, uint64_t events0)
{
	if (peer >= 0)
		return !ft_proc_is_failed(&ftp.procs, (uint32_t)peer);
	return ftp_events() == events0;
}

/* At least this many passes, and for at least this long. */
#define DEAD_PEER_PASSES 16
#define DEAD_PEER_NS (200 * FT_NSEC_PER_USEC)

bool ftp_dead_peer_pass(uint32_t pass, uint64_t start)
{
	return pass < DEAD_PEER_PASSES || ft_clock_now() - start < DEAD_PEER_NS;
}

int ftp_cancel_p2p(MPI_Request *req, int32_t peer, enum ftp_p2p_role role, int err,
		   MPI_Status *status)
{
	bool recv = role & FTP_P2P_RECV, persistent = role & FTP_P2P_PERSISTENT;
	uint64_t events0 = ftp_events(), start = ft_clock_now(), polls = 0;
	MPI_Status st;
	int cancelled = 0, flag = 0;

	if (*req == MPI_REQUEST_NULL)
		return err;
	if (recv && err != FTP_ERR_REVOKED) {
		/* What the dead peer sent before it died is here already
		 * (ftp_dead_peer_pass): without looking, a survivor that was
		 * slow to look failed a receive whose data had arrived. */
		int rc = MPI_SUCCESS;
		for (uint32_t pass = 0; rc == MPI_SUCCESS && !flag && ftp_dead_peer_pass(pass, start); pass++)
			rc = ftp_mpi.PMPI_Test(req, &flag, &st);
		if (rc != MPI_SUCCESS || flag) {
			if (status != MPI_STATUS_IGNORE)
				*status = st;
			return rc;
		}
	}
	ftp_mpi.PMPI_Cancel(req);
	/* The MPI may have matched it already and be moving the data,
	 * reading or writing the buffer: report it done only once the MPI
	 * is, as long as the peer lives to finish it. A receive nobody
	 * matched cancels at once. A send cannot be cancelled (neither MPI
	 * does): one that has not finished after FTSHIM_HB_TIMEOUT was never
	 * matched, and the MPI reads its buffer only if a receive ever
	 * matches it, which on a revoked communicator none does. */
	for (;;) {
		if (ftp_mpi.PMPI_Test(req, &flag, &st) != MPI_SUCCESS)
			return err;
		if (flag)
			break;
		if (!peer_may_finish(peer, events0) || (!recv && ft_clock_now() - start > ftp.cfg.hb_timeout)) {
			/* The caller's: an inactive persistent request stays so;
			 * MPI_Request_free of an active one lets the MPI finish. */
			if (!persistent)
				ftp_mpi.PMPI_Request_free(req);
			return err;
		}
		ftp_poll_pause(&polls);
	}
	ftp_mpi.PMPI_Test_cancelled(&st, &cancelled);
	if (cancelled)
		return err;
	/* It completed after all: ULFM lets that succeed. */
	if (status != MPI_STATUS_IGNORE)
		*status = st;
	return MPI_SUCCESS;
}

/* How long a collective given up on is tested first (ftp_completes_anyway). */
#define COLL_GRACE_NS (50 * FT_NSEC_PER_MSEC)

bool ftp_completes_anyway(MPI_Request *reqs, int n, MPI_Status *statuses)
{
	uint64_t start = ft_clock_now(), polls = 0;
	int flag = 0;

	for (uint32_t pass = 0; ftp_dead_peer_pass(pass, start) || ft_clock_now() - start < COLL_GRACE_NS;
	     pass++) {
		/* The test frees what completed (and sets a persistent request
		 * inactive), as the completion call would have. */
		int rc = n == 1 ? ftp_mpi.PMPI_Test(reqs, &flag, statuses)
				: ftp_mpi.PMPI_Testall(n, reqs, &flag, statuses);
		if (rc != MPI_SUCCESS)
			return false;
		if (flag)
			return true;
		ftp_poll_pause(&polls);
	}
	return false;
}

int ftp_give_up(struct ftp_call *c, MPI_Request *req, bool persistent, int err,
		MPI_Status *status)
{
	if (c->watch.kind == FTP_WATCH_ALL && err == FTP_ERR_PROC_FAILED && *req != MPI_REQUEST_NULL &&
	    ftp_completes_anyway(req, 1, status))
		return MPI_SUCCESS;
	if (c->watch.kind == FTP_WATCH_ALL || c->watch.keep) {
		/* A collective (or partitioned request) cannot be cancelled or
		 * freed: leave it pending; a persistent one keeps its handle,
		 * for MPI_Request_free. */
		if (!persistent)
			*req = MPI_REQUEST_NULL;
		return err;
	}
	int32_t peer = c->watch.kind == FTP_WATCH_PEER ? ftp_job_at(c->comm, c->watch.rank) : -1;
	enum ftp_p2p_role role = (c->watch.recv ? FTP_P2P_RECV : FTP_P2P_SEND) |
				 (persistent ? FTP_P2P_PERSISTENT : 0);
	return ftp_cancel_p2p(req, peer, role, err, status);
}

/* Inlined into ftp_block_wait: a receive's poll loop is on the critical
 * path of a small message, and half of each poll's own cost is added to
 * the time until the message is seen; out of line it cost some 45
 * instructions a poll, against 330 for the MPI's progress pass. */
FTP_HOT int poll_step(struct ftp_call *c, bool pending, uint64_t *seen, uint64_t *polls)
{
	uint64_t events = ftp_events();

	ftp_ops_progress(); /* an ishrink of this process may hold others up */
	if (ftp_ckpt_behind())
		ftp_ckpt_check_wait(c);
	if (__builtin_expect(events != *seen, 0)) {
		*seen = events;
		int err = ftp_check(c, pending);
		if (err != MPI_SUCCESS)
			return err;
	}
	ftp_poll_pause(polls);
	return MPI_SUCCESS;
}

int ftp_poll_step(struct ftp_call *c, bool pending, uint64_t *seen, uint64_t *polls)
{
	return poll_step(c, pending, seen, polls);
}

int ftp_block_wait(struct ftp_call *c, MPI_Status *status)
{
	uint64_t seen = 0, polls = 0;
	int flag = 0, rc;

	for (;;) {
		int err = poll_step(c, false, &seen, &polls);
		if (err != MPI_SUCCESS)
			return ftp_give_up(c, &c->req, false, err, status);
		rc = ftp_mpi.PMPI_Test(&c->req, &flag, status);
		if (rc != MPI_SUCCESS || flag)
			return rc;
	}
}

int ftp_fast_block(enum ftp_fn fn, struct ftp_comm *e, int rank, bool recv, int rc, bool tested,
		   MPI_Request *req, MPI_Status *status)
{
	struct ftp_call c = FTP_CALL_INIT(fn);

	/* e came from ftp_seam_cached: it has no rank map, rank is the MPI's. */
	ftp_call_on(&c, e, (struct ftp_watch){ .kind = recv ? ftp_source_kind(rank) : FTP_WATCH_PEER,
					       .rank = rank, .recv = recv });
	c.req = *req;
	if (rc == MPI_SUCCESS)
		rc = tested ? ftp_block_wait(&c, status) : ftp_block(&c, rc, status);
	return ftp_post_plain(&c, rc);
}
