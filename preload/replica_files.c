/* replica_files.c: a replica writes its own copies of the program's files
 * (src/shadow_files.h says how), so that the two copies of a rank never
 * race on one path and the files are the primary's until a promotion
 * makes them the replica's. This library, preloaded, defines glibc's
 * calls that name a file (the open and fopen families, creat, truncate,
 * unlink, remove, rename, access and the stat family); in every process
 * but an unpromoted replica each goes straight on to glibc's. In a
 * replica, a call from the program (its executable or any library but
 * the MPI's, its transports' and this one, told apart by the object the
 * call comes from) goes through the table; the MPI's own files (MPI-IO
 * included) and ftshim's are the real ones.
 *
 * Sharing: active is set by the application thread at MPI_Init and
 * cleared at the promotion; any thread reads it. The table is under
 * lock; a thread inside the table's own calls (inside) goes straight on
 * to glibc's. It sits in preload/, below every module, because ftshim's
 * own modules call these names too; replication (setup.c, promote.c)
 * begins and promotes it. */
#include "ftshim_config.h"

#include "preload/replica_files.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/common.h"
#include "src/log.h"
#include "src/shadow_files.h"

static struct ft_shadow_files table;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic bool active;
static _Thread_local bool inside;

/* glibc's definitions, found once (after this library's). */
static void *real(_Atomic(void *) *slot, const char *name)
{
	void *fn = atomic_load_explicit(slot, memory_order_relaxed);

	if (!fn) {
		fn = dlsym(RTLD_NEXT, name);
		if (!fn) {
			fprintf(stderr, "ftshim: error: %s was called but glibc's could not be found (dlsym: %s)\n",
				name, dlerror());
			abort();
		}
		atomic_store_explicit(slot, fn, memory_order_relaxed);
	}
	return fn;
}

