/* ulfm.h: the ULFM calls ftshim defines, declared as the installed
 * mpi-ext.h declares them (MPICH's mpi.h declares some of them too, with
 * the same prototypes). */
#ifndef FTSHIM_PMPI_ULFM_H
#define FTSHIM_PMPI_ULFM_H

#define FTSHIM_BUILDING 1
#include "mpi-ext.h"

#endif
