/* mpix_decls.h: mpi.h, and what the MPI declares outside it that ftshim
 * wraps from pmpi/ftshim-api.tsv: Open MPI 4.1's persistent collectives
 * (its pcollreq extension: MPIX_Allreduce_init, ...), which only its
 * mpi-ext.h declares. pmpi/gen-wrappers.py reads this file preprocessed
 * (pmpi/mpi-decls.i), and the generated wrappers include it. */
#ifndef FTSHIM_PMPI_MPIX_DECLS_H
#define FTSHIM_PMPI_MPIX_DECLS_H

#include <mpi.h>

#if defined(OPEN_MPI) && defined(__has_include)
#if __has_include(<openmpi/mpiext/mpiext_pcollreq_c.h>)
#include <openmpi/mpiext/mpiext_pcollreq_c.h>
#define FTP_HAVE_MPIX_PCOLL 1
#endif
#endif

#endif
