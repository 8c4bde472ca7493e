/* supervisor.h: run this process under a small parent that waits for it.
 *
 * MPICH's Hydra kills a whole job when one of its processes dies by a
 * signal, even with -disable-auto-cleanup, but lets the others live on when
 * it exits (FINDINGS.md). ft_supervise forks before main: the child goes on
 * to be the MPI rank; the parent, which Hydra started, relays the signals
 * it receives to the child, waits for it, and exits with its status (128 +
 * the signal number for a death by signal), so that Hydra only ever sees
 * an exit. The child dies with the parent (PR_SET_PDEATHSIG). Under Open
 * MPI, which has no such rule with --enable-recovery but sees only the
 * process it started, the parent is there to record a death by signal
 * for the job report, and then dies of the same signal (mpirun reports
 * it as it would have). */
#ifndef FTSHIM_SUPERVISOR_H
#define FTSHIM_SUPERVISOR_H

#include <stdbool.h>

/* Returns 0 in the child; never returns in the parent, which, when the
 * child dies of a signal, dies of it too if die_of_signal, else exits
 * with 128 + its number. Returns -errno if it could not fork, and the
 * process carries on unsupervised. Call it only while the process has a
 * single thread (a library constructor). */
int ft_supervise(bool die_of_signal);

/* In the child, once it knows them (after MPI_Init): where the parent is
 * to record a death by signal (appending one line to deaths_path, in the
 * run directory's key=value format: time, rank, host, pid, how=SIGNAME,
 * by=supervisor), and the rank and host to record. Does nothing in an
 * unsupervised process. */
void ft_supervisor_tell(const char *deaths_path, int rank, const char *host);

#endif
