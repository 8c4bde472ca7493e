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

#endif
