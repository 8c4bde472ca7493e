/* supervisor.h: run this process under a small parent that waits for it.
 *
 * MPICH's Hydra kills a whole job when one of its processes dies by a
 * signal, even with -disable-auto-cleanup, but lets the others live on when
 * it exits (FINDINGS.md). ft_supervise forks before main: the child goes on
 * to be the MPI rank; the parent, which Hydra started, relays the signals
 * it receives to the child, waits for it, and exits with its status, so
 * that Hydra only ever sees an exit. After the rank was lost (a death by
 * signal, or a non-zero exit before its MPI_Finalize ended) that status
 * is the program's outcome: 0 if the program completed without the rank
 * (the job's other ranks on this host ended, and one of them finished:
 * ft_supervisor_finished), else 128 + the signal number, or the exit
 * status. The same under srun --mpi=pmix. The child dies with the parent (PR_SET_PDEATHSIG). Under Open
 * MPI, which has no such rule with --enable-recovery but sees only the
 * process it started, the parent is there to record a death by signal
 * for the job report, and then dies of the same signal (mpirun reports
 * it as it would have). Under Slurm's srun --mpi=pmix it also keeps the
 * rank's death from ending the job step (FT_SUPERVISE_PMIX_GOODBYE). */
#ifndef FTSHIM_SUPERVISOR_H
#define FTSHIM_SUPERVISOR_H

#include <stdbool.h>

/* How the parent behaves (ft_supervise's flags). */
enum ft_supervise_flags {
	/* When the child dies of a signal, the parent dies of it too, rather
	 * than exit with 128 + its number. */
	FT_SUPERVISE_DIE_ALIKE = 1 << 0,
	/* The parent holds the child's connection to its PMIx server (handed
	 * over by ft_supervisor_hand_over_pmix) and, if the child ends
	 * without finalizing its PMIx client, says the finalize for it before
	 * it lets the connection close. Slurm's PMIx plugin cancels the whole
	 * job step on any event its server raises, and the server raises one
	 * (PMIX_ERR_LOST_CONNECTION) when a client's connection closes before
	 * it finalized: so a rank killed under srun --mpi=pmix takes every
	 * survivor with it (slurm src/plugins/mpi/pmix/pmixp_client_v2.c
	 * _errhandler; openpmix ptl_base_sendrecv.c lost_connection). */
	FT_SUPERVISE_PMIX_GOODBYE = 1 << 1,
};

/* Returns 0 in the child; never returns in the parent, which exits as
 * the child did (see the flags). Returns -errno if it could not fork,
 * and the process carries on unsupervised. Call it only while the
 * process has a single thread (a library constructor). */
int ft_supervise(unsigned flags);

/* In the child, once it knows them (after MPI_Init): where the parent is
 * to record a death by signal (appending one line to deaths_path, in the
 * run directory's key=value format: time, rank, host, pid, how=SIGNAME,
 * by=supervisor), and the rank and host to record. Does nothing in an
 * unsupervised process. */
void ft_supervisor_tell(const char *deaths_path, int rank, const char *host);

/* In the child, once, after MPI_Init: with FT_SUPERVISE_PMIX_GOODBYE,
 * hand the parent this process's connection to its PMIx server (or
 * nothing, if it has none); the parent waits for this before it waits
 * for the child. Does nothing otherwise. */
void ft_supervisor_hand_over_pmix(void);

/* In the child, in MPI_Finalize once every other rank has left or
 * failed: its program finished. Appends its rank to the job directory's
 * "finished" (beside the deaths file), where the supervisors of ranks
 * that were lost read whether the program completed without them. Does
 * nothing in an unsupervised process. */
void ft_supervisor_finished(void);

/* In the child: its PMIx client has finalized (the MPI's own
 * MPI_Finalize, or ftshim's): the parent must not say it again. */
void ft_supervisor_pmix_finalized(void);

#endif
