/* overlay.c: choosing, binding and reaching control-plane addresses. */
#include "ftshim_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/hash.h"
#include "src/overlay.h"

/* In a JOINED entry's at_ns, the bit that says the endpoint listens on
 * every interface; host ids leave it clear. */
#define HOST_ANY_BIT (UINT64_C(1) << 63)

/* The IPv4 address of interface name, or of the first interface that is up
 * and not loopback when name is NULL. 0 if there is none. */
static uint32_t interface_address(const char *name)
{
	struct ifaddrs *list, *ifa;
	uint32_t found = 0;

	if (getifaddrs(&list) != 0)
		return 0;
	for (ifa = list; ifa && !found; ifa = ifa->ifa_next) {
		if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != AF_INET)
			continue;
		if (name ? strcmp(ifa->ifa_name, name) != 0
			 : (ifa->ifa_flags & IFF_LOOPBACK) || !(ifa->ifa_flags & IFF_UP))
			continue;
		found = ((struct sockaddr_in *)(void *)ifa->ifa_addr)->sin_addr.s_addr;
	}
	freeifaddrs(list);
	return found;
}

/* The address an FTSHIM_IFACE value names, in network order; 0 if none. */
static uint32_t iface_address(const char *iface)
{
	struct in_addr a;

	if (inet_pton(AF_INET, iface, &a) == 1)
		return a.s_addr;
	return interface_address(iface);
}

int ft_overlay_check_iface(const char *iface, char *err, size_t errlen)
{
	if (!iface || !iface[0] || iface_address(iface))
		return 0;
	snprintf(err, errlen, "no IPv4 interface or address '%s' on this host", iface);
	return -EINVAL;
}

uint64_t ft_overlay_host_id(void)
{
	char boot[64] = "";
	struct stat st;
	uint64_t h = UINT64_C(0x686f7374); /* "host" */
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

	if (f) {
		if (!fgets(boot, sizeof boot, f))
			boot[0] = '\0';
		fclose(f);
	}
	for (const char *p = boot; *p; p++)
		h = ft_mix64(h ^ (uint8_t)*p);
	/* Network namespaces on one kernel are separate hosts for us. */
	if (stat("/proc/self/ns/net", &st) == 0)
		h = ft_mix64(h ^ (uint64_t)st.st_ino);
	return h & ~HOST_ANY_BIT;
}

void ft_overlay_join_entry(struct ft_entry *e, uint32_t rank, const struct ft_endpoint *ep)
{
	*e = (struct ft_entry){ .rank = rank, .event = FT_EV_JOINED, .how = ep->port,
				.detector = ep->addr,
				.at_ns = (ep->host_id & ~HOST_ANY_BIT) | (ep->any ? HOST_ANY_BIT : 0) };
}

void ft_overlay_join_endpoint(const struct ft_entry *e, struct ft_endpoint *ep)
{
	*ep = (struct ft_endpoint){ .addr = e->detector, .port = e->how,
				    .any = (e->at_ns & HOST_ANY_BIT) != 0,
				    .host_id = e->at_ns & ~HOST_ANY_BIT };
}

int ft_overlay_listen(const char *iface, struct ft_endpoint *ep, char *err, size_t errlen)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof sa;
	int fd, rc, one = 1;
	bool any = !iface || !iface[0];

	memset(ep, 0, sizeof *ep);
	if (any) {
		sa.sin_addr.s_addr = htonl(INADDR_ANY);
	} else {
		sa.sin_addr.s_addr = iface_address(iface);
		if (!sa.sin_addr.s_addr) {
			snprintf(err, errlen, "FTSHIM_IFACE=%s: no such IPv4 interface or address", iface);
			return -EADDRNOTAVAIL;
		}
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return rc;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		rc = -errno;
		snprintf(err, errlen, "bind: %s", strerror(errno));
		goto out_close;
	}
	if (listen(fd, 128) != 0) {
		rc = -errno;
		snprintf(err, errlen, "listen: %s", strerror(errno));
		goto out_close;
	}
	if (getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
		rc = -errno;
		snprintf(err, errlen, "getsockname: %s", strerror(errno));
		goto out_close;
	}
	ep->port = sa.sin_port;
	ep->any = any;
	ep->addr = any ? interface_address(NULL) : sa.sin_addr.s_addr;
	if (!ep->addr)
		ep->addr = htonl(INADDR_LOOPBACK);
	ep->host_id = ft_overlay_host_id();
	return fd;

out_close:
	close(fd);
	return rc;
}

int ft_overlay_connect(const struct ft_endpoint *self, const struct ft_endpoint *peer)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = peer->port };
	int fd, one = 1;

	sa.sin_addr.s_addr = peer->any && peer->host_id == self->host_id ? htonl(INADDR_LOOPBACK)
									  : peer->addr;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Heartbeats are tiny and late ones are worthless: no Nagle delay. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0 && errno != EINPROGRESS) {
		int rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

void ft_overlay_format(const struct ft_endpoint *ep, char *out, size_t outlen)
{
	char a[INET_ADDRSTRLEN] = "?";
	struct in_addr in = { .s_addr = ep->addr };

	inet_ntop(AF_INET, &in, a, sizeof a);
	snprintf(out, outlen, "%s:%u%s", a, ntohs(ep->port), ep->any ? " (all interfaces)" : "");
}
