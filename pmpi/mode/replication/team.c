/* team.c: a replicated communicator's team (its primaries and singles,
 * where collectives run): running a collective on it until it
 * completes, fails, or the team is rebuilt (ftp_repl_team_run, for
 * coll.c too); and after a promotion, rebuilding every team
 * (ftp_repl_teams_rebuild, from views.c): its members agree on it, take
 * it as a view on the stream (pmpi/view_coll.c runs its collectives),
 * and run again the logged collectives (coll_log.c) that some of them
 * had not completed (and then the runs of nonblocking collectives,
 * runs.c, start again on it). comm.c hashes a new team's members with
 * ftp_repl_team_hash. Application thread. */
#include "ftshim_config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi/mode/replication/team.h"
#include "pmpi/mode/replication/runs.h"
#include "pmpi/create_group.h"
#include "pmpi/mode/replication/coll_args.h"
#include "pmpi/view_coll.h"
#include "pmpi/agree.h"
#include "pmpi/detect.h"
#include "src/log.h"

/* Memory that a request given up on may still read or write (the
 * buffers of a collective abandoned on a team whose member died, the data
 * of a send to a peer that is dead or slow): neither MPI can cancel such
 * a request, so the memory is kept, reachable, for the rest of the
 * process instead of being freed under it. Only failures add to it.
 * Application thread. */
struct held {
	struct held *next;
	max_align_t data[];
};
static struct held *held_list;

/* bytes of memory that held_release may keep. */
static void *held_alloc(size_t bytes)
{
	struct held *h = malloc(sizeof *h + bytes + 1);

	return h ? h->data : NULL;
}

/* Done with p from held_alloc: freed, unless in_use (a request given up
 * on may still use it). */
static void held_release(void *p, bool in_use)
{
	if (!p)
		return;
	struct held *h = (struct held *)((char *)p - offsetof(struct held, data));
	if (in_use) {
		h->next = held_list;
		held_list = h;
	} else {
		free(h);
	}
}

/* One step of waiting on c's team while it is the one of epoch, after a
 * test found the work not done: MPI_SUCCESS to go on waiting, else why
 * not. A member's death that a promotion covers rebuilds the team
 * (ftp_repl_views): TEAM_REBUILT. Other failures are the call's, as for
 * any collective. Inside a view change, a member's death ends the call,
 * and the next view rebuilds; *events starts at UINT64_MAX so that one
 * learned before the wait began counts too. */
static int team_step(struct ftp_call *c, uint32_t epoch, uint64_t *seen, uint64_t *polls,
		     uint64_t *events)
{
	struct ftp_repl_comm *x = ftp_repl_of(c->comm);
	int err = ftp_poll_step(c, false, seen, polls);

	if (x->team_epoch != epoch)
		return TEAM_REBUILT;
	if (err != MPI_SUCCESS)
		return err;
	if (ftp_events() != *events && ftp_repl_in_views) {
		*events = ftp_events();
		int32_t *w = ftp_repl_team_members(c->comm);
		bool dead = false;
		for (uint32_t k = 0; w && k < x->size && !dead; k++)
			dead = w[k] < 0 || ft_proc_ever_failed(&ftp.procs, (uint32_t)w[k]);
		free(w);
		if (dead)
			return FTP_ERR_PROC_FAILED;
	}
	return MPI_SUCCESS;
}

/* Wait for the requests of a round (or the one of a collective) on c's
 * team while the team is the one of epoch (see team_step). */
struct team_round {
	struct ftp_call *c;
	uint32_t epoch;
};

static int team_round_wait(void *arg, int n, MPI_Request *reqs)
{
	struct team_round *t = arg;
	uint64_t seen = 0, polls = 0, events = UINT64_MAX;
	int rc;

	for (;;) {
		rc = MPI_SUCCESS;
		bool all = ftp_repl_reqs_done(n, reqs, &rc);
		if (rc != MPI_SUCCESS)
			return rc;
		if (all)
			return MPI_SUCCESS;
		ftp_repl_runs_step_all();
		if ((rc = team_step(t->c, t->epoch, &seen, &polls, &events)) != MPI_SUCCESS)
			return rc;
	}
}

