/* ckpt_disk.c: checkpoint copies in a directory (see ckpt_disk.h): the
 * directory's check, the writer thread, and the listing, reading and
 * removal of a rank's files.
 *
 * Who touches what: the job slot (the blob handed over, its owner, tag
 * and generation), the busy flag, the last outcome and the generation
 * are shared under d->lock; the writer writes the file with the lock
 * released and takes it again to decide, and to rename, so that a
 * restore (ft_ckpt_disk_drop_abandoned, which moves the generation on)
 * either sees the renamed file and removes it, or the writer sees the
 * generation moved and leaves no file. */
#include "ftshim_config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/ckpt_disk.h"
#include "src/thread.h"
#include "src/clock.h"
#include "src/fdio.h"

/* Files each owner keeps: its latest two (the latest may be one that
 * not every rank has finished writing). */
#define KEEP 2

struct ft_ckpt_disk {
	char dir[4096];
	char job[32];
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* the job slot filled, the write done, or stopping */
	bool stopping;
	bool busy;           /* a job handed over and not ended */
	struct {
		uint32_t owner;
		struct ft_ckpt_tag tag;
		struct ft_ckpt_blob *blob;
		uint64_t generation;
	} job_slot;
	uint64_t generation; /* moved on by each drop_abandoned */
	struct ft_ckpt_disk_result last;
	bool last_fresh;
};

int ft_ckpt_disk_check_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;
	const char *accepted = "accepted: a directory this process can write in, on a filesystem every host sees";

	if (!dir[0] || strlen(dir) > 3000) {
		snprintf(err, errlen, "FTSHIM_CKPT_DIR=%s: %s; %s", dir, dir[0] ? "too long" : "empty", accepted);
		return -EINVAL;
	}
	if (stat(dir, &st) != 0) {
		int e = errno;
		if (e == ENOENT && mkdir(dir, 0700) != 0 && errno != EEXIST) {
			e = errno;
			snprintf(err, errlen, "FTSHIM_CKPT_DIR=%s: missing, and it cannot be made (%s); %s", dir,
				 strerror(e), accepted);
			return -e;
		}
		if (e != ENOENT || stat(dir, &st) != 0) {
			e = e != ENOENT ? e : errno;
			snprintf(err, errlen, "FTSHIM_CKPT_DIR=%s: %s; %s", dir, strerror(e), accepted);
			return -e;
		}
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "FTSHIM_CKPT_DIR=%s: not a directory; %s", dir, accepted);
		return -ENOTDIR;
	}
	if (access(dir, W_OK | X_OK) != 0) {
		int e = errno;
		snprintf(err, errlen, "FTSHIM_CKPT_DIR=%s: cannot write in it (%s); %s", dir, strerror(e), accepted);
		return -e;
	}
	return 0;
}

/* --- names ------------------------------------------------------------------ */

void ft_ckpt_disk_path(const struct ft_ckpt_disk *d, uint32_t owner, struct ft_ckpt_tag tag, char *out,
		       size_t outlen)
{
	snprintf(out, outlen, "%s/ftshim-%s-r%" PRIu32 "-%" PRIu64 "-%" PRIu32 ".ckpt", d->dir, d->job, owner,
		 tag.count, tag.epoch);
}

static void temp_path(const struct ft_ckpt_disk *d, uint32_t owner, long pid, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s/.ftshim-%s-r%" PRIu32 "-%ld.tmp", d->dir, d->job, owner, pid);
}

/* A file name of owner's: its tag (*is_temp false) or, for a temporary
 * file, its writer's pid in tag->count (*is_temp true). false: not one. */
static bool parse_name(const struct ft_ckpt_disk *d, uint32_t owner, const char *name, struct ft_ckpt_tag *tag,
		       bool *is_temp)
{
	char prefix[96];
	unsigned long long a;
	unsigned b;
	int end = 0;

	*is_temp = name[0] == '.';
	snprintf(prefix, sizeof prefix, "%sftshim-%s-r%" PRIu32 "-", *is_temp ? "." : "", d->job, owner);
	size_t pl = strlen(prefix);
	if (strncmp(name, prefix, pl) != 0)
		return false;
	name += pl;
	if (*is_temp) {
		if (sscanf(name, "%llu.tmp%n", &a, &end) != 1 || name[end] != '\0')
			return false;
		*tag = (struct ft_ckpt_tag){ .count = a };
		return true;
	}
	if (name[0] < '0' || name[0] > '9' || sscanf(name, "%llu-%u.ckpt%n", &a, &b, &end) != 2 || name[end] != '\0')
		return false;
	*tag = (struct ft_ckpt_tag){ .count = a, .epoch = b };
	return true;
}

/* Every file of owner's (temporary ones too when temps) goes to each(),
 * with its tag. */
