/* ckpt_watch.h: a checkpoint that not every rank calls (pmpi/ckpt_watch.c).
 * A rank entering ftshim_checkpoint tells every other rank of the world
 * over the control plane; a rank whose blocking call waits on one that
 * waits in a checkpoint it has not entered itself (its peer, or a member
 * of its collective) ends the job with one line, rather than hang with
 * it. Kept apart from pmpi/ckpt.c so that the waits of pmpi/block.c can
 * ask it without depending on the agreement. */
#ifndef FTSHIM_PMPI_CKPT_WATCH_H
#define FTSHIM_PMPI_CKPT_WATCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "pmpi/listen.h"

struct ftp_call;

/* Hears that another rank entered a checkpoint (FTP_APP_CKPT). */
extern const struct ftp_listener ftp_ckpt_listener;

/* The highest checkpoint another rank of the world has entered (written
 * by the detector thread), and this rank's (the application thread's). */
extern _Atomic uint64_t ftp_ckpt_peer_max;
extern uint64_t ftp_ckpt_entered;

/* Another rank waits in a checkpoint this rank has not entered: a call
 * of this rank's that waits on it cannot complete. */
static inline bool ftp_ckpt_behind(void)
{
	return __builtin_expect(atomic_load_explicit(&ftp_ckpt_peer_max, memory_order_relaxed) > ftp_ckpt_entered, 0);
}

/* In a blocking call's wait while ftp_ckpt_behind: if c has waited a
 * second on a rank that waits in ftshim_checkpoint for this one, the job
 * ends with one line. */
void ftp_ckpt_check_wait(const struct ftp_call *c);
/* Its two halves, for a call that waits on several requests: the job
 * rank c (its communicator and watch) waits on that waits in a
 * checkpoint this rank has not entered, or -1; and the wait of call c on
 * job rank j (-1: on none such), which ends the job after a second. */
int32_t ftp_ckpt_waited_on(const struct ftp_call *c);
void ftp_ckpt_check_waiting(const struct ftp_call *c, int32_t j);

/* Application thread. start: for a job of total processes (at
 * MPI_Init). world: the world was made anew by repair epoch; counts
 * start again. enter: this rank enters its next checkpoint, and tells
 * the n other ranks of the world (run by holder[r]). */
void ftp_ckpt_watch_start(uint32_t total);
void ftp_ckpt_watch_world(uint32_t epoch);
void ftp_ckpt_watch_enter(const int32_t *holder, uint32_t n);

#endif
