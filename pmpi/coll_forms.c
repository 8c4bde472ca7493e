/* coll_forms.c: the blocking collectives' forms on a covered communicator
 * (pmpi/coll_forms.h): each names its call's arguments and hands them to
 * the runner of its cover's kind. Application thread. */
#include "ftshim_config.h"

#include "pmpi/coll_forms.h"
#include "pmpi/cover.h"

static int run(struct ftp_call *c, const struct coll_args *a)
{
	return c->comm->cover->kind->coll(c, a);
}

int ftp_cover_MPI_Barrier(struct ftp_call *c)
{
	return run(c, &(struct coll_args){.fn = FTP_FN_MPI_Barrier, .stype = MPI_DATATYPE_NULL,
					  .rtype = MPI_DATATYPE_NULL});
}

int ftp_cover_MPI_Bcast(struct ftp_call *c, void *buffer, int count, MPI_Datatype datatype, int root)
{
	return run(c, &(struct coll_args){.fn = FTP_FN_MPI_Bcast, .rbuf = buffer, .rcount = count,
					  .rtype = datatype, .root = root, .stype = MPI_DATATYPE_NULL});
}

/* A reduction's arguments. */
static int reduction(struct ftp_call *c, enum ftp_fn fn, const void *sendbuf, void *recvbuf,
		     int count, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, int root)
{
	return run(c, &(struct coll_args){.fn = fn, .sbuf = sendbuf, .rbuf = recvbuf,
					  .rcount = count, .rcounts = recvcounts, .rtype = datatype,
					  .stype = MPI_DATATYPE_NULL, .op = op, .root = root});
}

int ftp_cover_MPI_Reduce(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
			 MPI_Datatype datatype, MPI_Op op, int root)
{
	return reduction(c, FTP_FN_MPI_Reduce, sendbuf, recvbuf, count, NULL, datatype, op, root);
}

int ftp_cover_MPI_Allreduce(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
			    MPI_Datatype datatype, MPI_Op op)
{
	return reduction(c, FTP_FN_MPI_Allreduce, sendbuf, recvbuf, count, NULL, datatype, op, -1);
}

int ftp_cover_MPI_Scan(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
		       MPI_Datatype datatype, MPI_Op op)
{
	return reduction(c, FTP_FN_MPI_Scan, sendbuf, recvbuf, count, NULL, datatype, op, -1);
}

int ftp_cover_MPI_Exscan(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
			 MPI_Datatype datatype, MPI_Op op)
{
	return reduction(c, FTP_FN_MPI_Exscan, sendbuf, recvbuf, count, NULL, datatype, op, -1);
}

int ftp_cover_MPI_Reduce_scatter_block(struct ftp_call *c, const void *sendbuf, void *recvbuf,
				       int recvcount, MPI_Datatype datatype, MPI_Op op)
{
	return reduction(c, FTP_FN_MPI_Reduce_scatter_block, sendbuf, recvbuf, recvcount, NULL,
			 datatype, op, -1);
}

int ftp_cover_MPI_Reduce_scatter(struct ftp_call *c, const void *sendbuf, void *recvbuf,
				 const int recvcounts[], MPI_Datatype datatype, MPI_Op op)
{
	return reduction(c, FTP_FN_MPI_Reduce_scatter, sendbuf, recvbuf, 0, recvcounts, datatype,
			 op, -1);
}

int ftp_cover_MPI_Gather(struct ftp_call *c, const void *sendbuf, int sendcount,
			 MPI_Datatype sendtype, void *recvbuf, int recvcount,
			 MPI_Datatype recvtype, int root)
{
	return run(c, &(struct coll_args){.fn = FTP_FN_MPI_Gather, .sbuf = sendbuf,
					  .scount = sendcount, .stype = sendtype, .rbuf = recvbuf,
					  .rcount = recvcount, .rtype = recvtype, .root = root});
}

int ftp_cover_MPI_Gatherv(struct ftp_call *c, const void *sendbuf, int sendcount,
			  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
			  const int displs[], MPI_Datatype recvtype, int root)
{
	return run(c, &(struct coll_args){.fn = FTP_FN_MPI_Gatherv, .sbuf = sendbuf,
					  .scount = sendcount, .stype = sendtype, .rbuf = recvbuf,
					  .rcounts = recvcounts, .rdispls = displs,
					  .rtype = recvtype, .root = root});
}

int ftp_cover_MPI_Scatter(struct ftp_call *c, const void *sendbuf, int sendcount,
			  MPI_Datatype sendtype, void *recvbuf, int recvcount,
			  MPI_Datatype recvtype, int root)
{
	return run(c, &(struct coll_args){.fn = FTP_FN_MPI_Scatter, .sbuf = sendbuf,
					  .scount = sendcount, .stype = sendtype, .rbuf = recvbuf,
					  .rcount = recvcount, .rtype = recvtype, .root = root});
}

int ftp_cover_MPI_Scatterv(struct ftp_call *c, const void *sendbuf, const int sendcounts[],
			   const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount,
			   MPI_Datatype recvtype, int root)
{
	return run(c, &(struct coll_args){.fn = FTP_FN_MPI_Scatterv, .sbuf = sendbuf,
					  .scounts = sendcounts, .sdispls = displs,
					  .stype = sendtype, .rbuf = recvbuf, .rcount = recvcount,
					  .rtype = recvtype, .root = root});
}

int ftp_cover_MPI_Allgather(struct ftp_call *c, const void *sendbuf, int sendcount,
			    MPI_Datatype sendtype, void *recvbuf, int recvcount,
			    MPI_Datatype recvtype)
{
	return run(c, &(struct coll_args){.fn = FTP_FN_MPI_Allgather, .sbuf = sendbuf,
					  .scount = sendcount, .stype = sendtype, .rbuf = recvbuf,
					  .rcount = recvcount, .rtype = recvtype, .root = -1});
}

int ftp_cover_MPI_Allgatherv(struct ftp_call *c, const void *sendbuf, int sendcount,
			     MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
			     const int displs[], MPI_Datatype recvtype)
{
	return run(c, &(struct coll_args){.fn = FTP_FN_MPI_Allgatherv, .sbuf = sendbuf,
					  .scount = sendcount, .stype = sendtype, .rbuf = recvbuf,
					  .rcounts = recvcounts, .rdispls = displs,
					  .rtype = recvtype, .root = -1});
}

int ftp_cover_MPI_Alltoall(struct ftp_call *c, const void *sendbuf, int sendcount,
			   MPI_Datatype sendtype, void *recvbuf, int recvcount,
			   MPI_Datatype recvtype)
{
	return run(c, &(struct coll_args){.fn = FTP_FN_MPI_Alltoall, .sbuf = sendbuf,
					  .scount = sendcount, .stype = sendtype, .rbuf = recvbuf,
					  .rcount = recvcount, .rtype = recvtype, .root = -1});
}

int ftp_cover_MPI_Alltoallv(struct ftp_call *c, const void *sendbuf, const int sendcounts[],
			    const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
			    const int recvcounts[], const int rdispls[], MPI_Datatype recvtype)
{
	return run(c, &(struct coll_args){.fn = FTP_FN_MPI_Alltoallv, .sbuf = sendbuf,
					  .scounts = sendcounts, .sdispls = sdispls,
					  .stype = sendtype, .rbuf = recvbuf,
					  .rcounts = recvcounts, .rdispls = rdispls,
					  .rtype = recvtype, .root = -1});
}
