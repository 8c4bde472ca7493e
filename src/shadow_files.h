/* shadow_files.h: a replica's own copies of the files its program
 * writes. Both copies of a replicated rank run the same program, so both
 * would write the same paths, racing each other (one deletes what the
 * other still writes). A replica writes instead to a copy beside each
 * file, named .ftshim-rL.NAME (L its logical rank), and reads back what
 * it wrote from there; a file it deleted is absent to it while the real
 * one stays for the primary. When the replica is promoted, its copies
 * are renamed over the real paths and what it deleted is deleted, so the
 * files are its; when it ends beside a live primary, its copies go.
 *
 * Only regular files in existing directories are copied: directories,
 * devices, pipes and anything under /proc, /sys, /dev or /run are the
 * real ones. A path is known by its directory's real path and its last
 * name, so "out/a", "./out/a" and a symlinked directory's spelling are
 * one file.
 *
 * Pure policy on the file system: no MPI, no interposition (the library's
 * wrappers of open, fopen, unlink, rename and stat call these). A table
 * is used by one thread at a time (its owner locks it). Functions
 * returning int give 0 or a negative errno. */
#ifndef FTSHIM_SHADOW_FILES_H
#define FTSHIM_SHADOW_FILES_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

enum ft_shadow_state {
	FT_SHADOW_COPY = 1, /* the path is the copy's: reads and writes go there */
	FT_SHADOW_GONE = 2, /* deleted here: absent until created again */
};

struct ft_shadow_entry {
	struct ft_shadow_entry *next; /* in its bucket */
	enum ft_shadow_state state;
	char *key;  /* the real path: directory's realpath, '/', name */
	char *copy; /* the copy's path, beside it */
};

struct ft_shadow_files {
	struct ft_shadow_entry **buckets;
	size_t nbuckets, count;
	char prefix[32]; /* ".ftshim-rL." */
};

/* What a call on a path should do: what it was asked on the path it was
 * given (PASS), the same on the path in out (USE), nothing more (DONE:
 * done here, successfully), or fail with -errno (a negative return). */
enum { FT_SHADOW_PASS = 0, FT_SHADOW_USE = 1, FT_SHADOW_DONE = 2 };

int ft_shadow_init(struct ft_shadow_files *s, int logical_rank);
/* Forgets the table; the files stay as they are. */
void ft_shadow_fini(struct ft_shadow_files *s);

/* For open(dirfd, path, flags): FT_SHADOW_PASS, FT_SHADOW_USE with the
 * path to open in out, or -errno. A first open that may write an
 * existing regular file copies it first (without O_TRUNC), so the copy
 * starts from what the path held. */
int ft_shadow_open(struct ft_shadow_files *s, int dirfd, const char *path, int flags, char *out,
		   size_t outlen);
/* For stat and access on a path: PASS, USE (out), or -ENOENT for a path
 * deleted here. */
int ft_shadow_look(struct ft_shadow_files *s, int dirfd, const char *path, char *out, size_t outlen);
/* unlink(dirfd, path): DONE (the copy deleted, or the real file now
 * absent here while it stays), PASS (not eligible, or no such file
 * anywhere) or -errno. */
int ft_shadow_unlink(struct ft_shadow_files *s, int dirfd, const char *path);
/* rename(olddirfd, old, newdirfd, new): DONE (the copy renamed, or a
 * real file's content copied to the new name's copy), PASS (the old
 * path not eligible, or no such file anywhere) or -errno. */
int ft_shadow_rename(struct ft_shadow_files *s, int olddirfd, const char *old, int newdirfd,
		     const char *new_path);

/* The replica now stands for the rank: every copy is renamed over its
 * real path and every path deleted here is deleted. Returns how many
 * paths failed (each named through warn, when given); the table is left
 * empty. */
unsigned ft_shadow_promote(struct ft_shadow_files *s, void (*warn)(const char *what, const char *path, int err));
/* The replica ends beside a live primary: its copies are deleted. */
void ft_shadow_discard(struct ft_shadow_files *s);

/* The real path (dirfd, path) names, as a table's key, or -errno when it
 * is not eligible (its directory does not exist, or is under /proc,
 * /sys, /dev or /run, or its name is empty, . or ..). */
int ft_shadow_key(int dirfd, const char *path, char *key, size_t keylen);

#endif
