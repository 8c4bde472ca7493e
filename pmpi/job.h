/* job.h: the job's start at MPI_Init (pmpi/job.c): the exchange of
 * addresses, the start of detection, the run directory and injection, and
 * the last agreement. */
#ifndef FTSHIM_PMPI_JOB_H
#define FTSHIM_PMPI_JOB_H

#include "pmpi/state.h"

/* The job-wide exchange at MPI_Init: collective over
 * ftp.world (one PMPI_Allgather); then ftp_job_go. usable: false if this
 * rank has no tables (it still takes part, and detection is then off for
 * the whole job). */
int ftp_job_start(bool usable);

/* What this process tells the others about itself, and its listening
 * socket (-1: none); ftp.peers with room for every job rank. */
int ftp_job_self(bool usable, struct ftp_peer *mine);
struct ftp_peer *ftp_job_peers_alloc(void);

/* Once ftp.peers, the secret and the job's start are known: start
 * detection (known: the news the process starts with), the run
 * directory and injection. */
int ftp_job_go(bool usable, int listen_fd, const struct ft_entry *known, uint32_t nknown);

/* The last step of MPI_Init, once ftshim's own start is done here: wait
 * until every process of ftp.world is that far (an agreement over the
 * control plane, which a failure does not stop; a spawned process does
 * not wait for its siblings), then start the clock of the time triggers
 * and of the log (ftp.up_ns). */
void ftp_job_up(void);

#endif
