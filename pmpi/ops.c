/* ops.c: requests that ftshim completes itself, for its own nonblocking
 * calls (MPIX_Comm_iagree, MPIX_Comm_ishrink) and for nonblocking calls
 * that failed as they started (ftp_op_fail). The application gets an
 * MPI generalized request, so every completion call of the MPI accepts
 * it; ftshim completes it (PMPI_Grequest_complete) on an application
 * thread, whenever one is inside a completion call or a waiting loop of
 * ftshim's (ftp_ops_progress), once the operation's own progress function
 * says it is done. The work itself (an agreement) runs on the detector
 * thread meanwhile; only the last step (MPI's communicator creation, for
 * ishrink) needs the application's thread.
 *
 * Sharing: application threads only. The pending list is guarded by
 * list_lock, taken with trylock by progress so that a thread already
 * progressing (possibly blocked in a creation) is not waited for and
 * progress never recurses; ftp_ops_pending is read without the lock as a
 * hint (one relaxed load in every waiting loop). An op is owned by its
 * request table entry until ftp_op_finish, or freed by progress when the
 * application freed the request first (ftp_op_orphan). */
#include "ftshim_config.h"

#include <pthread.h>
#include <stdlib.h>

#include "pmpi/requests.h"

_Atomic uint32_t ftp_ops_pending;

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ftp_op *pending;

/* The status of a completed op: its own (a replica's receive), or no
 * message, never cancelled. Its error is reported by ftshim's completion
 * calls, through the communicator's error handler (the MPI's own would
 * not know the ULFM classes on Open MPI). */
static int query_status(void *extra_state, MPI_Status *status)
{
	const struct ftp_op *op = extra_state;

	if (op->has_status) {
		/* Its error is the op's (rc), reported by ftshim; Open MPI
		 * would take a stale MPI_ERROR for the request's. */
		*status = op->status;
		status->MPI_ERROR = MPI_SUCCESS;
		return MPI_SUCCESS;
	}
	status->MPI_SOURCE = MPI_ANY_SOURCE;
	status->MPI_TAG = MPI_ANY_TAG;
	ftp_mpi.PMPI_Status_set_elements(status, MPI_BYTE, 0);
	ftp_mpi.PMPI_Status_set_cancelled(status, 0);
	return MPI_SUCCESS;
}

/* The op outlives the MPI request (ftp_op_finish reads its result after
 * the MPI has freed the request), so nothing is freed here. */
static int free_nothing(void *extra_state)
{
	(void)extra_state;
	return MPI_SUCCESS;
}

/* Agreements cannot be cancelled: the request completes as it would. */
static int cancel_nothing(void *extra_state, int complete)
{
	(void)extra_state;
	(void)complete;
	return MPI_SUCCESS;
}

/* Free op and drop its reference on its communicator. */
static void op_destroy(struct ftp_op *op)
{
	struct ftp_comm *comm = op->comm;

	op->destroy(op);
	if (comm)
		ftp_comm_put(comm);
}

int ftp_op_start(struct ftp_call *c, struct ftp_op *op, MPI_Request *request)
{
	int rc = ftp_mpi.PMPI_Grequest_start(query_status, free_nothing, cancel_nothing, op, &op->request);

	if (rc != MPI_SUCCESS) {
		op->destroy(op);
		return rc;
	}
	/* The op works on the communicator until done, even if the
	 * application frees it (and the request) meanwhile. */
	op->comm = c->comm;
	if (op->comm)
		ftp_comm_hold(op->comm);
	*request = op->request;
	pthread_mutex_lock(&list_lock);
	op->next = pending;
	pending = op;
	atomic_fetch_add_explicit(&ftp_ops_pending, 1, memory_order_relaxed);
	pthread_mutex_unlock(&list_lock);
	ftp_req_add_op(c, *request, op);
	ftp_ops_progress(); /* done already, if only this process is left */
	return MPI_SUCCESS;
}

/* An operation that failed as it started: done at once, with its error. */
static bool failed_progress(struct ftp_op *op)
{
	(void)op;
	return true;
}

static void failed_destroy(struct ftp_op *op)
{
	free(op);
}

int ftp_op_fail(struct ftp_call *c, int err, MPI_Request *request)
{
	struct ftp_op *op = calloc(1, sizeof *op);

	if (!op)
		return err;
	op->progress = failed_progress;
	op->destroy = failed_destroy;
	op->rc = err;
	return ftp_op_start(c, op, request) == MPI_SUCCESS ? MPI_SUCCESS : err;
}

void ftp_ops_progress_slow(void)
{
	if (pthread_mutex_trylock(&list_lock) != 0)
		return;
	for (struct ftp_op **p = &pending; *p;) {
		struct ftp_op *op = *p;
		if (!op->progress(op)) {
			p = &op->next;
			continue;
		}
		*p = op->next;
		atomic_fetch_sub_explicit(&ftp_ops_pending, 1, memory_order_relaxed);
		op->done = true;
		ftp_mpi.PMPI_Grequest_complete(op->request);
		if (op->orphaned)
			op_destroy(op);
	}
	pthread_mutex_unlock(&list_lock);
}

int ftp_op_finish(struct ftp_op *op)
{
	int rc = op->rc;

	op_destroy(op);
	return rc;
}

void ftp_op_orphan(struct ftp_op *op)
{
	pthread_mutex_lock(&list_lock);
	bool done = op->done;
	op->orphaned = true;
	pthread_mutex_unlock(&list_lock);
	if (done)
		op_destroy(op);
}
