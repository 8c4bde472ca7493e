/* ckpt_disk.h: copies of a rank's checkpoints in a directory
 * (FTSHIM_CKPT_DIR), beside the in-memory ones: a restore uses a rank's
 * file when no process kept its copy in memory (the rank lost with its
 * buddy). No MPI. A writer thread of its own writes one blob at a time to
 * a temporary file, syncs it and renames it into place, so that a file
 * under its final name is always whole; the program waits for none of
 * it. Each rank keeps its latest two files. Files are named
 * "ftshim-JOB-rRANK-COUNT-EPOCH.ckpt", JOB the job's id, so that jobs
 * sharing the directory never read each other's.
 *
 * Sharing: the application thread calls everything here; the writer
 * thread owns the write in flight and hands its outcome back under the
 * handle's lock. */
#ifndef FTSHIM_CKPT_DISK_H
#define FTSHIM_CKPT_DISK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/ckpt_link.h"

struct ft_ckpt_disk;

/* Check that dir is a directory this process can write files in, making
 * it (one level) if it is missing. 0, or -errno with one line in err
 * naming dir, what is wrong and what is accepted. */
int ft_ckpt_disk_check_dir(const char *dir, char *err, size_t errlen);

/* Start the writer for job (its id, letters and digits) in dir. 0, or
 * -errno with one line in err. */
int ft_ckpt_disk_open(struct ft_ckpt_disk **out, const char *dir, const char *job, char *err,
		      size_t errlen);
/* Wait for the write in flight, then stop the writer. NULL: nothing. */
void ft_ckpt_disk_close(struct ft_ckpt_disk *d);

/* Hand owner's copy tagged tag to the writer (it takes a reference of
 * its own). -EBUSY while a write is in flight (see ft_ckpt_disk_done). */
int ft_ckpt_disk_write(struct ft_ckpt_disk *d, uint32_t owner, struct ft_ckpt_tag tag,
		       struct ft_ckpt_blob *blob);

/* The last write's outcome, once it is over. */
struct ft_ckpt_disk_result {
	uint32_t owner;
	struct ft_ckpt_tag tag;
	uint64_t bytes;
	double write_ms; /* writing, syncing and renaming */
	int err;         /* 0, or the -errno that left no file */
};

/* true when no write is in flight; then, if a write ended since the last
 * call, *res is filled and *fresh set (else *fresh is false). */
bool ft_ckpt_disk_done(struct ft_ckpt_disk *d, struct ft_ckpt_disk_result *res, bool *fresh);

/* The tags of owner's files in the directory, latest (highest count)
 * first, at most max of them. */
uint32_t ft_ckpt_disk_list(struct ft_ckpt_disk *d, uint32_t owner, struct ft_ckpt_tag *tags,
			   uint32_t max);
/* Read owner's file tagged tag: a new blob, or NULL with the reason in
 * err. The caller checks its contents (ft_ckpt_snapshot_check). */
struct ft_ckpt_blob *ft_ckpt_disk_read(struct ft_ckpt_disk *d, uint32_t owner, struct ft_ckpt_tag tag,
				       char *err, size_t errlen);
/* Remove owner's files that a restore to tag abandoned (a later count,
 * or its count in another epoch; tag {0, 0}: all of them) and any
 * temporary file of owner's a dead writer left. */
void ft_ckpt_disk_drop_abandoned(struct ft_ckpt_disk *d, uint32_t owner, struct ft_ckpt_tag tag);
/* The path of owner's file tagged tag, for messages. */
void ft_ckpt_disk_path(const struct ft_ckpt_disk *d, uint32_t owner, struct ft_ckpt_tag tag, char *out,
		       size_t outlen);

#endif
