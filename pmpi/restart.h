/* restart.h: restart in place, the core's part (pmpi/restart.c). */
#ifndef FTSHIM_PMPI_RESTART_H
#define FTSHIM_PMPI_RESTART_H

#include <stdbool.h>
#include <stddef.h>

/* Whether this process can be restarted in place: its main came through
 * the restart point (preload/restart_point.h). */
bool ftp_restart_possible(void);

/* main runs again (a recovery mode repaired the program's world): from
 * then on MPI_Init and MPI_Init_thread answer from ftshim. */
bool ftp_restarted(void);

/* Which run of main this is: 0 the first, then one more per restart. */
unsigned ftp_restart_run(void);

/* Whether main cannot run again now, with the reason (a phrase) in why:
 * threads the program started still run (preload/restart_point.h), or
 * this thread is inside an OpenMP parallel region, whose team would be
 * left waiting for it. Application thread. */
bool ftp_restart_blocked(char *why, size_t len);

/* Application thread, holding nothing of ftshim's: leave whatever call
 * this process is in and run main again. Never returns. */
_Noreturn void ftp_restart_program(void);

#endif
