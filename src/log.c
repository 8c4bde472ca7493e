/* log.c: the logger. One write(2) per line so that lines from the
 * application thread and the detector thread, and from ranks sharing a
 * terminal, never interleave mid-line. */
#include "ftshim_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "src/clock.h"
#include "src/log.h"

#define FT_LOG_NAME(e, s) s,
const char *const ft_log_level_names[FT_LOG_LEVEL_COUNT] = { FT_LOG_LEVELS(FT_LOG_NAME) };
#undef FT_LOG_NAME

/* Each of these is written by the application thread in MPI_Init or
 * MPI_Finalize and read by any thread that logs. */
_Atomic int ft_log_threshold = FT_LOG_INFO;
static _Atomic int log_fd = 2;
static _Atomic int log_rank = -1;
static _Atomic uint64_t log_origin_ns; /* 0: not set, times count from the first line */

void ft_log_set_level(enum ft_log_level level)
{
	atomic_store_explicit(&ft_log_threshold, (int)level, memory_order_relaxed);
}

void ft_log_set_fd(int fd)
{
	int old = atomic_exchange(&log_fd, fd);

	if (old != 2 && old != fd && old >= 0)
		close(old);
}

void ft_log_set_rank(int rank)
{
	atomic_store(&log_rank, rank);
}

void ft_log_set_origin(uint64_t origin_ns)
{
	atomic_store(&log_origin_ns, origin_ns);
}

void ft_log_close(void)
{
	ft_log_set_fd(2);
}

int ft_log_expand_path(const char *template, int rank, char *out, size_t outlen)
{
	size_t used = 0;

	if (outlen == 0)
		return -ENAMETOOLONG;
	out[0] = '\0';
	for (const char *p = template; *p; p++) {
		char piece[256];
		const char *add = piece;

		if (*p != '%') {
			piece[0] = *p;
			piece[1] = '\0';
		} else {
			switch (*++p) {
			case 'r':
				snprintf(piece, sizeof piece, "%d", rank);
				break;
			case 'p':
				snprintf(piece, sizeof piece, "%ld", (long)getpid());
				break;
			case 'h':
				if (gethostname(piece, sizeof piece) != 0)
					snprintf(piece, sizeof piece, "unknown-host");
				piece[sizeof piece - 1] = '\0';
				break;
			case '%':
				add = "%";
				break;
			default:
				return -EINVAL;
			}
		}
		size_t len = strlen(add);
		if (used + len + 1 > outlen)
			return -ENAMETOOLONG;
		memcpy(out + used, add, len);
		used += len;
	}
	out[used] = '\0';
	return 0;
}

int ft_log_open_file(const char *template, int rank, char *err, size_t errlen)
{
	char path[4096];
	int rc = ft_log_expand_path(template, rank, path, sizeof path);

	if (rc == -EINVAL) {
		snprintf(err, errlen, "unknown %%-sequence; accepted: %%r (rank), %%h (host), %%p (pid), %%%%");
		return rc;
	}
	if (rc < 0) {
		snprintf(err, errlen, "path too long after expansion");
		return rc;
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "open %s: %s", path, strerror(errno));
		return rc;
	}
	return fd;
}

size_t ft_log_format(char *buf, size_t buflen, enum ft_log_level level, const char *fmt, va_list ap)
{
	uint64_t origin = atomic_load(&log_origin_ns);
	uint64_t now = ft_clock_now();
	uint64_t since = origin && now > origin ? now - origin : 0;
	int rank = atomic_load(&log_rank);
	char who[16];
	int n;

	if (buflen < 16) {
		/* Too small for any line; callers pass FT_LOG_LINE_MAX. */
		if (buflen)
			buf[0] = '\0';
		return 0;
	}
	if (rank >= 0)
		snprintf(who, sizeof who, "%d", rank);
	else
		snprintf(who, sizeof who, "?");
	n = snprintf(buf, buflen, "ftshim[%s] +%llu.%06llu %s: ", who,
		     (unsigned long long)(since / FT_NSEC_PER_SEC),
		     (unsigned long long)(since % FT_NSEC_PER_SEC / FT_NSEC_PER_USEC),
		     ft_log_level_names[level]);
	if (n < 0)
		n = 0;
	size_t len = (size_t)n < buflen ? (size_t)n : buflen - 1;
	n = vsnprintf(buf + len, buflen - len, fmt, ap);
	if (n > 0)
		len += (size_t)n;
	if (len > buflen - 2) {
		/* Cut, and say so, leaving room for the newline. */
		len = buflen - 2;
		memcpy(buf + len - 3, "...", 3);
	}
	buf[len++] = '\n';
	buf[len] = '\0';
	return len;
}

void ft_log_plain(const char *fmt, ...)
{
	char line[FT_LOG_LINE_MAX];
	va_list ap;
	int saved_errno = errno, fd = atomic_load(&log_fd);

	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line - 1, fmt, ap);
	va_end(ap);
	size_t len = n < 0 ? 0 : (size_t)n < sizeof line - 1 ? (size_t)n : sizeof line - 2;
	line[len++] = '\n';
	ssize_t w = write(STDERR_FILENO, line, len);
	if (fd != STDERR_FILENO) {
		/* The file keeps its one format: prefixed like every line. */
		ft_log(FT_LOG_INFO, "%.*s", (int)len - 1, line);
	}
	(void)w;
	errno = saved_errno;
}

void ft_log(enum ft_log_level level, const char *fmt, ...)
{
	char line[FT_LOG_LINE_MAX];
	va_list ap;
	int saved_errno = errno;

	va_start(ap, fmt);
	size_t len = ft_log_format(line, sizeof line, level, fmt, ap);
	va_end(ap);
	/* One write per line; a short write to a full pipe is not retried
	 * because a log line is never worth blocking the caller for. */
	ssize_t w = write(atomic_load(&log_fd), line, len);
	(void)w;
	errno = saved_errno;
}
