/* coll_forms.h: the collectives on a covered communicator
 * (pmpi/cover.h), one form each for every kind of cover: each form
 * gathers the call's arguments into a struct coll_args and hands it to
 * its cover kind's runner (struct ftp_cover_kind.coll, or .icoll for the
 * nonblocking forms), which runs it and returns through the call's post.
 * A kind lists these forms in its calls table; it writes only the
 * runners (pmpi/coll_forms.c). */
#ifndef FTSHIM_PMPI_COLL_FORMS_H
#define FTSHIM_PMPI_COLL_FORMS_H

#include <mpi.h>

#include "pmpi/call_base.h"
#include "pmpi/coll_call.h"
#include "pmpi/mpix_decls.h"

/* The forms: the call's arguments less its communicator (c's). */
int ftp_cover_MPI_Barrier(struct ftp_call *c);
int ftp_cover_MPI_Bcast(struct ftp_call *c, void *buffer, int count, MPI_Datatype datatype,
			int root);
int ftp_cover_MPI_Reduce(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
			 MPI_Datatype datatype, MPI_Op op, int root);
int ftp_cover_MPI_Allreduce(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
			    MPI_Datatype datatype, MPI_Op op);
int ftp_cover_MPI_Scan(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
		       MPI_Datatype datatype, MPI_Op op);
int ftp_cover_MPI_Exscan(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
			 MPI_Datatype datatype, MPI_Op op);
int ftp_cover_MPI_Reduce_scatter_block(struct ftp_call *c, const void *sendbuf, void *recvbuf,
				       int recvcount, MPI_Datatype datatype, MPI_Op op);
int ftp_cover_MPI_Reduce_scatter(struct ftp_call *c, const void *sendbuf, void *recvbuf,
				 const int recvcounts[], MPI_Datatype datatype, MPI_Op op);
int ftp_cover_MPI_Gather(struct ftp_call *c, const void *sendbuf, int sendcount,
			 MPI_Datatype sendtype, void *recvbuf, int recvcount,
			 MPI_Datatype recvtype, int root);
int ftp_cover_MPI_Gatherv(struct ftp_call *c, const void *sendbuf, int sendcount,
			  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
			  const int displs[], MPI_Datatype recvtype, int root);
int ftp_cover_MPI_Scatter(struct ftp_call *c, const void *sendbuf, int sendcount,
			  MPI_Datatype sendtype, void *recvbuf, int recvcount,
			  MPI_Datatype recvtype, int root);
int ftp_cover_MPI_Scatterv(struct ftp_call *c, const void *sendbuf, const int sendcounts[],
			   const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount,
			   MPI_Datatype recvtype, int root);
int ftp_cover_MPI_Allgather(struct ftp_call *c, const void *sendbuf, int sendcount,
			    MPI_Datatype sendtype, void *recvbuf, int recvcount,
			    MPI_Datatype recvtype);
int ftp_cover_MPI_Allgatherv(struct ftp_call *c, const void *sendbuf, int sendcount,
			     MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
			     const int displs[], MPI_Datatype recvtype);
int ftp_cover_MPI_Alltoall(struct ftp_call *c, const void *sendbuf, int sendcount,
			   MPI_Datatype sendtype, void *recvbuf, int recvcount,
			   MPI_Datatype recvtype);
int ftp_cover_MPI_Alltoallv(struct ftp_call *c, const void *sendbuf, const int sendcounts[],
			    const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
			    const int recvcounts[], const int rdispls[], MPI_Datatype recvtype);
int ftp_cover_MPI_Alltoallw(struct ftp_call *c, const void *sendbuf, const int sendcounts[],
			    const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
			    const int recvcounts[], const int rdispls[],
			    const MPI_Datatype recvtypes[]);

/* The nonblocking forms: the same, and the request. */
int ftp_cover_MPI_Ibarrier(struct ftp_call *c, MPI_Request *request);
int ftp_cover_MPI_Ibcast(struct ftp_call *c, void *buffer, int count, MPI_Datatype datatype,
			 int root, MPI_Request *request);
int ftp_cover_MPI_Ireduce(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
			  MPI_Datatype datatype, MPI_Op op, int root, MPI_Request *request);
int ftp_cover_MPI_Iallreduce(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
			     MPI_Datatype datatype, MPI_Op op, MPI_Request *request);
int ftp_cover_MPI_Iscan(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
			MPI_Datatype datatype, MPI_Op op, MPI_Request *request);
