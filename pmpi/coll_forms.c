/* coll_forms.c: the collectives' forms on a covered communicator
 * (pmpi/coll_forms.h): each names its call's arguments and hands them to
 * the runner of its cover's kind, the blocking one or the nonblocking
 * one (the same arguments, and a request); a persistent form's every
 * start is its nonblocking form (pmpi/persist.c). Application thread. */
#include "ftshim_config.h"

#include "pmpi/coll_forms.h"
#include "pmpi/cover.h"
#include "pmpi/persist.h"

static int run(struct ftp_call *c, const struct coll_args *a)
{
	return c->comm->cover->kind->coll(c, a);
}

static int irun(struct ftp_call *c, const struct coll_args *a, MPI_Request *request)
{
	return c->comm->cover->kind->icoll(c, a, request);
}

/* The persistent form of B, whose every start is I (MPI-4's, and Open
 * MPI 4.1's MPIX_ ones). */
#if MPI_VERSION >= 4 || defined(FTP_HAVE_MPIX_PCOLL)
#define PERSISTENT_FORM(B, I, ARGS, ...)                                                         \
	int ftp_cover_MPI_##B##_init(struct ftp_call *c, __VA_ARGS__, MPI_Info info,             \
				     MPI_Request *request)                                       \
	{                                                                                        \
		(void)info;                                                                      \
		return ftp_persist_coll(c, &ARGS, request);                                      \
	}
#else
#define PERSISTENT_FORM(B, I, ARGS, ...)
#endif

/* The blocking form B, the nonblocking form I and the persistent form
 * of one collective, of parameters ... (less the communicator, the info
 * and the request), whose arguments are ARGS (a parenthesized struct
 * coll_args). */
#define FORMS(B, I, ARGS, ...)                                                                   \
	int ftp_cover_MPI_##B(struct ftp_call *c, __VA_ARGS__)                                   \
	{                                                                                        \
		return run(c, &ARGS);                                                            \
	}                                                                                        \
	int ftp_cover_MPI_##I(struct ftp_call *c, __VA_ARGS__, MPI_Request *request)             \
	{                                                                                        \
		return irun(c, &ARGS, request);                                                  \
	}                                                                                        \
	PERSISTENT_FORM(B, I, ARGS, __VA_ARGS__)

#define BARRIER ((struct coll_args){.fn = FTP_FN_MPI_Barrier, .stype = MPI_DATATYPE_NULL, .rtype = MPI_DATATYPE_NULL})

int ftp_cover_MPI_Barrier(struct ftp_call *c)
{
	return run(c, &BARRIER);
}

int ftp_cover_MPI_Ibarrier(struct ftp_call *c, MPI_Request *request)
{
	return irun(c, &BARRIER, request);
}

#if MPI_VERSION >= 4 || defined(FTP_HAVE_MPIX_PCOLL)
int ftp_cover_MPI_Barrier_init(struct ftp_call *c, MPI_Info info, MPI_Request *request)
{
	(void)info;
	return ftp_persist_coll(c, &BARRIER, request);
}
#endif

FORMS(Bcast, Ibcast,
      ((struct coll_args){.fn = FTP_FN_MPI_Bcast, .rbuf = buffer, .rcount = count, .rtype = datatype,
			  .root = root, .stype = MPI_DATATYPE_NULL}),
      void *buffer, int count, MPI_Datatype datatype, int root)

/* A reduction's arguments. */
#define REDUCTION(FN, COUNT, COUNTS, ROOT)                                                       \
	((struct coll_args){.fn = FTP_FN_MPI_##FN, .sbuf = sendbuf, .rbuf = recvbuf, .rcount = COUNT, \
			    .rcounts = COUNTS, .rtype = datatype, .stype = MPI_DATATYPE_NULL,     \
			    .op = op, .root = ROOT})

FORMS(Reduce, Ireduce, REDUCTION(Reduce, count, NULL, root), const void *sendbuf, void *recvbuf,
      int count, MPI_Datatype datatype, MPI_Op op, int root)
