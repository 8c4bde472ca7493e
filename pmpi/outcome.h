/* outcome.h: the job's outcome in the file FTSHIM_STATUS_FILE names
 * (pmpi/outcome.c), for scripts under a launcher whose own exit status
 * does not tell it (Open MPI 4.1's mpirun --enable-recovery exits 0
 * whatever happened). */
#ifndef FTSHIM_PMPI_OUTCOME_H
#define FTSHIM_PMPI_OUTCOME_H

/* At MPI_Init, rank 0: remove an earlier job's outcome, so that a job
 * that never gets to write one leaves none. */
void ftp_outcome_start(void);

/* The reporting rank, at the end of a job that completed (every rank
 * finished or failed, and this one finished): "completed" and the
 * summary line. */
void ftp_outcome_completed(const char *summary);

/* A rank that ends the whole job (MPI_Abort, a fatal error): "ended"
 * and the status it ends it with. */
void ftp_outcome_ended(int status);

#endif
