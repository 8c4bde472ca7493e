/* rundir.h: the run directory (pmpi/rundir.c): where ranks record where
 * they run, every injection, the events and the job report. */
#ifndef FTSHIM_PMPI_RUNDIR_H
#define FTSHIM_PMPI_RUNDIR_H

#include "pmpi/state.h"

/* The run directory: where ranks record where they run
 * and every injection is recorded. */
void ftp_rundir_start(void);

/* At MPI_Finalize: write this rank's events (before it departs; the
 * job report is pmpi/report_merge.c's). */
void ftp_rundir_write_events(void);

/* The job's run directory, or NULL if it has none. */
const char *ftp_rundir_dir(void);

/* The path of file name in the job's run directory (0), or -ENOENT if
 * it has none. */
int ftp_rundir_path(const char *name, char *out, size_t len);

/* Append one line to the job's injection record. */
void ftp_rundir_record_injection(const char *line);

#endif
