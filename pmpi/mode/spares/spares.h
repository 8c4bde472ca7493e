/* spares.h: spare processes as a recovery mode (spares.c): the one thing
 * of the folder that pmpi/mode/registry.c names. */
#ifndef FTSHIM_PMPI_MODE_SPARES_SPARES_H
#define FTSHIM_PMPI_MODE_SPARES_SPARES_H

#include "pmpi/mode/mode.h"

extern const struct ftp_mode ftp_spares_mode;

#endif
