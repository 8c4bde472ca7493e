/* runs.c: the nonblocking collectives of the program's on a team
 * (struct team_run): started with the program's call on a team the MPI
 * made, or once those before it are over on a view (a rebuilt team,
 * whose collectives share one tag), and started again on the new team
 * after a rebuild (team.c) once this process has run again what it owes
 * the members. coll.c starts them and takes their results; team.c
 * steps them whenever this process waits on a team, and asks how far
 * this process got. Application thread. */
#include "ftshim_config.h"

#include <stdlib.h>
#include <string.h>

#include "pmpi/mode/replication/runs.h"
#include "pmpi/mode/replication/coll_args.h"
#include "pmpi/view_coll.h"

/* The world ranks of e's team now, in program rank order (n of them). */
int32_t *ftp_repl_team_members(const struct ftp_comm *e)
{
	const struct ftp_repl_comm *x = ftp_repl_of(e);
	int32_t *w = malloc(((size_t)x->size + 1) * sizeof *w);

	for (uint32_t k = 0; w && k < x->size; k++)
		w[k] = ftp_repl_world_at(e, ftp_repl_lead_of(e, (int)k));
	return w;
}

struct ftp_view ftp_repl_team_view(const struct ftp_repl_comm *x, int32_t **members)
{
	*members = malloc(((size_t)x->size + 1) * sizeof **members);
	if (*members)
		memcpy(*members, x->team_view, x->size * sizeof **members);
	return (struct ftp_view){.chan = ftp_repl.stream,
				 .rank = *members,
				 .job = *members,
				 .n = x->size,
				 .me = x->team_view_me,
				 .tag = x->team_view_tag};
}

/* A nonblocking collective of the program's on e's team. On a team the
 * MPI made, it starts with the program's call, as the MPI's own
 * nonblocking collective; on a view (a rebuilt team), once the runs
 * before it are over, since a view runs one collective at a time under
 * its tag. A rebuild gives it up and starts it again on the new team,
 * from its logged input, once this process has run again what it owes
 * the members (those run first, in the same order everywhere). */
struct team_run {
	struct team_run *next;
	struct coll_rec *r; /* its log entry (pinned by coll.c): arguments and input */
	uint32_t epoch;	    /* of the team it was started on */
	bool started, over;
	int rc;		    /* once over */
	MPI_Request req;    /* on a team the MPI made */
	void *copy;	    /* ftp_coll_start's, for req */
	struct ftp_view_run *vrun; /* on a view: the round posted, vn requests */
	MPI_Request *vreqs;
	int vn;
	int32_t *members;   /* the view's members, which vrun reads */
	uint64_t events;    /* ftp_events() when it last looked for a lost member */
};

/* t's run on a team ends: done (err MPI_SUCCESS), or given up with err
 * (its team was rebuilt, or a member of it lost; what it posted is left
 * to the MPI, which may still use the program's buffers, as a blocking
 * collective given up on does). */
static void run_give_up(struct team_run *t, int err)
{
	if (t->vrun && err != MPI_SUCCESS)
		ftp_view_run_give_up(t->vrun, err);
	ftp_view_run_end(t->vrun);
	t->vrun = NULL;
	free(t->members);
	t->members = NULL;
	/* What the MPI may still read is left to it. */
	if (t->req == MPI_REQUEST_NULL)
		free(t->copy);
	t->copy = NULL;
	t->req = MPI_REQUEST_NULL; /* left to the MPI, never waited on */
	t->vn = 0;
}

/* t is over with rc (what a successful run posted has completed). */
static void run_over(struct team_run *t, int rc)
{
	run_give_up(t, rc);
	t->over = true;
	t->rc = rc;
}

/* Start t on e's team as it is now (again, after a rebuild: with its
 * logged input back in place). */
static void run_start(struct ftp_comm *e, struct team_run *t)
{
	struct ftp_repl_comm *x = ftp_repl_of(e);
	const struct coll_rec *r = t->r;
	int rc;

	if (t->started) {
		run_give_up(t, TEAM_REBUILT);
		if (r->in_rbuf && r->in_bytes)
			memcpy((char *)r->kept.a.rbuf + r->in_lb, r->in, r->in_bytes);
	}
	t->started = true;
	t->epoch = x->team_epoch;
	t->events = ftp_events();
	if (x->team_view) {
		struct ft_coll_args f;
		struct ftp_view_bufs b;
		struct ftp_view v = ftp_repl_team_view(x, &t->members);
		rc = t->members ? ftp_view_coll_args(&r->kept.a, &f, &b) : MPI_ERR_NO_MEM;
		if (rc == MPI_SUCCESS)
			rc = ftp_view_run_start(&v, &f, &b, &t->vrun);
		if (rc == MPI_SUCCESS)
			rc = ftp_view_run_step(t->vrun, &t->vn, &t->vreqs);
		if (rc != MPI_SUCCESS || t->vn == 0)
			run_over(t, rc);
		return;
	}
	rc = x->team == MPI_COMM_NULL ? FTP_ERR_PROC_FAILED
				      : ftp_coll_start(&r->kept.a, x->team, &t->req, &t->copy);
	if (rc != MPI_SUCCESS)
		run_over(t, rc);
}

/* A member of e's team died and no copy of its rank lives: the program's
 * failure, which ends its runs (a death another copy covers rebuilds the
 * team instead, once ftp_repl_views applies it). */
