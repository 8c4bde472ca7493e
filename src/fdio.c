/* fdio.c: whole writes and deadline-bound reads (see fdio.h). */
#include "ftshim_config.h"

#include <errno.h>
#include <poll.h>
#include <unistd.h>

#include "src/clock.h"
#include "src/common.h"
#include "src/fdio.h"

int ft_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int ft_read_by(int fd, void *buf, size_t len, uint64_t end)
{
	char sink[256], *p = buf;

	while (len > 0) {
		uint64_t now = ft_clock_now();
		if (now >= end)
			return -ETIMEDOUT;
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int rc = poll(&pfd, 1, (int)((end - now + FT_NSEC_PER_MSEC - 1) / FT_NSEC_PER_MSEC));
		if (rc < 0 && errno != EINTR)
			return -errno;
		if (rc <= 0)
			continue;
		size_t want = p ? len : (len < sizeof sink ? len : sizeof sink);
		ssize_t r = read(fd, p ? p : sink, want);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EPROTO;
		len -= (size_t)r;
		if (p)
			p += r;
	}
	return 0;
}
