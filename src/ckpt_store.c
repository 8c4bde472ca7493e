/* ckpt_store.c: regions, checkpoint blobs, copies kept for others, and
 * the choice of a restore (ckpt_store.h).
 *
 * A checkpoint's blob, integers little-endian as the machine's (it goes
 * only between processes of one job, built from one library):
 *   u32 magic "FTCS", u32 nregions, i64 version, u32 owner, u32 0,
 *   u64 when it was taken (ns since the epoch),
 *   then per region: i32 id, u32 0, u64 bytes, the bytes padded to 8. */
#include "ftshim_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/ckpt_store.h"

#define SNAP_MAGIC 0x53435446u /* "FTCS" */

struct snap_head {
	uint32_t magic, nregions;
	int64_t version;
	uint32_t owner, reserved;
	uint64_t taken_unix_ns;
};

struct snap_region {
	int32_t id;
	uint32_t reserved;
	uint64_t bytes;
};

static uint64_t pad8(uint64_t v)
{
	return (v + 7) & ~(uint64_t)7;
}

static int find_region(const struct ft_ckpt_regions *rs, int32_t id)
{
	for (uint32_t i = 0; i < rs->n; i++)
		if (rs->r[i].id == id)
			return (int)i;
	return -1;
}

int ft_ckpt_protect(struct ft_ckpt_regions *rs, int32_t id, void *base, size_t bytes, char *err,
		    size_t errlen)
{
	int at = id >= 0 ? find_region(rs, id) : -1;

	if (id < 0) {
		snprintf(err, errlen, "ftshim_protect(%d, ...): a region's id must be 0 or more", id);
		return -EINVAL;
	}
	if (!base && bytes > 0) {
		snprintf(err, errlen, "ftshim_protect(%d, NULL, %zu): no memory given for %zu bytes; accepted: "
			 "an address with its size, or NULL and 0 to unregister the region", id, bytes, bytes);
		return -EINVAL;
	}
	if (!base || bytes == 0) {
		if (at >= 0) {
			memmove(&rs->r[at], &rs->r[at + 1], (rs->n - (uint32_t)at - 1) * sizeof rs->r[0]);
			rs->n--;
		}
		return 0;
	}
	uintptr_t lo = (uintptr_t)base, hi = lo + bytes;
	for (uint32_t i = 0; i < rs->n; i++) {
		uintptr_t olo = (uintptr_t)rs->r[i].base, ohi = olo + rs->r[i].bytes;
		if (rs->r[i].id != id && lo < ohi && olo < hi) {
			snprintf(err, errlen, "ftshim_protect(%d, %p, %zu): overlaps region %d (%p, %zu bytes); "
				 "accepted: regions that share no byte", id, base, bytes, rs->r[i].id,
				 rs->r[i].base, rs->r[i].bytes);
			return -EINVAL;
		}
	}
	if (at < 0) {
		if (rs->n == FT_CKPT_REGIONS_MAX) {
			snprintf(err, errlen, "ftshim_protect(%d, ...): already %d regions, the most there may be",
				 id, FT_CKPT_REGIONS_MAX);
			return -EINVAL;
		}
		uint32_t i = rs->n;
		while (i > 0 && rs->r[i - 1].id > id) {
			rs->r[i] = rs->r[i - 1];
			i--;
		}
		at = (int)i;
		rs->n++;
	}
	rs->r[at] = (struct ft_ckpt_region){ .id = id, .base = base, .bytes = bytes };
	return 0;
}

uint64_t ft_ckpt_snapshot_len(const struct ft_ckpt_regions *rs)
{
	uint64_t len = sizeof(struct snap_head);

	for (uint32_t i = 0; i < rs->n; i++)
		len += sizeof(struct snap_region) + pad8(rs->r[i].bytes);
	return len;
}

