/* hostmail.h: the host's shared-memory mailbox for the control plane
 * (pmpi/hostmail.c). */
#ifndef FTSHIM_PMPI_HOSTMAIL_H
#define FTSHIM_PMPI_HOSTMAIL_H

#include "pmpi/listen.h"
#include "pmpi/state.h"

/* The host's shared-memory short cut for agreements.
 * start: from MPI_Init, after the addresses are known, before the
 * detector starts; stop: after the detector thread ended. post: send m
 * to job rank to through the mailbox, if to is on this host and it
 * fits (else false: send it by ftp_detect_post). drain: deliver what
 * waits (any thread). A thread that waits for mail listens meanwhile;
 * it reads the doorbell before it looks for work, and sleeps while the
 * doorbell has not moved (true: it moved). wake_self moves it, for news
 * from another thread of this process. */
void ftp_hostmail_start(void);
void ftp_hostmail_stop(void);

/* The bell socket for the detector thread to watch, handed over once; -1
 * if none. The listener drains the mailbox when it rings, and on a
 * control-plane bell (FTP_APP_HOSTMAIL) from a rank whose ring did not
 * reach the socket. */
int ftp_hostmail_bell_fd(void);
extern const struct ftp_listener ftp_hostmail_listener;
bool ftp_hostmail_post(uint32_t to, const struct ft_msg *m);
void ftp_hostmail_drain(void);
void ftp_hostmail_listen(bool on);
uint32_t ftp_hostmail_doorbell(void);
bool ftp_hostmail_sleep(uint32_t seen, uint64_t timeout_ns);
void ftp_hostmail_wake_self(void);

/* The mailbox's doorbell (NULL without a mailbox: set before the
 * detector starts, cleared after it ended) and the value it had when the
 * last drain began. */
extern struct ft_doorbell *ftp_hostmail_bell;
extern _Atomic uint32_t ftp_hostmail_drained;
void ftp_hostmail_drain_polled(void);

/* For waiting loops that yield (ftp_poll_pause): take the mail if the
 * doorbell moved since the last drain (a revoke on its way through this
 * rank). */
static inline void ftp_hostmail_poll(void)
{
	struct ft_doorbell *bell = ftp_hostmail_bell;

	if (bell && __builtin_expect(atomic_load_explicit(&bell->rung, memory_order_relaxed) !=
					     atomic_load_explicit(&ftp_hostmail_drained, memory_order_relaxed),
				     0))
		ftp_hostmail_drain_polled();
}

#endif
