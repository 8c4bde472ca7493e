/* coll.h: collectives on a replicated communicator (coll.c). */
#ifndef FTSHIM_PMPI_MODE_REPLICATION_COLL_H
#define FTSHIM_PMPI_MODE_REPLICATION_COLL_H

#include "pmpi/mode/replication/state.h"

/* The replicated forms of the collectives (ftp_repl_calls lists them):
 * the call's arguments less its communicator (c's); each returns through
 * the call's post. */
int ftp_repl_MPI_Barrier(struct ftp_call *c);
int ftp_repl_MPI_Bcast(struct ftp_call *c, void *buffer, int count, MPI_Datatype datatype,
		       int root);
int ftp_repl_MPI_Reduce(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
			MPI_Datatype datatype, MPI_Op op, int root);
int ftp_repl_MPI_Allreduce(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
			   MPI_Datatype datatype, MPI_Op op);
int ftp_repl_MPI_Scan(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
		      MPI_Datatype datatype, MPI_Op op);
int ftp_repl_MPI_Exscan(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
			MPI_Datatype datatype, MPI_Op op);
int ftp_repl_MPI_Reduce_scatter_block(struct ftp_call *c, const void *sendbuf, void *recvbuf,
				      int recvcount, MPI_Datatype datatype, MPI_Op op);
int ftp_repl_MPI_Reduce_scatter(struct ftp_call *c, const void *sendbuf, void *recvbuf,
				const int recvcounts[], MPI_Datatype datatype, MPI_Op op);
int ftp_repl_MPI_Gather(struct ftp_call *c, const void *sendbuf, int sendcount,
			MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
			int root);
int ftp_repl_MPI_Gatherv(struct ftp_call *c, const void *sendbuf, int sendcount,
			 MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
			 const int displs[], MPI_Datatype recvtype, int root);
int ftp_repl_MPI_Scatter(struct ftp_call *c, const void *sendbuf, int sendcount,
			 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
			 int root);
int ftp_repl_MPI_Scatterv(struct ftp_call *c, const void *sendbuf, const int sendcounts[],
			  const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount,
			  MPI_Datatype recvtype, int root);
int ftp_repl_MPI_Allgather(struct ftp_call *c, const void *sendbuf, int sendcount,
			   MPI_Datatype sendtype, void *recvbuf, int recvcount,
			   MPI_Datatype recvtype);
int ftp_repl_MPI_Allgatherv(struct ftp_call *c, const void *sendbuf, int sendcount,
			    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
			    const int displs[], MPI_Datatype recvtype);
int ftp_repl_MPI_Alltoall(struct ftp_call *c, const void *sendbuf, int sendcount,
			  MPI_Datatype sendtype, void *recvbuf, int recvcount,
			  MPI_Datatype recvtype);
int ftp_repl_MPI_Alltoallv(struct ftp_call *c, const void *sendbuf, const int sendcounts[],
			   const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
			   const int recvcounts[], const int rdispls[], MPI_Datatype recvtype);

#endif
