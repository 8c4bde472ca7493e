/* pmix.h: what ftshim says itself to a PMIx server: to Open MPI's
 * launcher, through the PMIx client the MPI library already runs, when it
 * skips the library's MPI_Finalize after a failure (see pmi.h for
 * Hydra's); and, for a rank that died, the finalize it never said, which
 * its supervisor sends on the rank's connection (see supervisor.h,
 * FT_SUPERVISE_PMIX_GOODBYE).
 *
 * Open MPI 4.1's mpirun, with --enable-recovery, never ends a job in
 * which a rank on a remote node ended abnormally: that node's orted
 * counts a rank as terminated only once it has both its exit and its
 * waitpid flag, which ORTE 4.1 sets for a normal exit, an MPI_Abort or a
 * kill it ordered, but never for a rank killed by a signal, one that
 * exited non-zero, or one that left without the finalize sync
 * (orte/mca/odls/base odls_base_default_wait_local_proc,
 * orte/mca/errmgr/default_orted proc_errors); so it never tells mpirun
 * that its ranks are all done, and it reports only the first abnormal
 * one at all. mpirun, on one node, marks its own ranks itself
 * (errmgr/default_hnp), which is why a single node ends. So every
 * survivor finalizes its PMIx client (the sync a normal exit needs); the
 * lowest one asks the launcher to kill the ranks that crashed, and a rank
 * that leaves with an error status (ftp_leave) asks it to kill itself: the
 * orted then counts them as killed by order (odls kill_local_procs),
 * though they are already gone. (A rank declared failed by a heartbeat
 * timeout may still be alive, stopped or cut off: it is left to leave by
 * itself.) No MPI; the client is found with dlsym, never loaded. */
#ifndef FTSHIM_PMIX_H
#define FTSHIM_PMIX_H

#include <stdint.h>

/* If this process runs an initialized PMIx client: ask its server to
 * kill ranks[0..n) of this process's namespace. 0 when asked, -ENOSYS when
 * there is no client (not Open MPI, a singleton), -EPROTO when the call
 * failed (logged). */
int ft_pmix_kill(const uint32_t *ranks, uint32_t n);

/* Finalize the PMIx client, if there is one: the same values. Once, at
 * the very end, when the MPI library will not use PMIx again. */
int ft_pmix_finalize(void);

/* This process's connection to its PMIx server: the socket connected to
 * the address in PMIX_SERVER_URI41 (or the older URI variables),
 * "NAME;tcp4://A.B.C.D:PORT" or "NAME;tcp6://[ADDR]:PORT". -1 if there is
 * none. */
int ft_pmix_server_socket(void);

/* On fd, the connection of a PMIx client that died without finalizing:
 * send the client's finalize message (the wire protocol of the PMIx
 * version PMIX_VERSION names, 3 or later, in the buffer type
 * PMIX_BFROP_BUFFER_TYPE names) and wait up to timeout_ms
 * for the server's answer, so that the server counts the client as
 * finalized before the connection closes, and raises no event for it
 * (see FT_SUPERVISE_PMIX_GOODBYE). Needs no PMIx library: the supervisor
 * that calls it never ran one. 0, -ETIMEDOUT, -EPROTO (the server
 * closed) or -errno. */
int ft_pmix_goodbye(int fd, int timeout_ms);

#endif
