/* pmix.c: a rank's last words to its PMIx server (see pmix.h), said by
 * the rank through the PMIx client it runs, or for it, by its supervisor,
 * on its connection. */
#include "ftshim_config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/clock.h"
#include "src/common.h"
#include "src/fdio.h"
#include "src/log.h"
#include "src/pmix.h"

/* The little of the PMIx client's ABI used here (pmix_common.h: the same
 * from PMIx 3 to 5), so that ftshim needs no PMIx headers to build. */
#define PMIX_BOOL 1
#define PMIX_JOB_CTRL_KILL "pmix.jctrl.kill"
struct pmix_proc {
	char nspace[256];
	uint32_t rank;
};
struct pmix_info {
	char key[512];
	uint32_t flags;
	struct {
		uint16_t type;
		union {
			bool flag;
			void *ptr[3]; /* the union's size (pmix_envar_t) */
		} data;
	} value;
};

typedef int (*initialized_fn)(void);
typedef int (*finalize_fn)(const struct pmix_info *, size_t);
typedef int (*job_control_fn)(const struct pmix_proc *, size_t, const struct pmix_info *, size_t,
			      struct pmix_info **, size_t *);

/* A function of the PMIx library the process has loaded: Open MPI loads
 * it with its pmix component, in the global scope or not. */
static void *pmix_sym(const char *name)
{
	void *f = dlsym(RTLD_DEFAULT, name);

	if (!f) {
		void *h = dlopen("libpmix.so.2", RTLD_LAZY | RTLD_NOLOAD);
		if (h) {
			f = dlsym(h, name);
			dlclose(h);
		}
	}
	return f;
}

/* The PMIx client, if the process has one and it is up. */
static bool pmix_up(void)
{
	initialized_fn initialized = (initialized_fn)pmix_sym("PMIx_Initialized");

	return initialized && initialized();
}

int ft_pmix_kill(const uint32_t *ranks, uint32_t n)
{
	job_control_fn job_control = (job_control_fn)pmix_sym("PMIx_Job_control");
	const char *ns = getenv("PMIX_NAMESPACE");
	struct pmix_info kill = { .key = PMIX_JOB_CTRL_KILL, .value = { .type = PMIX_BOOL, .data.flag = true } };
	struct pmix_info *results = NULL; /* ORTE 4.1 returns none */
	size_t nresults = 0;
	int rc;

	if (!job_control || !ns || strlen(ns) >= sizeof ((struct pmix_proc *)0)->nspace || !pmix_up())
		return -ENOSYS;
	if (n == 0)
		return 0;
	struct pmix_proc *procs = calloc(n, sizeof *procs);
	if (!procs)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		strcpy(procs[i].nspace, ns);
		procs[i].rank = ranks[i];
	}
	/* The server answers at once; the kill goes on there. */
	rc = job_control(procs, n, &kill, 1, &results, &nresults);
	free(procs);
	if (rc != 0) {
		ft_debug("PMIx_Job_control (kill %u rank(s)): PMIx status %d", n, rc);
		return -EPROTO;
	}
	return 0;
}

int ft_pmix_finalize(void)
{
	finalize_fn finalize = (finalize_fn)pmix_sym("PMIx_Finalize");
	int rc;

	if (!finalize || !pmix_up())
		return -ENOSYS;
	if ((rc = finalize(NULL, 0)) != 0) {
		ft_debug("PMIx_Finalize: PMIx status %d", rc);
		return -EPROTO;
	}
	return 0;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

static uint32_t get_be32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

/* The server's address in a PMIx URI, "NAME;tcp4://A.B.C.D:PORT" or
 * "NAME;tcp6://[ADDR]:PORT": its length, 0 if it is neither. */
static socklen_t parse_server_uri(const char *uri, struct sockaddr_storage *out)
{
	const char *at = strchr(uri, ';');
	char host[INET6_ADDRSTRLEN + 1];
	char *end;

	memset(out, 0, sizeof *out);
	if (!at)
		return 0;
	at++;
	bool v6 = strncmp(at, "tcp6://[", 8) == 0;
	if (!v6 && strncmp(at, "tcp4://", 7) != 0)
		return 0;
	at += v6 ? 8 : 7;
	const char *stop = strstr(at, v6 ? "]:" : ":");
	if (!stop || (size_t)(stop - at) >= sizeof host)
		return 0;
	memcpy(host, at, (size_t)(stop - at));
	host[stop - at] = '\0';
	errno = 0;
	long port = strtol(stop + (v6 ? 2 : 1), &end, 10);
	if (errno || *end || port <= 0 || port > 65535)
		return 0;
	if (v6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)out;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		return inet_pton(AF_INET6, host, &a->sin6_addr) == 1 ? sizeof *a : 0;
	}
	struct sockaddr_in *a = (struct sockaddr_in *)out;
	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, host, &a->sin_addr) == 1 ? sizeof *a : 0;
}

static bool same_address(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;
		return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;
	return x->sin6_port == y->sin6_port && memcmp(&x->sin6_addr, &y->sin6_addr, sizeof x->sin6_addr) == 0;
}

