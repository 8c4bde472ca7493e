/* call.h: the call policy. Every generated wrapper (wrappers.c) has the
 * same shape,
 *
 *     struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_X);
 *     int rc = ftp_pre_CLASS(&c, comm);
 *     if (rc == MPI_SUCCESS)
 *             rc = PMPI_X(..., c.real, ...);
 *     return ftp_post_CLASS(&c, rc, ...);
 *
 * and all that differs between classes of functions lives here, reviewed
 * once. The classes are those of pmpi/ftshim-api.tsv. */
#ifndef FTSHIM_PMPI_CALL_H
#define FTSHIM_PMPI_CALL_H

#include <mpi.h>

#include "pmpi/comm_lookup.h"
#include "pmpi/fn_table.h"
#include "pmpi/ftp.h"
#include "src/common.h"

/* The generated file wraps deprecated functions too (MPI_Attr_get, ...). */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

struct ftp_call {
	enum ftp_fn fn;        /* which function this call is */
	struct ftp_comm *comm; /* the call's communicator, if ftshim tracks it */
	MPI_Comm real;         /* the communicator to hand to PMPI */
};

#define FTP_CALL_INIT(f) { .fn = (f), .comm = NULL }

/* The seam: resolve the application's handle once per call. */
static inline void ftp_resolve(struct ftp_call *c, MPI_Comm comm)
{
	c->comm = ftp_active() ? ftp_comm_lookup(comm) : NULL;
	c->real = c->comm ? c->comm->real : comm;
}

/* For a call's second communicator (MPI_Comm_compare, the peer of
 * MPI_Intercomm_create). */
static inline MPI_Comm ftp_comm_real(MPI_Comm comm)
{
	struct ftp_comm *e = ftp_active() ? ftp_comm_lookup(comm) : NULL;

	return e ? e->real : comm;
}

/* Classes that name a communicator: resolve it. The failure checks of each
 * class (peer failed, communicator revoked, ...) go here. */
static inline int ftp_pre_comm(struct ftp_call *c, MPI_Comm comm)
{
	ftp_resolve(c, comm);
	return MPI_SUCCESS;
}

#define ftp_pre_local ftp_pre_comm
#define ftp_pre_p2p ftp_pre_comm
#define ftp_pre_ip2p ftp_pre_comm
#define ftp_pre_coll ftp_pre_comm
#define ftp_pre_icoll ftp_pre_comm
#define ftp_pre_create ftp_pre_comm
#define ftp_pre_dup ftp_pre_comm
#define ftp_pre_create_group ftp_pre_comm
#define ftp_pre_create_inter ftp_pre_comm
#define ftp_pre_free ftp_pre_comm

/* Classes without a communicator. */
static inline int ftp_pre_nocomm(struct ftp_call *c)
{
	(void)c;
	return MPI_SUCCESS;
}

#define ftp_pre_msg ftp_pre_nocomm
#define ftp_pre_req ftp_pre_nocomm

/* After every wrapped call: count it if a call trigger of FTSHIM_INJECT
 * is armed in this rank (one relaxed load otherwise). */
static inline void ftp_post_common(struct ftp_call *c)
{
	if (atomic_load_explicit(&ftp_inject_counting, memory_order_relaxed))
		ftp_inject_after_call(c->fn);
}

/* After the call: error translation and the error handler go here. */
static inline int ftp_post_plain(struct ftp_call *c, int rc)
{
	ftp_post_common(c);
	return rc;
}

#define ftp_post_local ftp_post_plain
#define ftp_post_p2p ftp_post_plain
#define ftp_post_ip2p ftp_post_plain
#define ftp_post_coll ftp_post_plain
#define ftp_post_icoll ftp_post_plain
#define ftp_post_msg ftp_post_plain
#define ftp_post_req ftp_post_plain

/* Communicator creation and release (pmpi/comms.c): register the new
 * communicator under its job-wide id, or forget the freed one. */
int ftp_post_create(struct ftp_call *c, int rc, MPI_Comm *newcomm);
int ftp_post_dup(struct ftp_call *c, int rc, MPI_Comm *newcomm);
int ftp_post_create_group(struct ftp_call *c, int rc, MPI_Group group, int tag, MPI_Comm *newcomm);
int ftp_post_create_inter(struct ftp_call *c, int rc, int tag, MPI_Comm *newintercomm);
int ftp_post_free(struct ftp_call *c, int rc, MPI_Comm *comm);

#endif
