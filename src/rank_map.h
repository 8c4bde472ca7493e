/* rank_map.h: a renumbering of one communicator's ranks between the
 * program's view and the MPI's. The communicator seam (pmpi/seam.h) hands
 * the MPI a communicator of its own (replicas, spares) whose ranks need not
 * be the program's: program rank r addresses MPI rank real_of[r], and an
 * MPI rank that a status or query returns is the program's prog_of[q].
 * A mode that runs several processes as one program rank (replication's
 * primary and replica) also records each copy's MPI rank, slot by slot
 * (ft_rank_map_set_copies): the one map of the communicator says both
 * which copies serve r and which of them this process addresses. Pure
 * arithmetic on arrays: no MPI. A map is read from any thread; only a
 * recovery mode that moves a program rank to another process
 * (ft_rank_map_retarget, ft_rank_map_forget) changes it, from the one
 * thread that uses it. */
#ifndef FTSHIM_RANK_MAP_H
#define FTSHIM_RANK_MAP_H

#include <stdint.h>

struct ft_rank_map {
	uint32_t size;      /* the program's ranks: 0 .. size - 1 */
	uint32_t real_size; /* the MPI communicator's ranks */
	int32_t *real_of;   /* [size]: the MPI rank a program rank addresses */
	int32_t *prog_of;   /* [real_size]: the program rank of an MPI rank, or -1 */
	uint32_t ncopies;   /* copies per program rank: 1 unless set */
	int32_t *copy_of;   /* [size * ncopies], or NULL for one copy each (real_of): the
			     * MPI ranks of r's copies, slot s at r * ncopies + s; -1: none */
};

/* Build m from real_of[0..size) (copied): -EINVAL unless every entry is
 * an MPI rank below real_size and no two are the same, -ENOMEM. */
int ft_rank_map_init(struct ft_rank_map *m, const int32_t *real_of, uint32_t size, uint32_t real_size);
void ft_rank_map_fini(struct ft_rank_map *m);

/* The MPI rank for program rank r. A negative r (MPI_ANY_SOURCE,
 * MPI_PROC_NULL, MPI_ROOT) is returned as it is; an r past the program's
 * ranks becomes one past the MPI's, so that the MPI refuses it as the
 * program's own MPI would have. */
int32_t ft_rank_map_in(const struct ft_rank_map *m, int32_t r);

/* The program rank of MPI rank q: negative q as it is; -1 if no program
 * rank addresses q. */
int32_t ft_rank_map_out(const struct ft_rank_map *m, int32_t q);
/* Program rank r addresses MPI rank q from now on (its old MPI rank is
 * nobody's): 0, or -EINVAL if either is out of range or q is another
 * program rank's. */
int ft_rank_map_retarget(struct ft_rank_map *m, int32_t r, int32_t q);

/* Record the copies of every program rank: copy_of[r * ncopies + s] (copied),
 * each an MPI rank of the communicator or -1. 0, -EINVAL (an entry out of
 * range, or ncopies 0), -ENOMEM. */
int ft_rank_map_set_copies(struct ft_rank_map *m, const int32_t *copy_of, uint32_t ncopies);

/* The MPI rank of copy slot of program rank r, or -1 (none, or r or slot
 * out of range). Without copies recorded, slot 0 is real_of[r]. */
int32_t ft_rank_map_copy(const struct ft_rank_map *m, int32_t r, uint32_t slot);

/* The copy of r that stands for it before the others: the first slot
 * that has one (-1: none left). */
int32_t ft_rank_map_lead(const struct ft_rank_map *m, int32_t r);

/* Copy q (an MPI rank) is gone: its slot empties, and if its program
 * rank addressed it, it addresses its lead copy from now on (or, with no
 * copy left, still q). Returns that program rank, or -1 if q was no
 * copy. */
int32_t ft_rank_map_forget(struct ft_rank_map *m, int32_t q);

#endif
