/* comm_health.h: what failures did to a communicator (comm_health.c). */
#ifndef FTSHIM_PMPI_COMM_HEALTH_H
#define FTSHIM_PMPI_COMM_HEALTH_H

#include <stdbool.h>
#include <stdint.h>

#include "pmpi/comm_lookup.h"

/* Has a member (of either group) failed, as of events (ftp.events)? A
 * member re-admitted since (FTSHIM_READMIT), this process included,
 * still counts: a communicator that lost a member stays so (ULFM). A
 * member whose program rank the recovery mode carries on does not. */
bool ftp_comm_failed_member(struct ftp_comm *e, uint64_t events);
/* A failure of a member that e has not acknowledged (nor recognized,
 * pmpi/rts.c). */
bool ftp_comm_unacked_failure(struct ftp_comm *e);
/* Was e revoked, or has a member failed? Then messages for abandoned
 * operations may still be on their way to it (pmpi/retire.c). */
bool ftp_comm_tainted(struct ftp_comm *e);

#endif
