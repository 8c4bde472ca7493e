/* revoke.h: revocation's news (pmpi/revoke.c), on the detector thread: its
 * messages, failures, and communicators made and freed. */
#ifndef FTSHIM_PMPI_REVOKE_H
#define FTSHIM_PMPI_REVOKE_H

#include "pmpi/listen.h"
#include "pmpi/state.h"

/* Its messages and failures (on the detector thread); a new
 * communicator checked against the revokes already seen; a
 * communicator's state about to be freed. */
extern const struct ftp_listener ftp_revoke_listener;

#endif
