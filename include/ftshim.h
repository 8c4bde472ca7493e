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

#ifdef __cplusplus
}
#endif

#endif
