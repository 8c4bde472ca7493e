/* spawn.h: processes spawned with MPI_Comm_spawn (pmpi/spawn.c): a child's
 * join, the tables' capacity, the handshake's deadline. */
#ifndef FTSHIM_PMPI_SPAWN_H
#define FTSHIM_PMPI_SPAWN_H

#include "pmpi/state.h"

/* Spawned processes. In a process that MPI_Comm_spawn
 * started, from MPI_Init, before the tables: join the parents' job and
 * set ftp.world_base (false: it has no parent running ftshim, and starts a job of its own).
 * Then, once the tables exist, ftp_spawn_child_go. */
bool ftp_spawn_child_join(int world_rank);
int ftp_spawn_child_go(bool usable);

/* The capacity of the tables: every job rank there can be. */
uint32_t ftp_spawn_capacity(void);

#endif
