/* clock.h: the one clock of ftshim, CLOCK_MONOTONIC in nanoseconds.
 * Tests replace it with a fake so that timeouts can be driven without
 * sleeping. Thread rule: ft_clock_now is safe from any thread;
 * ft_clock_set_source only before any other thread runs. */
#ifndef FTSHIM_CLOCK_H
#define FTSHIM_CLOCK_H

#include <stdint.h>

uint64_t ft_clock_now(void);

/* The wall clock (CLOCK_REALTIME, ns since the epoch) minus ft_clock_now()
 * at this moment: add it to a time of ft_clock_now() to compare times
 * across hosts (as well as their clocks agree). */
int64_t ft_clock_wall_offset(void);

/* Replace the clock (NULL restores CLOCK_MONOTONIC). For tests. */
void ft_clock_set_source(uint64_t (*source)(void));

#endif
