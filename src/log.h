/* log.h: the one logger of ftshim. Each line is written with a single
 * write(2), prefixed with the job rank and the time since the origin
 * that ft_log_set_origin gave (the moment the job was up):
 *
 *     ftshim[3] +1.234567 warn: rank 5 failed (...)
 *
 * to stderr or to the file FTSHIM_LOG_FILE names. Thread rule: every
 * function is safe from any thread; the setters (ft_log_set_*) are meant
 * for MPI_Init and MPI_Finalize. Not async-signal-safe
 * (vsnprintf); signal handlers must not log. */
#ifndef FTSHIM_LOG_H
#define FTSHIM_LOG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "src/common.h"

/* The levels, in the order FTSHIM_LOG accepts them; X(enum, keyword). */
#define FT_LOG_LEVELS(X) \
	X(FT_LOG_ERROR, "error") \
	X(FT_LOG_WARN, "warn") \
	X(FT_LOG_INFO, "info") \
	X(FT_LOG_DEBUG, "debug") \
	X(FT_LOG_TRACE, "trace")

#define FT_LOG_ENUM(e, s) e,
enum ft_log_level { FT_LOG_LEVELS(FT_LOG_ENUM) FT_LOG_LEVEL_COUNT };
#undef FT_LOG_ENUM

/* Lines longer than this are cut and end in "...". */
#define FT_LOG_LINE_MAX 1024

/* Written by MPI_Init (ft_log_set_level), read by every logging thread. */
extern _Atomic int ft_log_threshold;

static inline bool ft_log_enabled(enum ft_log_level level)
{
	/* relaxed: the level is a hint; a line more or less while it changes
	 * does no harm. */
	return (int)level <= atomic_load_explicit(&ft_log_threshold, memory_order_relaxed);
}

void ft_log_set_level(enum ft_log_level level);
/* Send lines to fd (stderr by default); the logger takes ownership of any
 * fd other than 2 and closes it in ft_log_close. */
void ft_log_set_fd(int fd);
void ft_log_set_rank(int rank);
/* Times in the prefix count from this instant (ft_clock_now units). */
void ft_log_set_origin(uint64_t origin_ns);
void ft_log_close(void);

/* Open the log file named by a template: %r becomes the job rank, %h the
 * host name, %p the pid, %% a percent sign. Returns an fd or -errno; on
 * -EINVAL (bad template) err says why. */
int ft_log_open_file(const char *template, int rank, char *err, size_t errlen);

/* Expand a template as ft_log_open_file does, into out. Returns 0 or
 * -EINVAL (unknown %-sequence) / -ENAMETOOLONG. */
int ft_log_expand_path(const char *template, int rank, char *out, size_t outlen);

void ft_log(enum ft_log_level level, const char *fmt, ...) FT_PRINTF(2, 3);

/* Format one line (with prefix and newline) into buf; returns its length.
 * Exposed for tests. */
size_t ft_log_format(char *buf, size_t buflen, enum ft_log_level level,
		     const char *fmt, va_list ap) FT_PRINTF(4, 0);

#define FT_LOG(level, ...) \
	do { \
		if (ft_log_enabled(level)) \
			ft_log(level, __VA_ARGS__); \
	} while (0)

/* One line without the prefix (the job's summary) to stderr, for whoever
 * ran the job; when the log goes to a file, also there, as an info line
 * with the prefix. */
void ft_log_plain(const char *fmt, ...) FT_PRINTF(1, 2);
#define ft_summary(...) \
	do { \
		if (ft_log_enabled(FT_LOG_INFO)) \
			ft_log_plain(__VA_ARGS__); \
	} while (0)

#define ft_error(...) FT_LOG(FT_LOG_ERROR, __VA_ARGS__)
#define ft_warn(...) FT_LOG(FT_LOG_WARN, __VA_ARGS__)
#define ft_info(...) FT_LOG(FT_LOG_INFO, __VA_ARGS__)
#define ft_debug(...) FT_LOG(FT_LOG_DEBUG, __VA_ARGS__)
#define ft_trace(...) FT_LOG(FT_LOG_TRACE, __VA_ARGS__)

extern const char *const ft_log_level_names[FT_LOG_LEVEL_COUNT];

#endif
