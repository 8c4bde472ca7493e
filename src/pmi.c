/* pmi.c: "cmd=finalize" on the PMI-1 connection (see pmi.h). */
#include "ftshim_config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/clock.h"
#include "src/common.h"
#include "src/fdio.h"
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
	int rc = ft_write_all(fd, cmd, sizeof cmd - 1);

	/* The answer is one line; read it byte by byte, so that nothing after
	 * it is taken from the connection. */
	while (rc == 0 && got < sizeof line - 1) {
		if ((rc = ft_read_by(fd, line + got, 1, end)) == 0 && line[got++] == '\n')
			break;
	}
	if (rc != 0)
		return rc;
	line[got] = '\0';
	return strcmp(line, ack) == 0 ? 0 : -EPROTO;
}
