/* graph.h: graph and distributed-graph topologies on a replicated
 * communicator (graph.c). */
#ifndef FTSHIM_PMPI_MODE_REPLICATION_GRAPH_H
#define FTSHIM_PMPI_MODE_REPLICATION_GRAPH_H

#include "pmpi/mode/replication/state.h"

/* The replicated forms of the calls (ftp_repl_calls lists them), each
 * returning through the call's post. */
int ftp_repl_MPI_Graph_create(struct ftp_call *c, int nnodes, const int index[], const int edges[],
			      int reorder, MPI_Comm *comm_graph);
int ftp_repl_MPI_Graphdims_get(struct ftp_call *c, int *nnodes, int *nedges);
int ftp_repl_MPI_Graph_get(struct ftp_call *c, int maxindex, int maxedges, int index[], int edges[]);
int ftp_repl_MPI_Graph_neighbors_count(struct ftp_call *c, int rank, int *nneighbors);
int ftp_repl_MPI_Graph_neighbors(struct ftp_call *c, int rank, int maxneighbors, int neighbors[]);
int ftp_repl_MPI_Graph_map(struct ftp_call *c, int nnodes, const int index[], const int edges[],
			   int *newrank);
int ftp_repl_MPI_Dist_graph_create_adjacent(struct ftp_call *c, int indegree, const int sources[],
					    const int sourceweights[], int outdegree,
					    const int destinations[], const int destweights[],
					    MPI_Info info, int reorder, MPI_Comm *comm_dist_graph);
int ftp_repl_MPI_Dist_graph_neighbors_count(struct ftp_call *c, int *indegree, int *outdegree,
					    int *weighted);
int ftp_repl_MPI_Dist_graph_neighbors(struct ftp_call *c, int maxindegree, int sources[],
				      int sourceweights[], int maxoutdegree, int destinations[],
				      int destweights[]);

#endif
