/* comm_lookup.c: the handle -> entry map behind the seam, for
 * communicators and for the windows and files ftshim tracks (their keys
 * carry the kind in bits no handle of either MPI uses). An open-addressing
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
	_Atomic(void *) value;            /* valid when key is a handle */
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

/* MPI handles are ints (MPICH; its MPI_File is a pointer) or pointers
 * (Open MPI): use their bits. No valid handle has the value 0 or 1 in
 * either, nor any of the top two bits set (ints are 32 bits, user-space
 * pointers 47), which hold the kind. */
#define KIND_SHIFT 62

static uint64_t key_of(MPI_Comm handle)
{
	uint64_t key = 0;

	_Static_assert(sizeof(MPI_Comm) <= sizeof key, "MPI_Comm wider than 64 bits");
	memcpy(&key, &handle, sizeof handle);
	return key;
}

static uint64_t obj_key(enum ftp_obj_kind kind, uint64_t bits)
{
	return bits >> KIND_SHIFT ? 0 : bits | (uint64_t)kind << KIND_SHIFT;
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

static void *lookup_key(uint64_t key)
{
	struct lookup_table *t = atomic_load_explicit(&lookup_table, memory_order_acquire);

	if (!t || key <= SLOT_TOMB)
		return NULL;
	for (uint32_t i = slot_of(key, t->mask);; i = (i + 1) & t->mask) {
		/* acquire: pairs with the release in insert, so value is set. */
		uint64_t k = atomic_load_explicit(&t->slots[i].key, memory_order_acquire);
		if (k == key)
			return atomic_load_explicit(&t->slots[i].value, memory_order_relaxed);
		if (k == SLOT_EMPTY)
			return NULL;
	}
}

struct ftp_comm *ftp_comm_lookup_table(MPI_Comm handle)
{
	return lookup_key(key_of(handle));
}

struct ftp_obj *ftp_obj_lookup(enum ftp_obj_kind kind, uint64_t bits)
{
	return lookup_key(obj_key(kind, bits));
}

static struct lookup_table *table_new(uint32_t capacity)
{
	struct lookup_table *t = calloc(1, sizeof *t + capacity * sizeof t->slots[0]);

	if (t)
		t->mask = capacity - 1;
	return t;
}

/* Put value into t, which has room and does not hold key. Under the lock. */
static void table_put(struct lookup_table *t, void *value, uint64_t key)
{
	for (uint32_t i = slot_of(key, t->mask);; i = (i + 1) & t->mask) {
		uint64_t k = atomic_load_explicit(&t->slots[i].key, memory_order_relaxed);
		if (k != SLOT_EMPTY && k != SLOT_TOMB)
			continue;
		atomic_store_explicit(&t->slots[i].value, value, memory_order_relaxed);
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
				table_put(n, atomic_load_explicit(&t->slots[i].value, memory_order_relaxed), k);
		}
		n->retired = t;
	}
	/* release: readers that load the new table see its slots filled. */
	atomic_store_explicit(&lookup_table, n, memory_order_release);
	return n;
}

static int insert_key(uint64_t key, void *value)
{
	int rc = 0;

	if (key <= SLOT_TOMB)
		return -EINVAL;
	pthread_mutex_lock(&lookup_lock);
	if (lookup_key(key)) {
		rc = -EEXIST;
		goto out_unlock;
	}
	struct lookup_table *t = table_with_room(atomic_load_explicit(&lookup_table, memory_order_relaxed));
	if (!t) {
		rc = -ENOMEM;
		goto out_unlock;
	}
	table_put(t, value, key);
out_unlock:
	pthread_mutex_unlock(&lookup_lock);
	return rc;
}

int ftp_comm_insert(struct ftp_comm *c)
{
	return insert_key(key_of(c->handle), c);
}

int ftp_obj_insert(enum ftp_obj_kind kind, uint64_t bits, struct ftp_obj *o)
{
	return insert_key(obj_key(kind, bits), o);
}

static void erase_key(uint64_t key, const void *value)
{
	pthread_mutex_lock(&lookup_lock);
	struct lookup_table *t = atomic_load_explicit(&lookup_table, memory_order_relaxed);
	for (uint32_t i = t ? slot_of(key, t->mask) : 0; t; i = (i + 1) & t->mask) {
		uint64_t k = atomic_load_explicit(&t->slots[i].key, memory_order_relaxed);
		if (k == SLOT_EMPTY)
			break;
		if (k == key && atomic_load_explicit(&t->slots[i].value, memory_order_relaxed) == value) {
			atomic_store_explicit(&t->slots[i].key, SLOT_TOMB, memory_order_release);
			t->live--;
			/* release: a thread that sees the new count drops its cache. */
			atomic_fetch_add_explicit(&ftp_comm_erasures, 1, memory_order_release);
			break;
		}
	}
	pthread_mutex_unlock(&lookup_lock);
}

void ftp_comm_erase(struct ftp_comm *c)
{
	erase_key(key_of(c->handle), c);
}

void ftp_obj_erase(enum ftp_obj_kind kind, uint64_t bits, struct ftp_obj *o)
{
	erase_key(obj_key(kind, bits), o);
}

void ftp_comm_lookup_fini(void (*release)(struct ftp_comm *c), void (*release_obj)(struct ftp_obj *o))
{
	pthread_mutex_lock(&lookup_lock);
	struct lookup_table *t = atomic_exchange(&lookup_table, NULL);
	atomic_fetch_add_explicit(&ftp_comm_erasures, 1, memory_order_release);
	for (uint32_t i = 0; t && i <= t->mask; i++) {
		uint64_t k = atomic_load_explicit(&t->slots[i].key, memory_order_relaxed);
		if (k == SLOT_EMPTY || k == SLOT_TOMB)
			continue;
		void *value = atomic_load_explicit(&t->slots[i].value, memory_order_relaxed);
		/* An object's communicator has its own slot. */
		if (k >> KIND_SHIFT == FTP_OBJ_COMM)
			release(value);
		else
			release_obj(value);
	}
	while (t) {
		struct lookup_table *older = t->retired;
		free(t);
		t = older;
	}
	pthread_mutex_unlock(&lookup_lock);
}
