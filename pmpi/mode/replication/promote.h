/* promote.h: a dead primary's replica carrying its rank on (promote.c). */
#ifndef FTSHIM_PMPI_MODE_REPLICATION_PROMOTE_H
#define FTSHIM_PMPI_MODE_REPLICATION_PROMOTE_H

#include "pmpi/mode/replication/state.h"

/* Primary `dead` died and its replica lives: the replica carries its
 * rank on. */
void ftp_repl_promote(int32_t dead);

#endif
