/* graph.c: graph and distributed-graph topologies on a replicated
 * communicator, as cart.c does Cartesian ones: the real communicator
 * holds every copy, so MPI_Graph_create and
 * MPI_Dist_graph_create_adjacent split it (keeping the program's ranks:
 * reorder is not acted on, as MPI allows), the new communicator keeps the
 * topology (struct ftp_repl_topo, state.h; MPI_Comm_dup copies it), and
 * the queries are answered from it. MPI_Dist_graph_create, whose
 * adjacency takes an exchange among the members, stays refused, as do the
 * neighbourhood collectives. Application thread. */
#include "ftshim_config.h"

#include <string.h>

#include "pmpi/mode/replication/graph.h"
#include "pmpi/mode/replication/comm.h"
#include "pmpi/hangwatch.h"

/* ftp_repl_program_error, returned through the call's post. */
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

/* e's topology if it is of kind, else NULL. */
static const struct ftp_repl_topo *topo_of(const struct ftp_comm *e, int kind)
{
	const struct ftp_repl_topo *t = ftp_repl_of(e)->topo;

	return t && t->kind == kind ? t : NULL;
}

/* Whether a graph of nnodes (index, edges) is valid on size ranks. */
static bool graph_valid(int nnodes, const int index[], const int edges[], uint32_t size)
{
	if (nnodes < 0 || (uint32_t)nnodes > size || (nnodes > 0 && (!index || !edges)))
		return false;
	for (int i = 0; i < nnodes; i++)
		if (index[i] < (i ? index[i - 1] : 0))
			return false;
	for (int k = 0; nnodes > 0 && k < index[nnodes - 1]; k++)
		if (edges[k] < 0 || edges[k] >= nnodes)
			return false;
	return true;
}

int ftp_repl_MPI_Graph_create(struct ftp_call *c, int nnodes, const int index[], const int edges[],
			      int reorder, MPI_Comm *comm_graph)
{
	(void)reorder;
	if (!graph_valid(nnodes, index, edges, ftp_repl_of(c->comm)->size))
		return creation_error(c, MPI_ERR_TOPOLOGY);
	int me = ftp_repl_my_rank_in(c->comm), nedges = nnodes > 0 ? index[nnodes - 1] : 0;
	struct ftp_repl_topo *t = me < nnodes ? ftp_repl_topo_new(MPI_GRAPH, nnodes, nedges, false,
								  (size_t)nnodes + (size_t)nedges)
					      : NULL;
	if (me < nnodes && !t)
		return creation_error(c, MPI_ERR_NO_MEM);
	if (t) {
		memcpy(t->v, index, (size_t)nnodes * sizeof *index);
		memcpy(t->v + nnodes, edges, (size_t)nedges * sizeof *edges);
	}
	return ftp_repl_split_as(c, me < nnodes ? 0 : MPI_UNDEFINED, me, t, comm_graph);
}

int ftp_repl_MPI_Graphdims_get(struct ftp_call *c, int *nnodes, int *nedges)
{
	const struct ftp_repl_topo *t = topo_of(c->comm, MPI_GRAPH);

	if (!t)
		return comm_error(c, MPI_ERR_TOPOLOGY);
	*nnodes = t->n;
	*nedges = t->m;
	return ftp_post_plain(c, MPI_SUCCESS);
}

int ftp_repl_MPI_Graph_get(struct ftp_call *c, int maxindex, int maxedges, int index[], int edges[])
{
	const struct ftp_repl_topo *t = topo_of(c->comm, MPI_GRAPH);

	if (!t)
		return comm_error(c, MPI_ERR_TOPOLOGY);
	for (int i = 0; i < t->n && i < maxindex; i++)
		index[i] = t->v[i];
	for (int k = 0; k < t->m && k < maxedges; k++)
		edges[k] = t->v[t->n + k];
	return ftp_post_plain(c, MPI_SUCCESS);
}

/* The neighbours of rank in graph t: *first, *count of t->v. */
static int graph_neighbors(const struct ftp_repl_topo *t, int rank, int *first, int *count)
{
	if (rank < 0 || rank >= t->n)
		return MPI_ERR_RANK;
	*first = t->n + (rank ? t->v[rank - 1] : 0);
	*count = t->v[rank] - (rank ? t->v[rank - 1] : 0);
	return MPI_SUCCESS;
}

int ftp_repl_MPI_Graph_neighbors_count(struct ftp_call *c, int rank, int *nneighbors)
{
	const struct ftp_repl_topo *t = topo_of(c->comm, MPI_GRAPH);
	int first = 0, rc = t ? graph_neighbors(t, rank, &first, nneighbors) : MPI_ERR_TOPOLOGY;

	return rc == MPI_SUCCESS ? ftp_post_plain(c, rc) : comm_error(c, rc);
}

