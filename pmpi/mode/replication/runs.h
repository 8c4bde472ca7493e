/* runs.h: nonblocking collectives' runs on a team (runs.c). */
#ifndef FTSHIM_PMPI_MODE_REPLICATION_RUNS_H
#define FTSHIM_PMPI_MODE_REPLICATION_RUNS_H

#include "pmpi/mode/replication/state.h"
#include "pmpi/view_coll.h"

struct team_run;

/* Run r's collective (logged and pinned, its seq the next started) on
 * e's team after the runs before it: a run that team.c steps whenever
 * this process waits on a team, and that this function and the two
 * below step too. NULL: out of memory. */
struct team_run *ftp_repl_team_irun(struct ftp_comm *e, struct coll_rec *r);
/* Step e's runs; whether t is over (then *rc is its result). */
bool ftp_repl_team_irun_over(struct ftp_comm *e, const struct team_run *t, int *rc);
/* The caller is done with t (over, or abandoned): free it. */
void ftp_repl_team_irun_end(struct ftp_comm *e, struct team_run *t);
/* Step the runs of every replicated communicator: a process waiting on
 * one team serves the others' collectives it is part of. */
void ftp_repl_runs_step_all(void);
/* The collectives this process has completed on x's team, counting the
 * runs over whose result coll.c has not taken yet, up to the first one
 * not over (the MPI completes its own in any order). */
uint64_t ftp_repl_team_done(const struct ftp_repl_comm *x);
/* After a rebuild that counted x's collectives up to done as done here:
 * the runs after them run again on the new team, those over on the old
 * one included. */
void ftp_repl_runs_redo_after(struct ftp_repl_comm *x, uint64_t done);
/* The world ranks of e's team now, in program rank order (malloc'd,
 * NULL if out of memory). */
int32_t *ftp_repl_team_members(const struct ftp_comm *e);
/* x's team as a view (x->team_view set), on a copy of its members in
 * *members (malloc'd, the caller's; NULL if out of memory). */
struct ftp_view ftp_repl_team_view(const struct ftp_repl_comm *x, int32_t **members);
/* Whether the n requests are done, each tested; *rc: the MPI's error. */
bool ftp_repl_reqs_done(int n, MPI_Request *reqs, int *rc);

#endif
