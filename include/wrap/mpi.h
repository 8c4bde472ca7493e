/* mpi.h (ftshim): the MPI's own mpi.h and, with it, what Open MPI 5's
 * mpi.h declares for ULFM: the error classes (MPI_ERR_PROC_FAILED,
 * MPI_ERR_PROC_FAILED_PENDING, MPI_ERR_REVOKED) and the MPIX_ calls, from
 * ftshim's mpi-ext.h. Installed beside mpi-ext.h, so that a program
 * written for Open MPI 5's ULFM that takes them from mpi.h (Fenix does)
 * builds unchanged with the one -I of mpi-ext.h. */
#ifndef FTSHIM_MPI_H
#define FTSHIM_MPI_H

#include_next <mpi.h>
#include "mpi-ext.h"

#endif
