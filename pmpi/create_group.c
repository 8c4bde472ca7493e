/* create_group.c: the one way ftshim makes a communicator of chosen
 * processes with the MPI (a shrink when no view can be made, a view's
 * creation base, replication's bases and fallback teams): the group
 * named by job ranks, then MPI_Comm_create_group under the hang watch,
 * since a member's death inside it would hold the others for ever.
 * Application thread. */
#include "ftshim_config.h"

#include <stdlib.h>

#include "pmpi/create_group.h"
#include "pmpi/hangwatch.h"
#include "pmpi/ranks.h"

/* The group is made from comm's own (MPICH 4.0's MPI_Comm_create_group
 * crashes on the same processes taken from MPI_COMM_WORLD's group). */
int ftp_create_group_of(MPI_Comm comm, const int32_t *world, uint32_t n, int tag, enum ftp_fn fn,
			MPI_Comm *out)
{
	MPI_Group parent = MPI_GROUP_NULL, group = MPI_GROUP_NULL, named = MPI_GROUP_NULL;
	int *ranks = malloc((n + 1) * sizeof *ranks), *idx = malloc((n + 1) * sizeof *idx);

	if (!ranks || !idx) {
		free(ranks);
		free(idx);
		return MPI_ERR_NO_MEM;
	}
	for (uint32_t i = 0; i < n; i++)
		idx[i] = (int)i;
	ftp_mpi.PMPI_Comm_group(comm, &parent);
	if (ftp_group_of_jobs(world, (int)n, &named) == MPI_SUCCESS &&
	    ftp_mpi.PMPI_Group_translate_ranks(named, (int)n, idx, parent, ranks) == MPI_SUCCESS)
		ftp_mpi.PMPI_Group_incl(parent, (int)n, ranks, &group);
	free(ranks);
	free(idx);
	if (named != MPI_GROUP_NULL)
		ftp_mpi.PMPI_Group_free(&named);
	ftp_mpi.PMPI_Group_free(&parent);
	if (group == MPI_GROUP_NULL)
		return MPI_ERR_INTERN;
	ftp_hang_watch_begin(fn, world, n);
	int rc = ftp_mpi.PMPI_Comm_create_group(comm, group, tag, out);
	ftp_hang_watch_end();
	ftp_mpi.PMPI_Group_free(&group);
	return rc;
}
