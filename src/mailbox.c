/* mailbox.c: the per-host shared-memory channel (see mailbox.h). The
 * processes of one job on one host map one POSIX shm segment; each pair
 * (sender, recipient) has its own single-producer/single-consumer byte
 * ring in it, so a put needs no lock and no system call, and each process
 * has a doorbell word that senders bump and futex-wake, so that a thread
 * of the recipient can sleep instead of polling.
 *
 * Segment layout, every part on 64-byte cache lines so that no two writers
 * share one:
 *
 *     struct mbx_header
 *     struct mbx_inbox[nlocal]                       (indexed by recipient)
 *     nlocal * nlocal * (struct mbx_ring + ring_bytes of data)
 *                          (the ring from i to j at index j * nlocal + i)
 *
 * A record in a ring is a uint32_t length, then the payload, padded to a
 * multiple of 8. Positions are free-running uint32_t; ring_bytes divides
 * 2^32, so position & (ring_bytes - 1) stays right across their wrap. The
 * memory that ftruncate zero-fills is already a valid empty ring and an
 * idle inbox: only the header needs initialising. */
#include "ftshim_config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "src/clock.h"
#include "src/common.h"
#include "src/log.h"
#include "src/mailbox.h"

#define MBX_LINE 64
#define MBX_MAGIC 0x4d425831u /* "MBX1" */
#define MBX_RING_MIN 256u
#define MBX_RING_MAX (1u << 20)
#define MBX_SEGMENT_MAX (256ull << 20)
/* How long a later opener waits for the first to finish the header: it
 * takes a few stores, so only a dead initialiser or a foreign segment of
 * the same name ever hits this. */
#define MBX_INIT_WAIT_NS (2 * FT_NSEC_PER_SEC)

enum mbx_state { MBX_FRESH = 0, MBX_INITIALISING = 1, MBX_READY = 2 };

struct mbx_header {
	/* enum mbx_state. Moved 0 -> 1 by the one opener that wins the
	 * compare-and-swap, 1 -> 2 (release) once it has written the fields
	 * below; read (acquire) by every other opener before it reads them. */
	alignas(MBX_LINE) _Atomic uint32_t state;
	/* Written once by the initialiser, read by every opener to check it
	 * passed the same sizes (the mapping's layout depends on them). */
	uint32_t magic;
	uint32_t nlocal;
	uint32_t ring_bytes;
	/* Incremented by each opener once its checks pass; the one that
	 * brings it to nlocal unlinks the name. Read by ft_mailbox_close to
	 * tell whether someone never came (then it unlinks). */
	_Atomic uint32_t opened;
};

struct mbx_inbox {
	/* Rung by any sender in ft_mailbox_ring; read and slept on by the
	 * threads of the recipient. */
	alignas(MBX_LINE) struct ft_doorbell doorbell;
	/* Written by the recipient's threads (ft_mailbox_listen), read by
	 * every sender after its ring, to know whether a drain will come. */
	alignas(MBX_LINE) _Atomic uint32_t listeners;
};

/* Followed by ring_bytes of data. */
struct mbx_ring {
	/* Consumer position: written (release) by the recipient after each
	 * record it took, read (acquire) by the sender before it reuses the
	 * space. */
	alignas(MBX_LINE) _Atomic uint32_t head;
	/* Producer position: written (release) by the sender after it copied
	 * a record in, read (acquire) by the recipient before it reads one. */
	alignas(MBX_LINE) _Atomic uint32_t tail;
};

_Static_assert(sizeof(struct mbx_header) == MBX_LINE, "header is one cache line");
_Static_assert(sizeof(struct mbx_inbox) == 2 * MBX_LINE, "doorbell, listeners: a line each");
_Static_assert(sizeof(struct mbx_ring) == 2 * MBX_LINE, "head, tail: a line each");
/* The futex and the other process see the same 32 bits, with no lock. */
_Static_assert(sizeof(_Atomic uint32_t) == sizeof(uint32_t), "futex word is 32 bits");
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "atomics across processes must be lock-free");

struct ft_mailbox {
	void *base;               /* the mapping */
	size_t size;              /* its length */
	struct mbx_header *header;
	struct mbx_inbox *inbox;  /* [nlocal] */
	unsigned char *rings;     /* the first struct mbx_ring */
	size_t ring_stride;       /* sizeof(struct mbx_ring) + ring_bytes */
	uint32_t nlocal;
	uint32_t self;
	uint32_t ring_bytes;
	unsigned char *scratch;   /* ring_bytes / 4: a wrapped record, made whole for take */
	char *name;               /* for the unlink in ft_mailbox_close */
};

