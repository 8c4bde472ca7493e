/* requests.c: the request table (see requests.h): an open-addressing hash
 * table from request handle to what the request waits on, under one
 * mutex; and, below it, the operations ftshim completes itself behind a
 * generalized request (an entry of the table owns each). */
#include "ftshim_config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi/requests.h"
#include "pmpi/restart.h"
#include "pmpi/comms.h"

#define EMPTY UINT64_C(0)
#define TOMB UINT64_C(1)

struct slot {
	uint64_t key; /* the handle's bits, EMPTY or TOMB */
	struct ftp_req req;
};

/* Guarded by table_lock, except count (read without the lock as a hint). */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot *slots;
static uint32_t cap, used;
static _Atomic uint32_t count;

static uint64_t key_of(MPI_Request request)
{
	uint64_t key = 0;

	_Static_assert(sizeof(MPI_Request) <= sizeof key, "MPI_Request wider than 64 bits");
	memcpy(&key, &request, sizeof request);
	/* No handle is 0 or 1 in either MPI; keep it so. */
	return key > TOMB ? key : key + 2;
}

static uint32_t slot_of(uint64_t key)
{
	key ^= key >> 29;
	key *= UINT64_C(0xbf58476d1ce4e5b9);
	key ^= key >> 32;
	return (uint32_t)key & (cap - 1);
}

/* The slot holding key, or -1. Under the lock. */
static int64_t find_slot(uint64_t key)
{
	if (!cap)
		return -1;
	for (uint32_t i = slot_of(key), n = 0; n < cap; i = (i + 1) & (cap - 1), n++) {
		if (slots[i].key == key)
			return i;
		if (slots[i].key == EMPTY)
			return -1;
	}
	return -1;
}

/* Rebuild with room for more live entries. Under the lock. */
static bool grow(void)
{
	uint32_t ncap = cap ? cap : 64;
	uint32_t live = atomic_load_explicit(&count, memory_order_relaxed);

	while (ncap < 4 * (live + 1))
		ncap *= 2;
	struct slot *old = slots, *n = calloc(ncap, sizeof *n);
	uint32_t ocap = cap;
	if (!n)
		return false;
	slots = n;
	cap = ncap;
	used = 0;
	for (uint32_t i = 0; i < ocap; i++) {
		if (old[i].key <= TOMB)
			continue;
		uint32_t j = slot_of(old[i].key);
		while (slots[j].key != EMPTY)
			j = (j + 1) & (cap - 1);
		slots[j] = old[i];
		used++;
	}
	free(old);
	return true;
}

static bool add_entry(const struct ftp_call *c, MPI_Request request, bool persistent,
		      struct ftp_op *op, struct ftp_persist *persist)
{
	uint64_t key = key_of(request);
	struct ftp_comm *replaced = NULL;
	bool added = false;

	pthread_mutex_lock(&table_lock);
	int64_t at = find_slot(key);
	if (at >= 0) {
		replaced = slots[at].req.comm;
	} else {
		if (2 * (used + 1) > cap && !grow())
			goto out_unlock;
		uint32_t i = slot_of(key);
		while (slots[i].key > TOMB)
			i = (i + 1) & (cap - 1);
		if (slots[i].key == EMPTY)
			used++;
		at = i;
		atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
	}
	/* A handle the MPI reuses replaces what it meant before. */
	slots[at].key = key;
	slots[at].req = (struct ftp_req){ .comm = c->comm, .watch = c->watch, .fn = c->fn,
					  .obj = c->obj, .obj_bits = c->obj_bits, .persistent = persistent, .op = op,
					  .persist = persist, .run = ftp_restart_run() };
	if (c->comm)
		ftp_comm_hold(c->comm);
	added = true;
out_unlock:
	pthread_mutex_unlock(&table_lock);
	/* Outside the lock: the last reference frees an MPI communicator. */
	if (replaced)
		ftp_comm_put(replaced);
	return added;
}

