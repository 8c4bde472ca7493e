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
	m->ncopies = 1;
	return 0;
}

void ft_rank_map_fini(struct ft_rank_map *m)
{
	free(m->real_of);
	free(m->prog_of);
	free(m->copy_of);
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

int ft_rank_map_set_copies(struct ft_rank_map *m, const int32_t *copy_of, uint32_t ncopies)
{
	size_t n = (size_t)m->size * ncopies;

	if (ncopies == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (copy_of[i] < -1 || (copy_of[i] >= 0 && (uint32_t)copy_of[i] >= m->real_size))
			return -EINVAL;
	int32_t *c = malloc((n ? n : 1) * sizeof *c);
	if (!c)
		return -ENOMEM;
	memcpy(c, copy_of, n * sizeof *c);
	free(m->copy_of);
	m->copy_of = c;
	m->ncopies = ncopies;
	return 0;
}

int32_t ft_rank_map_copy(const struct ft_rank_map *m, int32_t r, uint32_t slot)
{
	if (r < 0 || (uint32_t)r >= m->size || slot >= m->ncopies)
		return -1;
	return m->copy_of ? m->copy_of[(size_t)r * m->ncopies + slot] : m->real_of[r];
}

int32_t ft_rank_map_lead(const struct ft_rank_map *m, int32_t r)
{
	for (uint32_t s = 0; s < m->ncopies; s++) {
		int32_t q = ft_rank_map_copy(m, r, s);
		if (q >= 0)
			return q;
	}
	return -1;
}

int32_t ft_rank_map_forget(struct ft_rank_map *m, int32_t q)
{
	if (q < 0 || !m->copy_of)
		return -1;
	for (uint32_t r = 0; r < m->size; r++)
		for (uint32_t s = 0; s < m->ncopies; s++) {
			int32_t *slot = &m->copy_of[(size_t)r * m->ncopies + s];
			if (*slot != q)
				continue;
			*slot = -1;
			int32_t lead = ft_rank_map_lead(m, (int32_t)r);
			if (m->real_of[r] == q && lead >= 0)
				ft_rank_map_retarget(m, (int32_t)r, lead);
			return (int32_t)r;
		}
	return -1;
}