static uint32_t max_message(uint32_t ring_bytes)
{
	return ring_bytes / 4;
}

/* The bytes a record of len takes in the ring: length word, payload,
 * padding to 8. */
static uint32_t record_bytes(uint32_t len)
{
	return (uint32_t)(sizeof(uint32_t) + len + 7) & ~7u;
}

static struct mbx_ring *ring_between(const struct ft_mailbox *mb, uint32_t from, uint32_t to)
{
	size_t index = (size_t)to * mb->nlocal + from;
	return (struct mbx_ring *)(void *)(mb->rings + index * mb->ring_stride);
}

static unsigned char *ring_data(struct mbx_ring *ring)
{
	return (unsigned char *)(ring + 1);
}

/* Copy n bytes in or out at position pos, in two parts where they wrap.
 * Safe for any pos and any n <= ring_bytes, so that a corrupt position
 * cannot make it touch memory outside the ring. */
static void ring_copy_in(unsigned char *data, uint32_t ring_bytes, uint32_t pos, const void *src,
			 uint32_t n)
{
	uint32_t off = pos & (ring_bytes - 1), first = ring_bytes - off;
	if (first > n)
		first = n;
	memcpy(data + off, src, first);
	memcpy(data, (const unsigned char *)src + first, n - first);
}

static void ring_copy_out(const unsigned char *data, uint32_t ring_bytes, uint32_t pos, void *dst,
			  uint32_t n)
{
	uint32_t off = pos & (ring_bytes - 1), first = ring_bytes - off;
	if (first > n)
		first = n;
	memcpy(dst, data + off, first);
	memcpy((unsigned char *)dst + first, data, n - first);
}

/* The first opener initialises the header; the others wait until it is
 * done, then check it describes the same layout. */
static int header_settle(struct mbx_header *header, uint32_t nlocal, uint32_t ring_bytes)
{
	uint32_t state = MBX_FRESH;

	if (atomic_compare_exchange_strong(&header->state, &state, MBX_INITIALISING)) {
		header->magic = MBX_MAGIC;
		header->nlocal = nlocal;
		header->ring_bytes = ring_bytes;
		atomic_store_explicit(&header->state, MBX_READY, memory_order_release);
		return 0;
	}
	uint64_t end = ft_clock_now() + MBX_INIT_WAIT_NS;
	while ((state = atomic_load_explicit(&header->state, memory_order_acquire)) ==
	       MBX_INITIALISING) {
		if (ft_clock_now() >= end)
			return -ETIMEDOUT;
		sched_yield();
	}
	if (state != MBX_READY || header->magic != MBX_MAGIC || header->nlocal != nlocal ||
	    header->ring_bytes != ring_bytes)
		return -EINVAL;
	return 0;
}

/* Map the segment behind fd, sizing it if nobody has yet. */
static int map_segment(int fd, size_t size, void **base)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		return -errno;
	/* Only a fresh (empty) segment is sized: one of another size belongs
	 * to openers with other parameters, and resizing it under their
	 * mappings would make their accesses fault. */
	if (st.st_size == 0 && ftruncate(fd, (off_t)size) != 0)
		return -errno;
	else if (st.st_size != 0 && (uint64_t)st.st_size != size)
		return -EINVAL;
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	*base = p;
	return 0;
}

