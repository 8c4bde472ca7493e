/* coll_call.h: a collective call's arguments as the program gave them,
 * and starting the call as its nonblocking form on one of the MPI's
 * communicators (coll_call.c): what the covers' collective forms
 * (pmpi/coll_forms.h) hand their runners, a persistent collective's
 * starts (pmpi/persist.h) and replication's teams use. */
#ifndef FTSHIM_PMPI_COLL_CALL_H
#define FTSHIM_PMPI_COLL_CALL_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "pmpi/call_base.h"

/* A collective call's arguments, as the program gave them. */
struct coll_args {
	enum ftp_fn fn;
	const void *sbuf;
	void *rbuf;
	int scount, rcount, root;
	const int *scounts, *sdispls, *rcounts, *rdispls;
	MPI_Datatype stype, rtype; /* the one type of a reduction or Bcast: rtype */
	/* MPI_Alltoallw's types, one per peer (its displacements are
	 * bytes); NULL for every other call. */
	const MPI_Datatype *stypes, *rtypes;
	MPI_Op op;
};

/* A type kept past a call: one the program made duplicated (it may free
 * its own), a named one as it is (a duplicate of MPI_INT would no longer
 * take MPI_SUM); dropped, a duplicate is freed while the MPI is up. */
int ftp_type_keep(MPI_Datatype t, MPI_Datatype *kept);
void ftp_type_drop(MPI_Datatype *t);

/* A collective's arguments kept past its call (a persistent one's, a
 * logged one's): copies of its arrays, and its types (named ones as
 * they are, the others duplicated, as the program may free its own). */
struct coll_kept {
	struct coll_args a; /* the call's, its arrays and types the copies */
	int *arrays;
	MPI_Datatype *types; /* stype, rtype, then stypes and rtypes if any */
	int ntypes;
};

/* Keep a, a call on n members by member me (ranks as a's root is given):
 * MPI_SUCCESS, or an error with nothing kept. A rooted v form's arrays
 * are kept at its root only, an all-to-all's send arrays only when not
 * in place (the others may point anywhere). */
int ftp_coll_keep(struct coll_kept *k, const struct coll_args *a, int n, int me);
void ftp_coll_kept_free(struct coll_kept *k);

/* The bytes from its start that n blocks of an MPI_Alltoallw buffer span
 * (counts[i] elements of types[i] at byte displs[i]): 0 with none, -1 if
 * a type cannot be read. */
int64_t ftp_coll_w_span(const int *counts, const int *displs, const MPI_Datatype *types, int n);

/* Start a's collective, as its nonblocking call, on comm (the MPI's
 * communicator: a's root is comm's rank) into *req, with a's buffers.
 * *copy (NULL, or what an earlier start of the same call left there,
 * reused): a copy of the receive buffer that an in-place MPI_Alltoallw
 * sends from instead on MPICH before 4.1, whose in-place MPI_Ialltoallw
 * sizes each member's block by another member's type
 * (pmodels/mpich#6404); the caller frees it once *req has completed,
 * and never while the MPI may still read it. */
int ftp_coll_start(const struct coll_args *a, MPI_Comm comm, MPI_Request *req, void **copy);

#endif
