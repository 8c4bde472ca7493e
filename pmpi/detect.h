/* detect.h: the detector's MPI side (pmpi/detect.c): its thread's start and
 * end, the control plane's sending and delivery, and what it knows of each
 * rank. */
#ifndef FTSHIM_PMPI_DETECT_H
#define FTSHIM_PMPI_DETECT_H

#include "pmpi/state.h"

/* Failure detection: start the detector thread on the published
 * listening socket (and the host's doorbell socket, or -1), leave the
 * overlay at MPI_Finalize once every rank has departed or failed, or stop
 * at once. */
int ftp_detect_start(int listen_fd, int bell_fd, const struct ft_entry *known, uint32_t nknown);
void ftp_detect_finish(void);

/* Whether this process's detector runs (application thread). */
bool ftp_detect_on(void);

/* Tell every rank that this one ends the job (MPI_Abort, a fatal error),
 * and exit with status; they exit with it too. (The launcher may not kill
 * them itself: Hydra with -disable-auto-cleanup does not.) Returns only if
 * detection is off; the caller then calls PMPI_Abort. */
void ftp_detect_abort(int status);

/* A spawned process joins: tell the detector where it listens, and so
 * every process of the job (any thread). */
void ftp_detect_join(uint32_t rank, const struct ft_endpoint *ep);

/* Send a control-plane message to job rank to (this rank itself too),
 * from any thread. */
void ftp_detect_post(uint32_t to, const struct ft_msg *m);

/* The detector's estimate of when rank failed (wall clock ns; 0 if not
 * known), and a word for how it was detected. */
uint64_t ftp_failed_at(uint32_t rank);

/* Whether rank is known to have entered MPI_Finalize (any thread). */
bool ftp_departed(uint32_t rank);
const char *ftp_detection_word(uint32_t how);

#endif
