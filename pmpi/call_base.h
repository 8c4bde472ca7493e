/* call_base.h: the small steps that every module running a call
 * (pmpi/call_record.h) shares: making it watch, resolving its
 * communicator, pausing in a polling loop, completing a request as
 * cheaply as the blocking call would, and the plain end of a call. The
 * policy of each class of call, built on these, is pmpi/call.h. */
#ifndef FTSHIM_PMPI_CALL_BASE_H
#define FTSHIM_PMPI_CALL_BASE_H

#include <mpi.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include "pmpi/call_record.h"
#include "pmpi/comm_lookup.h"
#include "pmpi/errors.h"
#include "pmpi/fn_table.h"
#include "pmpi/state.h"
#include "pmpi/hostmail.h"
#include "pmpi/inject.h"
#include "pmpi/mode/mode.h"
#include "pmpi/ranks.h"
#include "pmpi/seam.h"
#include "pmpi/shm_repair.h"
#include "src/common.h"


/* A NULL status (or array of statuses) means "ignore", as Open MPI takes
 * it and MPICH does not ("Null pointer in parameter status"): programs
 * written on Open MPI pass it (Fenix does). Every wrapper with a status
 * parameter applies these first, so both MPIs take it alike. */
#define FTP_STATUS(s) ((s) ? (s) : MPI_STATUS_IGNORE)
#define FTP_STATUSES(s) ((s) ? (s) : MPI_STATUSES_IGNORE)

/* What a receive from source watches. */
static inline enum ftp_watch_kind ftp_source_kind(int source)
{
	return source == MPI_ANY_SOURCE ? FTP_WATCH_ANY : FTP_WATCH_PEER;
}

/* Make c a watched call on e (a communicator ftshim tracks); watch.rank
 * is already the MPI's (ftp_watch_on translates it). */
FTP_HOT void ftp_call_on(struct ftp_call *c, struct ftp_comm *e, struct ftp_watch watch)
{
	c->comm = e;
	c->real = e->real;
	c->direct = false;
	c->watch = watch;
}

/* What a call on e waits on, from the program's rank (or MPI_ANY_SOURCE). */
FTP_HOT struct ftp_watch ftp_watch_on(const struct ftp_comm *e, enum ftp_watch_kind kind, int rank,
				      bool recv)
{
	return (struct ftp_watch){ .kind = kind, .rank = kind == FTP_WATCH_PEER ? ftp_rank_in(e, rank) : rank,
				   .recv = recv };
}

/* Resolve the application's handle once per call, through the seam. */
FTP_HOT void ftp_resolve(struct ftp_call *c, MPI_Comm comm)
{
	c->comm = ftp_seam_comm(comm);
	c->real = c->comm ? c->comm->real : comm;
	c->direct = c->comm == NULL;
}

/* The end of each poll of a waiting call: spin a while, then yield, and
 * from then on take the host's mail (a revoke on its way through this
 * rank) before each yield, where its loads cost nothing beside the
 * system call; the failure-free completion path never looks. */
static inline void ftp_poll_pause(uint64_t *polls)
{
	if (++*polls > ftp.spin_polls) {
		ftp_hostmail_poll();
		ftp_shm_repair_poll();
		sched_yield();
	}
}

/* Whether req is the request an MPI hands back for an operation it
 * completed as it started it (most small sends): such a request needs no
 * completion call and no watching. MPICH 4 gives one of its built-in
 * requests (handle kind bits 01), all complete by construction, and
 * MPI_Wait on one only resets the handle; Open MPI gives the address of
 * its ompi_request_empty, found at MPI_Init. The completion call this
 * saves is a third of a small MPI_Send through the wrapper: some 300
 * instructions on MPICH (MPI_Request_get_status and MPI_Wait), 110 on
 * Open MPI (MPI_Test). */
FTP_HOT bool ftp_done_at_once(MPI_Request req)
{
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 40000000
	return ((uint32_t)req >> 30) == 1u;
#elif defined(OPEN_MPI)
	return req == ftp.done_request;
#else
	(void)req;
	return false;
#endif
}

/* Whether *req is complete, and if so complete it, as cheaply as the
 * blocking call would: MPICH's MPI_Test always runs a pass of its
 * progress engine first (some 650 instructions), which its MPI_Send does
 * not do after a send that went out at once; MPI_Request_get_status
 * skips it for a complete request, and MPI_Wait then returns at once.
 * Open MPI's MPI_Test looks before it progresses. */
FTP_HOT int ftp_test_done(MPI_Request *req, int *flag, MPI_Status *status)
{
	if (status == MPI_STATUS_IGNORE && ftp_done_at_once(*req)) {
		*flag = 1;
		*req = MPI_REQUEST_NULL;
		return MPI_SUCCESS;
	}
#ifdef MPICH_VERSION
	bool builtin = ftp_done_at_once(*req);
	int rc = ftp_mpi.PMPI_Request_get_status(*req, flag, MPI_STATUS_IGNORE);

	if (rc != MPI_SUCCESS || !*flag)
		return rc;
	rc = ftp_mpi.PMPI_Wait(req, status);
	/* MPICH completes a receive from MPI_PROC_NULL at once with a
	 * built-in request, and its MPI_Wait (and MPI_Test) on one leaves
	 * MPI_SOURCE and MPI_TAG 0; the blocking receive, which this twin
	 * replaces, gives the empty status. A built-in request is that or a
	 * send done at once, whose status says nothing. */
	if (rc == MPI_SUCCESS && builtin && status != MPI_STATUS_IGNORE) {
		status->MPI_SOURCE = MPI_PROC_NULL;
		status->MPI_TAG = MPI_ANY_TAG;
	}
	return rc;
#else
	return ftp_mpi.PMPI_Test(req, flag, status);
#endif
}

/* After every wrapped call: count it if a call trigger of FTSHIM_INJECT
 * is armed in this rank (one relaxed load otherwise). */
FTP_HOT void ftp_post_common(struct ftp_call *c)
{
	if (atomic_load_explicit(&ftp_inject_counting, memory_order_relaxed))
		ftp_inject_after_call(c->fn);
}

/* After the call: ftshim's own errors go through the error handler. */
FTP_HOT int ftp_post_plain(struct ftp_call *c, int rc)
{
	ftp_post_common(c);
	if (__builtin_expect(rc != MPI_SUCCESS, 0) && ftp_is_ft_error(rc))
		return ftp_raise(c, rc);
	return rc;
}

#endif
