/* ftshim.h: the public C API of ftshim, for programs that want to ask the
 * shim something. Link nothing: the functions live in the preloaded
 * libftshim.so. A program that must also run without the shim can look
 * them up with dlsym(RTLD_DEFAULT, "ftshim_active").
 *
 * Thread rule: every function here is safe to call from any thread
 * between MPI_Init and MPI_Finalize. */
#ifndef FTSHIM_H
#define FTSHIM_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if ftshim is active in this process (between MPI_Init and the end of
 * MPI_Finalize, and not disabled by FTSHIM_DISABLE), else 0. */
int ftshim_active(void);

/* The job-wide id of a communicator: every member gets the same id, and
 * no two communicators alive at once share one (with overwhelming
 * probability). MPI_COMM_WORLD's id is 1. Returns 0, or -1 if ftshim does
 * not track this communicator (ftshim inactive, MPI_COMM_NULL, or made by
 * MPI_Comm_connect, MPI_Comm_accept or MPI_Comm_join). */
int ftshim_comm_id(MPI_Comm comm, uint64_t *id);

/* The state of a process, by its job rank (its rank in MPI_COMM_WORLD;
 * processes spawned later come after the first ones, in the order they
 * joined), as this process knows it now: FTSHIM_ALIVE or FTSHIM_FAILED. A failed process stays
 * failed (fail-stop), unless FTSHIM_READMIT=1 re-admits it (then it is
 * FTSHIM_ALIVE again). -1 if ftshim is inactive or the rank is out of
 * range. */
#define FTSHIM_ALIVE 0
#define FTSHIM_FAILED 1
int ftshim_rank_state(int world_rank);

/* Which copies of program rank `rank` (its rank in MPI_COMM_WORLD) live,
 * as this process knows now: FTSHIM_COPY_PRIMARY and FTSHIM_COPY_REPLICA
 * or'ed. Without FTSHIM_REPLICAS every rank has one copy, its primary;
 * under it, a replica that died is gone for good (its primary goes on
 * alone). 0: none lives; -1 if ftshim is inactive or the rank is out of
 * range. */
#define FTSHIM_COPY_PRIMARY 1
#define FTSHIM_COPY_REPLICA 2
int ftshim_rank_copies(int rank);

/* The job ranks this process knows failed, in ascending order: writes at
 * most max of them to ranks and returns how many there are (which may be
 * more than max). -1 if ftshim is inactive. */
int ftshim_failed_ranks(int *ranks, int max);

/* Call fn(world_rank, arg) once for each process that fails, as soon as
 * this process learns of it. fn runs on ftshim's detector thread (never in
 * a signal handler): it must be quick, must not block, and must not call
 * MPI. Up to 16 callbacks; may be registered before MPI_Init. Returns 0,
 * or -1 if fn is NULL or there are already 16. */
typedef void (*ftshim_failure_fn)(int world_rank, void *arg);
int ftshim_on_failure(ftshim_failure_fn fn, void *arg);

/* With FTSHIM_READMIT=1: call fn(world_rank, arg) when a process declared
 * failed by heartbeat timeout is heard again and re-admitted (alive for
 * point-to-point again; communicators that had it stay failed). As
 * ftshim_on_failure otherwise; a separate list of up to 16. */
int ftshim_on_readmit(ftshim_failure_fn fn, void *arg);

/* Mark a point of the program for FTSHIM_INJECT: a clause with
 * at=point:NAME:VALUE kills its ranks when they get here with that name
 * and value (ftshim_inject_point("iteration", i) in a loop). Costs almost
 * nothing when no such clause is armed; does nothing without the shim. */
void ftshim_inject_point(const char *name, long value);

/* The attribute key behind mpi-ext.h's MPIX_FT (use that name): made on
 * the first call after MPI_Init and set on MPI_COMM_WORLD to 1 while
 * ftshim is active (0 with FTSHIM_DISABLE=1); MPI_KEYVAL_INVALID before
 * MPI_Init. */
int ftshim_ft_keyval(void);

/* In-memory checkpoints, with FTSHIM_SPARES (restart in place): after a
 * failure every rank goes back to the start of main, and these calls let
 * it resume from its last checkpoint instead of the beginning.
 *
 * ftshim_protect: register region id (0 or more) of this rank's state,
 * bytes at base; again with the same id when the region moves or grows;
 * base NULL and bytes 0 unregisters it. After a restart in place the
 * first registration of each region copies the restored contents into it
 * (the size must be the one it had). May be called before MPI_Init.
 * 0, or -1 after one line (an id below 0, NULL with a size, a region
 * that overlaps another, a size that differs from the restored one).
 *
 * ftshim_checkpoint: collective over MPI_COMM_WORLD, with the same
 * version on every rank and no request of the program's pending: copies
 * every protected region into memory of ftshim's (the caller waits for
 * that copy only), which a thread of ftshim's then sends to a buddy
 * process, on another host where there is one. A checkpoint is restored
 * only if every rank's copy of it survived; each call first waits for
 * the previous one's copies to be kept. FTSHIM_CKPT_EVERY=N takes every
 * Nth call; FTSHIM_CKPT_DIR also writes each rank's copy to a file there,
 * in the background, for a rank lost with its buddy. 0 (taken, or skipped), or -1 after one line on every rank
 * (refused: a request pending, versions that differ; or a failure with
 * no spare left). Without FTSHIM_SPARES it keeps nothing and returns 0.
 *
 * ftshim_restart_version: -1 in the first run of main (or when no
 * checkpoint had every rank's copy), else the version of the checkpoint
 * restored.
 *
 * These three are declared weak, so that a program written for them
 * links with the MPI's own mpicc alone: without the shim they are NULL
 * (test `if (ftshim_checkpoint)` to run without it too). */
#if defined(__GNUC__) && !defined(FTSHIM_BUILDING)
#define FTSHIM_CKPT_WEAK __attribute__((weak))
#else
#define FTSHIM_CKPT_WEAK
#endif
FTSHIM_CKPT_WEAK int ftshim_protect(int id, void *base, size_t bytes);
FTSHIM_CKPT_WEAK int ftshim_checkpoint(long version);
FTSHIM_CKPT_WEAK long ftshim_restart_version(void);

#ifdef __cplusplus
}
#endif

#endif