/* Wait for the collective c started on the MPI's team (rc, c->req). A
 * collective given up on is left to the MPI, as a failed collective is,
 * and stays in c->req (never to be waited on or freed): the memory it
 * reads or writes must outlive it. */
static int team_wait(struct ftp_call *c, int rc, uint32_t epoch)
{
	if (rc != MPI_SUCCESS) {
		c->req = MPI_REQUEST_NULL;
		return rc;
	}
	return team_round_wait(&(struct team_round){.c = c, .epoch = epoch}, 1, &c->req);
}

int ftp_repl_team_run(struct ftp_call *c, const struct coll_args *a, uint32_t epoch,
		      bool *abandoned)
{
	struct ftp_repl_comm *x = ftp_repl_of(c->comm);

	*abandoned = false;
	c->watch = (struct ftp_watch){.kind = FTP_WATCH_ALL};
	if (x->team_view) {
		/* Its own copy of the members: a rebuild while it waits
		 * replaces the team's. */
		int32_t *members;
		struct ftp_view v = ftp_repl_team_view(x, &members);
		struct ft_coll_args f;
		struct ftp_view_bufs b;
		struct team_round t = {.c = c, .epoch = epoch};
		int rc = members ? ftp_view_coll_args(a, &f, &b) : MPI_ERR_NO_MEM;
		if (rc == MPI_SUCCESS) {
			c->real = ftp_repl.stream;
			rc = ftp_view_coll(&v, &f, &b, team_round_wait, &t, abandoned);
		}
		free(members);
		return rc;
	}
	c->real = x->team;
	if (x->team == MPI_COMM_NULL)
		return FTP_ERR_PROC_FAILED;
	void *copy = NULL;
	int rc = team_wait(c, ftp_coll_start(a, x->team, &c->req, &copy), epoch);
	*abandoned = c->req != MPI_REQUEST_NULL;
	if (!*abandoned)
		free(copy);
	return rc;
}

/* Run logged collective r again on e's team, with a copy of its input
 * and its output thrown away, for members that had not completed it.
 * MPI_SUCCESS, or the failure that ended it. */
static int coll_replay(struct ftp_comm *e, const struct coll_rec *r)
{
	struct ftp_call c = FTP_CALL_INIT(r->kept.a.fn);
	struct coll_args a = r->kept.a;
	struct coll_span in, out;
	MPI_Aint out_lb = 0;

	ftp_call_on(&c, e, (struct ftp_watch){.kind = FTP_WATCH_ALL});
	ftp_repl_coll_spans(e, &r->kept.a, &in, &out);
	size_t out_bytes = ftp_repl_bytes_of(out.type, out.count, &out_lb);
	if (r->in_rbuf) {
		out_lb = r->in_lb;
		if (out_bytes < r->in_bytes)
			out_bytes = r->in_bytes;
	}
	/* The output, then a copy of the input (the log may drop its own
	 * while an abandoned run still reads it). */
	unsigned char *scratch = held_alloc(out_bytes + r->in_bytes);
	if (!scratch)
		return MPI_ERR_NO_MEM;
	if (r->in_bytes)
		memcpy(scratch + (r->in_rbuf ? 0 : out_bytes), r->in, r->in_bytes);
	if (a.rbuf != MPI_IN_PLACE)
		a.rbuf = scratch - out_lb;
	if (a.sbuf != MPI_IN_PLACE && !r->in_rbuf && r->in)
		a.sbuf = scratch + out_bytes - r->in_lb;
	bool abandoned = false;
	int rc = ftp_repl_team_run(&c, &a, ftp_repl_of(e)->team_epoch, &abandoned);
	held_release(scratch, abandoned);
	return rc;
}

