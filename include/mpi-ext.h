/* mpi-ext.h (ftshim): the ULFM fault-tolerance extension, for programs
 * written for Open MPI 5 (or MPICH's ULFM) that run on a stock MPI under
 * ftshim. Put this directory first on the include path
 * (-I PREFIX/include/ftshim, or `pkg-config --cflags ftshim-mpich`, or
 * ftshim-openmpi); the MPI's
 * own mpi-ext.h, where it has one, is included too.
 *
 * The functions live in the preloaded libftshim.so; link nothing extra:
 * they are declared weak, so that a program links with the MPI's own
 * mpicc alone and finds them at run time. Without the shim a weak
 * function the MPI lacks is NULL (test `if (MPIX_Comm_agree)`).
 * Error classes compare equal to the MPI's own where its mpi.h defines
 * them (MPICH: 101, 102, 103), to Open MPI 5's otherwise (75, 76, 77). */
#ifndef FTSHIM_MPI_EXT_H
#define FTSHIM_MPI_EXT_H

#include <mpi.h>

#if defined(OPEN_MPI) && defined(__has_include_next)
#if __has_include_next(<mpi-ext.h>)
#include_next <mpi-ext.h>
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

#ifndef MPIX_ERR_PROC_FAILED
#define MPIX_ERR_PROC_FAILED 75
#define MPIX_ERR_PROC_FAILED_PENDING 76
#define MPIX_ERR_REVOKED 77
#endif
#ifndef MPI_ERR_PROC_FAILED
#define MPI_ERR_PROC_FAILED MPIX_ERR_PROC_FAILED
#define MPI_ERR_PROC_FAILED_PENDING MPIX_ERR_PROC_FAILED_PENDING
#define MPI_ERR_REVOKED MPIX_ERR_REVOKED
#endif

/* Tells a program that it can use the calls below (as Open MPI 5 does). */
#ifndef OMPI_HAVE_MPI_EXT_FTMPI
#define OMPI_HAVE_MPI_EXT_FTMPI 1
#endif
#define FTSHIM_HAVE_ULFM 1

#if defined(__GNUC__) && !defined(FTSHIM_BUILDING)
#define FTSHIM_WEAK __attribute__((weak))
#else
#define FTSHIM_WEAK
#endif

FTSHIM_WEAK int MPIX_Comm_revoke(MPI_Comm comm);
FTSHIM_WEAK int MPIX_Comm_is_revoked(MPI_Comm comm, int *flag);
FTSHIM_WEAK int MPIX_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm);
FTSHIM_WEAK int MPIX_Comm_ishrink(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request);
FTSHIM_WEAK int MPIX_Comm_agree(MPI_Comm comm, int *flag);
FTSHIM_WEAK int MPIX_Comm_iagree(MPI_Comm comm, int *flag, MPI_Request *request);
FTSHIM_WEAK int MPIX_Comm_failure_ack(MPI_Comm comm);
FTSHIM_WEAK int MPIX_Comm_failure_get_acked(MPI_Comm comm, MPI_Group *failedgrp);
FTSHIM_WEAK int MPIX_Comm_get_failed(MPI_Comm comm, MPI_Group *failedgrp);
FTSHIM_WEAK int MPIX_Comm_ack_failed(MPI_Comm comm, int num_to_ack, int *num_acked);

/* MPIX_FT: the attribute key of MPI_COMM_WORLD whose value (an int) is
 * true when the ULFM calls are in force, as under Open MPI 5:
 *   int *ft, flag;
 *   MPI_Comm_get_attr(MPI_COMM_WORLD, MPIX_FT, &ft, &flag);
 * Without the shim, or before MPI_Init, it is MPI_KEYVAL_INVALID. */
FTSHIM_WEAK int ftshim_ft_keyval(void);
#ifndef MPIX_FT
#define MPIX_FT (ftshim_ft_keyval ? ftshim_ft_keyval() : MPI_KEYVAL_INVALID)
#endif
#ifndef MPI_FT
#define MPI_FT MPIX_FT
#endif

#ifdef __cplusplus
}
#endif

#endif
