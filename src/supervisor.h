/* supervisor.h: run this process under a small parent that waits for it.
 *
 * MPICH's Hydra kills a whole job when one of its processes dies by a
 * signal, even with -disable-auto-cleanup, but lets the others live on when
 * it exits (FINDINGS.md). ft_supervise forks before main: the child goes on
 * to be the MPI rank; the parent, which Hydra started, relays the signals
 * it receives to the child, waits for it, and exits with its status (128 +
 * the signal number for a death by signal), so that Hydra only ever sees
 * an exit. The child dies with the parent (PR_SET_PDEATHSIG). */
#ifndef FTSHIM_SUPERVISOR_H
#define FTSHIM_SUPERVISOR_H

/* Returns 0 in the child; never returns in the parent. Returns -errno if
 * it could not fork, and the process carries on unsupervised. Call it only
 * while the process has a single thread (a library constructor). */
int ft_supervise(void);

/* In the child, once it knows them (after MPI_Init): where the parent is
 * to record a death by signal (appending one line to deaths_path, in the
 * run directory's key=value format: time, rank, host, pid, how=SIGNAME,
 * by=supervisor), and the rank and host to record. Does nothing in an
 * unsupervised process. */
void ft_supervisor_tell(const char *deaths_path, int rank, const char *host);

#endif
