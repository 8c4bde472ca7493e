/* held_msg.h: matched messages ftshim received for the program, under
 * message handles of the MPI's own (held_msg.c). */
#ifndef FTSHIM_PMPI_HELD_MSG_H
#define FTSHIM_PMPI_HELD_MSG_H

#include <mpi.h>

#include "pmpi/call_base.h"

/* How a cover receives a probed message whole: bytes of MPI_PACKED from
 * source with tag (the program's rank), on c's communicator. */
typedef int (*ftp_held_recv_fn)(struct ftp_call *c, void *buf, int bytes, int source, int tag);

/* Receive the message a matched probe of c found (st: its status, in the
 * program's ranks) whole with recv, and hold it: *message is the handle
 * the program's MPI_Mrecv or MPI_Imrecv gives back (MPI_MESSAGE_NO_PROC
 * for a probe of MPI_PROC_NULL). MPI_SUCCESS or the error. */
int ftp_held_probed(struct ftp_call *c, const MPI_Status *st, ftp_held_recv_fn recv,
		    MPI_Message *message);

/* A matched probe, blocking (MPI_Mprobe) or not (MPI_Improbe), as a
 * cover runs it: its probe, then the message found received whole with
 * recv and held (ftp_held_probed). Both return the call's result. */
typedef int (*ftp_held_probe_fn)(struct ftp_call *c, int source, int tag, MPI_Status *status);
typedef int (*ftp_held_iprobe_fn)(struct ftp_call *c, int source, int tag, int *flag,
				  MPI_Status *status);
int ftp_held_mprobe(struct ftp_call *c, int source, int tag, ftp_held_probe_fn probe,
		    ftp_held_recv_fn recv, MPI_Message *message, MPI_Status *status);
int ftp_held_improbe(struct ftp_call *c, int source, int tag, ftp_held_iprobe_fn iprobe,
		     ftp_held_recv_fn recv, int *flag, MPI_Message *message, MPI_Status *status);

/* The forms of MPI_Mprobe (returns its result, the hand-written wrapper
 * posts) and MPI_Improbe (posts) for a cover whose point-to-point runs as
 * on any communicator, ranks translated: the views' (pmpi/view_coll.h). */
int ftp_held_MPI_Mprobe(struct ftp_call *c, int source, int tag, MPI_Message *message,
			MPI_Status *status);
int ftp_held_MPI_Improbe(struct ftp_call *c, int source, int tag, int *flag, MPI_Message *message,
			 MPI_Status *status);

#endif
