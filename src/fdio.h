/* fdio.h: whole writes and deadline-bound reads on a descriptor, for the
 * few places that talk plain bytes (files, the PMI and PMIx sockets). */
#ifndef FTSHIM_FDIO_H
#define FTSHIM_FDIO_H

#include <stddef.h>
#include <stdint.h>

/* Write all len bytes of buf (retrying short writes and EINTR). 0, or
 * -errno (-EIO if the descriptor takes nothing). */
int ft_write_all(int fd, const void *buf, size_t len);

/* Read exactly len bytes into buf (NULL: read and discard them), waiting
 * at most until end (ft_clock_now's time). 0, -ETIMEDOUT, -EPROTO if
 * the other end closed first, or -errno. */
int ft_read_by(int fd, void *buf, size_t len, uint64_t end);

#endif
