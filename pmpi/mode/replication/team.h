/* team.h: waiting on a team, and rebuilding the teams (team.c). */
#ifndef FTSHIM_PMPI_MODE_REPLICATION_TEAM_H
#define FTSHIM_PMPI_MODE_REPLICATION_TEAM_H

#include "pmpi/mode/replication/state.h"

/* Wait for the collective c started on e's team while the team is the
 * one of epoch: TEAM_REBUILT once it is rebuilt. One given up on stays
 * in c->req, left to the MPI: its memory must outlive it. */
int ftp_repl_team_wait(struct ftp_call *c, int rc, uint32_t epoch);
/* The hash of a team's members (world ranks, in order). */
uint64_t ftp_repl_team_hash(const int32_t *w, uint32_t n);
/* After a promotion: rebuild every team, and run again what some member
 * lacks. */
bool ftp_repl_teams_rebuild(void);

#endif