/* Remember request (made by the call c). Does nothing for MPI_REQUEST_NULL
 * or an untracked communicator. */
static void req_add(const struct ftp_call *c, MPI_Request request, bool persistent)
{
	/* One done at once waits on nobody; its handle is shared by every
	 * such request, so it could not be told apart in the table anyway. */
	if (request != MPI_REQUEST_NULL && c->comm && !c->direct && !ftp_done_at_once(request))
		(void)add_entry(c, request, persistent, NULL, NULL);
}

void ftp_req_add_op(const struct ftp_call *c, MPI_Request request, struct ftp_op *op)
{
	(void)add_entry(c, request, false, op, NULL);
}

bool ftp_req_add_persist(const struct ftp_call *c, MPI_Request shell, struct ftp_persist *p)
{
	return add_entry(c, shell, true, NULL, p);
}

bool ftp_req_find(MPI_Request request, struct ftp_req *out)
{
	bool found = false;

	if (request == MPI_REQUEST_NULL || !ftp_req_any())
		return false;
	pthread_mutex_lock(&table_lock);
	int64_t at = find_slot(key_of(request));
	if (at >= 0) {
		*out = slots[at].req;
		found = true;
	}
	pthread_mutex_unlock(&table_lock);
	return found;
}

bool ftp_req_take(MPI_Request request, struct ftp_req *out)
{
	struct ftp_req r;
	bool found = false;

	if (request == MPI_REQUEST_NULL || !ftp_req_any())
		return false;
	pthread_mutex_lock(&table_lock);
	int64_t at = find_slot(key_of(request));
	if (at >= 0) {
		r = slots[at].req;
		slots[at].key = TOMB;
		atomic_fetch_sub_explicit(&count, 1, memory_order_relaxed);
		found = true;
	}
	pthread_mutex_unlock(&table_lock);
	if (found && out)
		*out = r;
	else if (found)
		ftp_req_release(&r);
	return found;
}

void ftp_req_release(struct ftp_req *r)
{
	if (r->comm)
		ftp_comm_put(r->comm);
	r->comm = NULL;
}

void ftp_req_set_unstarted(MPI_Request request, int err)
{
	if (request == MPI_REQUEST_NULL || !ftp_req_any())
		return;
	pthread_mutex_lock(&table_lock);
	int64_t at = find_slot(key_of(request));
	if (at >= 0)
		slots[at].req.unstarted = err;
	pthread_mutex_unlock(&table_lock);
}

unsigned ftp_req_pending_now(void)
{
	unsigned run = ftp_restart_run(), n = 0;

	pthread_mutex_lock(&table_lock);
	for (uint32_t i = 0; i < cap; i++)
		if (slots[i].key > TOMB && !slots[i].req.persistent && slots[i].req.run == run)
			n++;
	pthread_mutex_unlock(&table_lock);
	return n;
}

bool ftp_req_any(void)
{
	return atomic_load_explicit(&count, memory_order_relaxed) != 0;
}

static int op_fail(struct ftp_call *c, int err, MPI_Request *request);

int ftp_post_ireq(struct ftp_call *c, int rc, MPI_Request *request, bool persistent)
{
	if (rc == MPI_SUCCESS)
		req_add(c, *request, persistent);
	else if (c->comm && ftp_is_ft_error(rc))
		rc = op_fail(c, rc, request); /* reported at completion */
	return ftp_post_plain(c, rc);
}

/* --- operations ftshim completes itself --------------------------------
 *
 * Requests that ftshim completes itself, for its own nonblocking
 * calls (MPIX_Comm_iagree, MPIX_Comm_ishrink) and for nonblocking calls
 * that failed as they started (op_fail). The application gets an
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

/* A nonblocking call (c) found a failure as it started, with error err:
 * hand the application a request that completes with err instead (its
 * completion call raises it on c's communicator), as ULFM programs expect
 * errors at completion. MPI_SUCCESS, or err if even that failed. */
static int op_fail(struct ftp_call *c, int err, MPI_Request *request)
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
