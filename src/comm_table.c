/* comm_table.c: communicator entries, their job-wide ids, and the registry
 * that finds an entry by id. See comm_table.h for the derivation rule. */
#include "ftshim_config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/comm_table.h"
#include "src/hash.h"

uint64_t ft_hash_mix(uint64_t h, uint64_t v)
{
	return ft_mix64(h ^ ft_mix64(v + UINT64_C(0x9e3779b97f4a7c15)));
}

uint64_t ft_members_hash(const int32_t *members, uint32_t n)
{
	uint64_t h = ft_hash_mix(UINT64_C(0x6d656d62657273), n); /* "members" */

	for (uint32_t i = 0; i < n; i++)
		h = ft_hash_mix(h, (uint32_t)members[i]);
	return h;
}

uint64_t ft_comm_self_id(uint32_t world_rank)
{
	return ft_hash_mix(UINT64_C(0x73656c66), world_rank); /* "self" */
}

/* Ids 0 (none) and 1 (world) are reserved; a derived id never takes them. */
static uint64_t not_reserved(uint64_t id)
{
	return id <= FT_COMM_WORLD_ID ? id + 2 : id;
}

uint64_t ft_comm_child_id(uint64_t parent_id, enum ft_comm_kind kind, uint64_t key, uint64_t seq,
			  uint64_t members_hash)
{
	uint64_t h = ft_hash_mix(parent_id, (uint64_t)kind);

	h = ft_hash_mix(h, key);
	h = ft_hash_mix(h, seq);
	return not_reserved(ft_hash_mix(h, members_hash));
}

uint64_t ft_comm_result_hash(const int32_t *local, uint32_t nlocal, const int32_t *remote,
			     uint32_t nremote)
{
	uint64_t a = ft_members_hash(local, nlocal);

	if (!remote)
		return a;
	uint64_t b = ft_members_hash(remote, nremote);
	/* Both sides must get the same value: order the two groups. */
	return a < b ? ft_hash_mix(a, b) : ft_hash_mix(b, a);
}

uint64_t ft_comm_inter_key(const int32_t *local, uint32_t nlocal, const int32_t *remote,
			   uint32_t nremote, int tag)
{
	return ft_hash_mix(ft_comm_result_hash(local, nlocal, remote, nremote), (uint32_t)tag);
}

uint64_t ft_comm_group_key(const int32_t *group, uint32_t n, int tag)
{
	return ft_hash_mix(ft_members_hash(group, n), (uint32_t)tag);
}

uint64_t ft_comm_string_key(uint64_t key, const char *stringtag)
{
	/* A word per 8 bytes, then the length: "ab" and "ab\0" differ. */
	size_t n = stringtag ? strlen(stringtag) : 0;

	for (size_t i = 0; i < n; i += 8) {
		uint64_t w = 0;
		memcpy(&w, stringtag + i, n - i < 8 ? n - i : 8);
		key = ft_hash_mix(key, w);
	}
	return ft_hash_mix(key, n);
}

int ft_seq_map_init(struct ft_seq_map *m)
{
	memset(m, 0, sizeof *m);
	return -pthread_mutex_init(&m->lock, NULL);
}

void ft_seq_map_destroy(struct ft_seq_map *m)
{
	pthread_mutex_destroy(&m->lock);
	free(m->entries);
	m->entries = NULL;
	m->count = m->cap = 0;
}

uint64_t ft_seq_next(struct ft_seq_map *m, uint64_t key)
{
	uint64_t seq = UINT64_MAX;

	pthread_mutex_lock(&m->lock);
	for (uint32_t i = 0; i < m->count; i++) {
		if (m->entries[i].key == key) {
			seq = m->entries[i].next++;
			goto out_unlock;
		}
	}
	if (m->count == m->cap) {
		uint32_t cap = m->cap ? 2 * m->cap : 4;
		struct ft_seq_entry *e = realloc(m->entries, cap * sizeof *e);
		if (!e)
			goto out_unlock;
		m->entries = e;
		m->cap = cap;
	}
	m->entries[m->count].key = key;
	m->entries[m->count].next = 1;
	m->count++;
	seq = 0;
out_unlock:
	pthread_mutex_unlock(&m->lock);
	return seq;
}

struct ft_comm *ft_comm_new(uint64_t id, const int32_t *local, uint32_t nlocal,
			    const int32_t *remote, uint32_t nremote)
{
	struct ft_comm *c = calloc(1, sizeof *c);

	if (!c)
		return NULL;
	c->members = malloc(((size_t)nlocal + nremote + 1) * sizeof *c->members);
	if (!c->members)
		goto out_free;
	if (ft_seq_map_init(&c->seqs) != 0)
		goto out_free_members;
	memcpy(c->members, local, nlocal * sizeof *local);
	if (nremote)
		memcpy(c->members + nlocal, remote, nremote * sizeof *remote);
	c->id = id;
	c->local_size = nlocal;
	c->remote_size = nremote;
	atomic_init(&c->revoked, false);
	return c;

out_free_members:
	free(c->members);
out_free:
	free(c);
	return NULL;
}

