/* view_coll.h: a collective run as point-to-point steps among the members
 * of a view (pmpi/view_coll.c). */
#ifndef FTSHIM_PMPI_VIEW_COLL_H
#define FTSHIM_PMPI_VIEW_COLL_H

#include <stdbool.h>
#include <stdint.h>

#include "pmpi/block.h"
#include "pmpi/coll_forms.h"
#include "src/coll_sched.h"

/* Processes that run collectives together without a communicator of
 * their own made by the MPI: n members, this process member `me`, whose
 * messages travel on chan (rank[i]: member i's rank there; job[i]: its
 * job rank) with one tag. The caller owns the arrays. */
struct ftp_view {
	MPI_Comm chan;
	const int32_t *rank, *job;
	uint32_t n, me;
	int tag;
};

/* A collective's buffers, as MPI names them (sbuf may be MPI_IN_PLACE);
 * an MPI_Alltoallw's types, one per member (its stype and rtype are
 * MPI_BYTE, the unit of its displacements). */
struct ftp_view_bufs {
	const void *sbuf;
	MPI_Datatype stype;
	void *rbuf;
	MPI_Datatype rtype;
	const MPI_Datatype *stypes, *rtypes;
	MPI_Op op;
};

/* The caller's wait for the n requests of one round: MPI_SUCCESS once
 * all completed, else the error that ends the collective (a member's
 * death, say), after which the round is given up. */
typedef int (*ftp_view_wait_fn)(void *arg, int n, MPI_Request *reqs);

/* Run a's collective among v's members (every member calls it, in the
 * same order as its other collectives on v's tag). MPI_SUCCESS, the
 * wait's error, or the MPI's. *abandoned: a round was given up, and the
 * MPI may still read the buffers of its sends (the caller keeps them). */
int ftp_view_coll(const struct ftp_view *v, const struct ft_coll_args *a,
		  const struct ftp_view_bufs *b, ftp_view_wait_fn wait, void *arg, bool *abandoned);

/* The same in steps, for a caller that cannot block (a nonblocking
 * collective, progressed from the completion calls): start (*run, to
 * end whatever the result), then step: MPI_SUCCESS with the n requests
 * of the round now posted (n == 0: the collective is done), or an error
 * (the round given up); once the caller has seen the n requests
 * complete, step again; give_up abandons the round posted, with err. end
 * frees the run and says whether a round was abandoned (its sends' and
 * scratch buffers may still be read by the MPI: the scratch is kept). */
struct ftp_view_run;
int ftp_view_run_start(const struct ftp_view *v, const struct ft_coll_args *a,
		       const struct ftp_view_bufs *b, struct ftp_view_run **run);
int ftp_view_run_step(struct ftp_view_run *run, int *n, MPI_Request **reqs);
void ftp_view_run_give_up(struct ftp_view_run *run, int err);
bool ftp_view_run_end(struct ftp_view_run *run);

/* a's collective (a blocking one of pmpi/coll_forms.h) as a schedule of
 * point-to-point steps names it (src/coll_sched.h), with its buffers:
 * MPI_SUCCESS, or MPI_ERR_INTERN for a call with no schedule. */
int ftp_view_coll_args(const struct coll_args *a, struct ft_coll_args *f, struct ftp_view_bufs *b);

/* Where a communicator's next collective runs, for a cover kind whose
 * collectives run on a view: called once per collective that starts
 * (every member numbers them alike, as MPI has every member call them in
 * the same order), after its arguments were found good. */
typedef struct ftp_view (*ftp_view_on_fn)(const struct ftp_comm *e);

/* The calls table of such a kind: the forms of every collective that has
 * a schedule, blocking and nonblocking, and the matched probes
 * (pmpi/held_msg.h), whose message a matched receive of the MPI's would
 * report in the ranks of the MPI's communicator (struct
 * ftp_cover_kind.calls). */
struct ftp_mode_calls;
extern const struct ftp_mode_calls ftp_view_coll_calls;

/* A cover kind's runners on a view (struct ftp_cover_kind.coll and
 * .icoll): run a's collective for the call c on on(c->comm), watching
 * every member, and return through c's post. The blocking one waits a
 * round at a time; a member's death or a revocation fails it (once the
 * round could not complete anyway). The nonblocking one builds the
 * schedule and posts its first round now (the program's arrays are not
 * read after) and is progressed from the completion calls. Either frees
 * owned (or NULL: nothing) once the collective is over, unless a round
 * was given up (then the MPI may still read it, and it is kept). The
 * watch is every member, or, if the call's pre-check set FTP_WATCH_LIVE,
 * every member that MPI_Comm_validate_all did not agree failed. */
int ftp_view_coll_call(struct ftp_call *c, const struct coll_args *a, ftp_view_on_fn on, void *owned);
int ftp_view_icoll_call(struct ftp_call *c, const struct coll_args *a, ftp_view_on_fn on,
			void *owned, MPI_Request *request);

#endif
