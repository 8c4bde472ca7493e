/* ucx_yield.h: yielding inside the MPI's own waits (pmpi/ucx_yield.c). */
#ifndef FTSHIM_PMPI_UCX_YIELD_H
#define FTSHIM_PMPI_UCX_YIELD_H

#include <stdint.h>

/* How many times the MPI's own waits yielded the CPU so far (0 where
 * ftshim cannot make them). */
uint64_t ftp_ucx_yields(void);

#endif
