/* shm_fifo.c: UCX's on-host receive queue and the repair of a dead
 * sender's slot (see shm_fifo.h). Other processes write the queue while
 * this one reads it, so every access to a shared field is an atomic one
 * (the GCC builtins, on memory that is not declared _Atomic). */
#include "ftshim_config.h"

#include <string.h>

#include "src/shm_fifo.h"

const struct ft_fifo_layout ft_fifo_ucx_default = { .size = 64, .elem_size = 128 };

size_t ft_fifo_bytes(const struct ft_fifo_layout *l)
{
	return FT_FIFO_CTL_BYTES + (size_t)l->size * l->elem_size;
}

static uint64_t load64(const void *base, size_t off)
{
	return __atomic_load_n((const uint64_t *)((const uint8_t *)base + off), __ATOMIC_ACQUIRE);
}

static uint8_t *slot(const void *fifo, const struct ft_fifo_layout *l, uint64_t index)
{
	return (uint8_t *)fifo + FT_FIFO_CTL_BYTES + (size_t)(index & (l->size - 1)) * l->elem_size;
}

/* The owner bit a written slot of that index has: its lap's. */
static uint8_t lap_bit(const struct ft_fifo_layout *l, uint64_t index)
{
	return (index & l->size) ? FT_FIFO_FLAG_OWNER : 0;
}

bool ft_fifo_owned_by(const void *ctl, int32_t pid, const struct ft_fifo_layout *l)
{
	uint64_t head, tail;
	int32_t owner;

	memcpy(&head, (const uint8_t *)ctl + FT_FIFO_HEAD_OFF, sizeof head);
	memcpy(&tail, (const uint8_t *)ctl + FT_FIFO_TAIL_OFF, sizeof tail);
	memcpy(&owner, (const uint8_t *)ctl + FT_FIFO_PID_OFF, sizeof owner);
	head &= ~FT_FIFO_HEAD_ARMED;
	return owner == pid && pid > 0 && head >= tail && head - tail <= l->size;
}

uint64_t ft_fifo_unwritten(const void *fifo, const struct ft_fifo_layout *l)
{
	uint64_t tail = load64(fifo, FT_FIFO_TAIL_OFF);
	uint64_t head = load64(fifo, FT_FIFO_HEAD_OFF) & ~FT_FIFO_HEAD_ARMED;

	/* A tail the owner is storing while a head moves: never more than
	 * one lap. */
	if (head < tail || head - tail > l->size)
		return FT_FIFO_NONE;
	for (uint64_t i = tail; i < head; i++) {
		uint8_t flags = __atomic_load_n(slot(fifo, l, i), __ATOMIC_ACQUIRE);
		if ((flags & FT_FIFO_FLAG_OWNER) != lap_bit(l, i))
			return i;
	}
	return FT_FIFO_NONE;
}

void ft_fifo_fill(void *fifo, const struct ft_fifo_layout *l, uint64_t index)
{
	uint8_t *e = slot(fifo, l, index);
	uint16_t length = 0;

	__atomic_store_n(e + 1, (uint8_t)FT_FIFO_DROP_ID, __ATOMIC_RELAXED);
	memcpy(e + 2, &length, sizeof length);
	__atomic_store_n(e, (uint8_t)(FT_FIFO_FLAG_INLINE | lap_bit(l, index)), __ATOMIC_RELEASE);
}

bool ft_fifo_stalled(struct ft_fifo_stall *s, uint64_t index, uint64_t now_ns, uint64_t grace_ns)
{
	if (index == FT_FIFO_NONE || index != s->index) {
		s->index = index;
		s->since_ns = now_ns;
		return false;
	}
	return now_ns - s->since_ns >= grace_ns;
}
