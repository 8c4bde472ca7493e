/* cart.c: Cartesian topologies on a replicated communicator (state.h
 * says why its real communicator cannot carry them): MPI_Cart_create and
 * MPI_Cart_sub split it (comm.c), the new communicator keeps the
 * topology (struct ftp_repl_topo, state.h), and the queries are
 * answered from it. The wrappers call the ftp_repl_MPI_Cart* forms;
 * state.c makes a topology (ftp_repl_cart_new), which comm.c copies with
 * a communicator. Application thread. */
#include "ftshim_config.h"

#include <stdlib.h>

#include "pmpi/mode/replication/cart.h"
#include "pmpi/mode/replication/comm.h"
#include "pmpi/hangwatch.h"

/* ftp_repl_program_error, returned through the call's post (the
 * replicated forms return to the program themselves). */
static int comm_error(struct ftp_call *c, int code)
{
	return ftp_post_plain(c, ftp_repl_program_error(c, code));
}

/* The same, in a creation (ftp_repl_creation began the hang watch). */
static int creation_error(struct ftp_call *c, int code)
{
	ftp_hang_watch_end();
	return comm_error(c, code);
}

/* e's Cartesian topology, or NULL. */
static const struct ftp_repl_topo *cart_of(const struct ftp_comm *e)
{
	const struct ftp_repl_topo *t = ftp_repl_of(e)->topo;

	return t && t->kind == MPI_CART ? t : NULL;
}

static struct ftp_repl_topo *cart_new(int ndims, const int *dims, const int *periods)
{
	struct ftp_repl_topo *t = ftp_repl_topo_new(MPI_CART, ndims, 0, false, 2 * (size_t)ndims);

	for (int i = 0; t && i < ndims; i++) {
		t->v[i] = dims[i];
		t->v[ndims + i] = periods[i] != 0;
	}
	return t;
}

/* The processes a grid of ndims dims spans, if they are valid for a
 * communicator of size ranks: MPI_SUCCESS, or MPI_ERR_DIMS. */
static int grid_span(int ndims, const int dims[], uint32_t size, int64_t *n)
{
	*n = 1;
	if (ndims < 0 || (ndims > 0 && !dims))
		return MPI_ERR_DIMS;
	for (int i = 0; i < ndims; i++) {
		if (dims[i] <= 0)
			return MPI_ERR_DIMS;
		*n *= dims[i];
		if (*n > size)
			return MPI_ERR_DIMS;
	}
	return MPI_SUCCESS;
}

static void cart_coords_of(const struct ftp_repl_topo *t, int rank, int maxdims, int coords[])
{
	for (int i = t->n - 1; i >= 0; i--) {
		if (i < maxdims)
			coords[i] = rank % t->v[i];
		rank /= t->v[i];
	}
}

/* The rank at coords, periodic dimensions wrapped; -1 if a coordinate is
 * out of range in a dimension that is not periodic. */
static int cart_rank_at(const struct ftp_repl_topo *t, const int coords[])
{
	int rank = 0;

	for (int i = 0; i < t->n; i++) {
		int d = t->v[i], k = coords[i];
		if (t->v[t->n + i])
			k = ((k % d) + d) % d;
		else if (k < 0 || k >= d)
			return -1;
		rank = rank * d + k;
	}
	return rank;
}

int ftp_repl_MPI_Cart_create(struct ftp_call *c, int ndims, const int dims[], const int periods[],
			     int reorder, MPI_Comm *comm_cart)
{
	(void)reorder;
	int64_t n;
	int rc = grid_span(ndims, dims, ftp_repl_of(c->comm)->size, &n);

	if (rc == MPI_SUCCESS && ndims > 0 && !periods)
		rc = MPI_ERR_DIMS;
	if (rc != MPI_SUCCESS)
		return creation_error(c, rc);
	int me = ftp_repl_my_rank_in(c->comm);
	struct ftp_repl_topo *t = me < n ? cart_new(ndims, dims, periods) : NULL;
	if (me < n && !t)
		return creation_error(c, MPI_ERR_NO_MEM);
	return ftp_repl_split_as(c, me < n ? 0 : MPI_UNDEFINED, me, t, comm_cart);
}

