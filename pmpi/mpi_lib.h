/* mpi_lib.h: the MPI library below ftshim (mpi_lib.c). */
#ifndef FTSHIM_PMPI_MPI_LIB_H
#define FTSHIM_PMPI_MPI_LIB_H

#include <stdbool.h>

/* Find the MPI's entry points (ftp_mpi) if nobody has yet: the
 * library's constructor does, and so does every wrapper that another
 * library's constructor may call before it (MPI_Initialized,
 * MPI_Finalized, the MPI_Init forms). Any thread. */
void ftp_mpi_ready(void);

/* NULL if the program runs on the MPI this library was built for (or
 * nothing tells), else a name for the one it runs on: handles and
 * constants then mean other things to it, and the first call crashes. */
const char *ftp_mpi_foreign(void);

/* How many functions of mpi.h the MPI library does not export (ftp_mpi
 * has NULL for them). */
int ftp_mpi_entries_missing(void);

/* Whether a call returns to the MPI library's own code (return_address
 * is the caller's, __builtin_return_address(0) in the wrapper): the MPI
 * calling itself through its profiling names, as ROMIO does (MPICH).
 * Their test calls get the MPI's answer (pmpi/complete.c). */
bool ftp_called_by_mpi(const void *return_address);

/* One pass of the MPI's whole progress engine, for a wait of ftshim's
 * own that holds no request of the MPI's (the agreement, the wait for the
 * other ranks at MPI_Finalize, a polled probe): MPICH grants a window's
 * passive-target lock only in the target's progress, and MPI_Iprobe skips
 * that part, so a process waiting there would hold up every rank that
 * locks its window. A completion call runs it all: this is a test of a
 * receive on MPI_COMM_SELF that nothing sends, cancelled. Application
 * thread. */
void ftp_mpi_progress(void);

#endif
