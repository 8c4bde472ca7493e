/* call.h: the call policy. Every generated wrapper (wrappers.c) has the
 * same shape,
 *
 *     struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_X);
 *     int rc = ftp_pre_CLASS(&c, comm, ...);
 *     if (rc == MPI_SUCCESS)
 *             rc = ftp_mpi.PMPI_X(..., c.real, ...);           (or, for a blocking call,
 *                                                       its nonblocking twin
 *                                                       and ftp_block)
 *     return ftp_post_CLASS(&c, rc, ...);
 *
 * and all that differs between classes of functions lives here, reviewed
 * once. The classes are those of pmpi/ftshim-api.tsv.
 *
 * The failure-free fast path of a wrapper is the communicator lookup and
 * one acquire load of ftp.events; everything about failures happens only
 * once that is non-zero. A blocking operation that could wait on another
 * process runs as its nonblocking twin, polled by ftp_block, which gives
 * up with a ULFM error as soon as the process it waits on fails or the
 * communicator is revoked. */
#ifndef FTSHIM_PMPI_CALL_H
#define FTSHIM_PMPI_CALL_H

#include <mpi.h>
#include <sched.h>

#include "pmpi/block.h"
#include "pmpi/call_base.h"
#include "pmpi/seam.h"
#include "pmpi/errors.h"
#include "pmpi/fn_table.h"
#include "pmpi/state.h"
#include "pmpi/hostmail.h"
#include "pmpi/cover.h"
#include "pmpi/mode/mode.h"
#include "pmpi/ranks.h"
#include "pmpi/rts_state.h"
#include "pmpi/inject.h"
#include "src/common.h"

/* The generated file wraps deprecated functions too (MPI_Attr_get, ...). */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* A call with no form of its cover's on a covered communicator:
 * MPI_SUCCESS if it runs as on any (fn: the call, or the base of a
 * large-count call), else the refusal's error. */
static inline int ftp_cover_as_is(struct ftp_call *c, int fn, enum ftp_mode_role role)
{
	return ftp_cover_runs_as_is(c->comm, fn, role) ? MPI_SUCCESS : ftp_mode_refuse(c);
}

/* Resolve comm, set what the call watches, and (unless check is false)
 * refuse to start what waits on a failure already known. A nonblocking
 * receive from MPI_ANY_SOURCE starts anyway: it reports
 * MPI_ERR_PROC_FAILED_PENDING when completed. So does a receive from a
 * failed peer: what the peer sent before it died may be here, and the
 * receive gives up only after a last look (ftp_cancel_p2p). */
FTP_HOT int ftp_pre_watch_as(struct ftp_call *c, MPI_Comm comm, enum ftp_watch_kind kind,
			     int rank, bool recv, bool check, bool nonblocking)
{
	ftp_resolve(c, comm);
	if (c->direct)
		return MPI_SUCCESS;
	ftp_call_on(c, c->comm, ftp_watch_on(c->comm, kind, rank, recv));
	if (check && __builtin_expect(ftp_events() != 0, 0)) {
		int err = ftp_check(c, nonblocking);
		/* A covered program rank may have moved to another process as
		 * ftp_check applied a failure (pmpi/mode/mode.h): look at that
		 * one. */
		if (err != MPI_SUCCESS && ftp_seam_covered(c->comm)) {
			if (kind == FTP_WATCH_PEER)
				ftp_mode_await_peer(ftp_job_at(c->comm, c->watch.rank));
			c->watch = ftp_watch_on(c->comm, kind, rank, recv);
			err = ftp_check(c, nonblocking);
		}
		if (err == FTP_ERR_PROC_FAILED_PENDING ||
		    (err == FTP_ERR_PROC_FAILED && recv && kind == FTP_WATCH_PEER))
			return MPI_SUCCESS;
		return err;
	}
	return MPI_SUCCESS;
}

FTP_HOT int ftp_pre_watch(struct ftp_call *c, MPI_Comm comm, enum ftp_watch_kind kind,
			  int rank, bool recv)
{
	return ftp_pre_watch_as(c, comm, kind, rank, recv, true, false);
}

/* Point-to-point with a named peer (a send), or from a source that may be
 * MPI_ANY_SOURCE (a receive or probe). */
FTP_HOT int ftp_pre_send(struct ftp_call *c, MPI_Comm comm, int dest)
{
	return ftp_pre_watch(c, comm, FTP_WATCH_PEER, dest, false);
}

FTP_HOT int ftp_pre_recv(struct ftp_call *c, MPI_Comm comm, int source)
{
	return ftp_pre_watch(c, comm, ftp_source_kind(source),
			     source, true);
}

/* MPI_Iprobe and MPI_Improbe have no wait to give up in: a failed peer
 * fails them at once. */
FTP_HOT int ftp_pre_iprobe(struct ftp_call *c, MPI_Comm comm, int source)
{
	int rc = ftp_pre_recv(c, comm, source);

	if (rc == MPI_SUCCESS && !c->direct && __builtin_expect(ftp_events() != 0, 0))
		rc = ftp_check(c, false);
	return rc;
}

