/* spare_view.h: communicators recovery makes without the MPI's
 * constructors: views on spare contexts (pmpi/spare_view.c). */
#ifndef FTSHIM_PMPI_SPARE_VIEW_H
#define FTSHIM_PMPI_SPARE_VIEW_H

#include <mpi.h>
#include <stdint.h>

#include "pmpi/call_base.h"

/* At MPI_Init, collective over the world, while nothing has failed:
 * ftp.private_world and the spare contexts (FTSHIM_RECOVERY_CONTEXTS). */
void ftp_spare_view_start(void);

/* What this process offers a shrink's agreement on e: the spares it has
 * not taken, as a mask (bit k: spare k); 0 where e's survivors cannot be
 * a view (an intercommunicator, a recovery mode's communicator, members
 * of another world, or no spare left). The agreement ANDs the offers. */
uint32_t ftp_spare_view_offer(const struct ftp_comm *e);

/* Make *newcomm the view of the n processes of job ranks jobs (in the
 * new communicator's rank order; this process among them) on the lowest
 * spare in agreed, the agreement's AND of the members' offers: a
 * communicator of c's, registered as MPIX_Comm_shrink's child, with no
 * MPI call that involves another process. MPI_SUCCESS; -1 if agreed
 * names no spare (the caller makes it the MPI's way); or an error. */
int ftp_spare_view_make(struct ftp_call *c, uint32_t agreed, const int32_t *jobs, uint32_t n,
			int tag, MPI_Comm *newcomm);

/* The most spare contexts there are (FTSHIM_RECOVERY_CONTEXTS's bound,
 * and a recovery mode's). */
#define FTP_SPARE_CONTEXTS_MAX 16

/* A restart in place (pmpi/mode/spares/): the program's MPI_COMM_WORLD
 * becomes a view on the lowest spare context not taken (every process
 * takes one per restart, in the same order), of the n job ranks jobs in
 * program rank order, under the job-wide id (a spare left waiting, not
 * one of them, takes the context and makes nothing). MPI_SUCCESS, -1 (no
 * context left), or an MPI error. */
int ftp_spare_view_world(const int32_t *jobs, uint32_t n, uint64_t id);

#endif
