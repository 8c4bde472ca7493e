/* comm_table.h: the communicator table of the MPI-free core. Each entry
 * holds a communicator's members as job ranks, its job-wide id, and its
 * revoked flag; the MPI side maps its handles onto these entries
 * (pmpi/comm_lookup.c) and the detector finds them by id.
 *
 * Job-wide ids are derived by every member in the same way, without a
 * message: from the parent's id, the kind of creation, a key that says
 * which calls share a counter, the counter, and a hash of the members of
 * the result (which tells apart the communicators one split makes):
 *
 *   kind    counter shared by                           key
 *   CHILD   every collective creation on the parent     0
 *           (dup, split, create, cart/graph, merge)
 *   GROUP   create_group calls on the parent with the   hash(group), tag
 *           same group and tag
 *   INTER   intercomm_create calls between the same     hash(both groups), tag
 *           two groups with the same tag (parent 0)
 *
 * MPI orders collective calls on one communicator the same way on every
 * member, so every member sees the same counter value. Ids are 64-bit
 * hashes: two communicators alive at once share an id with probability
 * about n^2 / 2^65.
 *
 * Sharing: an entry's members, sizes and id are immutable once added. The
 * revoked flag is set by any thread (compare-and-swap, once) and read by
 * any. The creation counters are used by application threads under the
 * entry's lock. The registry (id -> entry) is guarded by its own mutex. */
#ifndef FTSHIM_COMM_TABLE_H
#define FTSHIM_COMM_TABLE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

enum ft_comm_kind {
	FT_COMM_KIND_CHILD = 1,
	FT_COMM_KIND_GROUP = 2,
	FT_COMM_KIND_INTER = 3,
};

#define FT_COMM_WORLD_ID UINT64_C(1)

/* Counters keyed by a 64-bit key: how many creations with that key this
 * process has seen. */
struct ft_seq_map {
	pthread_mutex_t lock;
	uint32_t count, cap;
	struct ft_seq_entry {
		uint64_t key;
		uint64_t next;
	} *entries;
};

struct ft_comm {
	uint64_t id;            /* job-wide id; immutable */
	uint32_t local_size;    /* immutable */
	uint32_t remote_size;   /* 0 for an intracommunicator; immutable */
	int32_t *members;       /* job ranks: the local group in rank order, then
				   the remote group; immutable */
	_Atomic bool revoked;   /* set once by any thread; read by any */
	struct ft_seq_map seqs; /* creations with this communicator as parent */
	struct ft_comm *next;   /* registry bucket chain; under the registry lock */
};

struct ft_comm_registry {
	pthread_mutex_t lock;
	uint32_t count, nbuckets; /* nbuckets: a power of two */
	struct ft_comm **buckets;
	struct ft_seq_map inter_seqs; /* counters of INTER creations */
};

/* Hashing used for ids; exposed so that tests can compare. */
uint64_t ft_hash_mix(uint64_t h, uint64_t v);
uint64_t ft_members_hash(const int32_t *members, uint32_t n);

uint64_t ft_comm_self_id(uint32_t world_rank);
uint64_t ft_comm_child_id(uint64_t parent_id, enum ft_comm_kind kind, uint64_t key, uint64_t seq,
			  uint64_t members_hash);
/* The key of an INTER creation: the same on both sides, whichever is local. */
uint64_t ft_comm_inter_key(const int32_t *local, uint32_t nlocal, const int32_t *remote,
			   uint32_t nremote, int tag);
/* The key of a GROUP creation. */
uint64_t ft_comm_group_key(const int32_t *group, uint32_t n, int tag);
/* The key of an MPI-4 creation from groups: key (the groups', tag 0)
 * with the creation's string tag mixed in. */
uint64_t ft_comm_string_key(uint64_t key, const char *stringtag);
/* The hash of a new communicator's members, the same on every member: for
 * an intercommunicator the two groups are taken in a fixed order. */
uint64_t ft_comm_result_hash(const int32_t *local, uint32_t nlocal, const int32_t *remote,
			     uint32_t nremote);

int ft_seq_map_init(struct ft_seq_map *m);
void ft_seq_map_destroy(struct ft_seq_map *m);
/* Returns the counter for key and increments it; safe from any thread.
 * Returns UINT64_MAX if memory ran out. */
uint64_t ft_seq_next(struct ft_seq_map *m, uint64_t key);

/* A new entry with a copy of the members (local then remote). NULL if out
 * of memory. */
struct ft_comm *ft_comm_new(uint64_t id, const int32_t *local, uint32_t nlocal,
			    const int32_t *remote, uint32_t nremote);
void ft_comm_free(struct ft_comm *c);

/* The job rank of the process at rank r of the local group, or -1. */
static inline int32_t ft_comm_member(const struct ft_comm *c, uint32_t r)
{
	return r < c->local_size ? c->members[r] : -1;
}

/* Mark revoked; returns true if this call changed it. */
bool ft_comm_revoke(struct ft_comm *c);

static inline bool ft_comm_is_revoked(const struct ft_comm *c)
{
	return atomic_load_explicit(&c->revoked, memory_order_acquire);
}

int ft_comm_registry_init(struct ft_comm_registry *reg);
/* Frees every entry still registered. */
void ft_comm_registry_destroy(struct ft_comm_registry *reg);
/* -EEXIST if an entry with this id is registered already, -ENOMEM. */
int ft_comm_registry_add(struct ft_comm_registry *reg, struct ft_comm *c);
void ft_comm_registry_remove(struct ft_comm_registry *reg, struct ft_comm *c);
/* The entry with this id, or NULL. The pointer stays valid until the entry
 * is removed, which only the application thread that frees it does. */
struct ft_comm *ft_comm_registry_find(struct ft_comm_registry *reg, uint64_t id);
uint32_t ft_comm_registry_count(struct ft_comm_registry *reg);

/* Run fn(entry, arg) on the entry with this id, under the registry's lock
 * (so that no thread frees it meanwhile); fn must not call back into the
 * registry. Returns whether the entry was there. */
bool ft_comm_registry_with(struct ft_comm_registry *reg, uint64_t id,
			   void (*fn)(struct ft_comm *c, void *arg), void *arg);

#endif
