/* prune.h: where the run directory is, and keeping it from growing
 * without end. Every job leaves a directory there (RUNDIR/JOBID: job,
 * ranks, injections, events, report.json); at MPI_Finalize the lowest
 * rank on each host removes those of earlier jobs that are old enough and
 * have no rank still running on this host. Only directories named like a
 * job id (12 lowercase hex digits) that hold nothing but regular files are
 * touched. Pure file work: no MPI. */
#ifndef FTSHIM_PRUNE_H
#define FTSHIM_PRUNE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* The run directory of this process's jobs: configured (FTSHIM_RUNDIR)
 * if not empty, else $XDG_RUNTIME_DIR/ftshim, else /tmp/ftshim-UID. The
 * library and ftshim-info (--check) both ask here. */
void ft_rundir_base(const char *configured, char *out, size_t outlen);

/* Remove, from base, the job directories not modified for keep_s seconds
 * before now whose ranks on this host (named host in their "ranks" file)
 * have all exited. Returns how many were removed. */
unsigned ft_rundir_prune(const char *base, const char *host, time_t now, time_t keep_s);

/* The start time of process pid in clock ticks since boot (field 22 of
 * /proc/PID/stat), or 0 if there is no such process: with the pid, it
 * names a process even after the pid is reused. */
uint64_t ft_process_start_ticks(pid_t pid);

/* The state letter of process pid (field 3 of /proc/PID/stat: R, S, D,
 * T, t, Z, ...) if it is still the process that started at start_ticks,
 * else 0 (it has ended and been reaped, or the pid names another). */
char ft_process_state(pid_t pid, uint64_t start_ticks);

/* A pidfd on the process that started at start_ticks with pid, checked
 * after the open so that it names that process and not a later one with
 * its pid: the descriptor; -ESRCH if that process has ended (or the pid
 * names another); another negative errno if it cannot be watched (no
 * pidfd_open, pid not positive). */
int ft_process_pidfd(pid_t pid, uint64_t start_ticks);

#endif
