/* report_merge.h: one job report for every host (pmpi/report_merge.c). */
#ifndef FTSHIM_PMPI_REPORT_MERGE_H
#define FTSHIM_PMPI_REPORT_MERGE_H

#include "pmpi/listen.h"
#include "pmpi/state.h"

/* One job report for every host (a listener of pmpi/detect.c): the files
 * other hosts send, taken on the detector thread; then, while this rank
 * leaves the control plane (every millisecond or so), send this host's
 * files or keep the others', true while it must stay (everyone_left: the
 * engine saw every other rank leave). */
extern const struct ftp_listener ftp_merge_listener;
/* At MPI_Finalize, once every rank departed or failed: from the reporting
 * rank, the job report and its summary line (it ends the merge). */
void ftp_job_report(void);

#endif
