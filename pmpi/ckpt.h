/* ckpt.h: in-memory checkpoints (pmpi/ckpt.c), the service a recovery
 * mode that restarts ranks uses (spares): the public calls ftshim_protect,
 * ftshim_checkpoint and ftshim_restart_version (include/ftshim.h), the
 * copies kept by buddies over the checkpoint link, and the restore after a
 * repair. Without a mode that starts it, the calls keep nothing and
 * ftshim_restart_version is -1. Application thread. */
#ifndef FTSHIM_PMPI_CKPT_H
#define FTSHIM_PMPI_CKPT_H

#include <stdbool.h>
#include <stdint.h>

/* At the end of MPI_Init, collective over the MPI's world (every process,
 * spares too): open this process's end of the checkpoint link. 0, or
 * -errno after one line (the job then runs without checkpoints). */
int ftp_ckpt_start(void);

/* The program's MPI_COMM_WORLD now: n program ranks, rank r run by job
 * rank holder[r] (copied), in the repair numbered epoch (0 before any). */
void ftp_ckpt_world(const int32_t *holder, uint32_t n, uint32_t epoch);

/* After a repair made the world anew (ftp_ckpt_world given it), on every
 * process that runs a program rank in it: agree with the others on the
 * latest checkpoint whose every rank's copy survives, and make it this
 * rank's to restore (ftshim_protect copies it in, ftshim_restart_version
 * names it); the program starts afresh if there is none. dead: whether a
 * process of the world failed since the repair (polled while waiting).
 * 0, or -EAGAIN if one did (the caller repairs again). */
int ftp_ckpt_restore(bool (*dead)(void));

/* The flag a rank that enters MPI_Finalize gives the agreement that ends
 * the program (over MPI_COMM_WORLD), and the check of its outcome: a
 * rank still in ftshim_checkpoint meanwhile pairs its agreement with
 * this one, and both end the job with one line. */
uint32_t ftp_ckpt_finish_flag(void);
void ftp_ckpt_finish_check(uint32_t agreed);

#endif
