/* rank_map.c: the renumbering of ranks between the program's view of a
 * communicator and the MPI's (rank_map.h). */
#include "ftshim_config.h"

#include "src/rank_map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int ft_rank_map_init(struct ft_rank_map *m, const int32_t *real_of, uint32_t size, uint32_t real_size)
{
	memset(m, 0, sizeof *m);
	m->real_of = malloc((size ? size : 1) * sizeof *m->real_of);
	m->prog_of = malloc((real_size ? real_size : 1) * sizeof *m->prog_of);
	if (!m->real_of || !m->prog_of) {
		ft_rank_map_fini(m);
		return -ENOMEM;
	}
	for (uint32_t q = 0; q < real_size; q++)
		m->prog_of[q] = -1;
	for (uint32_t r = 0; r < size; r++) {
		int32_t q = real_of[r];
		if (q < 0 || (uint32_t)q >= real_size || m->prog_of[q] != -1) {
			ft_rank_map_fini(m);
			return -EINVAL;
		}
		m->real_of[r] = q;
		m->prog_of[q] = (int32_t)r;
	}
	m->size = size;
	m->real_size = real_size;
	return 0;
}

void ft_rank_map_fini(struct ft_rank_map *m)
{
	free(m->real_of);
	free(m->prog_of);
	memset(m, 0, sizeof *m);
}

int32_t ft_rank_map_in(const struct ft_rank_map *m, int32_t r)
{
	if (r < 0)
		return r;
	if ((uint32_t)r < m->size)
		return m->real_of[r];
	uint64_t past = (uint64_t)m->real_size + ((uint64_t)r - m->size);
	return past > INT32_MAX ? INT32_MAX : (int32_t)past;
}

int32_t ft_rank_map_out(const struct ft_rank_map *m, int32_t q)
{
	if (q < 0)
		return q;
	return (uint32_t)q < m->real_size ? m->prog_of[q] : -1;
}

int ft_rank_map_retarget(struct ft_rank_map *m, int32_t r, int32_t q)
{
	if (r < 0 || (uint32_t)r >= m->size || q < 0 || (uint32_t)q >= m->real_size ||
	    (m->prog_of[q] != -1 && m->prog_of[q] != r))
		return -EINVAL;
	m->prog_of[m->real_of[r]] = -1;
	m->real_of[r] = q;
	m->prog_of[q] = r;
	return 0;
}