static bool team_lost(const struct ftp_comm *e)
{
	const struct ftp_repl_comm *x = ftp_repl_of(e);
	int32_t *w = ftp_repl_team_members(e);
	bool lost = false;

	for (uint32_t k = 0; w && k < x->size && !lost; k++)
		lost = w[k] < 0 || (ft_proc_ever_failed(&ftp.procs, (uint32_t)w[k]) &&
				    !ftp_repl_covered(w[k]));
	free(w);
	return lost;
}

/* Whether the n requests are done (each tested: GCC takes MPICH's
 * MPI_STATUSES_IGNORE for an empty array); *rc: the MPI's error. */
bool ftp_repl_reqs_done(int n, MPI_Request *reqs, int *rc)
{
	bool all = true;

	for (int i = 0; i < n && *rc == MPI_SUCCESS; i++) {
		int flag = 1;
		if (reqs[i] != MPI_REQUEST_NULL)
			*rc = ftp_mpi.PMPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE);
		all = all && flag;
	}
	return all;
}

/* Test what t has posted; take its next round on a view. */
static void run_test(struct ftp_comm *e, struct team_run *t)
{
	int flag = 0, rc = MPI_SUCCESS;

	if (t->vrun) {
		while (rc == MPI_SUCCESS && t->vn > 0 && ftp_repl_reqs_done(t->vn, t->vreqs, &rc) &&
		       rc == MPI_SUCCESS)
			rc = ftp_view_run_step(t->vrun, &t->vn, &t->vreqs);
		if (rc != MPI_SUCCESS || t->vn == 0) {
			run_over(t, rc);
			return;
		}
	} else {
		rc = ftp_mpi.PMPI_Test(&t->req, &flag, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS || flag) {
			run_over(t, rc);
			return;
		}
	}
	if (ftp_events() != t->events) {
		t->events = ftp_events();
		if (team_lost(e))
			run_over(t, FTP_ERR_PROC_FAILED);
	}
}

/* The collectives this process has completed on e's team, counting the
 * runs over whose result coll.c has not taken yet (the members of a
 * rebuilt team must not wait for this process to run them again). */
uint64_t ftp_repl_team_done(const struct ftp_repl_comm *x)
{
	uint64_t done = x->coll_done;

	for (const struct team_run *t = x->runs_head; t && t->over && t->rc == MPI_SUCCESS;
	     t = t->next)
		done = t->r->seq;
	return done;
}

/* After a rebuild that counted the collectives up to done as done here:
 * the runs after them run again on the new team, those over on the old
 * one included (the MPI's nonblocking collectives complete in any order,
 * and the members run on the new team every collective after the ones
 * they agreed on). */
void ftp_repl_runs_redo_after(struct ftp_repl_comm *x, uint64_t done)
{
	for (struct team_run *t = x->runs_head; t; t = t->next)
		if (t->r->seq > done && t->over) {
			t->over = false;
			t->rc = MPI_SUCCESS;
		}
}

/* This process owes e's rebuilt team collectives it runs again from the
 * log (replays_run): the runs after them wait. */
static bool replays_owed(const struct ftp_repl_comm *x)
{
	return x->runs_held || (x->replay_next && x->replay_next <= x->replay_hi &&
				x->replay_next <= ftp_repl_team_done(x));
}

/* Step e's runs in order: test what they posted, and start (again) those
 * that may start. Not reentered: a wait inside a step (none today) would
 * find the runs as they are. */
static void runs_step(struct ftp_comm *e)
{
	static bool stepping;
	struct ftp_repl_comm *x = ftp_repl_of(e);

	if (stepping)
		return;
	stepping = true;
	for (struct team_run *t = x->runs_head; t; t = t->next) {
		if (t->over)
			continue;
		if (!t->started || t->epoch != x->team_epoch) {
			if (replays_owed(x) || (x->team == MPI_COMM_NULL && !x->team_view))
				break;
			run_start(e, t);
		}
		if (!t->over)
			run_test(e, t);
		/* On a view, one at a time. */
		if (!t->over && t->vrun)
			break;
	}
	stepping = false;
}

/* Step the runs of every replicated communicator: a process waiting on
 * one team serves the others' collectives it is part of. */
void ftp_repl_runs_step_all(void)
{
	for (size_t i = 0; i < ftp_repl_ncomms; i++)
		if (ftp_repl_of(ftp_repl_comms[i])->runs_head)
			runs_step(ftp_repl_comms[i]);
}

struct team_run *ftp_repl_team_irun(struct ftp_comm *e, struct coll_rec *r)
{
	struct ftp_repl_comm *x = ftp_repl_of(e);
	struct team_run *t = calloc(1, sizeof *t);

	if (!t)
		return NULL;
	t->r = r;
	t->req = MPI_REQUEST_NULL;
	*(x->runs_tail ? &x->runs_tail->next : &x->runs_head) = t;
	x->runs_tail = t;
	runs_step(e);
	return t;
}

bool ftp_repl_team_irun_over(struct ftp_comm *e, const struct team_run *t, int *rc)
{
	if (!t->over)
		runs_step(e);
	*rc = t->rc;
	return t->over;
}

void ftp_repl_team_irun_end(struct ftp_comm *e, struct team_run *t)
{
	struct ftp_repl_comm *x = ftp_repl_of(e);
	struct team_run **p = &x->runs_head, *prev = NULL;

	while (*p && *p != t) {
		prev = *p;
		p = &(*p)->next;
	}
	if (!*p)
		return;
	*p = t->next;
	if (x->runs_tail == t)
		x->runs_tail = prev;
	if (!t->over)
		run_give_up(t, MPI_ERR_REQUEST);
	free(t);
}
