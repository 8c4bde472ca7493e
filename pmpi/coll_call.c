/* coll_call.c: starting a collective call, as the program gave it
 * (struct coll_args), as its nonblocking form on one of the MPI's
 * communicators (see coll_call.h). Application thread. */
#include "ftshim_config.h"

#include "pmpi/coll_call.h"
#include "pmpi/mpi_lib.h"

int ftp_coll_start(const struct coll_args *a, MPI_Comm comm, MPI_Request *req)
{
	switch (a->fn) {
	case FTP_FN_MPI_Barrier:
		return ftp_mpi.PMPI_Ibarrier(comm, req);
	case FTP_FN_MPI_Bcast:
		return ftp_mpi.PMPI_Ibcast(a->rbuf, a->rcount, a->rtype, a->root, comm, req);
	case FTP_FN_MPI_Reduce:
		return ftp_mpi.PMPI_Ireduce(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->root, comm,
					    req);
	case FTP_FN_MPI_Allreduce:
		return ftp_mpi.PMPI_Iallreduce(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, comm, req);
	case FTP_FN_MPI_Scan:
		return ftp_mpi.PMPI_Iscan(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, comm, req);
	case FTP_FN_MPI_Exscan:
		return ftp_mpi.PMPI_Iexscan(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, comm, req);
	case FTP_FN_MPI_Reduce_scatter_block:
		return ftp_mpi.PMPI_Ireduce_scatter_block(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op,
							  comm, req);
	case FTP_FN_MPI_Reduce_scatter:
		return ftp_mpi.PMPI_Ireduce_scatter(a->sbuf, a->rbuf, a->rcounts, a->rtype, a->op, comm,
						    req);
	case FTP_FN_MPI_Gather:
		return ftp_mpi.PMPI_Igather(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype,
					    a->root, comm, req);
	case FTP_FN_MPI_Gatherv:
		return ftp_mpi.PMPI_Igatherv(a->sbuf, a->scount, a->stype, a->rbuf, a->rcounts,
					     a->rdispls, a->rtype, a->root, comm, req);
	case FTP_FN_MPI_Scatter:
		return ftp_mpi.PMPI_Iscatter(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype,
					     a->root, comm, req);
	case FTP_FN_MPI_Scatterv:
		return ftp_mpi.PMPI_Iscatterv(a->sbuf, a->scounts, a->sdispls, a->stype, a->rbuf,
					      a->rcount, a->rtype, a->root, comm, req);
	case FTP_FN_MPI_Allgather:
		return ftp_mpi.PMPI_Iallgather(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount,
					       a->rtype, comm, req);
	case FTP_FN_MPI_Allgatherv:
		return ftp_mpi.PMPI_Iallgatherv(a->sbuf, a->scount, a->stype, a->rbuf, a->rcounts,
						a->rdispls, a->rtype, comm, req);
	case FTP_FN_MPI_Alltoall:
		return ftp_mpi.PMPI_Ialltoall(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount,
					      a->rtype, comm, req);
	case FTP_FN_MPI_Alltoallv:
		return ftp_mpi.PMPI_Ialltoallv(a->sbuf, a->scounts, a->sdispls, a->stype, a->rbuf,
					       a->rcounts, a->rdispls, a->rtype, comm, req);
	default:
		return MPI_ERR_INTERN;
	}
}
