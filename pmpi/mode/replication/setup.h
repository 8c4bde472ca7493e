/* setup.h: replication set up at MPI_Init, ended at MPI_Finalize
 * (setup.c). */
#ifndef FTSHIM_PMPI_MODE_REPLICATION_SETUP_H
#define FTSHIM_PMPI_MODE_REPLICATION_SETUP_H

#include "pmpi/mode/replication/state.h"

/* FTSHIM_REPLICAS asks for replicas (parsed at MPI_Init). */
bool ftp_repl_requested(void);

/* At MPI_Init: before PMPI_Init, parse FTSHIM_REPLICAS; once the
 * world's size is known, check that it fits (both: 0, or -EINVAL with
 * one line in err, the same on every rank); after the job's exchange,
 * collective over the world, place the replicas, make the stream and
 * replicate MPI_COMM_WORLD (0, or an error after which the job runs
 * without replicas). */
int ftp_repl_parse(char *err, size_t errlen);
int ftp_repl_check(char *err, size_t errlen);
/* ftp_repl_plan: who is whom (no MPI call; the plan is read by the
 * injection plan, pmpi/inject.c), once the job's hosts are known;
 * ftp_repl_start: the stream, MPI_COMM_WORLD's replication, the replica's
 * output, collectively, at the end of MPI_Init. */
int ftp_repl_plan(void);
int ftp_repl_start(void);

/* At MPI_Finalize: the copies meet; a primary waits for its replica and
 * for its resends to be delivered. */
void ftp_repl_finish(void);

#endif
