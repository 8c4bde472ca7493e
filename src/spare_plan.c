/* spare_plan.c: the plan of program ranks and spare processes
 * (spare_plan.h). */
#include "ftshim_config.h"

#include "src/spare_plan.h"

#include <errno.h>
#include <stdlib.h>

int ft_spare_plan_init(struct ft_spare_plan *p, uint32_t n, uint32_t k)
{
	*p = (struct ft_spare_plan){.n = n, .k = k};
	p->holder = malloc(((size_t)n ? n : 1) * sizeof *p->holder);
	p->serving = malloc(((size_t)n + k ? (size_t)n + k : 1) * sizeof *p->serving);
	if (!p->holder || !p->serving) {
		ft_spare_plan_fini(p);
		return -ENOMEM;
	}
	for (uint32_t j = 0; j < n + k; j++) {
		if (j < n)
			p->holder[j] = (int32_t)j;
		p->serving[j] = j < n ? (int32_t)j : -1;
	}
	return 0;
}

void ft_spare_plan_fini(struct ft_spare_plan *p)
{
	free(p->holder);
	free(p->serving);
	*p = (struct ft_spare_plan){0};
}

uint32_t ft_spare_plan_spares_left(const struct ft_spare_plan *p, const bool *alive)
{
	uint32_t left = 0;

	for (uint32_t j = 0; j < p->n + p->k; j++)
		left += p->serving[j] < 0 && alive[j];
	return left;
}

/* The live spare that takes over from job rank dead: the lowest on
 * another host, else the lowest; -1 if none is left. */
static int32_t pick(const struct ft_spare_plan *p, const bool *alive, const uint64_t *host, int32_t dead)
{
	int32_t any = -1;

	for (uint32_t j = 0; j < p->n + p->k; j++) {
		if (p->serving[j] >= 0 || !alive[j])
			continue;
		if (host[j] != host[dead])
			return (int32_t)j;
		if (any < 0)
			any = (int32_t)j;
	}
	return any;
}

int ft_spare_plan_replace(struct ft_spare_plan *p, const bool *alive, const uint64_t *host)
{
	uint32_t dead = 0;

	for (uint32_t r = 0; r < p->n; r++)
		dead += !alive[p->holder[r]];
	if (dead == 0)
		return 0;
	if (ft_spare_plan_spares_left(p, alive) < dead)
		return -ENOSPC;
	for (uint32_t r = 0; r < p->n; r++) {
		int32_t old = p->holder[r];
		if (alive[old])
			continue;
		int32_t j = pick(p, alive, host, old);
		p->serving[old] = -1;
		p->serving[j] = (int32_t)r;
		p->holder[r] = j;
	}
	p->replaced += dead;
	return (int)dead;
}