/* Team rebuilds: the tag of the MPI_Comm_create_group that makes one
 * (a function of its members, so that processes that see different
 * members never take part in one another's). */
uint64_t ftp_repl_team_hash(const int32_t *w, uint32_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (uint32_t i = 0; i < n; i++)
		h = (h ^ (uint32_t)w[i]) * 1099511628211ull;
	return h;
}

static int team_tag(const int32_t *w, uint32_t n)
{
	return 0x1000 + (int)(ftp_repl_team_hash(w, n) % 0x6000);
}

/* Teams rebuilt as views need tags on the stream above every other tag
 * of it (state.h's go up to TAG_DATA + TAG_DATA_SLOTS). */
#define VIEW_TAG_FIRST 32768

static bool views_usable(void)
{
	return ftp.coll_tag_ub >= 2 * VIEW_TAG_FIRST;
}

/* The tag of the collectives of communicator id's team of members whose
 * hash is team: the same at every member (whatever rebuilds each went
 * through), and another for each team (a rebuild changes the members),
 * so that what an abandoned collective left behind is not matched
 * again. */
static int view_tag(uint64_t id, uint64_t team)
{
	uint64_t h = (id * UINT64_C(0x9e3779b97f4a7c15)) ^ team;

	return VIEW_TAG_FIRST + (int)((h >> 17) % (uint64_t)(ftp.coll_tag_ub - VIEW_TAG_FIRST));
}

/* What team_rebuild gives when a member of the team to be is found dead
 * meanwhile: apply the view again, and rebuild then. */
#define TEAM_VIEW_CHANGED (-0x7ea4)
/* ... when the team is the one it has (what it owes from the last
 * rebuild, it still runs), */
#define TEAM_UNCHANGED (-0x7ea5)
/* ... and when it will run no collective again (a member is in
 * MPI_Finalize). */
#define TEAM_ENDING (-0x7ea6)

/* rc of a step of rebuilding e's team (agreeing, making it, running a
 * collective on it): a member found dead meanwhile whose other copy
 * lives is a view change, after which the rebuilds start over; any other
 * failure stands (a rank whose last copy died is the program's). */
static int rebuild_rc(const struct ftp_comm *e, int rc)
{
	if (rc == MPI_SUCCESS || rc == TEAM_VIEW_CHANGED || rc == TEAM_UNCHANGED ||
	    rc == TEAM_ENDING)
		return rc;
	const struct ftp_repl_comm *x = ftp_repl_of(e);
	int32_t *w = ftp_repl_team_members(e);
	bool moved = false;
	for (uint32_t k = 0; w && k < x->size && !moved; k++)
		moved = w[k] >= 0 && ft_proc_ever_failed(&ftp.procs, (uint32_t)w[k]) &&
			ftp_repl_covered(w[k]);
	free(w);
	return moved ? TEAM_VIEW_CHANGED : rc;
}

/* The latest team agreement message heard from each process for each
 * communicator (team_agree): one may come before this process needs it
 * (its sender learned a death first). Application thread. */
struct team_hello {
	int32_t from;
	uint64_t comm, hash;
	struct team_hello *next;
};
static struct team_hello *hellos;

static struct team_hello *hello_of(int32_t from, uint64_t comm)
{
	for (struct team_hello *h = hellos; h; h = h->next)
		if (h->from == from && h->comm == comm)
			return h;
	return NULL;
}

static void hello_heard(int32_t from, const uint64_t v[2])
{
	struct team_hello *h = hello_of(from, v[0]);

	if (!h && (h = calloc(1, sizeof *h)) != NULL) {
		h->from = from;
		h->comm = v[0];
		h->next = hellos;
		hellos = h;
	}
	if (h)
		h->hash = v[1];
}

