/* comm_lookup.c: the handle -> entry map behind the seam. An open-addressing
 * table whose slots are read without a lock: a writer fills the entry
 * pointer, then publishes the key with release order; a reader loads the
 * key with acquire order and, if it matches, the pointer. A table that
 * fills up is replaced by a larger one; the old one is kept (retired)
 * until MPI_Finalize, since a reader may still be walking it. */
#include "ftshim_config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi/comm_lookup.h"

#define SLOT_EMPTY UINT64_C(0)
#define SLOT_TOMB UINT64_C(1)

struct lookup_slot {
	_Atomic uint64_t key;             /* handle bits, EMPTY or TOMB */
	_Atomic(struct ftp_comm *) comm;  /* valid when key is a handle */
};

struct lookup_table {
	uint32_t mask;   /* capacity - 1, capacity a power of two */
	uint32_t used;   /* slots not EMPTY (live or TOMB); under lookup_lock */
	uint32_t live;   /* slots holding a handle; under lookup_lock */
	struct lookup_table *retired; /* older tables; under lookup_lock */
	struct lookup_slot slots[];
};

static _Atomic(struct lookup_table *) lookup_table;
static pthread_mutex_t lookup_lock = PTHREAD_MUTEX_INITIALIZER;

/* MPI_Comm is an int (MPICH) or a pointer (Open MPI): use its bits. No
 * valid communicator handle has the value 0 or 1 in either. */
static uint64_t key_of(MPI_Comm handle)
{
	uint64_t key = 0;

	_Static_assert(sizeof(MPI_Comm) <= sizeof key, "MPI_Comm wider than 64 bits");
	memcpy(&key, &handle, sizeof handle);
	return key;
}

static uint32_t slot_of(uint64_t key, uint32_t mask)
{
	key ^= key >> 33;
	key *= UINT64_C(0xff51afd7ed558ccd);
	key ^= key >> 33;
	return (uint32_t)key & mask;
}

_Atomic uint64_t ftp_comm_erasures;
_Thread_local struct ftp_comm_cache ftp_comm_cache __attribute__((tls_model("initial-exec")));

struct ftp_comm *ftp_comm_lookup_table(MPI_Comm handle)
{
	uint64_t key = key_of(handle);
	struct lookup_table *t = atomic_load_explicit(&lookup_table, memory_order_acquire);

	if (!t || key <= SLOT_TOMB)
		return NULL;
	for (uint32_t i = slot_of(key, t->mask);; i = (i + 1) & t->mask) {
		/* acquire: pairs with the release in insert, so comm is set. */
		uint64_t k = atomic_load_explicit(&t->slots[i].key, memory_order_acquire);
		if (k == key)
			return atomic_load_explicit(&t->slots[i].comm, memory_order_relaxed);
		if (k == SLOT_EMPTY)
			return NULL;
	}
}

static struct lookup_table *table_new(uint32_t capacity)
{
	struct lookup_table *t = calloc(1, sizeof *t + capacity * sizeof t->slots[0]);

	if (t)
		t->mask = capacity - 1;
	return t;
}

/* Put c into t, which has room and does not hold c's key. Under the lock. */
static void table_put(struct lookup_table *t, struct ftp_comm *c, uint64_t key)
{
	for (uint32_t i = slot_of(key, t->mask);; i = (i + 1) & t->mask) {
		uint64_t k = atomic_load_explicit(&t->slots[i].key, memory_order_relaxed);
		if (k != SLOT_EMPTY && k != SLOT_TOMB)
			continue;
		atomic_store_explicit(&t->slots[i].comm, c, memory_order_relaxed);
		atomic_store_explicit(&t->slots[i].key, key, memory_order_release);
		if (k == SLOT_EMPTY)
			t->used++;
		t->live++;
		return;
	}
}

/* A table with room for at least one more entry, replacing t when it is
 * half full (tombstones count: they lengthen probes). Under the lock. */
static struct lookup_table *table_with_room(struct lookup_table *t)
{
	if (t && 2 * (t->used + 1) <= t->mask + 1)
		return t;
	uint32_t capacity = 64;
	while (t && capacity < 4 * (t->live + 1))
		capacity *= 2;
	struct lookup_table *n = table_new(capacity);
	if (!n)
		return NULL;
	if (t) {
		for (uint32_t i = 0; i <= t->mask; i++) {
			uint64_t k = atomic_load_explicit(&t->slots[i].key, memory_order_relaxed);
			if (k != SLOT_EMPTY && k != SLOT_TOMB)
				table_put(n, atomic_load_explicit(&t->slots[i].comm, memory_order_relaxed), k);
		}
		n->retired = t;
	}
	/* release: readers that load the new table see its slots filled. */
	atomic_store_explicit(&lookup_table, n, memory_order_release);
	return n;
}

int ftp_comm_insert(struct ftp_comm *c)
{
	uint64_t key = key_of(c->handle);
	int rc = 0;

	if (key <= SLOT_TOMB)
		return -EINVAL;
	pthread_mutex_lock(&lookup_lock);
	if (ftp_comm_lookup_table(c->handle)) {
		rc = -EEXIST;
		goto out_unlock;
	}
	struct lookup_table *t = table_with_room(atomic_load_explicit(&lookup_table, memory_order_relaxed));
	if (!t) {
		rc = -ENOMEM;
		goto out_unlock;
	}
	table_put(t, c, key);
out_unlock:
	pthread_mutex_unlock(&lookup_lock);
	return rc;
}

void ftp_comm_erase(struct ftp_comm *c)
{
	uint64_t key = key_of(c->handle);

	pthread_mutex_lock(&lookup_lock);
	struct lookup_table *t = atomic_load_explicit(&lookup_table, memory_order_relaxed);
	for (uint32_t i = t ? slot_of(key, t->mask) : 0; t; i = (i + 1) & t->mask) {
		uint64_t k = atomic_load_explicit(&t->slots[i].key, memory_order_relaxed);
		if (k == SLOT_EMPTY)
			break;
		if (k == key && atomic_load_explicit(&t->slots[i].comm, memory_order_relaxed) == c) {
			atomic_store_explicit(&t->slots[i].key, SLOT_TOMB, memory_order_release);
			t->live--;
			/* release: a thread that sees the new count drops its cache. */
			atomic_fetch_add_explicit(&ftp_comm_erasures, 1, memory_order_release);
			break;
		}
	}
	pthread_mutex_unlock(&lookup_lock);
}

void ftp_comm_lookup_fini(void (*release)(struct ftp_comm *c))
{
	pthread_mutex_lock(&lookup_lock);
	struct lookup_table *t = atomic_exchange(&lookup_table, NULL);
	atomic_fetch_add_explicit(&ftp_comm_erasures, 1, memory_order_release);
	for (uint32_t i = 0; t && i <= t->mask; i++) {
		uint64_t k = atomic_load_explicit(&t->slots[i].key, memory_order_relaxed);
		if (k != SLOT_EMPTY && k != SLOT_TOMB)
			release(atomic_load_explicit(&t->slots[i].comm, memory_order_relaxed));
	}
	while (t) {
		struct lookup_table *older = t->retired;
		free(t);
		t = older;
	}
	pthread_mutex_unlock(&lookup_lock);
}
