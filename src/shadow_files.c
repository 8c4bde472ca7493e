/* shadow_files.c: a replica's own copies of the files its program writes
 * (shadow_files.h): the table of paths it copied or deleted, what each
 * call on a path becomes, and the promotion that makes the copies the
 * files. */
#include "ftshim_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/hash.h"
#include "src/shadow_files.h"

int ft_shadow_init(struct ft_shadow_files *s, int logical_rank)
{
	memset(s, 0, sizeof *s);
	snprintf(s->prefix, sizeof s->prefix, ".ftshim-r%d.", logical_rank);
	s->nbuckets = 64;
	s->buckets = calloc(s->nbuckets, sizeof *s->buckets);
	return s->buckets ? 0 : -ENOMEM;
}

static void free_entries(struct ft_shadow_files *s)
{
	for (size_t b = 0; b < s->nbuckets; b++)
		for (struct ft_shadow_entry *e = s->buckets[b], *next; e; e = next) {
			next = e->next;
			free(e->key);
			free(e->copy);
			free(e);
		}
	if (s->buckets)
		memset(s->buckets, 0, s->nbuckets * sizeof *s->buckets);
	s->count = 0;
}

void ft_shadow_fini(struct ft_shadow_files *s)
{
	if (!s->buckets)
		return;
	free_entries(s);
	free(s->buckets);
	s->buckets = NULL;
	s->nbuckets = 0;
}

static uint64_t hash_str(const char *p)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	while (*p)
		h = (h ^ (unsigned char)*p++) * UINT64_C(0x100000001b3);
	return ft_mix64(h);
}

/* Under /proc, /sys, /dev or /run: the system's, never a program's output. */
static bool system_path(const char *dir)
{
	static const char *const roots[] = { "/proc", "/sys", "/dev", "/run" };

	for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
		size_t n = strlen(roots[i]);
		if (strncmp(dir, roots[i], n) == 0 && (dir[n] == '\0' || dir[n] == '/'))
			return true;
	}
	return false;
}

int ft_shadow_key(int dirfd, const char *path, char *key, size_t keylen)
{
	char full[PATH_MAX], dir[PATH_MAX];
	size_t n;

	if (!path || !*path)
		return -ENOENT;
	if (path[0] == '/') {
		if (snprintf(full, sizeof full, "%s", path) >= (int)sizeof full)
			return -ENAMETOOLONG;
	} else {
		char base[PATH_MAX];
		if (dirfd == AT_FDCWD) {
			if (!getcwd(base, sizeof base))
				return -errno;
		} else {
			char link[64];
			snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
			ssize_t len = readlink(link, base, sizeof base - 1);
			if (len < 0)
				return -EBADF;
			base[len] = '\0';
		}
		if (snprintf(full, sizeof full, "%s/%s", base, path) >= (int)sizeof full)
			return -ENAMETOOLONG;
	}
	n = strlen(full);
	if (full[n - 1] == '/')
		return -EISDIR; /* a directory's spelling */
	char *slash = strrchr(full, '/');
	const char *name = slash + 1;
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -EISDIR;
	*slash = '\0';
	if (!realpath(full[0] ? full : "/", dir))
		return -errno;
	if (system_path(dir))
		return -EPERM;
	if (snprintf(key, keylen, "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, name) >= (int)keylen)
		return -ENAMETOOLONG;
	return 0;
}

static struct ft_shadow_entry *find(struct ft_shadow_files *s, const char *key)
{
	for (struct ft_shadow_entry *e = s->buckets[hash_str(key) & (s->nbuckets - 1)]; e; e = e->next)
		if (strcmp(e->key, key) == 0)
			return e;
	return NULL;
}

static void grow(struct ft_shadow_files *s)
{
	size_t nb = s->nbuckets * 2;
	struct ft_shadow_entry **b = calloc(nb, sizeof *b);

	if (!b)
		return; /* longer chains, still correct */
	for (size_t i = 0; i < s->nbuckets; i++)
		for (struct ft_shadow_entry *e = s->buckets[i], *next; e; e = next) {
			next = e->next;
			size_t h = hash_str(e->key) & (nb - 1);
			e->next = b[h];
			b[h] = e;
		}
	free(s->buckets);
	s->buckets = b;
	s->nbuckets = nb;
}

/* The copy of key: beside it, the prefix before its name (a name too long
 * for that is replaced by its hash). */
static char *copy_path(const struct ft_shadow_files *s, const char *key)
{
	const char *name = strrchr(key, '/') + 1;
	int dirlen = (int)(name - key);
	char *out = NULL;
	int rc;

	if (strlen(s->prefix) + strlen(name) <= NAME_MAX)
		rc = asprintf(&out, "%.*s%s%s", dirlen, key, s->prefix, name);
	else
		rc = asprintf(&out, "%.*s%s%016llx", dirlen, key, s->prefix,
			      (unsigned long long)hash_str(name));
	return rc < 0 ? NULL : out;
}

static struct ft_shadow_entry *add(struct ft_shadow_files *s, const char *key, enum ft_shadow_state state)
{
	struct ft_shadow_entry *e = calloc(1, sizeof *e);

	if (!e || !(e->key = strdup(key)) || !(e->copy = copy_path(s, key))) {
		if (e)
			free(e->key);
		free(e);
		return NULL;
	}
	if (s->count >= 2 * s->nbuckets)
		grow(s);
	size_t h = hash_str(key) & (s->nbuckets - 1);
	e->state = state;
	e->next = s->buckets[h];
	s->buckets[h] = e;
	s->count++;
	return e;
}

/* src's content into dst, made or truncated with src's permissions. */
static int copy_file(const char *src, const char *dst)
{
	struct stat st;
	int in = open(src, O_RDONLY | O_CLOEXEC), rc = 0;

	if (in < 0)
		return -errno;
	if (fstat(in, &st) != 0) {
		rc = -errno;
		close(in);
		return rc;
	}
	int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, st.st_mode & 07777);
	if (out < 0) {
		rc = -errno;
		close(in);
		return rc;
	}
	char buf[16384];
	for (;;) {
		ssize_t got = read(in, buf, sizeof buf);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			rc = got < 0 ? -errno : 0;
			break;
		}
		for (ssize_t done = 0; done < got;) {
			ssize_t put = write(out, buf + done, (size_t)(got - done));
			if (put < 0 && errno == EINTR)
				continue;
			if (put < 0) {
				rc = -errno;
				break;
			}
			done += put;
		}
		if (rc != 0)
			break;
	}
	if (close(out) != 0 && rc == 0)
		rc = -errno;
	close(in);
	if (rc != 0)
		unlink(dst);
	return rc;
}