int ftp_cover_MPI_Iexscan(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
			  MPI_Datatype datatype, MPI_Op op, MPI_Request *request);
int ftp_cover_MPI_Ireduce_scatter_block(struct ftp_call *c, const void *sendbuf, void *recvbuf,
					int recvcount, MPI_Datatype datatype, MPI_Op op,
					MPI_Request *request);
int ftp_cover_MPI_Ireduce_scatter(struct ftp_call *c, const void *sendbuf, void *recvbuf,
				  const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
				  MPI_Request *request);
int ftp_cover_MPI_Igather(struct ftp_call *c, const void *sendbuf, int sendcount,
			  MPI_Datatype sendtype, void *recvbuf, int recvcount,
			  MPI_Datatype recvtype, int root, MPI_Request *request);
int ftp_cover_MPI_Igatherv(struct ftp_call *c, const void *sendbuf, int sendcount,
			   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
			   const int displs[], MPI_Datatype recvtype, int root, MPI_Request *request);
int ftp_cover_MPI_Iscatter(struct ftp_call *c, const void *sendbuf, int sendcount,
			   MPI_Datatype sendtype, void *recvbuf, int recvcount,
			   MPI_Datatype recvtype, int root, MPI_Request *request);
int ftp_cover_MPI_Iscatterv(struct ftp_call *c, const void *sendbuf, const int sendcounts[],
			    const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount,
			    MPI_Datatype recvtype, int root, MPI_Request *request);
int ftp_cover_MPI_Iallgather(struct ftp_call *c, const void *sendbuf, int sendcount,
			     MPI_Datatype sendtype, void *recvbuf, int recvcount,
			     MPI_Datatype recvtype, MPI_Request *request);
int ftp_cover_MPI_Iallgatherv(struct ftp_call *c, const void *sendbuf, int sendcount,
			      MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
			      const int displs[], MPI_Datatype recvtype, MPI_Request *request);
int ftp_cover_MPI_Ialltoall(struct ftp_call *c, const void *sendbuf, int sendcount,
			    MPI_Datatype sendtype, void *recvbuf, int recvcount,
			    MPI_Datatype recvtype, MPI_Request *request);
int ftp_cover_MPI_Ialltoallv(struct ftp_call *c, const void *sendbuf, const int sendcounts[],
			     const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
			     const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
			     MPI_Request *request);
int ftp_cover_MPI_Ialltoallw(struct ftp_call *c, const void *sendbuf, const int sendcounts[],
			     const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
			     const int recvcounts[], const int rdispls[],
			     const MPI_Datatype recvtypes[], MPI_Request *request);

/* The persistent forms (MPI-4's MPI_Allreduce_init, ...): the same, an
 * info, and the request (pmpi/persist.h: each MPI_Start runs the
 * nonblocking form). Open MPI 4.1's MPIX_ ones take them too. */
#if MPI_VERSION >= 4 || defined(FTP_HAVE_MPIX_PCOLL)
int ftp_cover_MPI_Barrier_init(struct ftp_call *c, MPI_Info info, MPI_Request *request);
int ftp_cover_MPI_Bcast_init(struct ftp_call *c, void *buffer, int count, MPI_Datatype datatype,
			     int root, MPI_Info info, MPI_Request *request);
int ftp_cover_MPI_Reduce_init(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
			      MPI_Datatype datatype, MPI_Op op, int root, MPI_Info info,
			      MPI_Request *request);
int ftp_cover_MPI_Allreduce_init(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
				 MPI_Datatype datatype, MPI_Op op, MPI_Info info,
				 MPI_Request *request);
int ftp_cover_MPI_Scan_init(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
			    MPI_Datatype datatype, MPI_Op op, MPI_Info info, MPI_Request *request);
int ftp_cover_MPI_Exscan_init(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
			      MPI_Datatype datatype, MPI_Op op, MPI_Info info,
			      MPI_Request *request);
int ftp_cover_MPI_Reduce_scatter_block_init(struct ftp_call *c, const void *sendbuf, void *recvbuf,
					    int recvcount, MPI_Datatype datatype, MPI_Op op,
					    MPI_Info info, MPI_Request *request);
int ftp_cover_MPI_Reduce_scatter_init(struct ftp_call *c, const void *sendbuf, void *recvbuf,
				      const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
				      MPI_Info info, MPI_Request *request);
