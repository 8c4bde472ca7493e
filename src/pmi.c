/* pmi.c: "cmd=finalize" on the PMI-1 connection (see pmi.h). */
#include "ftshim_config.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/clock.h"
#include "src/common.h"
#include "src/pmi.h"

int ft_pmi_fd(void)
{
	const char *s = getenv("PMI_FD");
	char *end;

	if (!s || *s < '0' || *s > '9' || getenv("OMPI_COMM_WORLD_RANK"))
		return -1;
	errno = 0;
	long fd = strtol(s, &end, 10);
	if (errno || *end || fd < 0 || fd > 1 << 20)
		return -1;
	return (int)fd;
}

int ft_pmi_finalize(int fd, int timeout_ms)
{
	static const char cmd[] = "cmd=finalize\n", ack[] = "cmd=finalize_ack\n";
	char line[128];
	size_t got = 0;
	uint64_t end = ft_clock_now() + (uint64_t)timeout_ms * FT_NSEC_PER_MSEC;

	for (size_t off = 0; off < sizeof cmd - 1;) {
		ssize_t w = write(fd, cmd + off, sizeof cmd - 1 - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EPROTO;
		off += (size_t)w;
	}
	/* The answer is one line; read it byte by byte, so that nothing after
	 * it is taken from the connection. */
	while (got < sizeof line - 1) {
		uint64_t now = ft_clock_now();
		if (now >= end)
			return -ETIMEDOUT;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int rc = poll(&p, 1, (int)((end - now + FT_NSEC_PER_MSEC - 1) / FT_NSEC_PER_MSEC));
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0)
			return -errno;
		if (rc == 0)
			continue;
		ssize_t r = read(fd, line + got, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EPROTO;
		if (line[got++] == '\n')
			break;
	}
	line[got] = '\0';
	return strcmp(line, ack) == 0 ? 0 : -EPROTO;
}