static int use(const struct ft_shadow_entry *e, char *out, size_t outlen)
{
	if (snprintf(out, outlen, "%s", e->copy) >= (int)outlen)
		return -ENAMETOOLONG;
	return FT_SHADOW_USE;
}

static void forget(struct ft_shadow_files *s, struct ft_shadow_entry *gone)
{
	struct ft_shadow_entry **p = &s->buckets[hash_str(gone->key) & (s->nbuckets - 1)];

	while (*p != gone)
		p = &(*p)->next;
	*p = gone->next;
	free(gone->key);
	free(gone->copy);
	free(gone);
	s->count--;
}

int ft_shadow_open(struct ft_shadow_files *s, int dirfd, const char *path, int flags, char *out, size_t outlen)
{
	char key[PATH_MAX];
	bool writes = (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC));
	struct stat st;

	if ((flags & O_TMPFILE) == O_TMPFILE || ft_shadow_key(dirfd, path, key, sizeof key) != 0)
		return FT_SHADOW_PASS;
	struct ft_shadow_entry *e = find(s, key);
	if (e && e->state == FT_SHADOW_GONE) {
		if (!(flags & O_CREAT))
			return -ENOENT;
		e->state = FT_SHADOW_COPY;
	} else if (!e) {
		if (!writes)
			return FT_SHADOW_PASS;
		if (stat(key, &st) != 0) {
			/* No such file: a creation makes the copy; anything
			 * else fails on the real path as it would. */
			if (errno != ENOENT || !(flags & O_CREAT))
				return FT_SHADOW_PASS;
			return (e = add(s, key, FT_SHADOW_COPY)) ? use(e, out, outlen) : -ENOMEM;
		}
		if (!S_ISREG(st.st_mode))
			return FT_SHADOW_PASS;
		if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
			return -EEXIST;
		if (!(e = add(s, key, FT_SHADOW_COPY)))
			return -ENOMEM;
		int rc = flags & O_TRUNC ? 0 : copy_file(key, e->copy);
		if (rc == -ENOENT && (flags & O_CREAT))
			rc = 0; /* deleted meanwhile (by the primary): made new */
		if (rc != 0) {
			forget(s, e);
			return rc;
		}
	}
	return use(e, out, outlen);
}

