/* restart_point.h: the point a process's main can be run again from,
 * for restart in place (spare processes, docs/DESIGN.md). libftshim.so
 * wraps __libc_start_main so that main runs inside a frame of its own,
 * which keeps the program's first arguments and a sigjmp_buf; going back
 * there (from the application thread only, outside any signal handler,
 * holding no lock) calls main again with those arguments. No MPI. */
#ifndef FTSHIM_PRELOAD_RESTART_POINT_H
#define FTSHIM_PRELOAD_RESTART_POINT_H

#include <stdbool.h>

/* main was entered through the wrapper: ft_restart_main can go back. */
bool ft_restart_point_armed(void);

/* How many times main was entered again (0 in the first run). */
unsigned ft_restart_count(void);

/* Run main again from the top, on this thread, which must be the one
 * that runs main; never returns. */
_Noreturn void ft_restart_main(void);

/* How many threads the program started (pthread_create with a start
 * routine in its executable or, for std::thread, the C++ runtime) still
 * run. Any thread. */
unsigned ft_program_threads(void);

#endif
