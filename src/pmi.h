/* pmi.h: the one PMI-1 exchange ftshim makes itself: telling Hydra's
 * proxy that a rank is done. After a failure ftshim skips the MPI
 * library's MPI_Finalize (it could wait for the dead), so the library never
 * says "finalize" on its PMI connection; the proxy then takes the rank's
 * exit for a crash and tells mpiexec, which signals every other proxy. At
 * the end of a job those signals race with proxies that are leaving, and
 * mpiexec, writing to one that has gone, fails and ends the whole job
 * (MPICH 4.0.2's Hydra). Saying it here avoids that. Pure socket I/O, no
 * MPI. */
#ifndef FTSHIM_PMI_H
#define FTSHIM_PMI_H

/* The PMI-1 connection MPICH's library was given (PMI_FD), or -1 when
 * there is none (not under Hydra, a singleton, Open MPI). */
int ft_pmi_fd(void);

/* Send "cmd=finalize" on fd and wait up to timeout_ms for the proxy's
 * "cmd=finalize_ack". 0, -ETIMEDOUT, -EPROTO (another answer) or -errno.
 * Only when nothing else uses the connection. */
int ft_pmi_finalize(int fd, int timeout_ms);

#endif
