/* requests.c: the request table (see requests.h): an open-addressing hash
 * table from request handle to what the request waits on, under one
 * mutex. */
#include "ftshim_config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi/requests.h"

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

static void add_entry(const struct ftp_call *c, MPI_Request request, bool persistent,
		      struct ftp_op *op)
{
	uint64_t key = key_of(request);
	struct ftp_comm *replaced = NULL;

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
					  .obj = c->obj, .obj_bits = c->obj_bits, .persistent = persistent, .op = op };
	if (c->comm)
		ftp_comm_hold(c->comm);
out_unlock:
	pthread_mutex_unlock(&table_lock);
	/* Outside the lock: the last reference frees an MPI communicator. */
	if (replaced)
		ftp_comm_put(replaced);
}

void ftp_req_add(const struct ftp_call *c, MPI_Request request, bool persistent)
{
	/* One done at once waits on nobody; its handle is shared by every
	 * such request, so it could not be told apart in the table anyway. */
	if (request != MPI_REQUEST_NULL && c->comm && !c->direct && !ftp_done_at_once(request))
		add_entry(c, request, persistent, NULL);
}

void ftp_req_add_op(const struct ftp_call *c, MPI_Request request, struct ftp_op *op)
{
	add_entry(c, request, false, op);
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

bool ftp_req_any(void)
{
	return atomic_load_explicit(&count, memory_order_relaxed) != 0;
}

int ftp_post_ireq(struct ftp_call *c, int rc, MPI_Request *request, bool persistent)
{
	if (rc == MPI_SUCCESS)
		ftp_req_add(c, *request, persistent);
	else if (c->comm && ftp_is_ft_error(rc))
		rc = ftp_op_fail(c, rc, request); /* reported at completion */
	return ftp_post_plain(c, rc);
}
