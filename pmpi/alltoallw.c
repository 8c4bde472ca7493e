/* alltoallw.c: MPI_Alltoallw by hand. Like every blocking collective it
 * runs as its nonblocking twin, watched by ftp_block, but started by
 * ftp_coll_start (pmpi/coll_call.h), which runs an in-place one as a
 * plain one from a copy of the receive buffer on MPICH before 4.1: that
 * MPICH's in-place MPI_Ialltoallw gives wrong blocks when the members'
 * types differ in size, and its blocking call, which the program asked
 * for, does not. Application thread. */
#include "ftshim_config.h"

#include <stdlib.h>

#include "pmpi/call.h"
#include "pmpi/coll_call.h"
#include "pmpi/mode_calls.h"

FT_EXPORT int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
			    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
			    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Alltoallw);
	int rc = ftp_pre_coll(&c, comm);

	if (rc == MPI_SUCCESS && ftp_seam_covered(c.comm)) {
		const struct ftp_mode_calls *mode = ftp_cover_calls(c.comm);

		if (mode && mode->MPI_Alltoallw)
			return mode->MPI_Alltoallw(&c, sendbuf, sendcounts, sdispls, sendtypes,
						   recvbuf, recvcounts, rdispls, recvtypes);
		rc = ftp_cover_as_is(&c, FTP_FN_MPI_Alltoallw, FTP_ROLE_COLL);
	}
	if (rc == MPI_SUCCESS && c.direct)
		rc = ftp_mpi.PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
					    recvcounts, rdispls, recvtypes, c.real);
	else if (rc == MPI_SUCCESS) {
		struct coll_args a = {.fn = FTP_FN_MPI_Alltoallw,
				      .sbuf = sendbuf,
				      .scounts = sendcounts,
				      .sdispls = sdispls,
				      .stypes = sendtypes,
				      .stype = MPI_DATATYPE_NULL,
				      .rbuf = recvbuf,
				      .rcounts = recvcounts,
				      .rdispls = rdispls,
				      .rtypes = recvtypes,
				      .rtype = MPI_DATATYPE_NULL,
				      .root = -1};
		void *copy = NULL;
		rc = ftp_block(&c, ftp_coll_start(&a, c.real, &c.req, &copy), MPI_STATUS_IGNORE);
		/* A wait given up on leaves the request to the MPI, which may
		 * still read the copy. */
		if (c.req == MPI_REQUEST_NULL)
			free(copy);
	}
	return ftp_post_coll(&c, rc);
}
FTP_ALSO_PMPI(MPI_Alltoallw);