void ft_comm_free(struct ft_comm *c)
{
	if (!c)
		return;
	ft_seq_map_destroy(&c->seqs);
	free(c->members);
	free(c);
}

bool ft_comm_revoke(struct ft_comm *c)
{
	bool expected = false;

	/* release: what the revoker did before is visible to whoever sees it. */
	return atomic_compare_exchange_strong_explicit(&c->revoked, &expected, true,
						       memory_order_release, memory_order_relaxed);
}

int ft_comm_registry_init(struct ft_comm_registry *reg)
{
	memset(reg, 0, sizeof *reg);
	reg->nbuckets = 64;
	reg->buckets = calloc(reg->nbuckets, sizeof *reg->buckets);
	if (!reg->buckets)
		return -ENOMEM;
	if (ft_seq_map_init(&reg->inter_seqs) != 0)
		goto out_free;
	if (pthread_mutex_init(&reg->lock, NULL) != 0)
		goto out_seqs;
	return 0;

out_seqs:
	ft_seq_map_destroy(&reg->inter_seqs);
out_free:
	free(reg->buckets);
	reg->buckets = NULL;
	return -ENOMEM;
}

void ft_comm_registry_destroy(struct ft_comm_registry *reg)
{
	if (!reg->buckets)
		return;
	for (uint32_t b = 0; b < reg->nbuckets; b++) {
		struct ft_comm *c = reg->buckets[b];
		while (c) {
			struct ft_comm *next = c->next;
			ft_comm_free(c);
			c = next;
		}
	}
	free(reg->buckets);
	reg->buckets = NULL;
	reg->count = 0;
	ft_seq_map_destroy(&reg->inter_seqs);
	pthread_mutex_destroy(&reg->lock);
}

static uint32_t bucket_of(const struct ft_comm_registry *reg, uint64_t id)
{
	return (uint32_t)(ft_mix64(id) & (reg->nbuckets - 1));
}

/* Double the buckets when the chains get long. Under the lock. */
static void registry_grow(struct ft_comm_registry *reg)
{
	uint32_t n = reg->nbuckets * 2;
	struct ft_comm **b = calloc(n, sizeof *b);

	if (!b)
		return; /* longer chains, still correct */
	for (uint32_t i = 0; i < reg->nbuckets; i++) {
		struct ft_comm *c = reg->buckets[i];
		while (c) {
			struct ft_comm *next = c->next;
			uint32_t j = (uint32_t)(ft_mix64(c->id) & (n - 1));
			c->next = b[j];
			b[j] = c;
			c = next;
		}
	}
	free(reg->buckets);
	reg->buckets = b;
	reg->nbuckets = n;
}

int ft_comm_registry_add(struct ft_comm_registry *reg, struct ft_comm *c)
{
	int rc = 0;

	pthread_mutex_lock(&reg->lock);
	for (struct ft_comm *o = reg->buckets[bucket_of(reg, c->id)]; o; o = o->next) {
		if (o->id == c->id) {
			rc = -EEXIST;
			goto out_unlock;
		}
	}
	if (reg->count >= 2 * reg->nbuckets)
		registry_grow(reg);
	uint32_t b = bucket_of(reg, c->id);
	c->next = reg->buckets[b];
	reg->buckets[b] = c;
	reg->count++;
out_unlock:
	pthread_mutex_unlock(&reg->lock);
	return rc;
}

void ft_comm_registry_remove(struct ft_comm_registry *reg, struct ft_comm *c)
{
	pthread_mutex_lock(&reg->lock);
	for (struct ft_comm **p = &reg->buckets[bucket_of(reg, c->id)]; *p; p = &(*p)->next) {
		if (*p == c) {
			*p = c->next;
			c->next = NULL;
			reg->count--;
			break;
		}
	}
	pthread_mutex_unlock(&reg->lock);
}

struct ft_comm *ft_comm_registry_find(struct ft_comm_registry *reg, uint64_t id)
{
	struct ft_comm *found = NULL;

	pthread_mutex_lock(&reg->lock);
	for (struct ft_comm *c = reg->buckets[bucket_of(reg, id)]; c; c = c->next) {
		if (c->id == id) {
			found = c;
			break;
		}
	}
	pthread_mutex_unlock(&reg->lock);
	return found;
}

bool ft_comm_registry_with(struct ft_comm_registry *reg, uint64_t id,
			   void (*fn)(struct ft_comm *c, void *arg), void *arg)
{
	bool found = false;

	pthread_mutex_lock(&reg->lock);
	for (struct ft_comm *c = reg->buckets[bucket_of(reg, id)]; c && !found; c = c->next) {
		if (c->id == id) {
			found = true;
			fn(c, arg);
		}
	}
	pthread_mutex_unlock(&reg->lock);
	return found;
}

uint32_t ft_comm_registry_count(struct ft_comm_registry *reg)
{
	pthread_mutex_lock(&reg->lock);
	uint32_t n = reg->count;
	pthread_mutex_unlock(&reg->lock);
	return n;
}