FORMS(Allreduce, Iallreduce, REDUCTION(Allreduce, count, NULL, -1), const void *sendbuf,
      void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op)
FORMS(Scan, Iscan, REDUCTION(Scan, count, NULL, -1), const void *sendbuf, void *recvbuf, int count,
      MPI_Datatype datatype, MPI_Op op)
FORMS(Exscan, Iexscan, REDUCTION(Exscan, count, NULL, -1), const void *sendbuf, void *recvbuf,
      int count, MPI_Datatype datatype, MPI_Op op)
FORMS(Reduce_scatter_block, Ireduce_scatter_block,
      REDUCTION(Reduce_scatter_block, recvcount, NULL, -1), const void *sendbuf, void *recvbuf,
      int recvcount, MPI_Datatype datatype, MPI_Op op)
FORMS(Reduce_scatter, Ireduce_scatter, REDUCTION(Reduce_scatter, 0, recvcounts, -1),
      const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op)

/* A gather's, scatter's or all-to-all's arguments. */
#define MOVE(FN, ROOT)                                                                           \
	((struct coll_args){.fn = FTP_FN_MPI_##FN, .sbuf = sendbuf, .scount = sendcount,            \
			    .stype = sendtype, .rbuf = recvbuf, .rcount = recvcount,                 \
			    .rtype = recvtype, .root = ROOT})
#define MOVE_V(FN, SCOUNTS, SDISPLS, SCOUNT, RCOUNTS, RDISPLS, RCOUNT, ROOT)                      \
	((struct coll_args){.fn = FTP_FN_MPI_##FN, .sbuf = sendbuf, .scount = SCOUNT,               \
			    .scounts = SCOUNTS, .sdispls = SDISPLS, .stype = sendtype,               \
			    .rbuf = recvbuf, .rcount = RCOUNT, .rcounts = RCOUNTS,                   \
			    .rdispls = RDISPLS, .rtype = recvtype, .root = ROOT})

FORMS(Gather, Igather, MOVE(Gather, root), const void *sendbuf, int sendcount,
      MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root)
FORMS(Scatter, Iscatter, MOVE(Scatter, root), const void *sendbuf, int sendcount,
      MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root)
FORMS(Allgather, Iallgather, MOVE(Allgather, -1), const void *sendbuf, int sendcount,
      MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype)
FORMS(Alltoall, Ialltoall, MOVE(Alltoall, -1), const void *sendbuf, int sendcount,
      MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype)
FORMS(Gatherv, Igatherv, MOVE_V(Gatherv, NULL, NULL, sendcount, recvcounts, displs, 0, root),
      const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
      const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root)
FORMS(Scatterv, Iscatterv, MOVE_V(Scatterv, sendcounts, displs, 0, NULL, NULL, recvcount, root),
      const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
      void *recvbuf, int recvcount, MPI_Datatype recvtype, int root)
FORMS(Allgatherv, Iallgatherv,
      MOVE_V(Allgatherv, NULL, NULL, sendcount, recvcounts, displs, 0, -1), const void *sendbuf,
      int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
      const int displs[], MPI_Datatype recvtype)
FORMS(Alltoallv, Ialltoallv,
      MOVE_V(Alltoallv, sendcounts, sdispls, 0, recvcounts, rdispls, 0, -1), const void *sendbuf,
      const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
      const int recvcounts[], const int rdispls[], MPI_Datatype recvtype)
FORMS(Alltoallw, Ialltoallw,
      ((struct coll_args){.fn = FTP_FN_MPI_Alltoallw, .sbuf = sendbuf, .scounts = sendcounts,
			  .sdispls = sdispls, .stypes = sendtypes, .stype = MPI_DATATYPE_NULL,
			  .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls,
			  .rtypes = recvtypes, .rtype = MPI_DATATYPE_NULL, .root = -1}),
      const void *sendbuf, const int sendcounts[], const int sdispls[],
      const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],
      const MPI_Datatype recvtypes[])