int ftp_repl_MPI_Graph_neighbors(struct ftp_call *c, int rank, int maxneighbors, int neighbors[])
{
	const struct ftp_repl_topo *t = topo_of(c->comm, MPI_GRAPH);
	int first = 0, count = 0,
	    rc = t ? graph_neighbors(t, rank, &first, &count) : MPI_ERR_TOPOLOGY;

	if (rc != MPI_SUCCESS)
		return comm_error(c, rc);
	for (int k = 0; k < count && k < maxneighbors; k++)
		neighbors[k] = t->v[first + k];
	return ftp_post_plain(c, MPI_SUCCESS);
}

int ftp_repl_MPI_Graph_map(struct ftp_call *c, int nnodes, const int index[], const int edges[],
			   int *newrank)
{
	(void)index;
	(void)edges;
	if (nnodes < 0 || (uint32_t)nnodes > ftp_repl_of(c->comm)->size)
		return comm_error(c, MPI_ERR_ARG);
	int me = ftp_repl_my_rank_in(c->comm);
	*newrank = me < nnodes ? me : MPI_UNDEFINED;
	return ftp_post_plain(c, MPI_SUCCESS);
}

int ftp_repl_MPI_Dist_graph_create_adjacent(struct ftp_call *c, int indegree, const int sources[],
					    const int sourceweights[], int outdegree,
					    const int destinations[], const int destweights[],
					    MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
	(void)info;
	(void)reorder;
	uint32_t size = ftp_repl_of(c->comm)->size;
	bool weighted = sourceweights != MPI_UNWEIGHTED && destweights != MPI_UNWEIGHTED;

	if (indegree < 0 || outdegree < 0 || (indegree > 0 && !sources) ||
	    (outdegree > 0 && !destinations))
		return creation_error(c, MPI_ERR_ARG);
	for (int i = 0; i < indegree + outdegree; i++) {
		int r = i < indegree ? sources[i] : destinations[i - indegree];
		if (r < 0 || (uint32_t)r >= size)
			return creation_error(c, MPI_ERR_RANK);
	}
	/* MPI_WEIGHTS_EMPTY is weighted with no weights to read. */
	bool sw = weighted && indegree > 0 && sourceweights != MPI_WEIGHTS_EMPTY;
	bool dw = weighted && outdegree > 0 && destweights != MPI_WEIGHTS_EMPTY;
	size_t len = 2 * ((size_t)indegree + (size_t)outdegree);
	struct ftp_repl_topo *t =
	    ftp_repl_topo_new(MPI_DIST_GRAPH, indegree, outdegree, weighted, len);
	if (!t)
		return creation_error(c, MPI_ERR_NO_MEM);
	int *w = t->v + indegree + outdegree;
	for (int i = 0; i < indegree; i++) {
		t->v[i] = sources[i];
		w[i] = sw ? sourceweights[i] : 1;
	}
	for (int i = 0; i < outdegree; i++) {
		t->v[indegree + i] = destinations[i];
		w[indegree + i] = dw ? destweights[i] : 1;
	}
	return ftp_repl_split_as(c, 0, ftp_repl_my_rank_in(c->comm), t, comm_dist_graph);
}

int ftp_repl_MPI_Dist_graph_neighbors_count(struct ftp_call *c, int *indegree, int *outdegree,
					    int *weighted)
{
	const struct ftp_repl_topo *t = topo_of(c->comm, MPI_DIST_GRAPH);

	if (!t)
		return comm_error(c, MPI_ERR_TOPOLOGY);
	*indegree = t->n;
	*outdegree = t->m;
	*weighted = t->weighted;
	return ftp_post_plain(c, MPI_SUCCESS);
}

int ftp_repl_MPI_Dist_graph_neighbors(struct ftp_call *c, int maxindegree, int sources[],
				      int sourceweights[], int maxoutdegree, int destinations[],
				      int destweights[])
{
	const struct ftp_repl_topo *t = topo_of(c->comm, MPI_DIST_GRAPH);

	if (!t)
		return comm_error(c, MPI_ERR_TOPOLOGY);
	const int *w = t->v + t->n + t->m;
	bool sw =
	    t->weighted && sourceweights != MPI_UNWEIGHTED && sourceweights != MPI_WEIGHTS_EMPTY;
	bool dw = t->weighted && destweights != MPI_UNWEIGHTED && destweights != MPI_WEIGHTS_EMPTY;
	for (int i = 0; i < t->n && i < maxindegree; i++) {
		sources[i] = t->v[i];
		if (sw)
			sourceweights[i] = w[i];
	}
	for (int i = 0; i < t->m && i < maxoutdegree; i++) {
		destinations[i] = t->v[t->n + i];
		if (dw)
			destweights[i] = w[t->n + i];
	}
	return ftp_post_plain(c, MPI_SUCCESS);
}