void ft_ckpt_snapshot_fill(struct ft_ckpt_blob *b, const struct ft_ckpt_regions *rs, long version,
			   uint32_t owner, uint64_t taken_unix_ns)
{
	struct snap_head h = { .magic = SNAP_MAGIC, .nregions = rs->n, .version = version, .owner = owner,
			       .taken_unix_ns = taken_unix_ns };
	unsigned char *p = b->data;

	memcpy(p, &h, sizeof h);
	p += sizeof h;
	for (uint32_t i = 0; i < rs->n; i++) {
		struct snap_region r = { .id = rs->r[i].id, .bytes = rs->r[i].bytes };
		memcpy(p, &r, sizeof r);
		p += sizeof r;
		memcpy(p, rs->r[i].base, rs->r[i].bytes);
		/* The padding too: a blob's bytes are all defined. */
		memset(p + r.bytes, 0, pad8(r.bytes) - r.bytes);
		p += pad8(r.bytes);
	}
}

int ft_ckpt_snapshot_check(const struct ft_ckpt_blob *b, const char **why)
{
	struct snap_head h;
	uint64_t at = sizeof h;

	if (b->len < sizeof h) {
		*why = "shorter than a checkpoint's header";
		return -EPROTO;
	}
	memcpy(&h, b->data, sizeof h);
	if (h.magic != SNAP_MAGIC) {
		*why = "not a checkpoint (bad magic)";
		return -EPROTO;
	}
	for (uint32_t i = 0; i < h.nregions; i++) {
		struct snap_region r;
		if (b->len - at < sizeof r) {
			*why = "a region's header runs past the end";
			return -EPROTO;
		}
		memcpy(&r, b->data + at, sizeof r);
		at += sizeof r;
		if (r.bytes > b->len - at || pad8(r.bytes) > b->len - at) {
			*why = "a region runs past the end";
			return -EPROTO;
		}
		at += pad8(r.bytes);
	}
	if (at != b->len) {
		*why = "bytes after the last region";
		return -EPROTO;
	}
	return 0;
}

long ft_ckpt_snapshot_version(const struct ft_ckpt_blob *b)
{
	struct snap_head h;

	memcpy(&h, b->data, sizeof h);
	return (long)h.version;
}

uint32_t ft_ckpt_snapshot_owner(const struct ft_ckpt_blob *b)
{
	struct snap_head h;

	memcpy(&h, b->data, sizeof h);
	return h.owner;
}

uint64_t ft_ckpt_snapshot_taken(const struct ft_ckpt_blob *b)
{
	struct snap_head h;

	memcpy(&h, b->data, sizeof h);
	return h.taken_unix_ns;
}

const void *ft_ckpt_snapshot_region(const struct ft_ckpt_blob *b, int32_t id, uint64_t *bytes)
{
	struct snap_head h;
	uint64_t at = sizeof h;

	memcpy(&h, b->data, sizeof h);
	for (uint32_t i = 0; i < h.nregions; i++) {
		struct snap_region r;
		memcpy(&r, b->data + at, sizeof r);
		at += sizeof r;
		if (r.id == id) {
			*bytes = r.bytes;
			return b->data + at;
		}
		at += pad8(r.bytes);
	}
	return NULL;
}

void ft_ckpt_held_init(struct ft_ckpt_held *h)
{
	*h = (struct ft_ckpt_held){ 0 };
	pthread_mutex_init(&h->lock, NULL);
}

void ft_ckpt_held_fini(struct ft_ckpt_held *h)
{
	for (uint32_t i = 0; i < h->n; i++)
		ft_ckpt_blob_unref(h->c[i].blob);
	free(h->c);
	pthread_mutex_destroy(&h->lock);
	*h = (struct ft_ckpt_held){ 0 };
}

/* Remove copy i. Under the lock. */
static void drop_at(struct ft_ckpt_held *h, uint32_t i)
{
	h->bytes -= h->c[i].blob->len;
	ft_ckpt_blob_unref(h->c[i].blob);
	h->c[i] = h->c[--h->n];
}

