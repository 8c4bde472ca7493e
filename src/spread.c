/* spread.c: passing on news to every live member of a communicator (see
 * spread.h): a ring of member indices without shuffling, so that the
 * broadcast targets of src/ring.c are indices among the live members in
 * communicator order, and a bitmap of the members already sent to. */
#include "ftshim_config.h"

#include <errno.h>
#include <stdlib.h>

#include "src/spread.h"

int ft_spread_init(struct ft_spread *s, uint32_t n, uint32_t self, enum ft_bcast_kind kind)
{
	if (n == 0 || self >= n)
		return -EINVAL;
	s->self = self;
	s->kind = kind;
	s->sent = calloc((n + 7) / 8, 1);
	if (!s->sent)
		return -ENOMEM;
	if (ft_ring_init(&s->live, n, false, 0) != 0) {
		free(s->sent);
		s->sent = NULL;
		return -ENOMEM;
	}
	return 0;
}

void ft_spread_destroy(struct ft_spread *s)
{
	ft_ring_destroy(&s->live);
	free(s->sent);
	s->sent = NULL;
}

bool ft_spread_failed(struct ft_spread *s, uint32_t i)
{
	if (i == s->self || i >= s->live.n)
		return false;
	return ft_ring_remove(&s->live, i);
}

uint32_t ft_spread_due(struct ft_spread *s, uint32_t *out, uint32_t max)
{
	uint32_t targets[64], count = 0;
	uint32_t n = ft_ring_bcast_targets(&s->live, s->self, s->kind, targets,
					   sizeof targets / sizeof targets[0]);

	for (uint32_t k = 0; k < n && count < max; k++) {
		uint32_t i = targets[k];
		uint8_t bit = (uint8_t)(1u << (i % 8));
		if (s->sent[i / 8] & bit)
			continue;
		s->sent[i / 8] |= bit;
		out[count++] = i;
	}
	return count;
}
