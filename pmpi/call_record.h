/* call_record.h: what one wrapped call is while it runs (struct
 * ftp_call: its function, communicator, what it waits on), made by every
 * wrapper and read by the modules that check, block on, and raise errors
 * for it (pmpi/call_base.h, pmpi/errors.c). */
#ifndef FTSHIM_PMPI_CALL_RECORD_H
#define FTSHIM_PMPI_CALL_RECORD_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "pmpi/comm_lookup.h"
#include "pmpi/fn_table.h"

/* What a call waits on, so that it can stop when that fails. */
enum ftp_watch_kind {
	FTP_WATCH_NONE,
	FTP_WATCH_PEER, /* one process: rank (the MPI's, in the remote group of an intercommunicator) */
	FTP_WATCH_ANY,  /* a receive from MPI_ANY_SOURCE */
	FTP_WATCH_ALL,  /* every member (collectives) */
	/* every member but those MPI_Comm_validate_all agreed failed (a
	 * collective run-through stabilization runs, pmpi/rts_state.h) */
	FTP_WATCH_LIVE,
};

struct ftp_watch {
	enum ftp_watch_kind kind;
	int rank;  /* FTP_WATCH_PEER: its rank in the MPI's communicator (real) */
	bool recv; /* a receive: cancel it when giving up */
	/* Cannot be cancelled (partitioned, request-based RMA): left to the
	 * MPI when given up. */
	bool keep;
};

struct ftp_call {
	enum ftp_fn fn;          /* which function this call is */
	struct ftp_comm *comm;   /* the call's communicator, if ftshim tracks it */
	MPI_Comm real;           /* the communicator to hand to PMPI */
	bool direct;             /* nothing to watch: call the blocking PMPI function */
	struct ftp_watch watch;
	MPI_Request req;         /* the nonblocking twin of a blocking call */
	/* A call on a window or file (pmpi/objects.h): its kind and handle
	 * bits; its errors are raised on that object's error handler, and comm
	 * is the object's communicator. FTP_OBJ_COMM (zero): no object. */
	enum ftp_obj_kind obj;
	uint64_t obj_bits;
	/* A window or file creation: the reference on comm it will hold. */
	struct ftp_comm *held;
	/* A wait on one window peer: its ftp_hang_watch_peer_begin token. */
	uint64_t peer_watch;
};

#define FTP_CALL_INIT(f) { .fn = (f), .comm = NULL, .direct = true }

#endif