/* The members of a team to be (w[0..n), this process among them, of
 * communicator comm) agree that it is the team before the MPI makes it:
 * each tells every other the team's hash and hears the same from each,
 * on the stream (the latest heard from each counts: from one sender they
 * arrive in order, and views only grow). A process that has not learned a death
 * yet would name a dead member, whose MPI_Comm_create_group would never
 * return: it waits here until it learns it (TEAM_VIEW_CHANGED). */
static int team_agree(uint64_t comm, const int32_t *w, uint32_t n)
{
	uint64_t *mine = held_alloc(2 * sizeof *mine);
	MPI_Request *sent = malloc(((size_t)n + 1) * sizeof *sent);
	int rc = MPI_SUCCESS;
	bool unsent = false;

	if (!mine || !sent) {
		held_release(mine, false);
		free(sent);
		return MPI_ERR_NO_MEM;
	}
	mine[0] = comm;
	mine[1] = ftp_repl_team_hash(w, n);

	ft_debug("replication: team agreement on communicator %llx, hash %016llx, %u members",
		 (unsigned long long)comm, (unsigned long long)mine[1], n);
	for (uint32_t k = 0; rc == MPI_SUCCESS && k < n; k++) {
		sent[k] = MPI_REQUEST_NULL;
		if (w[k] != ftp.rank)
			ftp_mpi.PMPI_Isend(mine, 2, MPI_UINT64_T, w[k], TAG_TEAM, ftp_repl.stream,
					   &sent[k]);
	}
	for (uint32_t k = 0; rc == MPI_SUCCESS && k < n; k++) {
		uint64_t polls = 0;
		const struct team_hello *h;
		while (rc == MPI_SUCCESS && w[k] != ftp.rank &&
		       (!(h = hello_of(w[k], comm)) || h->hash != mine[1])) {
			uint64_t got[2] = {0, 0};
			MPI_Request r = MPI_REQUEST_NULL;
			MPI_Status st;
			int flag = 0, cancelled = 0;
			ftp_mpi.PMPI_Irecv(got, 2, MPI_UINT64_T, w[k], TAG_TEAM, ftp_repl.stream, &r);
			while (rc == MPI_SUCCESS && !flag) {
				ftp_mpi.PMPI_Test(&r, &flag, MPI_STATUS_IGNORE);
				for (uint32_t j = 0; !flag && j < n; j++)
					if (ft_proc_ever_failed(&ftp.procs, (uint32_t)w[j]))
						rc = TEAM_VIEW_CHANGED;
					else if (ftp_departed((uint32_t)w[j]))
						rc = TEAM_ENDING; /* in MPI_Finalize: no collective is left */
				if (!flag)
					ftp_poll_pause(&polls);
			}
			if (!flag) {
				ftp_mpi.PMPI_Cancel(&r);
				ftp_mpi.PMPI_Wait(&r, &st);
				ftp_mpi.PMPI_Test_cancelled(&st, &cancelled);
				flag = !cancelled;
			}
			if (flag)
				hello_heard(w[k], got);
		}
	}
	for (uint32_t k = 0; k < n; k++) {
		int done = 0;
		if (sent[k] != MPI_REQUEST_NULL &&
		    ftp_mpi.PMPI_Test(&sent[k], &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) {
			ftp_mpi.PMPI_Request_free(&sent[k]); /* delivered later, or its peer is dead */
			unsent = true;
		}
	}
	free(sent);
	held_release(mine, unsent);
	return rc;
}

/* Make e's team again from the copies that stand for its program ranks
 * now (collective over them), and learn how far the furthest of them
 * got in e's collectives, and the least (replay_hi, replay_lo): what
 * this process then owes them to run again. */
static int team_rebuild(struct ftp_comm *e)
{
	struct ftp_repl_comm *x = ftp_repl_of(e);
	int32_t *w = ftp_repl_team_members(e);
	MPI_Comm team = MPI_COMM_NULL;
	int rc = w ? MPI_SUCCESS : MPI_ERR_NO_MEM;

	for (uint32_t k = 0; rc == MPI_SUCCESS && k < x->size; k++)
		if (w[k] < 0)
			rc = FTP_ERR_PROC_FAILED; /* a rank with no copy left */
		else if (ft_proc_ever_failed(&ftp.procs, (uint32_t)w[k]))
			rc = ftp_repl_covered(w[k]) ? TEAM_VIEW_CHANGED
						    : FTP_ERR_PROC_FAILED; /* its last copy died */
	if (rc == MPI_SUCCESS && ftp_repl_team_hash(w, x->size) == x->team_hash) {
		free(w);
		return TEAM_UNCHANGED;
	}
	if (rc == MPI_SUCCESS)
		rc = team_agree(e->core->id, w, x->size);
	if (rc == TEAM_ENDING)
		x->replay_next = 0;
	if (rc == TEAM_VIEW_CHANGED || rc == TEAM_ENDING) {
		free(w);
		return rc;
	}
	if (rc == MPI_SUCCESS)
		x->team_hash = ftp_repl_team_hash(w, x->size);
	if (rc == MPI_SUCCESS && views_usable()) {
		/* A view on the stream: no creation a member's death could
		 * leave the others inside. */
		free(x->team_view);
		x->team_view = w;
		x->team_view_tag = view_tag(e->core->id, x->team_hash);
		for (uint32_t k = 0; k < x->size; k++)
			if (w[k] == ftp.rank)
				x->team_view_me = k;
		w = NULL;
	} else if (rc == MPI_SUCCESS) {
		/* From the stream, which nothing receives from with MPI_ANY_TAG:
		 * Open MPI's MPI_Comm_create_group sends with its tag on the
		 * parent, and a program's receive from MPI_ANY_SOURCE and
		 * MPI_ANY_TAG on e would take those messages. */
		rc = ftp_create_group_of(ftp_repl.stream, w, x->size, team_tag(w, x->size),
					 FTP_FN_MPI_Comm_create_group, &team);
	}
	free(w);
	/* The old team is never freed: a collective abandoned on it may
	 * still have receives posted, which would take the messages of a
	 * communicator that reused its context. */
	x->team = rc == MPI_SUCCESS ? team : MPI_COMM_NULL;
	if (team != MPI_COMM_NULL)
		ftp_mpi.PMPI_Comm_set_errhandler(team, MPI_ERRORS_RETURN);
	x->team_epoch++;
	x->replay_next = 0;
	if (rc != MPI_SUCCESS)
		return rebuild_rc(e, rc);
	/* A promoted replica has the results of fwd_count (and
	 * fwd_in_flight) more. */
	int64_t done = (int64_t)(ftp_repl_team_done(x) + x->fwd_count + x->fwd_in_flight);
	ftp_repl_runs_redo_after(x, ftp_repl_team_done(x));
	int64_t *mine = held_alloc(4 * sizeof *mine), *all = mine + 2;
	if (!mine)
		return MPI_ERR_NO_MEM;
	mine[0] = done;
	mine[1] = -done;
	all[0] = all[1] = 0;
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Allreduce);
	ftp_call_on(&c, e, (struct ftp_watch){.kind = FTP_WATCH_ALL});
	struct coll_args how_far = {.fn = FTP_FN_MPI_Allreduce,
				    .sbuf = mine,
				    .rbuf = all,
				    .rcount = 2,
				    .stype = MPI_DATATYPE_NULL,
				    .rtype = MPI_INT64_T,
				    .op = MPI_MAX};
	bool abandoned = false;
	rc = ftp_repl_team_run(&c, &how_far, x->team_epoch, &abandoned);
	uint64_t hi = (uint64_t)all[0], lo = (uint64_t)-all[1];
	held_release(mine, abandoned);
	ft_debug("replication: team of communicator %llx rebuilt (%d): collectives %lld done here, "
		 "%llu to %llu by its members",
		 (unsigned long long)e->core->id, rc, (long long)done, (unsigned long long)lo,
		 (unsigned long long)hi);
	if (rc != MPI_SUCCESS)
		return rebuild_rc(e, rc);
	x->replay_lo = lo;
	x->replay_hi = hi;
	x->replay_next = lo + 1;
	return rc;
}