int ft_pmix_server_socket(void)
{
	static const char *const vars[] = { "PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3",
					    "PMIX_SERVER_URI21", "PMIX_SERVER_URI2" };
	struct sockaddr_storage want;
	socklen_t want_len = 0;

	for (size_t i = 0; i < FT_ARRAY_SIZE(vars) && want_len == 0; i++) {
		const char *uri = getenv(vars[i]);
		if (uri)
			want_len = parse_server_uri(uri, &want);
	}
	if (want_len == 0)
		return -1;
	DIR *dir = opendir("/proc/self/fd");
	if (!dir)
		return -1;
	int found = -1;
	struct dirent *e;
	while (found < 0 && (e = readdir(dir)) != NULL) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		struct sockaddr_storage peer;
		socklen_t len = sizeof peer;
		struct stat st;
		if (*end || fd < 0 || fd == dirfd(dir) || fstat((int)fd, &st) != 0 || !S_ISSOCK(st.st_mode))
			continue;
		if (getpeername((int)fd, (struct sockaddr *)&peer, &len) == 0 && len == want_len &&
		    same_address(&peer, &want))
			found = (int)fd;
	}
	closedir(dir);
	return found;
}

/* The PMIx wire protocol, as much of it as a client's finalize takes
 * (openpmix src/mca/ptl/ptl_types.h, src/include/pmix_globals.h,
 * src/mca/bfrops, src/mca/psquash): a header of four 32-bit words in
 * network order (the sender's index, which the server does not use; the
 * tag its answer will carry; the body's length; padding), then the body:
 * the count of values (int32, 1) and the command (uint8), each preceded by
 * its data type (uint16) in a fully described buffer. PMIx 4 and later
 * squash integers into base-128 varints, signed ones zigzagged (1 is
 * 0x02); PMIx 3 sends them whole, in network order. */
enum {
	PMIX_WIRE_INT32 = 9,
	PMIX_WIRE_COMMAND = 34,
	PMIX_WIRE_FINALIZE_CMD = 5,
	PMIX_WIRE_HDR = 16,
};
/* The tag of the finalize said on a dead client's behalf: far above the
 * ones a client allocates (from 100 up), so that an answer still owed to
 * the dead client is not taken for this one. */
#define GOODBYE_TAG 0x7ffff000u

/* How the client packs its messages, from what its server told it. */
struct wire_format {
	bool described; /* a fully described buffer (PMIX_BFROP_BUFFER_TYPE) */
	bool squashed;  /* integers as varints: PMIx 4 and later (PMIX_VERSION; 4 if unset) */
};

static struct wire_format wire_format(void)
{
	const char *type = getenv("PMIX_BFROP_BUFFER_TYPE"), *version = getenv("PMIX_VERSION");
	char *end;
	long major = version ? strtol(version, &end, 10) : 0;

	return (struct wire_format){
		.described = type && strcmp(type, "PMIX_BFROP_BUFFER_FULLY_DESC") == 0,
		.squashed = major <= 0 || major >= 4,
	};
}

/* A data type (uint16) or the count (int32, always 1 here), as the
 * version packs them. */
static size_t put_type(uint8_t *m, uint16_t type, bool squashed)
{
	if (squashed) {
		m[0] = (uint8_t)type; /* the types used are below 128 */
		return 1;
	}
	m[0] = (uint8_t)(type >> 8);
	m[1] = (uint8_t)type;
	return 2;
}

static size_t put_count_of_one(uint8_t *m, bool squashed)
{
	if (squashed) {
		m[0] = 2; /* zigzag(1) */
		return 1;
	}
	put_be32(m, 1);
	return 4;
}

static size_t goodbye_message(uint8_t *m, struct wire_format f)
{
	size_t n = PMIX_WIRE_HDR;

	if (f.described)
		n += put_type(m + n, PMIX_WIRE_INT32, f.squashed);
	n += put_count_of_one(m + n, f.squashed);
	if (f.described)
		n += put_type(m + n, PMIX_WIRE_COMMAND, f.squashed);
	m[n++] = PMIX_WIRE_FINALIZE_CMD;
	put_be32(m, 0);
	put_be32(m + 4, GOODBYE_TAG);
	put_be32(m + 8, (uint32_t)(n - PMIX_WIRE_HDR));
	put_be32(m + 12, 0);
	return n;
}

int ft_pmix_goodbye(int fd, int timeout_ms)
{
	uint8_t m[PMIX_WIRE_HDR + 16];
	size_t len = goodbye_message(m, wire_format());
	uint64_t end = ft_clock_now() + (uint64_t)timeout_ms * FT_NSEC_PER_MSEC;

	int rc = ft_write_all(fd, m, len);

	if (rc != 0)
		return rc;
	/* Messages still owed to the dead client may come first: skip them. */
	for (;;) {
		uint8_t hdr[PMIX_WIRE_HDR];
		if ((rc = ft_read_by(fd, hdr, sizeof hdr, end)) != 0)
			return rc;
		uint32_t tag = get_be32(hdr + 4), body = get_be32(hdr + 8);
		if ((rc = ft_read_by(fd, NULL, body, end)) != 0)
			return rc;
		if (tag == GOODBYE_TAG)
			return 0;
	}
}
