/* cart.h: Cartesian topologies on a replicated communicator (cart.c). */
#ifndef FTSHIM_PMPI_MODE_REPLICATION_CART_H
#define FTSHIM_PMPI_MODE_REPLICATION_CART_H

#include "pmpi/mode/replication/state.h"

/* Cartesian topologies on a replicated communicator. The real
 * communicator holds every copy, so it cannot carry the program's
 * topology: MPI_Cart_create and MPI_Cart_sub split it (keeping the
 * program's ranks: reorder is not acted on, as MPI allows), the new
 * communicator keeps the topology (struct ftp_repl_comm.topo, kept by
 * MPI_Comm_dup), and the queries are answered from it, in the MPI's
 * row-major numbering. */
int ftp_repl_MPI_Cart_create(struct ftp_call *c, int ndims, const int dims[], const int periods[],
			     int reorder, MPI_Comm *comm_cart);
int ftp_repl_MPI_Cart_sub(struct ftp_call *c, const int remain_dims[], MPI_Comm *newcomm);
int ftp_repl_MPI_Cart_get(struct ftp_call *c, int maxdims, int dims[], int periods[], int coords[]);
int ftp_repl_MPI_Cart_rank(struct ftp_call *c, const int coords[], int *rank);
int ftp_repl_MPI_Cart_coords(struct ftp_call *c, int rank, int maxdims, int coords[]);
int ftp_repl_MPI_Cart_shift(struct ftp_call *c, int direction, int disp, int *rank_source,
			    int *rank_dest);
int ftp_repl_MPI_Cart_map(struct ftp_call *c, int ndims, const int dims[], const int periods[],
			  int *newrank);
int ftp_repl_MPI_Cartdim_get(struct ftp_call *c, int *ndims);
int ftp_repl_MPI_Topo_test(struct ftp_call *c, int *status);

#endif