/* Nonblocking point-to-point: checked like the blocking forms; persistent
 * requests (MPI_Send_init, ...) are checked when started instead. */
FTP_HOT int ftp_pre_isend(struct ftp_call *c, MPI_Comm comm, int dest)
{
	return ftp_pre_watch_as(c, comm, FTP_WATCH_PEER, dest, false, true, true);
}

FTP_HOT int ftp_pre_irecv(struct ftp_call *c, MPI_Comm comm, int source)
{
	return ftp_pre_watch_as(c, comm, ftp_source_kind(source),
				source, true, true, true);
}

static inline int ftp_pre_init_send(struct ftp_call *c, MPI_Comm comm, int dest)
{
	return ftp_pre_watch_as(c, comm, FTP_WATCH_PEER, dest, false, false, true);
}

static inline int ftp_pre_init_recv(struct ftp_call *c, MPI_Comm comm, int source)
{
	return ftp_pre_watch_as(c, comm, ftp_source_kind(source),
				source, true, false, true);
}

/* MPI_Psend_init, MPI_Precv_init: the peer (dest, in both) is watched;
 * MPI cannot cancel a partitioned request, so one given up on is left to
 * the MPI, as a collective is. */
static inline int ftp_pre_init_part(struct ftp_call *c, MPI_Comm comm, int dest)
{
	int rc = ftp_pre_watch_as(c, comm, FTP_WATCH_PEER, dest, false, false, true);

	c->watch.keep = true;
	return rc;
}

/* MPI_Isendrecv(_replace): the send's peer is checked now, the receive's
 * watched. */
static inline int ftp_pre_isendrecv(struct ftp_call *c, MPI_Comm comm, int dest, int source)
{
	int rc = ftp_pre_isend(c, comm, dest);

	return rc == MPI_SUCCESS ? ftp_pre_irecv(c, comm, source) : rc;
}

static inline int ftp_pre_init_coll(struct ftp_call *c, MPI_Comm comm)
{
	return ftp_pre_watch_as(c, comm, FTP_WATCH_ALL, 0, false, false, true);
}

/* Collectives (and collective creations): every member matters, unless
 * run-through stabilization runs the collective among the members that
 * MPI_Comm_validate_all left (pmpi/rts.c). */
FTP_HOT int ftp_pre_coll(struct ftp_call *c, MPI_Comm comm)
{
	int rc = ftp_pre_watch(c, comm, FTP_WATCH_ALL, 0, false);

	if (__builtin_expect(rc == FTP_ERR_PROC_FAILED, 0))
		return ftp_rts_pre_coll(c, rc);
	return rc;
}

/* Classes that name a communicator but wait on nobody. */
FTP_HOT int ftp_pre_comm(struct ftp_call *c, MPI_Comm comm)
{
	ftp_resolve(c, comm);
	return MPI_SUCCESS;
}

#define ftp_pre_local ftp_pre_comm
#define ftp_pre_idup ftp_pre_coll
#define ftp_pre_free ftp_pre_comm

/* Classes without a communicator. */
static inline int ftp_pre_nocomm(struct ftp_call *c)
{
	(void)c;
	return MPI_SUCCESS;
}

#define ftp_pre_msg ftp_pre_nocomm
#define ftp_pre_req ftp_pre_nocomm

#define ftp_post_local ftp_post_plain
#define ftp_post_send ftp_post_plain
#define ftp_post_recv ftp_post_plain
#define ftp_post_coll ftp_post_plain
#define ftp_post_msg ftp_post_plain
#define ftp_post_iprobe ftp_post_plain
#define ftp_post_req ftp_post_plain

/* The fast path of the blocking point-to-point wrappers (classes send and
 * recv). In a small-message ping-pong every instruction between a
 * message's arrival and the reply's departure shows: the general path
 * (the call record, the watch, the checks before and after) cost as much
 * again as running the call as its twin, some 60 instructions a call. So
 * while nothing has happened and the communicator is the one this thread
 * used last (ftp_seam_cached), the wrapper starts the twin on the cached
 * entry and returns at once if the MPI completed it then; everything else
 * goes to ftp_fast_block, out of line, which is exactly the general path
 * from the start of the twin on. A failure that arrives meanwhile is seen
 * there: its polling loop checks ftp.events before it waits. */

FTP_HOT int ftp_fast_send(enum ftp_fn fn, struct ftp_comm *e, int dest, int rc, MPI_Request *req)
{
	if (__builtin_expect(rc == MPI_SUCCESS && ftp_done_at_once(*req), 1))
		return MPI_SUCCESS;
	return ftp_fast_block(fn, e, dest, false, rc, false, req, MPI_STATUS_IGNORE);
}

FTP_HOT int ftp_fast_recv(enum ftp_fn fn, struct ftp_comm *e, int source, int rc, MPI_Request *req,
			  MPI_Status *status)
{
	int flag = 0;

	if (rc == MPI_SUCCESS) {
		rc = ftp_test_done(req, &flag, status);
		if (rc == MPI_SUCCESS && flag)
			return MPI_SUCCESS;
	}
	return ftp_fast_block(fn, e, source, true, rc, true, req, status);
}

#endif
