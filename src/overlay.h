/* overlay.h: the sockets of ftshim's control plane. Each process listens
 * on one TCP port; endpoints (address, port, host identity) are exchanged
 * once at MPI_Init; peers connect to each other on demand. This module
 * picks and binds the address and opens connections; src/engine.c moves
 * the frames. A process that joins later (MPI_Comm_spawn) has its
 * endpoint flooded as news (an FT_EV_JOINED entry, packed and unpacked
 * here). Thread rule: the functions are reentrant. IPv4 only. */
#ifndef FTSHIM_OVERLAY_H
#define FTSHIM_OVERLAY_H

#include <stddef.h>
#include <stdint.h>

#include "src/frame.h"

/* What a process publishes about its listening socket. Plain data, sent
 * as bytes by PMPI_Allgather between processes of one job (all built from
 * the same library, so the layout is the same everywhere). */
struct ft_endpoint {
	uint32_t addr;    /* IPv4, network byte order: where other hosts reach us */
	uint16_t port;    /* network byte order */
	uint8_t any;      /* 1: bound to every interface, so loopback works too */
	uint8_t reserved;
	uint64_t host_id; /* equal for processes that share a network stack */
};

/* Open the listening socket. iface: NULL or "" for the default (bind all
 * interfaces, publish the first non-loopback IPv4 address, or loopback
 * if there is none), an interface name ("eth0") or an IPv4 address (bind
 * only that). Returns the listening fd (non-blocking, close-on-exec) and
 * fills ep; or -errno with one line in err naming what failed. */
int ft_overlay_listen(const char *iface, struct ft_endpoint *ep, char *err, size_t errlen);

/* Check an FTSHIM_IFACE value without opening anything: 0, or -EINVAL
 * with the reason in err. */
int ft_overlay_check_iface(const char *iface, char *err, size_t errlen);

/* Start a non-blocking connect from a process with endpoint self to peer:
 * through loopback when peer listens on every interface of our own host,
 * else to peer's published address. Returns the fd (connect may be in
 * progress) or -errno. */
int ft_overlay_connect(const struct ft_endpoint *self, const struct ft_endpoint *peer);

/* The identity of this process's network stack: the same for processes
 * on one host (one network namespace), different across hosts. Bit 63 is
 * always clear, so that a JOINED entry has room for ep->any there. */
uint64_t ft_overlay_host_id(void);

/* Pack ep into e, the news that rank joined the job (FT_EV_JOINED):
 * detector = ep->addr, how = ep->port (both as stored, network order),
 * at_ns = ep->host_id with bit 63 set if ep->any. Pure. */
void ft_overlay_join_entry(struct ft_entry *e, uint32_t rank, const struct ft_endpoint *ep);

/* The endpoint a JOINED entry carries: the inverse of
 * ft_overlay_join_entry (reserved is 0). Pure. */
void ft_overlay_join_endpoint(const struct ft_entry *e, struct ft_endpoint *ep);

/* "a.b.c.d:port" */
void ft_overlay_format(const struct ft_endpoint *ep, char *out, size_t outlen);

#endif