int ft_mailbox_open(struct ft_mailbox **out, const char *name, uint32_t nlocal, uint32_t self,
		    uint32_t ring_bytes)
{
	*out = NULL;
	if (name == NULL || name[0] != '/' || nlocal == 0 || self >= nlocal ||
	    ring_bytes < MBX_RING_MIN || ring_bytes > MBX_RING_MAX ||
	    (ring_bytes & (ring_bytes - 1)) != 0)
		return -EINVAL;
	/* 64-bit arithmetic: nlocal^2 fits, and the division keeps the
	 * product from overflowing. */
	uint64_t stride = sizeof(struct mbx_ring) + ring_bytes;
	uint64_t fixed = sizeof(struct mbx_header) + (uint64_t)nlocal * sizeof(struct mbx_inbox);
	uint64_t nrings = (uint64_t)nlocal * nlocal;
	if (fixed > MBX_SEGMENT_MAX || nrings > (MBX_SEGMENT_MAX - fixed) / stride)
		return -E2BIG;

	struct ft_mailbox *mb = calloc(1, sizeof *mb);
	if (mb == NULL)
		return -ENOMEM;
	mb->size = (size_t)(fixed + nrings * stride);
	mb->ring_stride = (size_t)stride;
	mb->nlocal = nlocal;
	mb->self = self;
	mb->ring_bytes = ring_bytes;
	mb->scratch = malloc(max_message(ring_bytes));
	mb->name = strdup(name);
	int rc = -ENOMEM;
	if (mb->scratch == NULL || mb->name == NULL)
		goto fail;

	int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
	if (fd < 0) {
		rc = -errno;
		goto fail;
	}
	rc = map_segment(fd, mb->size, &mb->base);
	close(fd); /* the mapping keeps the segment */
	if (rc != 0)
		goto fail;
	mb->header = mb->base;
	mb->inbox = (struct mbx_inbox *)(void *)(mb->header + 1);
	mb->rings = (unsigned char *)(mb->inbox + nlocal);
	rc = header_settle(mb->header, nlocal, ring_bytes);
	if (rc != 0)
		goto fail;

	/* The last to come unlinks: from then on the segment lives only as
	 * long as the mappings, and a crash leaves nothing in /dev/shm. */
	if (atomic_fetch_add(&mb->header->opened, 1) + 1 == nlocal)
		shm_unlink(name);
	*out = mb;
	return 0;

fail:
	if (mb->base != NULL)
		munmap(mb->base, mb->size);
	free(mb->scratch);
	free(mb->name);
	free(mb);
	return rc;
}

void ft_mailbox_close(struct ft_mailbox *mb)
{
	if (mb == NULL)
		return;
	/* Someone never came, so nobody unlinked: this one does, or the name
	 * stays until reboot. (ENOENT when another closer was first.) */
	if (atomic_load(&mb->header->opened) < mb->nlocal)
		shm_unlink(mb->name);
	munmap(mb->base, mb->size);
	free(mb->scratch);
	free(mb->name);
	free(mb);
}

bool ft_mailbox_put(struct ft_mailbox *mb, uint32_t to, const void *msg, uint32_t len)
{
	if (to >= mb->nlocal || to == mb->self || len == 0 || len > max_message(mb->ring_bytes))
		return false;
	struct mbx_ring *ring = ring_between(mb, mb->self, to);
	/* acquire: the recipient's reads of the space it gave back are done
	 * before this overwrites it. */
	uint32_t head = atomic_load_explicit(&ring->head, memory_order_acquire);
	uint32_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed); /* ours */
	uint32_t used = tail - head, need = record_bytes(len);
	/* used > ring_bytes: a corrupt ring, full until the recipient's drain
	 * empties it. */
	if (used > mb->ring_bytes || need > mb->ring_bytes - used)
		return false;
	unsigned char *data = ring_data(ring);
	ring_copy_in(data, mb->ring_bytes, tail, &len, sizeof len);
	ring_copy_in(data, mb->ring_bytes, tail + (uint32_t)sizeof len, msg, len);
	/* release: the record is in place before the recipient can see it. */
	atomic_store_explicit(&ring->tail, tail + need, memory_order_release);
	return true;
}

bool ft_mailbox_ring(struct ft_mailbox *mb, uint32_t to)
{
	if (to >= mb->nlocal)
		return false;
	ft_doorbell_ring(&mb->inbox[to].doorbell, true);
	/* Pairs with the fence in ft_mailbox_listen(mb, false): either this
	 * sees the listener still counted, or that listener's last drain sees
	 * the records put before this call. */
	atomic_thread_fence(memory_order_seq_cst);
	return atomic_load_explicit(&mb->inbox[to].listeners, memory_order_relaxed) > 0;
}

