/* ranks.c: the translation between MPI processes (groups) and job ranks
 * (pmpi/ranks.h names the spaces): the job group, of every process this
 * one can name in an MPI group, and the job rank of each of its members.
 * Set at MPI_Init (ftp_job_group_init, by pmpi/comms.c), grown when
 * processes are spawned (ftp_job_group_add, pmpi/spawn.c), released before
 * PMPI_Finalize; any application thread translates. */
#include "ftshim_config.h"

#include <pthread.h>
#include <stdlib.h>

#include "pmpi/ranks.h"

/* ftp.job_group and ftp.job_of change only when processes are spawned;
 * every translation reads them under this lock. */
static pthread_mutex_t job_group_lock = PTHREAD_MUTEX_INITIALIZER;

int32_t *ftp_group_jobs(MPI_Group group, uint32_t *n)
{
	int size = 0;

	if (ftp_mpi.PMPI_Group_size(group, &size) != MPI_SUCCESS || size < 0)
		return NULL;
	int32_t *ranks = malloc(((size_t)size + 1) * sizeof *ranks);
	int32_t *job = malloc(((size_t)size + 1) * sizeof *job);
	if (!ranks || !job)
		goto out_fail;
	for (int i = 0; i < size; i++)
		ranks[i] = i;
	pthread_mutex_lock(&job_group_lock);
	int rc = ftp.job_group == MPI_GROUP_NULL
			 ? MPI_ERR_GROUP
			 : ftp_mpi.PMPI_Group_translate_ranks(group, size, ranks, ftp.job_group, job);
	for (int i = 0; rc == MPI_SUCCESS && i < size; i++) {
		if (job[i] == MPI_UNDEFINED)
			rc = MPI_ERR_RANK;
		else if (ftp.job_of)
			job[i] = ftp.job_of[job[i]];
	}
	pthread_mutex_unlock(&job_group_lock);
	if (rc != MPI_SUCCESS)
		goto out_fail;
	free(ranks);
	*n = (uint32_t)size;
	return job;

out_fail:
	free(ranks);
	free(job);
	return NULL;
}

int ftp_group_of_jobs(const int32_t *jobs, int n, MPI_Group *group)
{
	int *in_job = malloc(((size_t)n + 1) * sizeof *in_job);
	int rc = MPI_SUCCESS, size = 0;

	if (!in_job)
		return MPI_ERR_NO_MEM;
	pthread_mutex_lock(&job_group_lock);
	if (ftp.job_group == MPI_GROUP_NULL)
		rc = MPI_ERR_GROUP;
	else
		ftp_mpi.PMPI_Group_size(ftp.job_group, &size);
	for (int i = 0; rc == MPI_SUCCESS && i < n; i++) {
		in_job[i] = ftp.job_of ? -1 : jobs[i];
		for (int g = 0; ftp.job_of && g < size; g++)
			if (ftp.job_of[g] == jobs[i])
				in_job[i] = g;
		if (in_job[i] < 0 || in_job[i] >= size)
			rc = MPI_ERR_RANK;
	}
	/* Even an empty group comes from MPI_Group_incl: the program may free
	 * it, and freeing the predefined MPI_GROUP_EMPTY crashes Open MPI. */
	if (rc == MPI_SUCCESS)
		rc = ftp_mpi.PMPI_Group_incl(ftp.job_group, n, in_job, group);
	pthread_mutex_unlock(&job_group_lock);
	free(in_job);
	return rc;
}

int ftp_job_group_add(MPI_Group more, const int32_t *jobs)
{
	int size = 0, nmore = 0, rc;
	MPI_Group joined = MPI_GROUP_NULL;

	pthread_mutex_lock(&job_group_lock);
	ftp_mpi.PMPI_Group_size(ftp.job_group, &size);
	ftp_mpi.PMPI_Group_size(more, &nmore);
	int32_t *job_of = malloc(((size_t)size + (size_t)nmore + 1) * sizeof *job_of);
	int *idx = malloc(((size_t)nmore + 1) * sizeof *idx), *at = malloc(((size_t)nmore + 1) * sizeof *at);
	rc = job_of && idx && at ? ftp_mpi.PMPI_Group_union(ftp.job_group, more, &joined) : MPI_ERR_NO_MEM;
	if (rc == MPI_SUCCESS) {
		/* The union keeps the old members first, in order, and appends
		 * the new ones; where each of more's members landed says whose
		 * job rank goes there. */
		int total = 0;
		ftp_mpi.PMPI_Group_size(joined, &total);
		for (int g = 0; g < size; g++)
			job_of[g] = ftp.job_of ? ftp.job_of[g] : g;
		for (int g = size; g < total; g++)
			job_of[g] = -1;
		for (int i = 0; i < nmore; i++)
			idx[i] = i;
		ftp_mpi.PMPI_Group_translate_ranks(more, nmore, idx, joined, at);
		for (int i = 0; i < nmore; i++)
			if (at[i] >= size && at[i] < total)
				job_of[at[i]] = jobs[i];
		ftp_mpi.PMPI_Group_free(&ftp.job_group);
		ftp.job_group = joined;
		free(ftp.job_of);
		ftp.job_of = job_of;
		job_of = NULL;
	}
	pthread_mutex_unlock(&job_group_lock);
	free(job_of);
	free(idx);
	free(at);
	return rc;
}

int ftp_job_group_init(void)
{
	ftp.job_group = MPI_GROUP_NULL;
	if (ftp_mpi.PMPI_Comm_group(ftp.world, &ftp.job_group) != MPI_SUCCESS)
		return -1;
	if (!ftp_world_spawned())
		return 0;
	ftp.job_of = malloc((size_t)ftp.world_size * sizeof *ftp.job_of);
	if (!ftp.job_of) {
		ftp_mpi.PMPI_Group_free(&ftp.job_group);
		return -1;
	}
	for (int i = 0; i < ftp.world_size; i++)
		ftp.job_of[i] = ftp_job_of_world(i);
	return 0;
}

void ftp_job_group_release(void)
{
	pthread_mutex_lock(&job_group_lock);
	if (ftp.job_group != MPI_GROUP_NULL)
		ftp_mpi.PMPI_Group_free(&ftp.job_group);
	free(ftp.job_of);
	ftp.job_of = NULL;
	pthread_mutex_unlock(&job_group_lock);
}

void ftp_nprocs_raise(uint32_t upto)
{
	uint32_t now = atomic_load_explicit(&ftp.nprocs, memory_order_relaxed);

	/* release: whoever reads the new value sees the peers entries below it. */
	while (now < upto && !atomic_compare_exchange_weak_explicit(&ftp.nprocs, &now, upto, memory_order_release,
								    memory_order_relaxed))
		;
}
