/* repl_log.c: the message counts (an open-addressing hash table keyed by
 * communicator, peer and tag, linear probing; deletion rebuilds it) and the send log (a FIFO list with a byte
 * budget) of src/repl_log.h. */
#include "ftshim_config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/hash.h"
#include "src/repl_log.h"

/* --- counts ---------------------------------------------------------------- */

static bool slot_empty(const struct ft_msg_counts *c)
{
	return c->comm == 0 && c->peer == -1;
}

static size_t slot_of(const struct ft_msg_table *t, uint64_t comm, int32_t peer, int32_t tag)
{
	uint64_t h = ft_mix64(comm ^ ft_mix64(((uint64_t)(uint32_t)peer << 32) | (uint32_t)tag));

	return (size_t)h & (t->cap - 1);
}

static void mark_empty(struct ft_msg_counts *slots, size_t n)
{
	for (size_t i = 0; i < n; i++)
		slots[i] = (struct ft_msg_counts){.comm = 0, .peer = -1};
}

void ft_msg_table_init(struct ft_msg_table *t)
{
	*t = (struct ft_msg_table){0};
}

void ft_msg_table_fini(struct ft_msg_table *t)
{
	free(t->slots);
	ft_msg_table_init(t);
}

static struct ft_msg_counts *probe(const struct ft_msg_table *t, uint64_t comm, int32_t peer,
				   int32_t tag)
{
	if (t->cap == 0)
		return NULL;
	for (size_t i = slot_of(t, comm, peer, tag);; i = (i + 1) & (t->cap - 1)) {
		struct ft_msg_counts *c = &t->slots[i];
		if (slot_empty(c) || (c->comm == comm && c->peer == peer && c->tag == tag))
			return c;
	}
}

static int grow(struct ft_msg_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 64;
	struct ft_msg_table bigger = {.slots = malloc(cap * sizeof *bigger.slots), .cap = cap};

	if (!bigger.slots)
		return -ENOMEM;
	mark_empty(bigger.slots, cap);
	for (size_t i = 0; i < t->cap; i++)
		if (!slot_empty(&t->slots[i]))
			*probe(&bigger, t->slots[i].comm, t->slots[i].peer, t->slots[i].tag) =
			    t->slots[i];
	bigger.used = t->used;
	free(t->slots);
	*t = bigger;
	return 0;
}

struct ft_msg_counts *ft_msg_counts_get(struct ft_msg_table *t, uint64_t comm, int32_t peer,
					int32_t tag)
{
	if (comm == 0 || peer < 0)
		return NULL;
	/* At most half full, so that probes stay short and one always ends. */
	if ((t->used + 1) * 2 > t->cap && grow(t) != 0)
		return NULL;
	struct ft_msg_counts *c = probe(t, comm, peer, tag);
	if (slot_empty(c)) {
		*c = (struct ft_msg_counts){.comm = comm, .peer = peer, .tag = tag};
		t->used++;
	}
	return c;
}

const struct ft_msg_counts *ft_msg_counts_find(const struct ft_msg_table *t, uint64_t comm,
					       int32_t peer, int32_t tag)
{
	const struct ft_msg_counts *c = probe(t, comm, peer, tag);

	return c && !slot_empty(c) ? c : NULL;
}

void ft_msg_table_each_peer(struct ft_msg_table *t, int32_t peer,
			    void (*fn)(struct ft_msg_counts *c, void *arg), void *arg)
{
	for (size_t i = 0; i < t->cap; i++)
		if (!slot_empty(&t->slots[i]) && t->slots[i].peer == peer)
			fn(&t->slots[i], arg);
}

void ft_msg_table_drop_comm(struct ft_msg_table *t, uint64_t comm)
{
	size_t kept = 0;

	for (size_t i = 0; i < t->cap; i++)
		kept += !slot_empty(&t->slots[i]) && t->slots[i].comm != comm;
	if (kept == t->used)
		return;
	/* Out of memory: the entries stay (ids are not reused: harmless). */
	struct ft_msg_counts *keep = malloc((kept + 1) * sizeof *keep);
	if (!keep)
		return;
	kept = 0;
	for (size_t i = 0; i < t->cap; i++)
		if (!slot_empty(&t->slots[i]) && t->slots[i].comm != comm)
			keep[kept++] = t->slots[i];
	mark_empty(t->slots, t->cap);
	t->used = kept;
	for (size_t i = 0; i < kept; i++)
		*probe(t, keep[i].comm, keep[i].peer, keep[i].tag) = keep[i];
	free(keep);
}

/* --- the send log ------------------------------------------------------------ */

void ft_send_log_init(struct ft_send_log *log, size_t budget)
{
	*log = (struct ft_send_log){.budget = budget};
}

static void drop_oldest(struct ft_send_log *log)
{
	struct ft_logged *m = log->oldest;

	log->oldest = m->next;
	if (!log->oldest)
		log->newest = NULL;
	log->bytes -= m->len;
	log->dropped++;
	free(m);
}

void ft_send_log_fini(struct ft_send_log *log)
{
	while (log->oldest)
		drop_oldest(log);
	ft_send_log_init(log, log->budget);
}

struct ft_logged *ft_send_log_append(struct ft_send_log *log, uint64_t comm, int32_t peer,
				     int32_t tag, uint64_t seq, size_t len)
{
	if (len > log->budget)
		return NULL;
	struct ft_logged *m = malloc(sizeof *m + len);
	if (!m)
		return NULL;
	*m = (struct ft_logged){.comm = comm, .peer = peer, .tag = tag, .seq = seq, .len = len};
	while (log->oldest && log->bytes + len > log->budget)
		drop_oldest(log);
	if (log->newest)
		log->newest->next = m;
	else
		log->oldest = m;
	log->newest = m;
	log->bytes += len;
	return m;
}

size_t ft_send_log_each_after(const struct ft_send_log *log, uint64_t comm, int32_t peer,
			      uint64_t (*after)(int32_t tag, void *arg),
			      void (*fn)(const struct ft_logged *m, void *arg), void *arg)
{
	size_t n = 0;

	for (const struct ft_logged *m = log->oldest; m; m = m->next)
		if (m->comm == comm && m->peer == peer && m->seq > after(m->tag, arg)) {
			fn(m, arg);
			n++;
		}
	return n;
}

void ft_send_log_drop_comm(struct ft_send_log *log, uint64_t comm)
{
	struct ft_logged **link = &log->oldest, *last = NULL;

	while (*link) {
		struct ft_logged *m = *link;
		if (m->comm == comm) {
			*link = m->next;
			log->bytes -= m->len;
			free(m);
		} else {
			last = m;
			link = &m->next;
		}
	}
	log->newest = last;
}