static void each_file(const struct ft_ckpt_disk *d, uint32_t owner, bool temps,
		      void (*each)(void *arg, const char *name, struct ft_ckpt_tag tag), void *arg)
{
	DIR *dp = opendir(d->dir);
	struct dirent *e;

	if (!dp)
		return;
	while ((e = readdir(dp)) != NULL) {
		struct ft_ckpt_tag tag;
		bool is_temp;
		if (parse_name(d, owner, e->d_name, &tag, &is_temp) && is_temp == temps)
			each(arg, e->d_name, tag);
	}
	closedir(dp);
}

static void remove_name(const struct ft_ckpt_disk *d, const char *name)
{
	char path[4200];

	snprintf(path, sizeof path, "%s/%s", d->dir, name);
	(void)unlink(path);
}

/* --- listing ------------------------------------------------------------------ */

struct listing {
	struct ft_ckpt_tag *tags;
	uint32_t n, max;
};

/* Keep the max highest counts, in descending order. */
static void list_one(void *arg, const char *name, struct ft_ckpt_tag tag)
{
	struct listing *l = arg;
	uint32_t at = l->n;

	(void)name;
	while (at > 0 && l->tags[at - 1].count < tag.count)
		at--;
	if (at >= l->max)
		return;
	uint32_t last = l->n < l->max ? l->n : l->max - 1;
	memmove(&l->tags[at + 1], &l->tags[at], (last - at) * sizeof *l->tags);
	l->tags[at] = tag;
	if (l->n < l->max)
		l->n++;
}

uint32_t ft_ckpt_disk_list(struct ft_ckpt_disk *d, uint32_t owner, struct ft_ckpt_tag *tags, uint32_t max)
{
	struct listing l = { .tags = tags, .max = max };

	if (max > 0)
		each_file(d, owner, false, list_one, &l);
	return l.n;
}

/* --- removal ------------------------------------------------------------------ */

struct pruning {
	struct ft_ckpt_disk *d;
	struct ft_ckpt_tag keep[KEEP];
	uint32_t nkeep;
	struct ft_ckpt_tag floor; /* drop_abandoned's tag */
	long own_pid;
};

static void prune_one(void *arg, const char *name, struct ft_ckpt_tag tag)
{
	struct pruning *p = arg;

	for (uint32_t i = 0; i < p->nkeep; i++)
		if (ft_ckpt_tag_eq(p->keep[i], tag))
			return;
	remove_name(p->d, name);
}

/* Leave owner its latest KEEP files. */
static void prune(struct ft_ckpt_disk *d, uint32_t owner)
{
	struct pruning p = { .d = d };

	p.nkeep = ft_ckpt_disk_list(d, owner, p.keep, KEEP);
	each_file(d, owner, false, prune_one, &p);
}

static void abandon_one(void *arg, const char *name, struct ft_ckpt_tag t)
{
	struct pruning *p = arg;
	struct ft_ckpt_tag f = p->floor;

	if ((f.count == 0 && f.epoch == 0) || t.count > f.count || (t.count == f.count && t.epoch != f.epoch))
		remove_name(p->d, name);
}

static void temp_one(void *arg, const char *name, struct ft_ckpt_tag t)
{
	struct pruning *p = arg;

	/* A temporary file's tag holds its writer's pid; ours is in use. */
	if ((long)t.count != p->own_pid)
		remove_name(p->d, name);
}

void ft_ckpt_disk_drop_abandoned(struct ft_ckpt_disk *d, uint32_t owner, struct ft_ckpt_tag tag)
{
	struct pruning p = { .d = d, .floor = tag, .own_pid = (long)getpid() };

	/* A write in flight now leaves no file (see the top of the file). */
	pthread_mutex_lock(&d->lock);
	d->generation++;
	pthread_mutex_unlock(&d->lock);
	each_file(d, owner, false, abandon_one, &p);
	each_file(d, owner, true, temp_one, &p);
}

/* --- the writer --------------------------------------------------------------- */

/* Write blob to the temporary file temp and sync it: 0 or -errno. */
static int write_temp(const char *temp, const struct ft_ckpt_blob *blob)
{
	int fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int rc;

	if (fd < 0)
		return -errno;
	rc = ft_write_all(fd, blob->data, (size_t)blob->len);
	if (rc == 0 && fdatasync(fd) != 0)
		rc = -errno;
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	return rc;
}

