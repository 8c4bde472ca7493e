/* ckpt_store.h: in-memory checkpoints as data, with no MPI and no I/O:
 * the regions a rank protects (ftshim_protect), a checkpoint of them as
 * one blob (src/ckpt_link.h) and its restoring, the copies a process
 * keeps for other ranks, which process keeps a rank's copies (its
 * buddy), and, after a failure, which checkpoint every rank goes back to
 * and where each rank's copy of it is found. pmpi/ckpt.c drives it.
 *
 * Sharing: regions and snapshots are the application thread's; struct
 * ft_ckpt_held is shared with the checkpoint link's thread, which adds
 * the copies that arrive and looks up those asked for, under its lock. */
#ifndef FTSHIM_CKPT_STORE_H
#define FTSHIM_CKPT_STORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/ckpt_link.h"

/* --- regions -------------------------------------------------------- */

#define FT_CKPT_REGIONS_MAX 1024

struct ft_ckpt_region {
	int32_t id;
	void *base;
	size_t bytes;
};

/* The regions registered, in id order. */
struct ft_ckpt_regions {
	struct ft_ckpt_region r[FT_CKPT_REGIONS_MAX];
	uint32_t n;
};

/* Register region id at [base, base + bytes), or move or resize it;
 * base NULL and bytes 0 unregisters it. 0, or -EINVAL with one line in
 * err (an id below 0, base NULL with bytes, overlapping another
 * region, more than FT_CKPT_REGIONS_MAX regions). */
int ft_ckpt_protect(struct ft_ckpt_regions *rs, int32_t id, void *base, size_t bytes, char *err,
		    size_t errlen);

/* --- a checkpoint as one blob --------------------------------------- */

/* The bytes a checkpoint of rs takes (its blob's length). */
uint64_t ft_ckpt_snapshot_len(const struct ft_ckpt_regions *rs);
/* Copy every region of rs, with the program's version, the owner's rank
 * and when it was taken (wall clock, ns since the epoch), into b (of
 * ft_ckpt_snapshot_len bytes). */
void ft_ckpt_snapshot_fill(struct ft_ckpt_blob *b, const struct ft_ckpt_regions *rs, long version,
			   uint32_t owner, uint64_t taken_unix_ns);
/* Check a blob read from another process: 0, or -EPROTO with the reason
 * in *why. */
int ft_ckpt_snapshot_check(const struct ft_ckpt_blob *b, const char **why);
/* The version, owner and time taken a checked blob holds. */
long ft_ckpt_snapshot_version(const struct ft_ckpt_blob *b);
uint32_t ft_ckpt_snapshot_owner(const struct ft_ckpt_blob *b);
uint64_t ft_ckpt_snapshot_taken(const struct ft_ckpt_blob *b);
/* Find region id in a checked blob: its bytes (*bytes their length), or
 * NULL. */
const void *ft_ckpt_snapshot_region(const struct ft_ckpt_blob *b, int32_t id, uint64_t *bytes);

/* --- copies kept for others ----------------------------------------- */

/* At most this many copies per owner: its latest two. */
#define FT_CKPT_HELD_PER_OWNER 2

struct ft_ckpt_copy {
	uint32_t owner;
	struct ft_ckpt_tag tag;
	struct ft_ckpt_blob *blob; /* one reference, the store's */
};

struct ft_ckpt_held {
	pthread_mutex_t lock;
	struct ft_ckpt_copy *c;
	uint32_t n, cap;
	uint64_t bytes; /* of every blob kept */
};

void ft_ckpt_held_init(struct ft_ckpt_held *h);
void ft_ckpt_held_fini(struct ft_ckpt_held *h);
/* Keep blob (the caller's reference, now the store's) as owner's copy
 * tagged tag, replacing one with the same tag; an owner's oldest copy
 * goes once it has more than FT_CKPT_HELD_PER_OWNER. false if out of
 * memory (the reference is dropped). */
bool ft_ckpt_held_put(struct ft_ckpt_held *h, uint32_t owner, struct ft_ckpt_tag tag,
		      struct ft_ckpt_blob *blob);
/* A new reference to owner's copy tagged tag, or NULL. */
struct ft_ckpt_blob *ft_ckpt_held_get(struct ft_ckpt_held *h, uint32_t owner, struct ft_ckpt_tag tag);
/* Drop the copies no restore can ask for any more: those numbered below
 * count (older than the last checkpoint every rank completed), and, at a
 * restore to tag, those of a later checkpoint or of its number but
 * another epoch (taken in a run the restart abandoned). */
void ft_ckpt_held_drop_older(struct ft_ckpt_held *h, uint64_t count);
void ft_ckpt_held_drop_abandoned(struct ft_ckpt_held *h, struct ft_ckpt_tag tag);

/* --- which checkpoint a restore goes back to ------------------------- */

/* What one process has: a copy of owner's checkpoint tagged tag, in its
 * memory or (FT_CKPT_HAVE_FILE) in owner's file that it can read. */
#define FT_CKPT_HAVE_FILE 1u
struct ft_ckpt_have {
	uint32_t owner;
	uint32_t flags;
	struct ft_ckpt_tag tag;
};

/* Up to this many are reported per process (its own latest two, its
 * latest two files, and the latest of those it keeps for others). */
#define FT_CKPT_REPORT_MAX 16

/* What a process reports at a restore; plain data, sent as bytes. */
struct ft_ckpt_report {
	int32_t job;      /* the reporting process's job rank */
	uint32_t nhave;
	struct ft_ckpt_have have[FT_CKPT_REPORT_MAX];
};

/* Fill r with what this process has: its own copies mine[0..nmine)
 * (owner self), its files[0..nfiles) of those not in memory, and the
 * copies in h, latest first. */
void ft_ckpt_report_fill(struct ft_ckpt_report *r, int32_t job, uint32_t self,
			 const struct ft_ckpt_tag *mine, uint32_t nmine, const struct ft_ckpt_tag *files,
			 uint32_t nfiles, struct ft_ckpt_held *h);

/* The checkpoint to go back to, from the reports of nrep processes, for n
 * program ranks run by holder[r] (job ranks): the latest (highest count)
 * of which every rank's copy is somewhere, taken from its own process's
 * memory where that has it (src[r] = holder[r]), else from the memory of
 * the lowest job rank that has it, else from its file if its own
 * process can read that (src[r] = holder[r]). true with *tag and src filled; false if no
 * checkpoint is whole (none taken yet, or a rank's every copy lost). */
bool ft_ckpt_choose(const struct ft_ckpt_report *reps, uint32_t nrep, const int32_t *holder, uint32_t n,
		    struct ft_ckpt_tag *tag, int32_t *src);

/* Whether job rank job has owner's copy tagged tag in memory, by the
 * reports. */
bool ft_ckpt_reported(const struct ft_ckpt_report *reps, uint32_t nrep, int32_t job, uint32_t owner,
		      struct ft_ckpt_tag tag);

/* The program rank that keeps rank r's copies, of n run by processes on
 * hosts host[0..n) (host[r]: the host of rank r's process): the next
 * rank after r on another host, else the next rank; -1 if n == 1. */
int32_t ft_ckpt_buddy(const uint64_t *host, uint32_t n, uint32_t r);

#endif
