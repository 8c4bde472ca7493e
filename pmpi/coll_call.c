/* coll_call.c: starting a collective call, as the program gave it
 * (struct coll_args), as its nonblocking form on one of the MPI's
 * communicators (see coll_call.h). Application thread. */
#include "ftshim_config.h"

#include "pmpi/coll_call.h"
#include "pmpi/mpi_lib.h"
#include "pmpi/state.h"

#include <stdlib.h>
#include <string.h>

/* MPICH before 4.1: the in-place MPI_Ialltoallw of pmodels/mpich#6404. */
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40100000
#define W_IN_PLACE_BROKEN 1
#else
#define W_IN_PLACE_BROKEN 0
#endif

/* An in-place MPI_Alltoallw as a plain one whose send buffer is a copy
 * of the receive buffer (*copy). */
static int alltoallw_from_copy(const struct coll_args *a, MPI_Comm comm, MPI_Request *req,
			       void **copy)
{
	int n = 0, rc = ftp_mpi.PMPI_Comm_size(comm, &n);
	int64_t span = rc == MPI_SUCCESS ? ftp_coll_w_span(a->rcounts, a->rdispls, a->rtypes, n) : 0;

	if (rc != MPI_SUCCESS || span < 0)
		return rc != MPI_SUCCESS ? rc : MPI_ERR_TYPE;
	if (!*copy && !(*copy = malloc(span > 0 ? (size_t)span : 1)))
		return MPI_ERR_NO_MEM;
	memcpy(*copy, a->rbuf, (size_t)span);
	return ftp_mpi.PMPI_Ialltoallw(*copy, a->rcounts, a->rdispls, a->rtypes, a->rbuf, a->rcounts,
				       a->rdispls, a->rtypes, comm, req);
}

int ftp_coll_start(const struct coll_args *a, MPI_Comm comm, MPI_Request *req, void **copy)
{
	switch (a->fn) {
	case FTP_FN_MPI_Barrier:
		return ftp_mpi.PMPI_Ibarrier(comm, req);
	case FTP_FN_MPI_Bcast:
		return ftp_mpi.PMPI_Ibcast(a->rbuf, a->rcount, a->rtype, a->root, comm, req);
	case FTP_FN_MPI_Reduce:
		return ftp_mpi.PMPI_Ireduce(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->root, comm,
					    req);
	case FTP_FN_MPI_Allreduce:
		return ftp_mpi.PMPI_Iallreduce(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, comm, req);
	case FTP_FN_MPI_Scan:
		return ftp_mpi.PMPI_Iscan(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, comm, req);
	case FTP_FN_MPI_Exscan:
		return ftp_mpi.PMPI_Iexscan(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, comm, req);
	case FTP_FN_MPI_Reduce_scatter_block:
		return ftp_mpi.PMPI_Ireduce_scatter_block(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op,
							  comm, req);
	case FTP_FN_MPI_Reduce_scatter:
		return ftp_mpi.PMPI_Ireduce_scatter(a->sbuf, a->rbuf, a->rcounts, a->rtype, a->op, comm,
						    req);
	case FTP_FN_MPI_Gather:
		return ftp_mpi.PMPI_Igather(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype,
					    a->root, comm, req);
	case FTP_FN_MPI_Gatherv:
		return ftp_mpi.PMPI_Igatherv(a->sbuf, a->scount, a->stype, a->rbuf, a->rcounts,
					     a->rdispls, a->rtype, a->root, comm, req);
	case FTP_FN_MPI_Scatter:
		return ftp_mpi.PMPI_Iscatter(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype,
					     a->root, comm, req);
	case FTP_FN_MPI_Scatterv:
		return ftp_mpi.PMPI_Iscatterv(a->sbuf, a->scounts, a->sdispls, a->stype, a->rbuf,
					      a->rcount, a->rtype, a->root, comm, req);
	case FTP_FN_MPI_Allgather:
		return ftp_mpi.PMPI_Iallgather(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount,
					       a->rtype, comm, req);
	case FTP_FN_MPI_Allgatherv:
		return ftp_mpi.PMPI_Iallgatherv(a->sbuf, a->scount, a->stype, a->rbuf, a->rcounts,
						a->rdispls, a->rtype, comm, req);
	case FTP_FN_MPI_Alltoall:
		return ftp_mpi.PMPI_Ialltoall(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount,
					      a->rtype, comm, req);
	case FTP_FN_MPI_Alltoallv:
		return ftp_mpi.PMPI_Ialltoallv(a->sbuf, a->scounts, a->sdispls, a->stype, a->rbuf,
					       a->rcounts, a->rdispls, a->rtype, comm, req);
	case FTP_FN_MPI_Alltoallw:
		if (W_IN_PLACE_BROKEN && a->sbuf == MPI_IN_PLACE)
			return alltoallw_from_copy(a, comm, req, copy);
		return ftp_mpi.PMPI_Ialltoallw(a->sbuf, a->scounts, a->sdispls, a->stypes, a->rbuf,
					       a->rcounts, a->rdispls, a->rtypes, comm, req);
	default:
		return MPI_ERR_INTERN;
	}
}

