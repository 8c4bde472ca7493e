/* requests.h: the request table. For every request the application gets
 * from a nonblocking or persistent call on a communicator ftshim tracks,
 * what it waits on (a peer, any source, every member), so that the
 * completion calls (MPI_Wait, MPI_Test and their families) can stop
 * waiting when that fails.
 *
 * Sharing: any application thread may add, find and remove entries; a
 * mutex guards the table (MPI requests are created and completed far less
 * often than a mutex costs). An entry found is copied out. Each entry
 * holds a reference on its communicator (pmpi/comm_lookup.h), so that a
 * request outlives the communicator the application freed. */
#ifndef FTSHIM_PMPI_REQUESTS_H
#define FTSHIM_PMPI_REQUESTS_H

#include <mpi.h>
#include <stdbool.h>

#include "pmpi/call_base.h"

struct ftp_op;
struct ftp_persist;

struct ftp_req {
	struct ftp_comm *comm;   /* the request's communicator */
	struct ftp_watch watch;  /* what it waits on */
	enum ftp_fn fn;          /* the call that made it, for messages */
	enum ftp_obj_kind obj;   /* made on a window or file (ftp_call's): */
	uint64_t obj_bits;       /* its errors are raised there */
	bool persistent;         /* stays after completion until MPI_Request_free */
	struct ftp_op *op;       /* ftshim completes it (below): never given up on */
	/* A persistent request ftshim starts itself (pmpi/persist.h): the
	 * handle is its shell, never started in the MPI. */
	struct ftp_persist *persist;
	/* A persistent request that MPI_Start did not start because what it
	 * waits on had failed: that error, which its next completion call
	 * reports (the request stays inactive); else MPI_SUCCESS. */
	int unstarted;
	unsigned run; /* the run of main that made it (pmpi/restart.h) */
};

/* A nonblocking or persistent call made *request: remember what it
 * waits on. */
int ftp_post_ireq(struct ftp_call *c, int rc, MPI_Request *request, bool persistent);

/* Copy the entry of request to out; false if it is not tracked. The
 * copy's communicator stays valid while the entry is in the table, that
 * is until the request is taken (its owner's business). */
bool ftp_req_find(MPI_Request request, struct ftp_req *out);

/* Forget request. If it was known and out is not NULL, its entry is
 * moved to out with the entry's reference on its communicator, which the
 * caller drops with ftp_req_release once it no longer uses it (after the
 * call's error is raised on that communicator); with out NULL the
 * reference is dropped here. */
bool ftp_req_take(MPI_Request request, struct ftp_req *out);
void ftp_req_release(struct ftp_req *r);

static inline void ftp_req_remove(MPI_Request request)
{
	ftp_req_take(request, NULL);
}

/* The requests the program has made in this run of main and not yet
 * completed or freed, persistent ones aside (those left by a run that a
 * restart abandoned are no one's). */
unsigned ftp_req_pending_now(void);

/* Set (or, with MPI_SUCCESS, clear) the unstarted error of a tracked
 * persistent request. */
void ftp_req_set_unstarted(MPI_Request request, int err);

/* Remember request as one of ftshim's own operations (below). */
void ftp_req_add_op(const struct ftp_call *c, MPI_Request request, struct ftp_op *op);
/* Remember shell as the handle of persistent request p (pmpi/persist.h);
 * false if out of memory. */
bool ftp_req_add_persist(const struct ftp_call *c, MPI_Request shell, struct ftp_persist *p);

/* Any entry at all? (One relaxed load: lets completion calls skip the
 * table when the application has made no tracked request.) */
bool ftp_req_any(void);

/* --- operations ftshim completes itself ---------------------------------- */

/* One nonblocking ULFM call in progress. The caller of ftp_op_start fills
 * in progress and destroy; the rest belongs to requests.c. */
struct ftp_op {
	/* On an application thread: advance; true once done, with rc set. */
	bool (*progress)(struct ftp_op *op);
	void (*destroy)(struct ftp_op *op);
	int rc;                  /* the call's result, once done */
	/* The status its completion reports, if has_status (a receive a
	 * recovery mode completes itself); else an empty one. Set before
	 * done. */
	MPI_Status status;
	bool has_status;
	struct ftp_comm *comm;
	MPI_Request request;     /* the generalized request the application holds */
	bool done, orphaned;     /* under requests.c's list lock */
	struct ftp_op *next;
};

/* Start op as a generalized request for the call c (set *request). On
 * failure op is destroyed and the MPI's error returned. */
int ftp_op_start(struct ftp_call *c, struct ftp_op *op, MPI_Request *request);

/* How many ops are not done yet (a hint, read without a lock). */
extern _Atomic uint32_t ftp_ops_pending;

void ftp_ops_progress_slow(void);

/* Called by every completion call and waiting loop: completes the ops that
 * are done. One relaxed load when there are none. */
static inline void ftp_ops_progress(void)
{
	if (__builtin_expect(atomic_load_explicit(&ftp_ops_pending, memory_order_relaxed) != 0, 0))
		ftp_ops_progress_slow();
}

/* After the MPI completed op's request: its result; op is freed. */
int ftp_op_finish(struct ftp_op *op);

/* The application freed op's request: free op once done. */
void ftp_op_orphan(struct ftp_op *op);

#endif
