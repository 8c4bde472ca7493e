/* mode.c: the active recovery mode (pmpi/mode/mode.h), or NULL: set by
 * pmpi/mode/registry.c at MPI_Init, read by the core's ftp_mode_* calls.
 * Defined here, with the contract, below every module that reads it. */
#include "ftshim_config.h"

#include "pmpi/mode/mode.h"

const struct ftp_mode *ftp_mode_active;
