/* team.h: waiting on a team, and rebuilding the teams (team.c). */
#ifndef FTSHIM_PMPI_MODE_REPLICATION_TEAM_H
#define FTSHIM_PMPI_MODE_REPLICATION_TEAM_H

#include "pmpi/mode/replication/state.h"

/* Run a's collective on c's team while the team is the one of epoch,
 * whether the MPI's communicator or a view (after a rebuild): its rc,
 * TEAM_REBUILT once the team is rebuilt, or the failure that ended it.
 * *abandoned: given up while the MPI may still use its buffers (the
 * caller keeps them). */
int ftp_repl_team_run(struct ftp_call *c, const struct coll_args *a, uint32_t epoch,
		      bool *abandoned);
/* The hash of a team's members (world ranks, in order). */
uint64_t ftp_repl_team_hash(const int32_t *w, uint32_t n);
/* After a promotion: rebuild every team, and run again what some member
 * lacks. */
bool ftp_repl_teams_rebuild(void);

#endif
