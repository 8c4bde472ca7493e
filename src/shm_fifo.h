/* shm_fifo.h: UCX's on-host receive queue as its owner sees it, and the
 * repair of a slot that a dead sender reserved and never filled (issue 39,
 * item 2; docs/DESIGN.md, "A dead sender's slot in UCX's on-host queue").
 *
 * UCX's shared-memory transports ("mm": posix and sysv) give each worker
 * one receive FIFO in shared memory: a control block (head, the next slot
 * a sender reserves, by compare-and-swap; tail, how far the owner has
 * read, stored now and then; the owner's pid), then `size` slots of
 * `elem_size` bytes. A sender reserves slot i (head i to i + 1), writes
 * its message into it, and last stores the slot's flags, whose owner bit
 * is the lap's ((i / size) & 1). The owner reads the slots in order and
 * waits at the first whose owner bit is not its lap's yet. A sender
 * killed between the reservation and the flags leaves a slot nobody will
 * fill, and the owner reads nothing from any process of its host again.
 *
 * The repair: the owner writes that slot as a sender would, as an inline
 * active message of an id no handler has (UCT drops it with a warning),
 * once the slot has stayed unwritten longer than a live sender takes. The
 * layout is UCX 1.13's (src/uct/sm/mm/base/mm_iface.h there); the caller
 * checks the version. Pure: reads and writes the memory it is given, no
 * UCX, no MPI; the caller serialises calls on one queue. */
#ifndef FTSHIM_SHM_FIFO_H
#define FTSHIM_SHM_FIFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The control block's size (two cache lines and the pid, aligned to a
 * cache line) and where its fields are. */
#define FT_FIFO_CTL_BYTES 192
#define FT_FIFO_HEAD_OFF 0
#define FT_FIFO_TAIL_OFF 128
#define FT_FIFO_PID_OFF 136
/* head's top bit: the owner asked to be woken (not part of the index). */
#define FT_FIFO_HEAD_ARMED (UINT64_C(1) << 63)
/* A slot: flags (bit 0 the lap's owner bit, bit 1 inline), the active
 * message id, the payload's length (16 bits). */
#define FT_FIFO_FLAG_OWNER 1u
#define FT_FIFO_FLAG_INLINE 2u
/* The id the repair writes: UCT has 32 (5 bits); UCX 1.13's UCP
 * registers 1 to 26, so 31 reaches UCT's stub handler, which drops it. */
#define FT_FIFO_DROP_ID 31u
/* No unwritten slot. */
#define FT_FIFO_NONE UINT64_MAX

struct ft_fifo_layout {
	uint32_t size;      /* slots, a power of two */
	uint32_t elem_size; /* bytes per slot */
};

/* UCX 1.13's defaults (UCX_MM_FIFO_SIZE, UCX_MM_FIFO_ELEM_SIZE). */
extern const struct ft_fifo_layout ft_fifo_ucx_default;

/* Bytes from the control block to the end of the last slot. */
size_t ft_fifo_bytes(const struct ft_fifo_layout *l);

/* Whether ctl (a copy of a mapping's first FT_FIFO_CTL_BYTES) is the
 * control block of a queue that process pid owns: its pid, and a head at
 * or past the tail by at most the queue's size. */
bool ft_fifo_owned_by(const void *ctl, int32_t pid, const struct ft_fifo_layout *l);

/* The index of the first slot in [tail, head) of the queue at fifo (its
 * control block first) whose flags do not say it is written, or
 * FT_FIFO_NONE. The indices count slots since the queue began, laps
 * included, so one names one reservation. */
uint64_t ft_fifo_unwritten(const void *fifo, const struct ft_fifo_layout *l);

/* Write slot index of the queue at fifo (reserved and never written) as
 * an inline message of id FT_FIFO_DROP_ID and no payload: the id and the
 * length first, then the flags, with release order, as a sender does. */
void ft_fifo_fill(void *fifo, const struct ft_fifo_layout *l, uint64_t index);

/* One queue's unwritten slot, across scans. */
struct ft_fifo_stall {
	uint64_t index;    /* FT_FIFO_NONE: none seen */
	uint64_t since_ns; /* when it was first seen unwritten */
};

#define FT_FIFO_STALL_INIT { .index = FT_FIFO_NONE, .since_ns = 0 }

/* The scan at now_ns found index unwritten (or FT_FIFO_NONE): true once
 * the same slot has stayed unwritten for at least grace_ns. */
bool ft_fifo_stalled(struct ft_fifo_stall *s, uint64_t index, uint64_t now_ns, uint64_t grace_ns);

#endif
