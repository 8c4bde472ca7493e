/* clock.c: CLOCK_MONOTONIC in nanoseconds, replaceable by tests. */
#include "ftshim_config.h"

#include <time.h>

#include "src/clock.h"
#include "src/common.h"

static uint64_t clock_monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * FT_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* Written only before threads start (tests), read by every thread. */
static uint64_t (*clock_source)(void) = clock_monotonic;

uint64_t ft_clock_now(void)
{
	return clock_source();
}

int64_t ft_clock_wall_offset(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)((uint64_t)ts.tv_sec * FT_NSEC_PER_SEC + (uint64_t)ts.tv_nsec) - (int64_t)ft_clock_now();
}

void ft_clock_set_source(uint64_t (*source)(void))
{
	clock_source = source ? source : clock_monotonic;
}
