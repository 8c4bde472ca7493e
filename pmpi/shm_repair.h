/* shm_repair.h: a survivor whose on-host receive queue a dead sender froze
 * fills the sender's slot and goes on (pmpi/shm_repair.c; the queue and
 * the fill: src/shm_fifo.h). */
#ifndef FTSHIM_PMPI_SHM_REPAIR_H
#define FTSHIM_PMPI_SHM_REPAIR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "pmpi/listen.h"

/* Set (by the listener, any thread) once a process of this host has
 * failed, while the repair is possible (UCX 1.13 loaded, its queues at
 * their default size); cleared by a scan that finds no queue of this
 * process's. Read relaxed by every waiting loop's slow path. */
extern _Atomic bool ftp_shm_repair_armed;

/* It hears of failures. */
extern const struct ftp_listener ftp_shm_repair_listener;

/* At MPI_Init, after PMPI_Init (UCX is loaded by then): whether the
 * repair is possible here. */
void ftp_shm_repair_init(void);

/* The slow path of a waiting loop (any application thread): look at this
 * process's queues at most every few tens of milliseconds, and fill a
 * dead sender's slot. */
void ftp_shm_repair_scan(void);

static inline void ftp_shm_repair_poll(void)
{
	if (atomic_load_explicit(&ftp_shm_repair_armed, memory_order_relaxed))
		ftp_shm_repair_scan();
}

#endif