/* Run again on e's team the collectives this process owes its members
 * (see replay_next). MPI_SUCCESS, or the rc of the one that failed. */
static int replays_run(struct ftp_comm *e)
{
	struct ftp_repl_comm *x = ftp_repl_of(e);
	int rc = MPI_SUCCESS;

	for (; rc == MPI_SUCCESS && x->replay_next && x->replay_next <= x->replay_hi &&
	       x->replay_next <= ftp_repl_team_done(x);
	     x->replay_next++) {
		uint64_t s = x->replay_next;
		const struct coll_rec *r = x->coll_log;
		while (r && r->seq != s)
			r = r->next;
		if (!r) {
			ft_error("rank %d cannot run collective %llu on a communicator again for the "
				 "ranks that lack it: it is no longer in its log "
				 "(FTSHIM_REPLICA_LOG_MIB=%llu); the job ends",
				 ftp_repl.plan.logical_of[ftp.rank], (unsigned long long)s,
				 (unsigned long long)ftp.cfg.replica_log_mib);
			ftp_mpi.PMPI_Abort(ftp.world, 1);
		}
		ft_debug("replication: collective %llu run again for the ranks that lack it",
			 (unsigned long long)s);
		rc = rebuild_rc(e, coll_replay(e, r));
		if (rc != MPI_SUCCESS) {
			ft_debug("replication: collective %llu not run again: %d", (unsigned long long)s,
				 rc);
			break; /* replay_next stays: owed if this team stays */
		}
	}
	if (rc != TEAM_VIEW_CHANGED)
		x->replay_next = 0;
	return rc;
}

