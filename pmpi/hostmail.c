/* hostmail.c: the control plane's short cut between ranks of one host.
 * An agreement's messages (pmpi/agree.c) and a revocation's flood
 * (pmpi/revoke.c) between two ranks of the same host go through the
 * host's shared-memory mailbox (src/mailbox.h) rather than through two
 * detector threads and a TCP connection: the sender's thread puts the
 * message in the recipient's ring and rings its doorbell. The recipient
 * takes it in whichever of its threads comes first: one waiting in an
 * agreement (woken by the doorbell), any waiting loop that has started
 * to yield (ftp_hostmail_poll, which sees the doorbell move), or its
 * detector thread. Everything else, and every message to another host,
 * still goes by TCP.
 *
 * A recipient with no thread waiting in an agreement (listening) is also
 * sent a datagram on its bell socket (a Unix socket in the abstract
 * namespace, which is per network namespace like the host id), which
 * wakes its detector thread to take the mail: nothing put in a ring
 * waits for the program's next MPI call. Where that socket cannot be
 * reached, a small TCP message does the same (FTP_APP_HOSTMAIL). A
 * message that does not fit (the recipient is dead or not taking its
 * mail) goes by TCP instead, as does every message when the mailbox
 * cannot be made.
 *
 * Only the job's first world takes part (spawned processes use TCP), and
 * the ranks that shared a network stack at MPI_Init (the same host_id,
 * src/overlay.h): ranks in different network namespaces of one machine
 * are different hosts here too, as for the detector.
 *
 * The doorbell is also what a waiting agreement sleeps on when there is
 * no mailbox (then a word of this process): agree.c rings it when a
 * decision is taken on another thread. */
#include "ftshim_config.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "pmpi/hostmail.h"
#include "pmpi/ranks.h"
#include "pmpi/mode/mode.h"
#include "pmpi/detect.h"
#include "pmpi/listen.h"
#include "src/log.h"
#include "src/mailbox.h"

/* The mailbox and the maps between job ranks and its indexes: written
 * by the application thread in ftp_hostmail_start (before the detector
 * can call in here) and ftp_hostmail_stop (after the detector thread
 * ended), read by any thread in between. */
static struct ft_mailbox *mailbox;
static int32_t *local_of;   /* [world size]: mailbox index, or -1 */
static uint32_t *world_of;  /* [nlocal] */
static uint32_t world_n;
/* One producer per ring (src/mailbox.h): puts to one recipient, from any
 * thread, under its lock. */
static pthread_mutex_t *put_locks;
/* One thread drains at a time. */
static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER;
struct ft_doorbell *ftp_hostmail_bell;
_Atomic uint32_t ftp_hostmail_drained;
/* The doorbell when there is no mailbox. */
static struct ft_doorbell own_doorbell;

/* This process's bell socket, until the detector takes it (-1: none);
 * and one to send bells from (any thread: sendto is atomic). */
static int bell_in = -1, bell_out = -1;

/* A message in a ring: the APP fields, then its data. */
struct mail_head {
	uint64_t key;
	uint32_t from, seq, value, len;
	uint16_t kind;
};

