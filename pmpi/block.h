/* block.h: waiting without hanging (pmpi/block.c): the checks before
 * and during a call, the polling loop of a blocking call run as its
 * nonblocking twin, giving up on a request. */
#ifndef FTSHIM_PMPI_BLOCK_H
#define FTSHIM_PMPI_BLOCK_H

#include "pmpi/call_base.h"

/* Whether what c watches has failed or its communicator was revoked
 * (pmpi/block.c): MPI_SUCCESS, or the error to return. Called only once
 * ftp.events is non-zero. pending: a nonblocking receive from
 * MPI_ANY_SOURCE gets MPI_ERR_PROC_FAILED_PENDING rather than
 * MPI_ERR_PROC_FAILED. */
int ftp_check(struct ftp_call *c, bool pending);

/* Complete c->req, which the caller has just started (rc is what starting
 * it returned), watching c->watch; status may be MPI_STATUS_IGNORE. */
int ftp_block_wait(struct ftp_call *c, MPI_Status *status);

/* Stop waiting for *req because err happened to what c watches: a
 * receive gets a last look and is cancelled (MPI_SUCCESS, and its status,
 * if it matched meanwhile), a send cancelled and freed, a collective or
 * partitioned request left to the library (MPI lets no one cancel it). *req becomes
 * MPI_REQUEST_NULL, except an inactive persistent request. */
int ftp_give_up(struct ftp_call *c, MPI_Request *req, bool persistent, int err,
		MPI_Status *status);
/* What a point-to-point request is, for ftp_cancel_p2p. */
enum ftp_p2p_role {
	FTP_P2P_SEND = 0,
	FTP_P2P_RECV = 1,
	FTP_P2P_PERSISTENT = 2, /* or'ed in: the handle stays the caller's */
};
/* Its point-to-point part: cancel *req, with peer (a job rank; -1 for
 * a receive from MPI_ANY_SOURCE), given up on because of err; wait, while
 * the peer lives, for a transfer the MPI already matched (so that no
 * buffer is touched after this returns while the peer lives); as
 * ftp_give_up. A null *req: err. */
int ftp_cancel_p2p(MPI_Request *req, int32_t peer, enum ftp_p2p_role role, int err,
		   MPI_Status *status);
/* What a dead peer sent before it died is in shared memory or the MPI's
 * queues already, but found only by passes of the MPI's progress, and on
 * a crowded host a few passes may not reach it: whether to make another
 * after `pass` of them, begun at start (ft_clock_now). */
bool ftp_dead_peer_pass(uint32_t pass, uint64_t start);
/* A collective (its n requests) given up on because a member failed may
 * still complete: ULFM fails only what cannot, and the dead member may
 * have sent its part before it died, so that a survivor slow to look
 * would fail what the others finished. Tests them for a bounded time (at
 * least the passes above, and 50 ms): true if they completed (statuses,
 * or MPI_STATUS(ES)_IGNORE, filled in). */
bool ftp_completes_anyway(MPI_Request *reqs, int n, MPI_Status *statuses);

/* Complete c->req, started with result rc: at once if the MPI did, else
 * by ftp_block_wait. */
FTP_HOT int ftp_block(struct ftp_call *c, int rc, MPI_Status *status)
{
	int flag = 0;

	if (rc != MPI_SUCCESS)
		return rc;
	/* Most sends and many receives are done at once. */
	rc = ftp_test_done(&c->req, &flag, status);
	if (rc != MPI_SUCCESS || flag)
		return rc;
	return ftp_block_wait(c, status);
}

/* One step of a polling loop: before the first call polls == 0 and seen
 * == 0. Returns an error if what c watches failed since the last step
 * (pending as for ftp_check), else MPI_SUCCESS after spinning or, as
 * polls go on, yielding the CPU. */
int ftp_poll_step(struct ftp_call *c, bool pending, uint64_t *seen, uint64_t *polls);

/* The rest of a call the fast path started (rc, *req): a send (rank is
 * dest) or a receive (rank is the source, maybe MPI_ANY_SOURCE) on e;
 * tested: *req was found not complete yet. */
int ftp_fast_block(enum ftp_fn fn, struct ftp_comm *e, int rank, bool recv, int rc, bool tested,
		   MPI_Request *req, MPI_Status *status);

#endif