/* Sync the directory, so that a rename survives the host. */
static void sync_dir(const struct ft_ckpt_disk *d)
{
	int fd = open(d->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
}

static void *writer_main(void *arg)
{
	struct ft_ckpt_disk *d = arg;

	pthread_mutex_lock(&d->lock);
	for (;;) {
		while (!d->stopping && !d->job_slot.blob)
			pthread_cond_wait(&d->cond, &d->lock);
		if (!d->job_slot.blob)
			break;
		uint32_t owner = d->job_slot.owner;
		struct ft_ckpt_tag tag = d->job_slot.tag;
		struct ft_ckpt_blob *blob = d->job_slot.blob;
		pthread_mutex_unlock(&d->lock);

		char temp[4200], path[4200];
		uint64_t t0 = ft_clock_now();
		temp_path(d, owner, (long)getpid(), temp, sizeof temp);
		ft_ckpt_disk_path(d, owner, tag, path, sizeof path);
		int rc = write_temp(temp, blob);

		pthread_mutex_lock(&d->lock);
		if (rc == 0 && d->generation != d->job_slot.generation)
			rc = -ECANCELED;
		if (rc == 0 && rename(temp, path) != 0)
			rc = -errno;
		if (rc != 0)
			(void)unlink(temp);
		pthread_mutex_unlock(&d->lock);
		if (rc == 0) {
			sync_dir(d);
			prune(d, owner);
		}

		pthread_mutex_lock(&d->lock);
		d->last = (struct ft_ckpt_disk_result){
			.owner = owner, .tag = tag, .bytes = blob->len,
			.write_ms = (double)(ft_clock_now() - t0) / 1e6, .err = rc,
		};
		d->last_fresh = true;
		d->job_slot.blob = NULL;
		d->busy = false;
		/* Dropped before the write is seen done: the caller may then
		 * write over the blob's memory. */
		ft_ckpt_blob_unref(blob);
		pthread_cond_broadcast(&d->cond);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

int ft_ckpt_disk_open(struct ft_ckpt_disk **out, const char *dir, const char *job, char *err, size_t errlen)
{
	struct ft_ckpt_disk *d;
	int rc = ft_ckpt_disk_check_dir(dir, err, errlen);

	*out = NULL;
	if (rc != 0)
		return rc;
	if (strlen(job) >= sizeof d->job || strspn(job, "0123456789abcdefABCDEFghijklmnopqrstuvwxyz") != strlen(job)) {
		snprintf(err, errlen, "checkpoint files: job id \"%s\" unusable in a file name", job);
		return -EINVAL;
	}
	d = calloc(1, sizeof *d);
	if (!d) {
		snprintf(err, errlen, "checkpoint files: out of memory");
		return -ENOMEM;
	}
	snprintf(d->dir, sizeof d->dir, "%s", dir);
	snprintf(d->job, sizeof d->job, "%s", job);
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	rc = ft_thread_start(&d->thread, writer_main, d);
	if (rc != 0) {
		snprintf(err, errlen, "checkpoint files: cannot start the writer thread (%s)", strerror(rc));
		pthread_cond_destroy(&d->cond);
		pthread_mutex_destroy(&d->lock);
		free(d);
		return -rc;
	}
	*out = d;
	return 0;
}

void ft_ckpt_disk_close(struct ft_ckpt_disk *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	d->stopping = true;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
	pthread_join(d->thread, NULL);
	pthread_cond_destroy(&d->cond);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

int ft_ckpt_disk_write(struct ft_ckpt_disk *d, uint32_t owner, struct ft_ckpt_tag tag, struct ft_ckpt_blob *blob)
{
	int rc = 0;

	pthread_mutex_lock(&d->lock);
	if (d->busy) {
		rc = -EBUSY;
	} else {
		d->busy = true;
		d->job_slot.owner = owner;
		d->job_slot.tag = tag;
		d->job_slot.blob = ft_ckpt_blob_ref(blob);
		d->job_slot.generation = d->generation;
		pthread_cond_broadcast(&d->cond);
	}
	pthread_mutex_unlock(&d->lock);
	return rc;
}

bool ft_ckpt_disk_done(struct ft_ckpt_disk *d, struct ft_ckpt_disk_result *res, bool *fresh)
{
	bool done;

	pthread_mutex_lock(&d->lock);
	done = !d->busy;
	*fresh = done && d->last_fresh;
	if (*fresh) {
		*res = d->last;
		d->last_fresh = false;
	}
	pthread_mutex_unlock(&d->lock);
	return done;
}

/* --- reading ------------------------------------------------------------------- */

struct ft_ckpt_blob *ft_ckpt_disk_read(struct ft_ckpt_disk *d, uint32_t owner, struct ft_ckpt_tag tag,
				       char *err, size_t errlen)
{
	char path[4200];
	struct stat st;
	struct ft_ckpt_blob *b = NULL;

	ft_ckpt_disk_path(d, owner, tag, path, sizeof path);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	b = ft_ckpt_blob_new((uint64_t)st.st_size);
	if (!b) {
		snprintf(err, errlen, "%s: out of memory for its %lld bytes", path, (long long)st.st_size);
	} else {
		/* A regular file is always ready: the deadline never comes
		 * into play short of a hung filesystem. */
		int rc = ft_read_by(fd, b->data, (size_t)b->len, ft_clock_now() + UINT64_C(600) * 1000000000u);
		if (rc != 0) {
			snprintf(err, errlen, "%s: %s", path, rc == -EPROTO ? "shorter than it was" : strerror(-rc));
			ft_ckpt_blob_unref(b);
			b = NULL;
		}
	}
	close(fd);
	return b;
}
