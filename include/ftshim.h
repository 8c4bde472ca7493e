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
 * dynamic processes or sessions). */
int ftshim_comm_id(MPI_Comm comm, uint64_t *id);

#ifdef __cplusplus
}
#endif

#endif
