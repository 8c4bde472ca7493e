/* preload.c: what libftshim.so does when it is loaded, before main. In an
 * MPI rank started by Hydra, Open MPI or srun --mpi=pmix (or wherever
 * FTSHIM_SUPERVISE=on asks for it) it puts the rank under a supervising
 * parent (src/supervisor.h); in any other process (a launcher that
 * inherited LD_PRELOAD, a shell) it does nothing. The configuration is read
 * properly at MPI_Init; here an unreadable FTSHIM_SUPERVISE or
 * FTSHIM_DISABLE counts as its default, and MPI_Init will then stop the
 * rank with the error. */
#include "ftshim_config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "src/config.h"
#include "src/supervisor.h"

enum { SUPERVISE_AUTO, SUPERVISE_ON, SUPERVISE_OFF };

static int read_var(const char *name, void *value)
{
	const struct ft_config_var *var = ft_config_find(name);
	const char *text = getenv(name);
	char why[64];

	if (!var || !text)
		return -1;
	return ft_config_parse_value(var, text, value, why, sizeof why);
}

static bool started_by_hydra(void)
{
	return getenv("PMI_RANK") && (getenv("PMI_FD") || getenv("PMI_PORT")) &&
	       !getenv("OMPI_COMM_WORLD_RANK");
}

static bool started_by_open_mpi(void)
{
	return getenv("OMPI_COMM_WORLD_RANK") != NULL;
}

/* srun --mpi=pmix: Slurm's PMIx plugin names its namespaces so. */
static bool started_by_slurm_pmix(void)
{
	const char *ns = getenv("PMIX_NAMESPACE");

	return ns && strncmp(ns, "slurm.pmix.", 11) == 0;
}

static bool is_mpi_rank(void)
{
	return getenv("PMI_RANK") || getenv("OMPI_COMM_WORLD_RANK") || getenv("PMIX_RANK");
}

__attribute__((constructor)) static void ftshim_preload(void)
{
	bool disabled = false;
	int supervise = SUPERVISE_AUTO;

	if (!is_mpi_rank())
		return;
	if (read_var(FT_CONFIG_PREFIX "DISABLE", &disabled) == 0 && disabled)
		return;
	read_var(FT_CONFIG_PREFIX "SUPERVISE", &supervise);
	bool hydra = started_by_hydra(), slurm_pmix = started_by_slurm_pmix();
	if (supervise == SUPERVISE_OFF ||
	    (supervise == SUPERVISE_AUTO && !hydra && !started_by_open_mpi() && !slurm_pmix))
		return;
	/* If fork fails the rank runs unsupervised: under Hydra a death by
	 * signal then ends the job, as it would without ftshim, and under
	 * srun --mpi=pmix any death does. Only Hydra needs that death turned
	 * into an exit. */
	ft_supervise((hydra ? 0 : FT_SUPERVISE_DIE_ALIKE) | (slurm_pmix ? FT_SUPERVISE_PMIX_GOODBYE : 0));
}
