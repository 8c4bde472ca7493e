/* calls.h: replication's side of the calls (calls.c). */
#ifndef FTSHIM_PMPI_MODE_REPLICATION_CALLS_H
#define FTSHIM_PMPI_MODE_REPLICATION_CALLS_H

#include "pmpi/mode/mode.h"

/* Replication's side of the calls on a covered communicator
 * (pmpi/mode/replication/calls.c): its forms (the ftp_repl_MPI_* below),
 * and whether a call without one runs as on any communicator. */
extern const struct ftp_mode_calls ftp_repl_calls;
bool ftp_repl_runs_as_is(int fn, enum ftp_mode_role role);

#endif