int ftp_cover_MPI_Gather_init(struct ftp_call *c, const void *sendbuf, int sendcount,
			      MPI_Datatype sendtype, void *recvbuf, int recvcount,
			      MPI_Datatype recvtype, int root, MPI_Info info, MPI_Request *request);
int ftp_cover_MPI_Gatherv_init(struct ftp_call *c, const void *sendbuf, int sendcount,
			       MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
			       const int displs[], MPI_Datatype recvtype, int root, MPI_Info info,
			       MPI_Request *request);
int ftp_cover_MPI_Scatter_init(struct ftp_call *c, const void *sendbuf, int sendcount,
			       MPI_Datatype sendtype, void *recvbuf, int recvcount,
			       MPI_Datatype recvtype, int root, MPI_Info info,
			       MPI_Request *request);
int ftp_cover_MPI_Scatterv_init(struct ftp_call *c, const void *sendbuf, const int sendcounts[],
				const int displs[], MPI_Datatype sendtype, void *recvbuf,
				int recvcount, MPI_Datatype recvtype, int root, MPI_Info info,
				MPI_Request *request);
int ftp_cover_MPI_Allgather_init(struct ftp_call *c, const void *sendbuf, int sendcount,
				 MPI_Datatype sendtype, void *recvbuf, int recvcount,
				 MPI_Datatype recvtype, MPI_Info info, MPI_Request *request);
int ftp_cover_MPI_Allgatherv_init(struct ftp_call *c, const void *sendbuf, int sendcount,
				  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
				  const int displs[], MPI_Datatype recvtype, MPI_Info info,
				  MPI_Request *request);
int ftp_cover_MPI_Alltoall_init(struct ftp_call *c, const void *sendbuf, int sendcount,
				MPI_Datatype sendtype, void *recvbuf, int recvcount,
				MPI_Datatype recvtype, MPI_Info info, MPI_Request *request);
int ftp_cover_MPI_Alltoallv_init(struct ftp_call *c, const void *sendbuf, const int sendcounts[],
				 const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
				 const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
				 MPI_Info info, MPI_Request *request);
int ftp_cover_MPI_Alltoallw_init(struct ftp_call *c, const void *sendbuf, const int sendcounts[],
				 const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
				 const int recvcounts[], const int rdispls[],
				 const MPI_Datatype recvtypes[], MPI_Info info,
				 MPI_Request *request);
#endif

#if MPI_VERSION >= 4
/* As a calls table's slots: MPI-4's names, and Open MPI 4.1's. */
#define FTP_COVER_PCOLL_FORMS                                                                      \
	.MPI_Allgather_init = ftp_cover_MPI_Allgather_init,                                        \
	.MPI_Allgatherv_init = ftp_cover_MPI_Allgatherv_init,                                      \
	.MPI_Allreduce_init = ftp_cover_MPI_Allreduce_init,                                        \
	.MPI_Alltoall_init = ftp_cover_MPI_Alltoall_init,                                          \
	.MPI_Alltoallv_init = ftp_cover_MPI_Alltoallv_init,                                        \
	.MPI_Alltoallw_init = ftp_cover_MPI_Alltoallw_init,                                        \
	.MPI_Barrier_init = ftp_cover_MPI_Barrier_init,                                            \
	.MPI_Bcast_init = ftp_cover_MPI_Bcast_init, .MPI_Exscan_init = ftp_cover_MPI_Exscan_init,  \
	.MPI_Gather_init = ftp_cover_MPI_Gather_init,                                              \
	.MPI_Gatherv_init = ftp_cover_MPI_Gatherv_init,                                            \
	.MPI_Reduce_init = ftp_cover_MPI_Reduce_init,                                              \
	.MPI_Reduce_scatter_init = ftp_cover_MPI_Reduce_scatter_init,                              \
	.MPI_Reduce_scatter_block_init = ftp_cover_MPI_Reduce_scatter_block_init,                  \
	.MPI_Scan_init = ftp_cover_MPI_Scan_init, .MPI_Scatter_init = ftp_cover_MPI_Scatter_init,  \
	.MPI_Scatterv_init = ftp_cover_MPI_Scatterv_init