/* The replicated communicators in the order of their ids, the same on
 * every process that holds them. */
static int by_id(const void *a, const void *b)
{
	uint64_t x = (*(struct ftp_comm *const *)a)->core->id, y = (*(struct ftp_comm *const *)b)->core->id;

	return x < y ? -1 : x > y;
}

/* After a promotion, on a process of the teams: rebuild the team of
 * every replicated communicator, then run again, with the members that
 * had not, the collectives this process completed that some member had
 * not (it waits here until they reach them). False if a member died
 * meanwhile whose other copy lives: apply that death, and call again. */
bool ftp_repl_teams_rebuild(void)
{
	size_t n = ftp_repl_ncomms;
	struct ftp_comm **comms = malloc((n + 1) * sizeof *comms);
	int *rc = malloc((n + 1) * sizeof *rc);

	if (!comms || !rc) {
		ft_error("out of memory rebuilding the teams after a promotion: the job ends");
		ftp_mpi.PMPI_Abort(ftp.world, 1);
	}
	memcpy(comms, ftp_repl_comms, n * sizeof *comms);
	qsort(comms, n, sizeof *comms, by_id);
	bool changed = false;
	/* No run starts again on a team until its members agreed on how far
	 * each got (team_rebuild) and this process ran what it owes. */
	for (size_t i = 0; i < n; i++)
		ftp_repl_of(comms[i])->runs_held = true;
	for (size_t i = 0; i < n && !changed; i++) {
		rc[i] = team_rebuild(comms[i]);
		changed = rc[i] == TEAM_VIEW_CHANGED;
	}
	for (size_t i = 0; i < n && !changed; i++) {
		ftp_repl_of(comms[i])->runs_held = false;
		if (rc[i] == MPI_SUCCESS || rc[i] == TEAM_UNCHANGED)
			changed = replays_run(comms[i]) == TEAM_VIEW_CHANGED;
	}
	for (size_t i = 0; i < n; i++)
		ftp_repl_of(comms[i])->runs_held = false;
	free(comms);
	free(rc);
	return !changed;
}
