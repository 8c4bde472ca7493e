/* coll_args.c: a collective call's arguments as the program gave them
 * (struct coll_args): the regions this process's copy reads and writes
 * (coll.c and coll_log.c keep its input, team.c its output) and their
 * bytes. Application thread. */
#include "ftshim_config.h"

#include "pmpi/mode/replication/coll_args.h"

/* The elements a v-collective's buffer spans. */
static int64_t v_span(const int *counts, const int *displs, int n)
{
	int64_t end = 0;

	for (int i = 0; counts && displs && i < n; i++)
		if (counts[i] > 0 && (int64_t)displs[i] + counts[i] > end)
			end = (int64_t)displs[i] + counts[i];
	return end;
}

static int64_t sum_of(const int *counts, int n)
{
	int64_t sum = 0;

	for (int i = 0; counts && i < n; i++)
		sum += counts[i];
	return sum;
}

/* What this process gives a collective (in) and where its result lands
 * (out). */
void ftp_repl_coll_spans(const struct ftp_comm *e, const struct coll_args *a, struct coll_span *in,
			 struct coll_span *out)
{
	int n = ftp_repl_coll_size(e), me = ftp_repl_my_rank_in(e);
	bool root = me == a->root, in_place = a->sbuf == MPI_IN_PLACE;
	struct coll_span none = {.buf = NULL, .count = 0, .type = MPI_DATATYPE_NULL};

	*in = *out = none;
	switch (a->fn) {
	case FTP_FN_MPI_Bcast:
		*out = (struct coll_span){a->rbuf, a->rcount, a->rtype};
		if (root)
			*in = *out;
		break;
	case FTP_FN_MPI_Reduce:
	case FTP_FN_MPI_Allreduce:
	case FTP_FN_MPI_Scan:
	case FTP_FN_MPI_Exscan:
		*out = (struct coll_span){a->rbuf, a->rcount, a->rtype};
		*in = (struct coll_span){in_place ? a->rbuf : a->sbuf, a->rcount, a->rtype};
		break;
	case FTP_FN_MPI_Reduce_scatter_block:
		*out = (struct coll_span){a->rbuf, a->rcount, a->rtype};
		*in = (struct coll_span){in_place ? a->rbuf : a->sbuf, (int64_t)a->rcount * n, a->rtype};
		break;
	case FTP_FN_MPI_Reduce_scatter:
		*out = (struct coll_span){a->rbuf, a->rcounts[me], a->rtype};
		*in = (struct coll_span){in_place ? a->rbuf : a->sbuf, sum_of(a->rcounts, n), a->rtype};
		break;
	case FTP_FN_MPI_Gather:
	case FTP_FN_MPI_Allgather:
		if (root || a->fn == FTP_FN_MPI_Allgather)
			*out = (struct coll_span){a->rbuf, (int64_t)a->rcount * n, a->rtype};
		*in = in_place ? *out : (struct coll_span){a->sbuf, a->scount, a->stype};
		break;
	case FTP_FN_MPI_Gatherv:
	case FTP_FN_MPI_Allgatherv:
		if (root || a->fn == FTP_FN_MPI_Allgatherv)
			*out = (struct coll_span){a->rbuf, v_span(a->rcounts, a->rdispls, n), a->rtype};
		*in = in_place ? *out : (struct coll_span){a->sbuf, a->scount, a->stype};
		break;
	case FTP_FN_MPI_Scatter:
		if (a->rbuf != MPI_IN_PLACE)
			*out = (struct coll_span){a->rbuf, a->rcount, a->rtype};
		if (root)
			*in = (struct coll_span){a->sbuf, (int64_t)a->scount * n, a->stype};
		break;
	case FTP_FN_MPI_Scatterv:
		if (a->rbuf != MPI_IN_PLACE)
			*out = (struct coll_span){a->rbuf, a->rcount, a->rtype};
		if (root)
			*in = (struct coll_span){a->sbuf, v_span(a->scounts, a->sdispls, n), a->stype};
		break;
	case FTP_FN_MPI_Alltoall:
		*out = (struct coll_span){a->rbuf, (int64_t)a->rcount * n, a->rtype};
		*in = in_place ? *out : (struct coll_span){a->sbuf, (int64_t)a->scount * n, a->stype};
		break;
	case FTP_FN_MPI_Alltoallv:
		*out = (struct coll_span){a->rbuf, v_span(a->rcounts, a->rdispls, n), a->rtype};
		*in = in_place ? *out
			       : (struct coll_span){a->sbuf, v_span(a->scounts, a->sdispls, n), a->stype};
		break;
	case FTP_FN_MPI_Alltoallw:
		/* Blocks of several types at byte displacements: the bytes
		 * they span. */
		*out = (struct coll_span){a->rbuf, ftp_coll_w_span(a->rcounts, a->rdispls, a->rtypes, n),
					  MPI_BYTE};
		*in = in_place ? *out
			       : (struct coll_span){a->sbuf,
						    ftp_coll_w_span(a->scounts, a->sdispls, a->stypes, n),
						    MPI_BYTE};
		break;
	default:
		break;
	}
}

/* The bytes count elements of type span from buf, from *lb on. */
size_t ftp_repl_bytes_of(MPI_Datatype type, int64_t count, MPI_Aint *lb)
{
	MPI_Aint tlb = 0, text = 0, elb = 0, ext = 0;

	*lb = 0;
	if (count <= 0 || type == MPI_DATATYPE_NULL ||
	    ftp_mpi.PMPI_Type_get_true_extent(type, &tlb, &text) != MPI_SUCCESS ||
	    ftp_mpi.PMPI_Type_get_extent(type, &elb, &ext) != MPI_SUCCESS)
		return 0;
	*lb = tlb;
	return (size_t)((count - 1) * ext + text);
}
