/* report_merge.h: one job report for every host (pmpi/report_merge.c). */
#ifndef FTSHIM_PMPI_REPORT_MERGE_H
#define FTSHIM_PMPI_REPORT_MERGE_H

#include "pmpi/ftp.h"

/* One job report for every host: the files other
 * hosts send, taken on the detector thread; then, while this rank leaves
 * the control plane (application thread, every millisecond or so), send
 * this host's files or keep the others', true while it must stay
 * (everyone_left: the engine saw every other rank leave); the hosts
 * whose files did not come (valid until ftp_merge_end). */
void ftp_merge_on_msg(const struct ft_msg *m);
bool ftp_merge_step(bool everyone_left);
const struct ft_report_host *ftp_merge_missing(uint32_t *n);
void ftp_merge_end(void);

/* The rank that writes the job report: the lowest live rank
 * (UINT32_MAX: none); and whether the job spans several hosts. */
uint32_t ftp_reporting_rank(void);
bool ftp_several_hosts(void);

#endif
