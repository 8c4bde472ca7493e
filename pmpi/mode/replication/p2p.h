/* p2p.h: sends, receives and probes on a replicated communicator
 * (p2p.c). */
#ifndef FTSHIM_PMPI_MODE_REPLICATION_P2P_H
#define FTSHIM_PMPI_MODE_REPLICATION_P2P_H

#include "pmpi/mode/replication/state.h"

/* Receive and drop the message a probe of e found. */
void ftp_repl_discard_one(const struct ftp_comm *e, const MPI_Status *st);

/* The replicated forms of the calls (ftp_repl_calls lists them): the
 * call's arguments (less its communicator, which is c's). Each returns
 * through the call's post, except those of hand-written wrappers that
 * post themselves (MPI_Probe, MPI_Mprobe, MPI_Sendrecv: pmpi/p2p.c), which return
 * the call's result. */
int ftp_repl_MPI_Send(struct ftp_call *c, const void *buf, int count, MPI_Datatype datatype,
		      int dest, int tag);
int ftp_repl_MPI_Ssend(struct ftp_call *c, const void *buf, int count, MPI_Datatype datatype,
		       int dest, int tag);
int ftp_repl_MPI_Rsend(struct ftp_call *c, const void *buf, int count, MPI_Datatype datatype,
		       int dest, int tag);
int ftp_repl_MPI_Recv(struct ftp_call *c, void *buf, int count, MPI_Datatype datatype, int source,
		      int tag, MPI_Status *status);
int ftp_repl_MPI_Isend(struct ftp_call *c, const void *buf, int count, MPI_Datatype datatype,
		       int dest, int tag, MPI_Request *request);
int ftp_repl_MPI_Issend(struct ftp_call *c, const void *buf, int count, MPI_Datatype datatype,
			int dest, int tag, MPI_Request *request);
int ftp_repl_MPI_Irsend(struct ftp_call *c, const void *buf, int count, MPI_Datatype datatype,
			int dest, int tag, MPI_Request *request);
int ftp_repl_MPI_Irecv(struct ftp_call *c, void *buf, int count, MPI_Datatype datatype, int source,
		       int tag, MPI_Request *request);
int ftp_repl_MPI_Iprobe(struct ftp_call *c, int source, int tag, int *flag, MPI_Status *status);
int ftp_repl_MPI_Probe(struct ftp_call *c, int source, int tag, MPI_Status *status);
int ftp_repl_MPI_Mprobe(struct ftp_call *c, int source, int tag, MPI_Message *message,
			MPI_Status *status);
int ftp_repl_MPI_Improbe(struct ftp_call *c, int source, int tag, int *flag, MPI_Message *message,
			 MPI_Status *status);
int ftp_repl_MPI_Sendrecv(struct ftp_call *c, const void *sendbuf, int sendcount,
			  MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
			  int recvcount, MPI_Datatype recvtype, int source, int recvtag,
			  MPI_Status *status);

#endif
