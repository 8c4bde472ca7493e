/* revoke.h: revocation's news (pmpi/revoke.c), on the detector thread: its
 * messages, failures, and communicators made and freed. */
#ifndef FTSHIM_PMPI_REVOKE_H
#define FTSHIM_PMPI_REVOKE_H

#include "pmpi/ftp.h"

/* Its messages and failures, on the detector thread; a new communicator
 * checked against the revokes already seen; a communicator's state about
 * to be freed. */
void ftp_revoke_on_msg(const struct ft_msg *m);
void ftp_revoke_on_failure(uint32_t rank);
void ftp_revoke_on_create(struct ft_comm *core);
void ftp_revoke_on_release(const struct ft_comm *core);

#endif
