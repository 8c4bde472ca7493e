/* requests.h: the request table. For every request the application gets
 * from a nonblocking or persistent call on a communicator ftshim tracks,
 * what it waits on (a peer, any source, every member), so that the
 * completion calls (MPI_Wait, MPI_Test and their families) can stop
 * waiting when that fails.
 *
 * Sharing: any application thread may add, find and remove entries; a
 * mutex guards the table (MPI requests are created and completed far less
 * often than a mutex costs). An entry found is copied out. */
#ifndef FTSHIM_PMPI_REQUESTS_H
#define FTSHIM_PMPI_REQUESTS_H

#include <mpi.h>
#include <stdbool.h>

#include "pmpi/call.h"

struct ftp_req {
	struct ftp_comm *comm;   /* the request's communicator */
	struct ftp_watch watch;  /* what it waits on */
	enum ftp_fn fn;          /* the call that made it, for messages */
	bool persistent;         /* stays after completion until MPI_Request_free */
};

/* Remember request (made by the call c). Does nothing for MPI_REQUEST_NULL
 * or an untracked communicator. */
void ftp_req_add(const struct ftp_call *c, MPI_Request request, bool persistent);

/* Copy the entry of request to out; false if it is not tracked. */
bool ftp_req_find(MPI_Request request, struct ftp_req *out);

void ftp_req_remove(MPI_Request request);

/* Any entry at all? (One relaxed load: lets completion calls skip the
 * table when the application has made no tracked request.) */
bool ftp_req_any(void);

#endif
