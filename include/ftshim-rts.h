/* ftshim-rts.h (ftshim): a compatibility layer for programs written
 * against the run-through stabilization interface that the MPI Forum's
 * fault tolerance working group proposed before ULFM (Hursey and Graham,
 * "Building a Fault Tolerant MPI Application: A Ring Communication
 * Example", 2011). No MPI offers it; ftshim provides it on a stock MPI,
 * on top of the same failure knowledge as its ULFM calls (mpi-ext.h).
 * The names are in the MPI_ namespace because they are the proposal's,
 * not because any MPI standard defines them. New programs should use
 * the ULFM calls; ftshim-rts(3) says how each call maps onto them.
 *
 * Put this directory first on the include path (-I PREFIX/include/ftshim,
 * or `pkg-config --cflags ftshim-mpich`, or ftshim-openmpi). As in
 * mpi-ext.h, the functions are declared weak and live in the preloaded
 * libftshim.so: a program links with the MPI's mpicc alone, and without
 * the shim a function is NULL (test `if (MPI_Comm_validate_all)`). */
#ifndef FTSHIM_RTS_H
#define FTSHIM_RTS_H

#include <mpi.h>

#include "mpi-ext.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FTSHIM_HAVE_RTS 1

/* A process's state on one communicator, as this process sees it. */
enum {
	MPI_RANK_OK = 0,     /* running normally */
	MPI_RANK_FAILED = 1, /* failed, not yet recognized here */
	MPI_RANK_NULL = 2    /* failed and recognized: acts as MPI_PROC_NULL */
};

typedef struct MPI_Rank_info {
	int rank;       /* the rank in the communicator */
	int generation; /* the process's incarnation: always 0 (no process comes back) */
	int state;      /* MPI_RANK_OK, MPI_RANK_FAILED or MPI_RANK_NULL */
} MPI_Rank_info;

/* The error class of an operation that involves a failed process: the
 * class of ULFM's MPIX_ERR_PROC_FAILED, so a program may test either. */
#ifndef MPI_ERR_RANK_FAIL_STOP
#define MPI_ERR_RANK_FAIL_STOP MPIX_ERR_PROC_FAILED
#endif

/* Local: the state of one rank of comm. */
FTSHIM_WEAK int MPI_Comm_validate_rank(MPI_Comm comm, int rank, MPI_Rank_info *rank_info);
/* Local: the failed ranks of comm, recognized or not, in rank order; the
 * first incount go to rank_infos, and *outcount is how many there are. */
FTSHIM_WEAK int MPI_Comm_validate(MPI_Comm comm, int incount, int *outcount,
				  MPI_Rank_info rank_infos[]);
/* Local: recognize the failures of the count ranks named by
 * rank_infos[i].rank on comm (each must have failed): point-to-point
 * with them then acts as with MPI_PROC_NULL. */
FTSHIM_WEAK int MPI_Comm_validate_clear(MPI_Comm comm, int count, MPI_Rank_info rank_infos[]);
/* Collective: agree with every live member on comm's failures, recognize
 * them all, and enable collectives again, in which the failed ranks take
 * no part. *outcount: the number of failed ranks, the same everywhere
 * (or the same error everywhere). */
FTSHIM_WEAK int MPI_Comm_validate_all(MPI_Comm comm, int *outcount);
/* The same, nonblocking: *outcount is written when *request completes. */
FTSHIM_WEAK int MPI_Icomm_validate_all(MPI_Comm comm, int *outcount, MPI_Request *request);

#ifdef __cplusplus
}
#endif

#endif
