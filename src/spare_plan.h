/* spare_plan.h: which process runs which program rank under spare
 * processes (FTSHIM_SPARES), and which spare takes a failed rank's
 * place. Job ranks 0 .. n - 1 start as program ranks 0 .. n - 1, and
 * n .. n + k - 1 as the spares. After a failure every live process
 * replaces the ranks whose process died, from the same agreed set of
 * live processes, so that all come to the same plan with no message.
 * Pure: no MPI, no I/O. */
#ifndef FTSHIM_SPARE_PLAN_H
#define FTSHIM_SPARE_PLAN_H

#include <stdbool.h>
#include <stdint.h>

struct ft_spare_plan {
	uint32_t n, k;	   /* program ranks; spares launched */
	int32_t *holder;   /* [n]: the job rank that runs program rank r */
	int32_t *serving;  /* [n + k]: the program rank job rank j runs, or -1 (a spare) */
	uint32_t replaced; /* program ranks given to a spare so far */
};

/* 0, or -ENOMEM. */
int ft_spare_plan_init(struct ft_spare_plan *p, uint32_t n, uint32_t k);
void ft_spare_plan_fini(struct ft_spare_plan *p);

/* Replace every program rank whose process is not in alive[0 .. n + k)
 * by a live spare: ranks in increasing order, each taking the lowest
 * live spare on another host than the process it replaces (host[j]: a
 * host id per job rank, equal for one host), else the lowest live
 * spare. Returns how many ranks were replaced (0: none had died), or
 * -ENOSPC, the plan unchanged, when the live spares are fewer than the
 * ranks to replace. */
int ft_spare_plan_replace(struct ft_spare_plan *p, const bool *alive, const uint64_t *host);

/* The number of live spares (alive as ft_spare_plan_replace takes it). */
uint32_t ft_spare_plan_spares_left(const struct ft_spare_plan *p, const bool *alive);

#endif