/* glibc's name, as a function of type: one slot per use. */
#define REAL(type, name)                                \
	__extension__({                                 \
		static _Atomic(void *) slot;            \
		(type) real(&slot, #name);              \
	})

/* Objects whose files are never the program's: the MPI, its transports
 * and launch libraries, unwinders, glibc and this library. A sanitizer's
 * interceptors stand between any caller and these wrappers (its own
 * files it opens by system calls), so a call through them counts as the
 * program's. */
static bool system_object(const char *path)
{
	static const char *const prefixes[] = {
		"libftshim", "libmpi",	  "libopen-", "mca_",	  "libuc",	 "libpmi",   "libhwloc",
		"libevent",  "libfabric", "libpsm",   "libibverbs", "librdmacm", "libmunge", "libslurm",
		"libnuma",   "libhcoll",  "libxpmem", "libknem",  "libmlx",	 "libnl-",   "libcuda",
		"libprrte",  "libdw",	  "libelf",   "libunwind", "libdebuginfod", "libgcc_s", "libc.so",
		"ld-linux",
	};
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (size_t i = 0; i < FT_ARRAY_SIZE(prefixes); i++)
		if (strncmp(base, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

/* Whether a call from pc goes through the table: only in an active
 * replica, only from the program. */
static bool shadowed(const void *pc)
{
	Dl_info info;

	if (!atomic_load_explicit(&active, memory_order_relaxed) || inside)
		return false;
	if (dladdr(pc, &info) && info.dli_fname && system_object(info.dli_fname))
		return false;
	return true;
}

enum shadow_op { OP_OPEN, OP_LOOK, OP_UNLINK, OP_RENAME };

/* One call on the table: op on dirfd/path (open flags for OP_OPEN; for
 * OP_RENAME, to newdirfd/new_path). */
struct shadow_call {
	enum shadow_op op;
	int dirfd, flags, newdirfd;
	const char *path, *new_path;
};

/* The table's answer for one call, under the lock. */
static int decide(const struct shadow_call *q, char *out, size_t outlen)
{
	int rc = FT_SHADOW_PASS;

	pthread_mutex_lock(&lock);
	inside = true;
	if (atomic_load_explicit(&active, memory_order_relaxed)) {
		switch (q->op) {
		case OP_OPEN:
			rc = ft_shadow_open(&table, q->dirfd, q->path, q->flags, out, outlen);
			break;
		case OP_LOOK:
			rc = ft_shadow_look(&table, q->dirfd, q->path, out, outlen);
			break;
		case OP_UNLINK:
			rc = ft_shadow_unlink(&table, q->dirfd, q->path);
			break;
		case OP_RENAME:
			rc = ft_shadow_rename(&table, q->dirfd, q->path, q->newdirfd, q->new_path);
			break;
		}
	}
	inside = false;
	pthread_mutex_unlock(&lock);
	return rc;
}

/* The path a call uses: the one given, or the copy in buf; NULL with
 * errno set when the table says the call fails. */
static const char *route(const void *pc, enum shadow_op op, int dirfd, const char *path, int flags, char *buf,
			 size_t buflen)
{
	if (!path || !shadowed(pc))
		return path;
	int rc = decide(&(struct shadow_call){.op = op, .dirfd = dirfd, .path = path, .flags = flags}, buf,
			buflen);
	if (rc < 0) {
		errno = -rc;
		return NULL;
	}
	return rc == FT_SHADOW_USE ? buf : path;
}

typedef int (*openat_fn)(int, const char *, int, ...);

static int open_routed(const void *pc, int dirfd, const char *path, int flags, mode_t mode)
{
	char buf[PATH_MAX];
	const char *p = route(pc, OP_OPEN, dirfd, path, flags, buf, sizeof buf);

	return p ? REAL(openat_fn, openat)(dirfd, p, flags, mode) : -1;
}

static mode_t open_mode(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

#define FT_LIBC __attribute__((visibility("default"), noinline))

FT_LIBC int open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = open_mode(flags, ap);
	va_end(ap);
	return open_routed(__builtin_return_address(0), AT_FDCWD, path, flags, mode);
}

FT_LIBC int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = open_mode(flags, ap);
	va_end(ap);
	return open_routed(__builtin_return_address(0), dirfd, path, flags, mode);
}

/* _FORTIFY_SOURCE's forms, for calls without O_CREAT. */
FT_LIBC int __open_2(const char *path, int flags);
FT_LIBC int __openat_2(int dirfd, const char *path, int flags);

int __open_2(const char *path, int flags)
{
	return open_routed(__builtin_return_address(0), AT_FDCWD, path, flags, 0);
}

int __openat_2(int dirfd, const char *path, int flags)
{
	return open_routed(__builtin_return_address(0), dirfd, path, flags, 0);
}

FT_LIBC int creat(const char *path, mode_t mode)
{
	return open_routed(__builtin_return_address(0), AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, mode);
}

/* fopen's mode as open's flags; -1 for a mode fopen refuses itself. */
static int fopen_flags(const char *mode)
{
	int flags;

	if (!mode)
		return -1;
	switch (mode[0]) {
	case 'r':
		flags = O_RDONLY;
		break;
	case 'w':
		flags = O_WRONLY | O_CREAT | O_TRUNC;
		break;
	case 'a':
		flags = O_WRONLY | O_CREAT | O_APPEND;
		break;
	default:
		return -1;
	}
	for (const char *c = mode + 1; *c && *c != ','; c++)
		if (*c == '+')
			flags = (flags & ~O_ACCMODE) | O_RDWR;
		else if (*c == 'x')
			flags |= O_EXCL;
	return flags;
}

typedef FILE *(*fopen_fn)(const char *, const char *);
typedef FILE *(*freopen_fn)(const char *, const char *, FILE *);

static FILE *fopen_routed(const void *pc, const char *path, const char *mode, FILE *reopen)
{
	char buf[PATH_MAX];
	int flags = fopen_flags(mode);
	const char *p = flags < 0 ? path : route(pc, OP_OPEN, AT_FDCWD, path, flags, buf, sizeof buf);

	if (!p && path)
		return NULL;
	return reopen ? REAL(freopen_fn, freopen)(p, mode, reopen) : REAL(fopen_fn, fopen)(p, mode);
}

FT_LIBC FILE *fopen(const char *path, const char *mode)
{
	return fopen_routed(__builtin_return_address(0), path, mode, NULL);
}

FT_LIBC FILE *freopen(const char *path, const char *mode, FILE *stream)
{
	return fopen_routed(__builtin_return_address(0), path, mode, stream);
}

typedef int (*truncate_fn)(const char *, off_t);

static int truncate_routed(const void *pc, const char *path, off_t length)
{
	char buf[PATH_MAX];
	const char *p = route(pc, OP_OPEN, AT_FDCWD, path, O_WRONLY, buf, sizeof buf);

	return p ? REAL(truncate_fn, truncate)(p, length) : -1;
}

FT_LIBC int truncate(const char *path, off_t length)
{
	return truncate_routed(__builtin_return_address(0), path, length);
}

/* The 64 forms are the same calls on 64-bit glibc. */
#define FT_LIBC_ALIAS(name) __attribute__((visibility("default"), alias(#name)))
int open64(const char *path, int flags, ...) FT_LIBC_ALIAS(open);
int openat64(int dirfd, const char *path, int flags, ...) FT_LIBC_ALIAS(openat);
int __open64_2(const char *path, int flags) FT_LIBC_ALIAS(__open_2);
int __openat64_2(int dirfd, const char *path, int flags) FT_LIBC_ALIAS(__openat_2);
int creat64(const char *path, mode_t mode) FT_LIBC_ALIAS(creat);
FILE *fopen64(const char *path, const char *mode) FT_LIBC_ALIAS(fopen);
FILE *freopen64(const char *path, const char *mode, FILE *stream) FT_LIBC_ALIAS(freopen);
int truncate64(const char *path, off_t length) FT_LIBC_ALIAS(truncate);

typedef int (*unlinkat_fn)(int, const char *, int);
typedef int (*remove_fn)(const char *);

/* Whether the table did the call (then *rc is its result); otherwise the
 * real call does it. */
static bool unlinked_here(const void *pc, int dirfd, const char *path, int *rc)
{
	if (!path || !shadowed(pc))
		return false;
	int r = decide(&(struct shadow_call){.op = OP_UNLINK, .dirfd = dirfd, .path = path}, NULL, 0);
	if (r == FT_SHADOW_PASS)
		return false;
	if (r < 0)
		errno = -r;
	*rc = r < 0 ? -1 : 0;
	return true;
}

FT_LIBC int unlink(const char *path)
{
	int rc;
	return unlinked_here(__builtin_return_address(0), AT_FDCWD, path, &rc)
		       ? rc
		       : REAL(unlinkat_fn, unlinkat)(AT_FDCWD, path, 0);
}

FT_LIBC int unlinkat(int dirfd, const char *path, int flags)
{
	int rc;
	return !(flags & AT_REMOVEDIR) && unlinked_here(__builtin_return_address(0), dirfd, path, &rc)
		       ? rc
		       : REAL(unlinkat_fn, unlinkat)(dirfd, path, flags);
}

FT_LIBC int remove(const char *path)
{
	int rc;
	return unlinked_here(__builtin_return_address(0), AT_FDCWD, path, &rc) ? rc
									      : REAL(remove_fn, remove)(path);
}

typedef int (*renameat2_fn)(int, const char *, int, const char *, unsigned);

static int rename_routed(const void *pc, int olddirfd, const char *old, int newdirfd, const char *new_path,
			 unsigned flags)
{
	if (old && new_path && flags == 0 && shadowed(pc)) {
		int rc = decide(&(struct shadow_call){.op = OP_RENAME, .dirfd = olddirfd, .path = old,
						      .newdirfd = newdirfd, .new_path = new_path},
				NULL, 0);
		if (rc < 0) {
			errno = -rc;
			return -1;
		}
		if (rc == FT_SHADOW_DONE)
			return 0;
	}
	return REAL(renameat2_fn, renameat2)(olddirfd, old, newdirfd, new_path, flags);
}

FT_LIBC int rename(const char *old, const char *new_path)
{
	return rename_routed(__builtin_return_address(0), AT_FDCWD, old, AT_FDCWD, new_path, 0);
}

FT_LIBC int renameat(int olddirfd, const char *old, int newdirfd, const char *new_path)
{
	return rename_routed(__builtin_return_address(0), olddirfd, old, newdirfd, new_path, 0);
}

FT_LIBC int renameat2(int olddirfd, const char *old, int newdirfd, const char *new_path, unsigned flags)
{
	return rename_routed(__builtin_return_address(0), olddirfd, old, newdirfd, new_path, flags);
}

typedef int (*faccessat_fn)(int, const char *, int, int);
typedef int (*fstatat_fn)(int, const char *, struct stat *, int);

static int access_routed(const void *pc, int dirfd, const char *path, int mode, int flags)
{
	char buf[PATH_MAX];
	const char *p = route(pc, OP_LOOK, dirfd, path, 0, buf, sizeof buf);

	return p ? REAL(faccessat_fn, faccessat)(dirfd, p, mode, flags) : -1;
}

FT_LIBC int access(const char *path, int mode)
{
	return access_routed(__builtin_return_address(0), AT_FDCWD, path, mode, 0);
}

FT_LIBC int faccessat(int dirfd, const char *path, int mode, int flags)
{
	return access_routed(__builtin_return_address(0), dirfd, path, mode, flags);
}

static int stat_routed(const void *pc, int dirfd, const char *path, struct stat *st, int flags)
{
	char buf[PATH_MAX];
	const char *p = (flags & AT_EMPTY_PATH) && path && !*path
				? path
				: route(pc, OP_LOOK, dirfd, path, 0, buf, sizeof buf);

	return p ? REAL(fstatat_fn, fstatat)(dirfd, p, st, flags) : -1;
}

FT_LIBC int stat(const char *path, struct stat *st)
{
	return stat_routed(__builtin_return_address(0), AT_FDCWD, path, st, 0);
}

FT_LIBC int lstat(const char *path, struct stat *st)
{
	return stat_routed(__builtin_return_address(0), AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}

FT_LIBC int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	return stat_routed(__builtin_return_address(0), dirfd, path, st, flags);
}

/* On 64-bit glibc, struct stat64 is struct stat. */
_Static_assert(sizeof(struct stat64) == sizeof(struct stat), "struct stat64 is struct stat");

FT_LIBC int stat64(const char *path, struct stat64 *st)
{
	return stat_routed(__builtin_return_address(0), AT_FDCWD, path, (struct stat *)st, 0);
}

FT_LIBC int lstat64(const char *path, struct stat64 *st)
{
	return stat_routed(__builtin_return_address(0), AT_FDCWD, path, (struct stat *)st, AT_SYMLINK_NOFOLLOW);
}

FT_LIBC int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	return stat_routed(__builtin_return_address(0), dirfd, path, (struct stat *)st, flags);
}

static void discard_at_exit(void)
{
	pthread_mutex_lock(&lock);
	inside = true;
	if (atomic_exchange(&active, false))
		ft_shadow_discard(&table);
	inside = false;
	pthread_mutex_unlock(&lock);
}

void ftp_repl_files_begin(int logical_rank)
{
	pthread_mutex_lock(&lock);
	int rc = ft_shadow_init(&table, logical_rank);
	pthread_mutex_unlock(&lock);
	if (rc != 0) {
		ft_warn("replication: no table for this replica's files (%s): it writes the real paths, as its primary does",
			strerror(-rc));
		return;
	}
	atexit(discard_at_exit);
	atomic_store(&active, true);
}

static void promote_warn(const char *what, const char *path, int err)
{
	ft_warn("replication: the promoted replica could not %s %s (%s)", what, path, strerror(err));
}

void ftp_repl_files_promote(void)
{
	pthread_mutex_lock(&lock);
	if (atomic_exchange(&active, false)) {
		size_t n = table.count;
		inside = true;
		unsigned failed = ft_shadow_promote(&table, promote_warn);
		inside = false;
		ft_shadow_fini(&table);
		ft_debug("replication: %zu of the program's paths taken over from the primary, %u failed", n, failed);
	}
	pthread_mutex_unlock(&lock);
}