#endif
#ifdef FTP_HAVE_MPIX_PCOLL
#define FTP_COVER_MPIX_PCOLL_FORMS                                                                 \
	.MPIX_Allgather_init = ftp_cover_MPI_Allgather_init,                                       \
	.MPIX_Allgatherv_init = ftp_cover_MPI_Allgatherv_init,                                     \
	.MPIX_Allreduce_init = ftp_cover_MPI_Allreduce_init,                                       \
	.MPIX_Alltoall_init = ftp_cover_MPI_Alltoall_init,                                         \
	.MPIX_Alltoallv_init = ftp_cover_MPI_Alltoallv_init,                                       \
	.MPIX_Alltoallw_init = ftp_cover_MPI_Alltoallw_init,                                       \
	.MPIX_Barrier_init = ftp_cover_MPI_Barrier_init,                                           \
	.MPIX_Bcast_init = ftp_cover_MPI_Bcast_init,                                               \
	.MPIX_Exscan_init = ftp_cover_MPI_Exscan_init,                                             \
	.MPIX_Gather_init = ftp_cover_MPI_Gather_init,                                             \
	.MPIX_Gatherv_init = ftp_cover_MPI_Gatherv_init,                                           \
	.MPIX_Reduce_init = ftp_cover_MPI_Reduce_init,                                             \
	.MPIX_Reduce_scatter_init = ftp_cover_MPI_Reduce_scatter_init,                             \
	.MPIX_Reduce_scatter_block_init = ftp_cover_MPI_Reduce_scatter_block_init,                 \
	.MPIX_Scan_init = ftp_cover_MPI_Scan_init,                                                 \
	.MPIX_Scatter_init = ftp_cover_MPI_Scatter_init,                                           \
	.MPIX_Scatterv_init = ftp_cover_MPI_Scatterv_init
#endif

/* The blocking forms, then the nonblocking ones, as a calls table's
 * slots, for a kind's initializer. */
#define FTP_COVER_COLL_FORMS                                                                      \
	.MPI_Allgather = ftp_cover_MPI_Allgather, .MPI_Allgatherv = ftp_cover_MPI_Allgatherv,       \
	.MPI_Allreduce = ftp_cover_MPI_Allreduce, .MPI_Alltoall = ftp_cover_MPI_Alltoall,           \
	.MPI_Alltoallv = ftp_cover_MPI_Alltoallv, .MPI_Alltoallw = ftp_cover_MPI_Alltoallw,         \
	.MPI_Barrier = ftp_cover_MPI_Barrier,                                                       \
	.MPI_Bcast = ftp_cover_MPI_Bcast, .MPI_Exscan = ftp_cover_MPI_Exscan,                       \
	.MPI_Gather = ftp_cover_MPI_Gather, .MPI_Gatherv = ftp_cover_MPI_Gatherv,                   \
	.MPI_Reduce = ftp_cover_MPI_Reduce, .MPI_Reduce_scatter = ftp_cover_MPI_Reduce_scatter,     \
	.MPI_Reduce_scatter_block = ftp_cover_MPI_Reduce_scatter_block,                             \
	.MPI_Scan = ftp_cover_MPI_Scan, .MPI_Scatter = ftp_cover_MPI_Scatter,                       \
	.MPI_Scatterv = ftp_cover_MPI_Scatterv

#define FTP_COVER_ICOLL_FORMS                                                                     \
	.MPI_Iallgather = ftp_cover_MPI_Iallgather, .MPI_Iallgatherv = ftp_cover_MPI_Iallgatherv,   \
	.MPI_Iallreduce = ftp_cover_MPI_Iallreduce, .MPI_Ialltoall = ftp_cover_MPI_Ialltoall,       \
	.MPI_Ialltoallv = ftp_cover_MPI_Ialltoallv, .MPI_Ialltoallw = ftp_cover_MPI_Ialltoallw,     \
	.MPI_Ibarrier = ftp_cover_MPI_Ibarrier,                                                     \
	.MPI_Ibcast = ftp_cover_MPI_Ibcast, .MPI_Iexscan = ftp_cover_MPI_Iexscan,                   \
	.MPI_Igather = ftp_cover_MPI_Igather, .MPI_Igatherv = ftp_cover_MPI_Igatherv,               \
	.MPI_Ireduce = ftp_cover_MPI_Ireduce, .MPI_Ireduce_scatter = ftp_cover_MPI_Ireduce_scatter, \
	.MPI_Ireduce_scatter_block = ftp_cover_MPI_Ireduce_scatter_block,                           \
	.MPI_Iscan = ftp_cover_MPI_Iscan, .MPI_Iscatter = ftp_cover_MPI_Iscatter,                   \
	.MPI_Iscatterv = ftp_cover_MPI_Iscatterv

#endif
