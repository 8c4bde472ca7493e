/* hash.h: the 64-bit mixing and pseudo-random steps every module uses
 * (job-wide ids, ring shuffling, view digests). Deterministic on every
 * platform, so that processes that mix the same inputs agree. */
#ifndef FTSHIM_HASH_H
#define FTSHIM_HASH_H

#include <stdint.h>

/* The splitmix64 finaliser: every input bit affects every output bit. */
static inline uint64_t ft_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* One step of the splitmix64 generator: advances *state, returns 64
 * random-looking bits. */
static inline uint64_t ft_splitmix64_next(uint64_t *state)
{
	*state += UINT64_C(0x9e3779b97f4a7c15);
	return ft_mix64(*state);
}

#endif
