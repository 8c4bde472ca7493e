/* hooks.h: replication as a recovery mode (hooks.c): the one thing of
 * the folder that pmpi/mode/registry.c names. */
#ifndef FTSHIM_PMPI_MODE_REPLICATION_HOOKS_H
#define FTSHIM_PMPI_MODE_REPLICATION_HOOKS_H

#include "pmpi/mode/mode.h"

extern const struct ftp_mode ftp_replication_mode;

#endif