/* The abstract address of rank's bell socket; its length. */
static socklen_t bell_address(uint32_t rank, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	int n = snprintf(sa->sun_path + 1, sizeof sa->sun_path - 1, "ftshim-%s-%u", ftp.job_id, rank);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static void open_bells(void)
{
	struct sockaddr_un sa;
	socklen_t len = bell_address((uint32_t)ftp.rank, &sa);

	bell_in = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	bell_out = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (bell_in >= 0 && bind(bell_in, (struct sockaddr *)&sa, len) != 0) {
		ft_debug("no bell socket for the host's mailbox (%s): bells go by TCP", strerror(errno));
		close(bell_in);
		bell_in = -1;
	}
}

int ftp_hostmail_bell_fd(void)
{
	int fd = bell_in;

	bell_in = -1;
	return fd;
}

/* Forget the maps and locks (nlocal of them initialised). */
static void free_maps(uint32_t nlocal)
{
	for (uint32_t i = 0; put_locks && i < nlocal; i++)
		pthread_mutex_destroy(&put_locks[i]);
	free(put_locks);
	free(local_of);
	free(world_of);
	put_locks = NULL;
	local_of = NULL;
	world_of = NULL;
}

void ftp_hostmail_start(void)
{
	uint32_t n = (uint32_t)ftp.world_size, nlocal = 0, self = 0;
	uint64_t host = ftp.peers[ftp.rank].ep.host_id;

	/* Not under a recovery mode that says it cannot use the mailbox
	 * (struct ftp_mode.hostmail). */
	if (ftp_world_spawned() || n < 2 || !ftp_mode_hostmail())
		return;
	local_of = malloc(n * sizeof *local_of);
	world_of = malloc(n * sizeof *world_of);
	if (!local_of || !world_of)
		goto fail;
	for (uint32_t r = 0; r < n; r++) {
		local_of[r] = -1;
		if (ftp.peers[r].ep.port && ftp.peers[r].ep.host_id == host) {
			if (r == (uint32_t)ftp.rank)
				self = nlocal;
			world_of[nlocal] = r;
			local_of[r] = (int32_t)nlocal++;
		}
	}
	if (nlocal < 2)
		goto fail;
	put_locks = malloc(nlocal * sizeof *put_locks);
	if (!put_locks)
		goto fail;
	for (uint32_t i = 0; i < nlocal; i++)
		pthread_mutex_init(&put_locks[i], NULL);
	char name[64];
	snprintf(name, sizeof name, "/ftshim-%s-%016llx", ftp.job_id, (unsigned long long)host);
	int rc = ft_mailbox_open(&mailbox, name, nlocal, self, nlocal <= 64 ? 16384 : 4096);
	if (rc != 0) {
		ft_debug("no shared-memory mailbox for the %u ranks of this host (%s): agreements go by TCP",
			 nlocal, strerror(-rc));
		free_maps(nlocal);
		return;
	}
	world_n = n;
	ftp_hostmail_bell = ft_mailbox_doorbell(mailbox);
	open_bells();
	ft_debug("shared-memory mailbox for the %u ranks of this host", nlocal);
	return;
fail:
	free_maps(0);
}

void ftp_hostmail_stop(void)
{
	if (!mailbox)
		return;
	uint32_t nlocal = ft_mailbox_size(mailbox);
	ftp_hostmail_bell = NULL;
	ft_mailbox_close(mailbox);
	if (bell_in >= 0)
		close(bell_in);
	if (bell_out >= 0)
		close(bell_out);
	bell_in = bell_out = -1;
	mailbox = NULL;
	free_maps(nlocal);
}

/* Nobody at rank to waits for mail: wake its detector thread to take it.
 * A full socket buffer means bells are pending there already. */
static void ring_bell(uint32_t to)
{
	struct sockaddr_un sa;
	socklen_t len = bell_address(to, &sa);
	char one = 1;

	if (bell_out >= 0 && (sendto(bell_out, &one, 1, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&sa, len) == 1 ||
			      errno == EAGAIN))
		return;
	struct ft_msg bell = { .type = FT_MSG_APP };
	bell.app.kind = FTP_APP_HOSTMAIL;
	ftp_detect_post(to, &bell);
}

bool ftp_hostmail_post(uint32_t to, const struct ft_msg *m)
{
	if (!mailbox || to >= world_n || local_of[to] < 0 || to == (uint32_t)ftp.rank)
		return false;
	uint32_t dest = (uint32_t)local_of[to];
	struct mail_head h = { .key = m->app.key, .from = (uint32_t)ftp.rank, .seq = (uint32_t)m->app.seq,
			       .value = m->app.value, .len = m->app.len, .kind = m->app.kind };
	size_t len = sizeof h + m->app.len;
	uint8_t stack[512], *buf = len <= sizeof stack ? stack : malloc(len);

	if (!buf)
		return false;
	memcpy(buf, &h, sizeof h);
	if (m->app.len)
		memcpy(buf + sizeof h, m->app.data, m->app.len);
	pthread_mutex_lock(&put_locks[dest]);
	bool put = ft_mailbox_put(mailbox, dest, buf, (uint32_t)len);
	pthread_mutex_unlock(&put_locks[dest]);
	if (buf != stack)
		free(buf);
	if (!put)
		return false;
	if (!ft_mailbox_ring(mailbox, dest))
		ring_bell(to);
	return true;
}

static void take(void *ctx, uint32_t from, const void *msg, uint32_t len)
{
	struct mail_head h;
	struct ft_msg m = { .type = FT_MSG_APP };

	(void)ctx;
	if (len < sizeof h)
		return;
	memcpy(&h, msg, sizeof h);
	/* The sender is the ring's, whatever the message says. */
	if (from >= ft_mailbox_size(mailbox) || h.len != len - sizeof h)
		return;
	m.from = world_of[from];
	/* Fail-stop, as over TCP (the engine drops a frame from a rank it
	 * knows failed): a message put before its sender died is taken only
	 * if it is taken before the death is known here. */
	if (ft_proc_is_failed(&ftp.procs, m.from))
		return;
	m.app.key = h.key;
	m.app.seq = h.seq;
	m.app.kind = h.kind;
	m.app.value = h.value;
	m.app.len = h.len;
	m.app.data = (const uint8_t *)msg + sizeof h;
	ftp_listen_msg(&m);
}

/* Under drain_lock. The doorbell is read before the rings, so a ring
 * that comes during the drain shows as a moved doorbell afterwards. */
static void drain_locked(void)
{
	atomic_store_explicit(&ftp_hostmail_drained, ft_doorbell_read(ft_mailbox_doorbell(mailbox)),
			      memory_order_relaxed);
	ft_mailbox_drain(mailbox, take, NULL);
}

void ftp_hostmail_drain(void)
{
	if (!mailbox || !ft_mailbox_pending(mailbox))
		return;
	pthread_mutex_lock(&drain_lock);
	drain_locked();
	pthread_mutex_unlock(&drain_lock);
}

static void on_bell_msg(const struct ft_msg *m)
{
	(void)m;
	ftp_hostmail_drain();
}

/* A failure (detector thread): wake whatever of this process sleeps on
 * its doorbell (a waiting spare; an agreement, which looks again). */
static void on_failure(uint32_t rank)
{
	(void)rank;
	ftp_hostmail_wake_self();
}

const struct ftp_listener ftp_hostmail_listener = {
	.on_failure = on_failure,
	.on_msg = on_bell_msg,
	.kinds = 1u << FTP_APP_HOSTMAIL,
	.on_bell = ftp_hostmail_drain,
};

/* From a waiting loop: never waits for another thread's drain (that one
 * takes the mail). */
void ftp_hostmail_drain_polled(void)
{
	if (!mailbox || pthread_mutex_trylock(&drain_lock) != 0)
		return;
	drain_locked();
	pthread_mutex_unlock(&drain_lock);
}

void ftp_hostmail_listen(bool on)
{
	if (!mailbox)
		return;
	ft_mailbox_listen(mailbox, on);
	if (!on)
		ftp_hostmail_drain();
}

static struct ft_doorbell *doorbell(bool *shared)
{
	*shared = mailbox != NULL;
	return mailbox ? ft_mailbox_doorbell(mailbox) : &own_doorbell;
}

uint32_t ftp_hostmail_doorbell(void)
{
	bool shared;

	return ft_doorbell_read(doorbell(&shared));
}

bool ftp_hostmail_sleep(uint32_t seen, uint64_t timeout_ns)
{
	bool shared;
	struct ft_doorbell *bell = doorbell(&shared);

	ft_doorbell_sleep(bell, seen, timeout_ns, shared);
	return ft_doorbell_read(bell) != seen;
}

void ftp_hostmail_wake_self(void)
{
	bool shared;
	struct ft_doorbell *bell = doorbell(&shared);

	ft_doorbell_ring(bell, shared);
}