int64_t ftp_coll_w_span(const int *counts, const int *displs, const MPI_Datatype *types, int n)
{
	int64_t end = 0;

	for (int i = 0; counts && displs && types && i < n; i++) {
		MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
		if (counts[i] <= 0)
			continue;
		if (ftp_mpi.PMPI_Type_get_extent(types[i], &lb, &extent) != MPI_SUCCESS ||
		    ftp_mpi.PMPI_Type_get_true_extent(types[i], &tlb, &textent) != MPI_SUCCESS)
			return -1;
		int64_t e = (int64_t)displs[i] + tlb + (int64_t)(counts[i] - 1) * extent + textent;
		if (e > end)
			end = e;
	}
	return end;
}

/* Whether a type is one the program made (not named, not null). */
static bool type_own(MPI_Datatype t)
{
	int ni = 0, na = 0, nt = 0, combiner = MPI_COMBINER_NAMED;

	return t != MPI_DATATYPE_NULL &&
	       ftp_mpi.PMPI_Type_get_envelope(t, &ni, &na, &nt, &combiner) == MPI_SUCCESS &&
	       combiner != MPI_COMBINER_NAMED;
}

int ftp_type_keep(MPI_Datatype t, MPI_Datatype *kept)
{
	*kept = t;
	return type_own(t) ? ftp_mpi.PMPI_Type_dup(t, kept) : MPI_SUCCESS;
}

void ftp_type_drop(MPI_Datatype *t)
{
	if (ftp_active() && type_own(*t))
		ftp_mpi.PMPI_Type_free(t);
	*t = MPI_DATATYPE_NULL;
}

static const int *keep_ints(const int *from, int n, int **to)
{
	if (!from)
		return NULL;
	memcpy(*to, from, (size_t)n * sizeof **to);
	*to += n;
	return *to - n;
}

int ftp_coll_keep(struct coll_kept *k, const struct coll_args *a, int n, int me)
{
	bool rooted = a->fn == FTP_FN_MPI_Gatherv || a->fn == FTP_FN_MPI_Scatterv;
	bool arrays = !rooted || me == a->root || a->root == MPI_ROOT;
	int nw = a->stypes || a->rtypes ? n : 0;

	*k = (struct coll_kept){.a = *a};
	/* In place, an all-to-all's send arrays are ignored (and may point
	 * anywhere). */
	if (a->sbuf == MPI_IN_PLACE &&
	    (a->fn == FTP_FN_MPI_Alltoallv || a->fn == FTP_FN_MPI_Alltoallw)) {
		k->a.scounts = k->a.sdispls = NULL;
		k->a.stypes = NULL;
		a = &k->a;
	}
	k->arrays = malloc(4 * (size_t)(n > 0 ? n : 1) * sizeof *k->arrays);
	k->types = malloc((2 + 2 * (size_t)nw) * sizeof *k->types);
	if (!k->arrays || !k->types) {
		ftp_coll_kept_free(k);
		return MPI_ERR_NO_MEM;
	}
	int *at = k->arrays;
	k->a.scounts = arrays ? keep_ints(a->scounts, n, &at) : NULL;
	k->a.sdispls = arrays ? keep_ints(a->sdispls, n, &at) : NULL;
	k->a.rcounts = arrays ? keep_ints(a->rcounts, n, &at) : NULL;
	k->a.rdispls = arrays ? keep_ints(a->rdispls, n, &at) : NULL;
	/* Every type in one array: stype, rtype, stypes[], rtypes[]; then
	 * each replaced by its kept form. */
	MPI_Datatype *t = k->types;
	int total = 2 + 2 * nw, rc = MPI_SUCCESS;
	t[0] = a->stype;
	t[1] = a->rtype;
	for (int i = 0; i < nw; i++) {
		t[2 + i] = a->stypes ? a->stypes[i] : MPI_DATATYPE_NULL;
		t[2 + nw + i] = a->rtypes ? a->rtypes[i] : MPI_DATATYPE_NULL;
	}
	for (k->ntypes = 0; k->ntypes < total; k->ntypes++)
		if ((rc = ftp_type_keep(t[k->ntypes], &t[k->ntypes])) != MPI_SUCCESS)
			break;
	if (rc != MPI_SUCCESS) {
		ftp_coll_kept_free(k); /* the ones before the one that failed */
		return rc;
	}
	k->a.stype = t[0];
	k->a.rtype = t[1];
	k->a.stypes = a->stypes && nw ? t + 2 : NULL;
	k->a.rtypes = a->rtypes && nw ? t + 2 + nw : NULL;
	return MPI_SUCCESS;
}

void ftp_coll_kept_free(struct coll_kept *k)
{
	for (int i = 0; k->types && i < k->ntypes; i++)
		ftp_type_drop(&k->types[i]);
	free(k->types);
	free(k->arrays);
	*k = (struct coll_kept){0};
}
