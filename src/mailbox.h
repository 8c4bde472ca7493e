/* mailbox.h: a per-host shared-memory channel between the processes of one
 * job on the same host, for small control messages (tens to hundreds of
 * bytes) at much lower latency than TCP, with futex doorbells so that a
 * waiting thread can sleep until another process wakes it.
 *
 * One POSIX shared memory segment holds, for nlocal processes, one inbox
 * control block per process (its doorbell and listener count) and one
 * single-producer/single-consumer byte ring per ordered pair of processes.
 * Thread rule: puts to the same recipient, and drains, are each serialized
 * by the caller; ring, pending, listen and the futex helpers are safe from
 * any thread. */
#ifndef FTSHIM_MAILBOX_H
#define FTSHIM_MAILBOX_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct ft_mailbox;

/* Map the segment `name` (a POSIX shm name beginning with '/'), creating it
 * if this process is the first, sized for nlocal processes; this process is
 * `self` in [0, nlocal); every ring holds ring_bytes (a power of two,
 * 256 .. 1 MiB). Every process must pass the same nlocal and ring_bytes (the
 * header records them; a mismatch is -EINVAL). The header counts the
 * processes that opened it; the one that makes the count reach nlocal
 * unlinks the name, so nothing stays in /dev/shm once all have it mapped.
 * 0 or -errno (-E2BIG if the segment would exceed 256 MiB); on error
 * nothing is left mapped or open. Mode 0600. */
int ft_mailbox_open(struct ft_mailbox **out, const char *name, uint32_t nlocal, uint32_t self,
		    uint32_t ring_bytes);

/* Unmap and free. If fewer than nlocal processes ever opened it, unlink the
 * name too (ENOENT ignored), so a job where one never came leaves nothing.
 * NULL: nothing. */
void ft_mailbox_close(struct ft_mailbox *mb);

/* Put a copy of msg (len bytes, len >= 1) in the ring from this process to
 * `to`. false if it does not fit now (ring full, or len > ring_bytes / 4),
 * or to == self or to >= nlocal. The caller serializes puts to the same
 * `to` within this process (single producer). */
bool ft_mailbox_put(struct ft_mailbox *mb, uint32_t to, const void *msg, uint32_t len);

/* After one or more puts to `to`: bump to's doorbell (atomic increment) and
 * wake every thread sleeping on it (FUTEX_WAKE, shared futex, INT_MAX).
 * Then, after a seq_cst fence, return whether `to` has a listener (its
 * listener count > 0). If it returns false, the recipient may not drain soon
 * and the caller must get it to drain some other way. Paired with
 * ft_mailbox_listen(mb, false): see there. to >= nlocal: false, nothing
 * done. */
bool ft_mailbox_ring(struct ft_mailbox *mb, uint32_t to);

/* Take every message waiting for this process, oldest first per sender,
 * calling take(ctx, from, msg, len) for each (msg valid only during the
 * call; from is the sender's index). Returns how many. Only one thread of
 * this process may drain at a time (the caller serializes). take may call
 * ft_mailbox_put / ft_mailbox_ring. A ring found corrupt (a record length
 * that cannot be) is emptied, with a warning, rather than read. */
unsigned ft_mailbox_drain(struct ft_mailbox *mb,
			  void (*take)(void *ctx, uint32_t from, const void *msg, uint32_t len),
			  void *ctx);

/* Whether any message waits for this process (cheap: looks at the rings'
 * positions). */
bool ft_mailbox_pending(const struct ft_mailbox *mb);

/* A thread of this process starts (on) or stops (!on) listening: while the
 * count is above zero, senders rely on this process to drain promptly.
 * Stopping: decrement, seq_cst fence; the caller must then drain once more
 * (a sender that saw the count above zero put its message before it looked,
 * so that last drain finds it). */
void ft_mailbox_listen(struct ft_mailbox *mb, bool on);

/* A doorbell: a word that moves whenever there may be something to look
 * at, and the number of threads asleep on it, so that ringing costs no
 * system call while nobody sleeps. All-zero is a valid doorbell. */
struct ft_doorbell {
	_Atomic uint32_t rung;     /* moved by whoever rings; read by sleepers */
	_Atomic uint32_t sleepers; /* kept by the sleepers; read by whoever rings */
};

/* This process's doorbell in the segment (senders ring it). */
struct ft_doorbell *ft_mailbox_doorbell(struct ft_mailbox *mb);

uint32_t ft_mailbox_size(const struct ft_mailbox *mb); /* nlocal */
uint32_t ft_mailbox_self(const struct ft_mailbox *mb);

/* Doorbells anywhere (in shared memory when shared is true: then the
 * futex operations are not the process-private ones). Read the doorbell
 * before looking for work; sleep while it has not moved since, at most
 * timeout_ns (EINTR and spurious wake-ups just return: look again).
 * Ringing moves it and wakes every sleeper; a ring that comes between the
 * read and the sleep is never slept through. */
uint32_t ft_doorbell_read(const struct ft_doorbell *bell);
void ft_doorbell_sleep(struct ft_doorbell *bell, uint32_t seen, uint64_t timeout_ns, bool shared);
void ft_doorbell_ring(struct ft_doorbell *bell, bool shared);

#endif