int ft_shadow_look(struct ft_shadow_files *s, int dirfd, const char *path, char *out, size_t outlen)
{
	char key[PATH_MAX];

	if (ft_shadow_key(dirfd, path, key, sizeof key) != 0)
		return FT_SHADOW_PASS;
	struct ft_shadow_entry *e = find(s, key);
	if (!e)
		return FT_SHADOW_PASS;
	return e->state == FT_SHADOW_GONE ? -ENOENT : use(e, out, outlen);
}

int ft_shadow_unlink(struct ft_shadow_files *s, int dirfd, const char *path)
{
	char key[PATH_MAX];
	struct stat st;

	if (ft_shadow_key(dirfd, path, key, sizeof key) != 0)
		return FT_SHADOW_PASS;
	struct ft_shadow_entry *e = find(s, key);
	if (e && e->state == FT_SHADOW_GONE)
		return -ENOENT;
	if (e) {
		if (unlink(e->copy) != 0 && errno != ENOENT)
			return -errno;
		e->state = FT_SHADOW_GONE;
		return FT_SHADOW_DONE;
	}
	/* The real file stays for the primary; absent here from now on. A
	 * directory or a missing path fails on the real call as it would. */
	if (lstat(key, &st) != 0 || S_ISDIR(st.st_mode))
		return FT_SHADOW_PASS;
	return add(s, key, FT_SHADOW_GONE) ? FT_SHADOW_DONE : -ENOMEM;
}

int ft_shadow_rename(struct ft_shadow_files *s, int olddirfd, const char *old, int newdirfd, const char *new_path)
{
	char okey[PATH_MAX], nkey[PATH_MAX];
	struct stat st;

	if (ft_shadow_key(olddirfd, old, okey, sizeof okey) != 0)
		return FT_SHADOW_PASS;
	struct ft_shadow_entry *oe = find(s, okey);
	if (oe && oe->state == FT_SHADOW_GONE)
		return -ENOENT;
	if (!oe && (lstat(okey, &st) != 0 || !S_ISREG(st.st_mode)))
		return FT_SHADOW_PASS; /* a directory, or nothing: the real call */
	int rc = ft_shadow_key(newdirfd, new_path, nkey, sizeof nkey);
	if (rc != 0)
		return rc == -EPERM ? -EXDEV : rc;
	if (strcmp(okey, nkey) == 0)
		return FT_SHADOW_DONE;
	if (lstat(nkey, &st) == 0 && S_ISDIR(st.st_mode))
		return -EISDIR;
	struct ft_shadow_entry *ne = find(s, nkey);
	bool made = !ne;
	if (made && !(ne = add(s, nkey, FT_SHADOW_COPY)))
		return -ENOMEM;
	if (oe) {
		rc = rename(oe->copy, ne->copy) == 0 ? 0 : -errno;
		if (rc == 0)
			oe->state = FT_SHADOW_GONE;
	} else {
		rc = copy_file(okey, ne->copy);
		if (rc == 0 && !add(s, okey, FT_SHADOW_GONE))
			rc = -ENOMEM;
	}
	if (rc != 0) {
		if (made)
			forget(s, ne);
		return rc;
	}
	ne->state = FT_SHADOW_COPY;
	return FT_SHADOW_DONE;
}

unsigned ft_shadow_promote(struct ft_shadow_files *s, void (*warn)(const char *what, const char *path, int err))
{
	unsigned failed = 0;

	for (size_t b = 0; b < s->nbuckets; b++)
		for (struct ft_shadow_entry *e = s->buckets[b]; e; e = e->next) {
			bool copy = e->state == FT_SHADOW_COPY;
			if ((copy ? rename(e->copy, e->key) : unlink(e->key)) == 0 || errno == ENOENT)
				continue;
			failed++;
			if (warn)
				warn(copy ? "rename its copy over" : "delete", e->key, errno);
		}
	free_entries(s);
	return failed;
}

void ft_shadow_discard(struct ft_shadow_files *s)
{
	for (size_t b = 0; b < s->nbuckets; b++)
		for (struct ft_shadow_entry *e = s->buckets[b]; e; e = e->next)
			if (e->state == FT_SHADOW_COPY)
				unlink(e->copy);
	free_entries(s);
}
