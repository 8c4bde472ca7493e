/* ulfm.h: the ULFM calls ftshim defines, declared as the installed
 * mpi-ext.h declares them (MPICH's mpi.h declares some of them too, with
 * the same prototypes). */
#ifndef FTSHIM_PMPI_ULFM_H
#define FTSHIM_PMPI_ULFM_H

#define FTSHIM_BUILDING 1
#include "mpi-ext.h"

/* MPIX_Comm_ishrink for the Fortran bindings (pmpi/fortran.c): the new
 * communicator's Fortran handle is written to *newcomm at completion. */
int ftp_ishrink_fortran(MPI_Comm comm, MPI_Fint *newcomm, MPI_Request *request);

#endif