bool ft_ckpt_held_put(struct ft_ckpt_held *h, uint32_t owner, struct ft_ckpt_tag tag,
		      struct ft_ckpt_blob *blob)
{
	bool ok = true;

	pthread_mutex_lock(&h->lock);
	uint32_t mine = 0, oldest = UINT32_MAX;
	for (uint32_t i = 0; i < h->n; i++) {
		if (h->c[i].owner != owner)
			continue;
		if (ft_ckpt_tag_eq(h->c[i].tag, tag)) {
			drop_at(h, i);
			i--;
			continue;
		}
		mine++;
		if (oldest == UINT32_MAX || h->c[i].tag.count < h->c[oldest].tag.count)
			oldest = i;
	}
	if (mine >= FT_CKPT_HELD_PER_OWNER)
		drop_at(h, oldest);
	if (h->n == h->cap) {
		uint32_t ncap = h->cap ? 2 * h->cap : 8;
		struct ft_ckpt_copy *c = realloc(h->c, ncap * sizeof *c);
		if (!c) {
			ft_ckpt_blob_unref(blob);
			ok = false;
			goto out;
		}
		h->c = c;
		h->cap = ncap;
	}
	h->c[h->n++] = (struct ft_ckpt_copy){ .owner = owner, .tag = tag, .blob = blob };
	h->bytes += blob->len;
out:
	pthread_mutex_unlock(&h->lock);
	return ok;
}

struct ft_ckpt_blob *ft_ckpt_held_get(struct ft_ckpt_held *h, uint32_t owner, struct ft_ckpt_tag tag)
{
	struct ft_ckpt_blob *b = NULL;

	pthread_mutex_lock(&h->lock);
	for (uint32_t i = 0; i < h->n && !b; i++)
		if (h->c[i].owner == owner && ft_ckpt_tag_eq(h->c[i].tag, tag))
			b = ft_ckpt_blob_ref(h->c[i].blob);
	pthread_mutex_unlock(&h->lock);
	return b;
}

void ft_ckpt_held_drop_older(struct ft_ckpt_held *h, uint64_t count)
{
	pthread_mutex_lock(&h->lock);
	for (uint32_t i = 0; i < h->n; i++)
		if (h->c[i].tag.count < count)
			drop_at(h, i--);
	pthread_mutex_unlock(&h->lock);
}

void ft_ckpt_held_drop_abandoned(struct ft_ckpt_held *h, struct ft_ckpt_tag tag)
{
	pthread_mutex_lock(&h->lock);
	for (uint32_t i = 0; i < h->n; i++) {
		struct ft_ckpt_tag t = h->c[i].tag;
		if (t.count > tag.count || (t.count == tag.count && t.epoch != tag.epoch))
			drop_at(h, i--);
	}
	pthread_mutex_unlock(&h->lock);
}

static void report_add(struct ft_ckpt_report *r, uint32_t owner, struct ft_ckpt_tag tag, uint32_t flags)
{
	if (r->nhave < FT_CKPT_REPORT_MAX)
		r->have[r->nhave++] = (struct ft_ckpt_have){ .owner = owner, .flags = flags, .tag = tag };
}

void ft_ckpt_report_fill(struct ft_ckpt_report *r, int32_t job, uint32_t self,
			 const struct ft_ckpt_tag *mine, uint32_t nmine, const struct ft_ckpt_tag *files,
			 uint32_t nfiles, struct ft_ckpt_held *h)
{
	*r = (struct ft_ckpt_report){ .job = job };
	for (uint32_t i = 0; i < nmine; i++)
		report_add(r, self, mine[i], 0);
	for (uint32_t i = 0; i < nfiles; i++) {
		bool in_memory = false;
		for (uint32_t m = 0; m < nmine; m++)
			in_memory = in_memory || ft_ckpt_tag_eq(mine[m], files[i]);
		if (!in_memory)
			report_add(r, self, files[i], FT_CKPT_HAVE_FILE);
	}
	pthread_mutex_lock(&h->lock);
	/* Latest first: a copy of a higher count before a lower one. */
	bool *taken = calloc(h->n ? h->n : 1, sizeof *taken);
	for (uint32_t k = 0; taken && k < h->n && r->nhave < FT_CKPT_REPORT_MAX; k++) {
		uint32_t best = UINT32_MAX;
		for (uint32_t i = 0; i < h->n; i++)
			if (!taken[i] && (best == UINT32_MAX || h->c[i].tag.count > h->c[best].tag.count))
				best = i;
		taken[best] = true;
		report_add(r, h->c[best].owner, h->c[best].tag, 0);
	}
	free(taken);
	pthread_mutex_unlock(&h->lock);
}

