/* events.c: the record of what happened, one JSON line per event (see
 * events.h). The lines are formatted when recorded, so writing them at
 * MPI_Finalize needs no formatting and the report needs no parsing to
 * merge them. */
#include "ftshim_config.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/events.h"
#include "src/fdio.h"

/* All under lock. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char **lines;
static size_t nlines, cap, dropped;
static uint32_t self;
static uint64_t origin;

void ft_events_start(uint32_t rank, uint64_t origin_unix_ns)
{
	ft_events_stop();
	pthread_mutex_lock(&lock);
	self = rank;
	origin = origin_unix_ns;
	pthread_mutex_unlock(&lock);
}

void ft_events_add(uint64_t at_unix_ns, const char *kind, const char *fmt, ...)
{
	char line[FT_EVENT_LINE_MAX], rest[FT_EVENT_LINE_MAX] = "";

	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(rest, sizeof rest, fmt, ap);
		va_end(ap);
	}
	pthread_mutex_lock(&lock);
	/* Before the origin (a clock stepped back): the report shows 0. */
	double t = at_unix_ns > origin ? (double)(at_unix_ns - origin) / 1e9 : 0.0;
	int n = snprintf(line, sizeof line, "{\"t\":%.6f,\"rank\":%u,\"kind\":\"%s\"%s}", t, self, kind, rest);
	if (n < 0 || (size_t)n >= sizeof line) {
		/* Cut: keep the line valid JSON, the fields that fit gone. */
		snprintf(line, sizeof line, "{\"t\":%.6f,\"rank\":%u,\"kind\":\"%s\",\"truncated\":true}", t,
			 self, kind);
	}
	if (nlines == FT_EVENTS_MAX) {
		dropped++;
		goto out;
	}
	if (nlines == cap) {
		size_t grown_cap = cap ? 2 * cap : 64;
		char **grown = realloc(lines, grown_cap * sizeof *grown);
		if (!grown) {
			dropped++;
			goto out;
		}
		lines = grown;
		cap = grown_cap;
	}
	lines[nlines] = strdup(line);
	if (lines[nlines])
		nlines++;
	else
		dropped++;
out:
	pthread_mutex_unlock(&lock);
}

size_t ft_events_count(void)
{
	pthread_mutex_lock(&lock);
	size_t n = nlines;
	pthread_mutex_unlock(&lock);
	return n;
}

size_t ft_events_dropped(void)
{
	pthread_mutex_lock(&lock);
	size_t n = dropped;
	pthread_mutex_unlock(&lock);
	return n;
}

int ft_events_write(int fd)
{
	int rc = 0;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nlines && rc == 0; i++) {
		rc = ft_write_all(fd, lines[i], strlen(lines[i]));
		if (rc == 0)
			rc = ft_write_all(fd, "\n", 1);
	}
	if (rc == 0 && dropped) {
		char line[FT_EVENT_DROPPED_MAX];
		rc = ft_write_all(fd, line, ft_events_dropped_line(self, dropped, line));
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

size_t ft_events_dropped_line(uint32_t rank, uint64_t count, char out[FT_EVENT_DROPPED_MAX])
{
	int n = snprintf(out, FT_EVENT_DROPPED_MAX, "{\"t\":0,\"rank\":%u,\"kind\":\"dropped\",\"count\":%llu}\n",
			 rank, (unsigned long long)count);
	return n > 0 ? (size_t)n : 0;
}

void ft_events_stop(void)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nlines; i++)
		free(lines[i]);
	free(lines);
	lines = NULL;
	nlines = cap = dropped = 0;
	pthread_mutex_unlock(&lock);
}

char *ft_json_escape(const char *text, char *out, size_t outlen)
{
	size_t n = 0;

	if (!outlen)
		return out;
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		char esc[8];
		size_t len;
		if (*p == '"' || *p == '\\') {
			esc[0] = '\\';
			esc[1] = (char)*p;
			len = 2;
		} else if (*p < 0x20) {
			len = (size_t)snprintf(esc, sizeof esc, "\\u%04x", *p);
		} else {
			esc[0] = (char)*p;
			len = 1;
		}
		if (n + len >= outlen)
			break;
		memcpy(out + n, esc, len);
		n += len;
	}
	out[n] = '\0';
	return out;
}