unsigned ft_mailbox_drain(struct ft_mailbox *mb,
			  void (*take)(void *ctx, uint32_t from, const void *msg, uint32_t len),
			  void *ctx)
{
	uint32_t ring_bytes = mb->ring_bytes;
	unsigned taken = 0;

	for (uint32_t from = 0; from < mb->nlocal; from++) {
		if (from == mb->self)
			continue;
		struct mbx_ring *ring = ring_between(mb, from, mb->self);
		const unsigned char *data = ring_data(ring);
		/* One look at tail per ring: a sender that keeps putting cannot
		 * keep this drain going for ever. */
		uint32_t tail = atomic_load_explicit(&ring->tail, memory_order_acquire);
		uint32_t head = atomic_load_explicit(&ring->head, memory_order_relaxed); /* ours */
		while (head != tail) {
			uint32_t avail = tail - head, len = 0;
			if (avail <= ring_bytes)
				ring_copy_out(data, ring_bytes, head, &len, sizeof len);
			if (avail > ring_bytes || len == 0 || len > max_message(ring_bytes) ||
			    record_bytes(len) > avail) {
				/* Nothing after a bad length can be framed: drop it
				 * all rather than read garbage. */
				FT_LOG(FT_LOG_WARN,
				       "mailbox %s: ring from %u to %u corrupt (length %u, "
				       "%u bytes waiting); its messages are dropped",
				       mb->name, from, mb->self, len, avail);
				atomic_store_explicit(&ring->head, tail, memory_order_release);
				break;
			}
			uint32_t at = head + (uint32_t)sizeof len;
			const void *msg = data + (at & (ring_bytes - 1));
			if ((at & (ring_bytes - 1)) + len > ring_bytes) {
				ring_copy_out(data, ring_bytes, at, mb->scratch, len);
				msg = mb->scratch;
			}
			take(ctx, from, msg, len);
			head += record_bytes(len);
			/* release: done reading the record before the sender
			 * may reuse its space. */
			atomic_store_explicit(&ring->head, head, memory_order_release);
			taken++;
		}
	}
	return taken;
}

bool ft_mailbox_pending(const struct ft_mailbox *mb)
{
	for (uint32_t from = 0; from < mb->nlocal; from++) {
		if (from == mb->self)
			continue;
		struct mbx_ring *ring = ring_between(mb, from, mb->self);
		if (atomic_load_explicit(&ring->tail, memory_order_acquire) !=
		    atomic_load_explicit(&ring->head, memory_order_relaxed))
			return true;
	}
	return false;
}

void ft_mailbox_listen(struct ft_mailbox *mb, bool on)
{
	_Atomic uint32_t *listeners = &mb->inbox[mb->self].listeners;

	if (on) {
		atomic_fetch_add(listeners, 1);
		return;
	}
	atomic_fetch_sub(listeners, 1);
	/* Pairs with the fence in ft_mailbox_ring: the caller's drain after
	 * this sees every record whose sender still saw the count above 0. */
	atomic_thread_fence(memory_order_seq_cst);
}

struct ft_doorbell *ft_mailbox_doorbell(struct ft_mailbox *mb)
{
	return &mb->inbox[mb->self].doorbell;
}

uint32_t ft_mailbox_size(const struct ft_mailbox *mb)
{
	return mb->nlocal;
}

uint32_t ft_mailbox_self(const struct ft_mailbox *mb)
{
	return mb->self;
}

uint32_t ft_doorbell_read(const struct ft_doorbell *bell)
{
	return atomic_load_explicit(&bell->rung, memory_order_acquire);
}

/* The sleeper counts itself before it looks at the word for the last
 * time, the ringer moves the word before it looks at the count (both
 * sequentially consistent): either the ringer sees the sleeper and wakes
 * it, or the sleeper sees the word moved and does not sleep. The kernel
 * compares the word again under its own lock. */
void ft_doorbell_sleep(struct ft_doorbell *bell, uint32_t seen, uint64_t timeout_ns, bool shared)
{
	struct timespec timeout = {
		.tv_sec = (time_t)(timeout_ns / FT_NSEC_PER_SEC),
		.tv_nsec = (long)(timeout_ns % FT_NSEC_PER_SEC),
	};

	atomic_fetch_add(&bell->sleepers, 1);
	if (atomic_load(&bell->rung) == seen)
		syscall(SYS_futex, &bell->rung, shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE, seen, &timeout, NULL, 0);
	atomic_fetch_sub(&bell->sleepers, 1);
}

void ft_doorbell_ring(struct ft_doorbell *bell, bool shared)
{
	atomic_fetch_add(&bell->rung, 1);
	if (atomic_load(&bell->sleepers) > 0)
		syscall(SYS_futex, &bell->rung, shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