/* Whether job rank job reported owner's copy tagged tag with flags. */
static bool reported_as(const struct ft_ckpt_report *reps, uint32_t nrep, int32_t job, uint32_t owner,
			struct ft_ckpt_tag tag, uint32_t flags)
{
	for (uint32_t p = 0; p < nrep; p++) {
		if (reps[p].job != job)
			continue;
		for (uint32_t i = 0; i < reps[p].nhave && i < FT_CKPT_REPORT_MAX; i++)
			if (reps[p].have[i].owner == owner && reps[p].have[i].flags == flags &&
			    ft_ckpt_tag_eq(reps[p].have[i].tag, tag))
				return true;
	}
	return false;
}

bool ft_ckpt_reported(const struct ft_ckpt_report *reps, uint32_t nrep, int32_t job, uint32_t owner,
		      struct ft_ckpt_tag tag)
{
	return reported_as(reps, nrep, job, owner, tag, 0);
}

/* Where rank r's copy tagged tag is: its own process's memory, else the
 * memory of the lowest job rank that reported it, else its own process's
 * file (a file is read where it is; the memory of a process on another
 * host is the faster source than a shared filesystem); -1 nowhere. */
static int32_t source_of(const struct ft_ckpt_report *reps, uint32_t nrep, const int32_t *holder,
			 uint32_t r, struct ft_ckpt_tag tag)
{
	if (ft_ckpt_reported(reps, nrep, holder[r], r, tag))
		return holder[r];
	int32_t best = -1;
	for (uint32_t p = 0; p < nrep; p++)
		if ((best < 0 || reps[p].job < best) && ft_ckpt_reported(reps, nrep, reps[p].job, r, tag))
			best = reps[p].job;
	if (best < 0 && reported_as(reps, nrep, holder[r], r, tag, FT_CKPT_HAVE_FILE))
		best = holder[r];
	return best;
}

bool ft_ckpt_choose(const struct ft_ckpt_report *reps, uint32_t nrep, const int32_t *holder, uint32_t n,
		    struct ft_ckpt_tag *tag, int32_t *src)
{
	bool found = false;
	struct ft_ckpt_tag best = { 0 };

	/* Every tag anyone has is a candidate; the latest whole one wins. */
	for (uint32_t p = 0; p < nrep; p++) {
		for (uint32_t i = 0; i < reps[p].nhave && i < FT_CKPT_REPORT_MAX; i++) {
			struct ft_ckpt_tag t = reps[p].have[i].tag;
			if (found && t.count <= best.count)
				continue;
			bool whole = true;
			for (uint32_t r = 0; r < n && whole; r++)
				whole = source_of(reps, nrep, holder, r, t) >= 0;
			if (whole) {
				best = t;
				found = true;
			}
		}
	}
	if (!found)
		return false;
	*tag = best;
	for (uint32_t r = 0; r < n; r++)
		src[r] = source_of(reps, nrep, holder, r, best);
	return true;
}

int32_t ft_ckpt_buddy(const uint64_t *host, uint32_t n, uint32_t r)
{
	if (n < 2)
		return -1;
	for (uint32_t d = 1; d < n; d++)
		if (host[(r + d) % n] != host[r])
			return (int32_t)((r + d) % n);
	return (int32_t)((r + 1) % n);
}
