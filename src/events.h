/* events.h: this process's record of what happened to the job, for the
 * job report (src/report.h): failures learned, errors returned, revokes,
 * agreements, shrinks, finalize. Each event is kept as one line of JSON,
 * formatted when it is recorded, with its time in seconds since the job's
 * start (the same origin on every rank), so that the report is the
 * concatenation of every rank's lines. At MPI_Finalize the lines go to
 * the run directory as events.RANK.jsonl.
 *
 * Threads: any thread records (the detector thread failures, application
 * threads the rest), under one mutex; the record is bounded
 * (FT_EVENTS_MAX lines, later ones are counted as dropped). */
#ifndef FTSHIM_EVENTS_H
#define FTSHIM_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#define FT_EVENTS_MAX 20000
#define FT_EVENT_LINE_MAX 512

/* Start recording for job rank `rank`; times are reported relative to
 * origin_unix_ns (the job's start by the wall clock). Idempotent reset:
 * forgets earlier events. */
void ft_events_start(uint32_t rank, uint64_t origin_unix_ns);

/* Record an event of `kind` (a JSON-safe word: "detection", "revoke", ...)
 * that happened at at_unix_ns. fmt/...: the rest of the object's members,
 * each starting with a comma (",\"failed\":%u"), or NULL; strings in them
 * must be escaped with ft_json_escape. */
void ft_events_add(uint64_t at_unix_ns, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The number of events recorded, and dropped past FT_EVENTS_MAX. */
size_t ft_events_count(void);
size_t ft_events_dropped(void);

/* Write every line (and one "dropped" line if some were) to fd. 0, or a
 * negative errno. */
int ft_events_write(int fd);

/* The "dropped" line of rank (count events left out), with its newline,
 * in out; returns its length. The job report reads it back. */
#define FT_EVENT_DROPPED_MAX 96
size_t ft_events_dropped_line(uint32_t rank, uint64_t count, char out[FT_EVENT_DROPPED_MAX]);

/* Free what was recorded. */
void ft_events_stop(void);

/* Copy text into out as the inside of a JSON string (quotes, backslashes
 * and control characters escaped), truncated to fit; returns out. */
char *ft_json_escape(const char *text, char *out, size_t outlen);

#endif
