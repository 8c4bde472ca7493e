/* coll_call.h: a collective call's arguments as the program gave them,
 * and starting the call as its nonblocking form on one of the MPI's
 * communicators (coll_call.c): what the covers' collective forms
 * (pmpi/coll_forms.h) hand their runners, a persistent collective's
 * starts (pmpi/persist.h) and replication's teams use. */
#ifndef FTSHIM_PMPI_COLL_CALL_H
#define FTSHIM_PMPI_COLL_CALL_H

#include <mpi.h>

#include "pmpi/call_base.h"

/* A collective call's arguments, as the program gave them. */
struct coll_args {
	enum ftp_fn fn;
	const void *sbuf;
	void *rbuf;
	int scount, rcount, root;
	const int *scounts, *sdispls, *rcounts, *rdispls;
	MPI_Datatype stype, rtype; /* the one type of a reduction or Bcast: rtype */
	MPI_Op op;
};

/* Start a's collective, as its nonblocking call, on comm (the MPI's
 * communicator: a's root is comm's rank) into *req, with a's buffers. */
int ftp_coll_start(const struct coll_args *a, MPI_Comm comm, MPI_Request *req);

#endif