int ftp_repl_MPI_Cart_sub(struct ftp_call *c, const int remain_dims[], MPI_Comm *newcomm)
{
	const struct ftp_repl_topo *t = cart_of(c->comm);

	if (!t)
		return creation_error(c, MPI_ERR_TOPOLOGY);
	int nd = t->n, kept = 0, coords[nd + 1], dims[nd + 1], periods[nd + 1];
	int color = 0, key = 0;
	cart_coords_of(t, ftp_repl_my_rank_in(c->comm), nd, coords);
	for (int i = 0; i < nd; i++) {
		if (remain_dims[i]) {
			key = key * t->v[i] + coords[i];
			dims[kept] = t->v[i];
			periods[kept++] = t->v[nd + i];
		} else {
			color = color * t->v[i] + coords[i];
		}
	}
	struct ftp_repl_topo *sub = cart_new(kept, dims, periods);
	if (!sub)
		return creation_error(c, MPI_ERR_NO_MEM);
	return ftp_repl_split_as(c, color, key, sub, newcomm);
}

int ftp_repl_MPI_Cart_get(struct ftp_call *c, int maxdims, int dims[], int periods[], int coords[])
{
	const struct ftp_repl_topo *t = cart_of(c->comm);

	if (!t)
		return comm_error(c, MPI_ERR_TOPOLOGY);
	for (int i = 0; i < t->n && i < maxdims; i++) {
		dims[i] = t->v[i];
		periods[i] = t->v[t->n + i];
	}
	cart_coords_of(t, ftp_repl_my_rank_in(c->comm), maxdims, coords);
	return ftp_post_plain(c, MPI_SUCCESS);
}

int ftp_repl_MPI_Cart_rank(struct ftp_call *c, const int coords[], int *rank)
{
	const struct ftp_repl_topo *t = cart_of(c->comm);

	if (!t)
		return comm_error(c, MPI_ERR_TOPOLOGY);
	int r = cart_rank_at(t, coords);
	if (r < 0)
		return comm_error(c, MPI_ERR_ARG);
	*rank = r;
	return ftp_post_plain(c, MPI_SUCCESS);
}

int ftp_repl_MPI_Cart_coords(struct ftp_call *c, int rank, int maxdims, int coords[])
{
	const struct ftp_repl_topo *t = cart_of(c->comm);

	if (!t)
		return comm_error(c, MPI_ERR_TOPOLOGY);
	int64_t n;
	grid_span(t->n, t->v, UINT32_MAX, &n);
	if (rank < 0 || rank >= n)
		return comm_error(c, MPI_ERR_RANK);
	cart_coords_of(t, rank, maxdims, coords);
	return ftp_post_plain(c, MPI_SUCCESS);
}

int ftp_repl_MPI_Cart_shift(struct ftp_call *c, int direction, int disp, int *rank_source,
			    int *rank_dest)
{
	const struct ftp_repl_topo *t = cart_of(c->comm);

	if (!t)
		return comm_error(c, MPI_ERR_TOPOLOGY);
	if (direction < 0 || direction >= t->n)
		return comm_error(c, MPI_ERR_ARG);
	int coords[t->n + 1];
	cart_coords_of(t, ftp_repl_my_rank_in(c->comm), t->n, coords);
	int here = coords[direction], r;
	coords[direction] = here - disp;
	r = cart_rank_at(t, coords);
	*rank_source = r < 0 ? MPI_PROC_NULL : r;
	coords[direction] = here + disp;
	r = cart_rank_at(t, coords);
	*rank_dest = r < 0 ? MPI_PROC_NULL : r;
	return ftp_post_plain(c, MPI_SUCCESS);
}

int ftp_repl_MPI_Cart_map(struct ftp_call *c, int ndims, const int dims[], const int periods[],
			  int *newrank)
{
	(void)periods;
	int64_t n;
	int rc = grid_span(ndims, dims, ftp_repl_of(c->comm)->size, &n);

	if (rc != MPI_SUCCESS)
		return comm_error(c, rc);
	int me = ftp_repl_my_rank_in(c->comm);
	*newrank = me < n ? me : MPI_UNDEFINED;
	return ftp_post_plain(c, MPI_SUCCESS);
}

int ftp_repl_MPI_Cartdim_get(struct ftp_call *c, int *ndims)
{
	const struct ftp_repl_topo *t = cart_of(c->comm);

	if (!t)
		return comm_error(c, MPI_ERR_TOPOLOGY);
	*ndims = t->n;
	return ftp_post_plain(c, MPI_SUCCESS);
}

int ftp_repl_MPI_Topo_test(struct ftp_call *c, int *status)
{
	const struct ftp_repl_topo *t = ftp_repl_of(c->comm)->topo;

	*status = t ? t->kind : MPI_UNDEFINED;
	return ftp_post_plain(c, MPI_SUCCESS);
}
