/* internal.h: what the files of pmpi/mode/replication/ share, and nothing
 * outside this folder may include: the tags and records of the stream,
 * the predicates on who is whom, the state that more than one file reads
 * (each says who writes it and who reads it), the types of the receives,
 * collectives and forwarded results they pass each other, and their
 * functions, grouped by the file that defines them. Every symbol here is
 * hidden (the library is built with -fvisibility=hidden and exports only
 * what is marked FT_EXPORT). Everything runs on the application thread:
 * replication assumes the program calls MPI from one thread at a time
 * (replica.h). */
#ifndef FTSHIM_PMPI_MODE_REPLICATION_INTERNAL_H
#define FTSHIM_PMPI_MODE_REPLICATION_INTERNAL_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmpi/mode/replication/replica.h"
#include "pmpi/requests.h"
#include "src/repl_log.h"

/* Tags on the stream: records, the counts a copy gives the survivor of
 * a logical rank that lost a copy, the agreement on a rebuilt team
 * (team_agree, team.c), and from TAG_DATA on, the forwarded
 * results of each communicator (struct ftp_repl_comm.stream_tag). */
enum { TAG_DECIDE = 1, TAG_COUNTS = 3, TAG_TEAM = 4, TAG_DATA = 16, TAG_DATA_SLOTS = 32000 };

/* Records of up to this many completions live on the stack. */
#define STACK_ENTRIES 16
#define REC_HEAD 2

/* What a follower's read of the stream gives once its primary is dead
 * and nothing it sent is left: the follower decides for itself from then
 * on (ftp_repl_carry_on), and the call goes on as a single's. Never
 * reaches the program. */
#define STREAM_ENDED (-0x5e1d)

/* What waiting on the team gives when the team was rebuilt meanwhile:
 * the call runs again on the new one. Never reaches the program. */
#define TEAM_REBUILT (-0x7ea3)

/* --- who is whom --------------------------------------------------------- */

/* Whether world rank w is a replica (a copy that may be dropped). */
static inline bool ftp_repl_is_replica_world(int32_t w)
{
	return w >= 0 && ft_replica_plan_is_replica(&ftp_repl.plan, w);
}

/* This process receives as a replica does: from replicas, and from the
 * only copy of a rank that has no replica (replica.h). */
static inline bool ftp_repl_replica_class(void)
{
	return ftp_repl.copy == FTP_COPY_REPLICA || ftp_repl.copy == FTP_COPY_PROMOTED;
}

/* This process reads what its primary tells it (a promoted replica, until
 * the stream from its dead primary runs dry). */
static inline bool ftp_repl_following(void)
{
	return ftp_repl.partner >= 0 && ftp_repl_replica_class();
}

/* The world rank of the copy at rank q of e's real communicator. */
static inline int32_t ftp_repl_world_at(const struct ftp_comm *e, int q)
{
	return ftp_job_at(e->core, q);
}

/* The real rank in e of the copy that stands for program rank k before
 * the others: its primary or single, or its replica once that carries
 * on alone. */
static inline int ftp_repl_lead_of(const struct ftp_comm *e, int k)
{
	return ft_rank_map_lead(e->map, k);
}

/* The real rank in e of program rank k's copy in slot s (its primary or
 * single: FT_SLOT_PRIMARY, its replica: FT_SLOT_REPLICA), or -1 (none,
 * or it died): the entry's one map holds both (src/rank_map.h). */
static inline int32_t ftp_repl_copy(const struct ftp_comm *e, int k, enum ft_copy_slot s)
{
	return ft_rank_map_copy(e->map, k, (uint32_t)s);
}

/* World rank w has another copy (living or not): a send to it that fails
 * may be one its other copy makes good. */
static inline bool ftp_repl_has_copy(int32_t w)
{
	return w >= 0 && ftp_repl.copy_of && ftp_repl.copy_of[w] >= 0;
}

/* The program ranks of e. */
static inline int ftp_repl_coll_size(const struct ftp_comm *e)
{
	return (int)ftp_repl_of(e)->size;
}

/* --- state more than one file reads -------------------------------------- */

/* Every replicated communicator this process holds (their views change
 * when a copy dies): comm.c adds and removes them (ftp_repl_derive,
 * ftp_repl_release); views.c, counts.c, promote.c and team.c walk them.
 * Application thread. */
extern struct ftp_comm **ftp_repl_comms;
extern size_t ftp_repl_ncomms;

/* What this process counted of its messages on replicated communicators
 * and, a primary, the bytes of its latest sends to replicated ranks
 * (src/repl_log.h; counts.c): set up by setup.c (ftp_repl_plan); p2p.c
 * counts and logs sends, recv.c counts receives, counts.c reads both and
 * sets what to skip after a death, counts.c and promote.c end the log
 * once no copy can need it, comm.c drops a communicator's entries.
 * Application thread. */
extern struct ft_msg_table ftp_repl_msg_counts;
extern struct ft_send_log ftp_repl_send_log;

/* A replica's stdout and stderr as they were, before they went to the
 * run directory (-1: not moved; setup.c): setup.c moves them at
 * MPI_Init, promote.c (ftp_repl_carry_on) puts them back. Application
 * thread. */
extern int ftp_repl_terminal_fd[2];

/* The pending receives that a death may move, in posting order (struct
 * peer_recv; recv.c): recv.c links and unlinks them; views.c and
 * promote.c walk them to settle and move those from a dead copy.
 * Application thread. */
extern struct peer_recv *ftp_repl_recvs_head;

/* Set while ftp_repl_views applies a failure (views.c, which alone sets
 * it); team.c reads it (ftp_repl_team_wait). Application thread. */
extern bool ftp_repl_in_views;

/* Sends that hand a replica what its dead source's copy would have sent,
 * until done (counts.c, which adds and removes them); views.c progresses
 * them when there are some. Application thread. */
struct resend;
extern struct resend *ftp_repl_resends;

/* A promotion was applied here: the teams are to be rebuilt once every
 * death known is. Set by promote.c (ftp_repl_promote), read and cleared
 * by views.c (ftp_repl_views). Application thread. */
extern bool ftp_repl_rebuild_pending;

/* --- types they pass each other ------------------------------------------ */

/* A Cartesian topology: dims then periods, ndims each. */
struct ftp_repl_cart {
	int ndims;
	int v[];
};

/* A record buffer for up to `entries` completions. */
struct rec {
	int *v;
	int n;
	int stack[REC_HEAD + 3 * STACK_ENTRIES];
};

/* A receive on a replicated communicator that a death may move: from a
 * named program rank, posted to the copy that serves it here (a replica
 * receives from replicas, a primary from primaries); when that copy dies
 * the receive moves to the survivor (ftp_repl_views), which resends what
 * this process has not matched. From MPI_ANY_SOURCE (source < 0): posted
 * as it is, never moved, listed so that a view change sees it matched
 * before this process counts what it has. Pending ones are listed in
 * posting order, which a move keeps. */
struct peer_recv {
	struct ftp_comm *e;
	void *buf;
	int count, source, tag; /* the program's */
	MPI_Datatype type;
	MPI_Request req; /* the real receive; MPI_REQUEST_NULL while moved */
	int32_t from;	 /* world rank of the copy it is posted to; -1: any */
	bool done, linked;
	int rc;
	MPI_Status status; /* once done: MPI_SOURCE is the program's */
	struct peer_recv *prev, *next;
};

/* A nonblocking receive that a death may move, as an ftshim operation:
 * the application holds a generalized request. */
struct recv_op {
	struct ftp_op op;
	struct peer_recv p; /* p.type is a duplicate: the program may free its own */
};

/* A follower's nonblocking receive from MPI_ANY_SOURCE: the application
 * holds a generalized request; the receive itself starts when a
 * completion call hears which message its primary matched, or, once the
 * follower carries on alone, from MPI_ANY_SOURCE as it is. */
struct any_recv {
	struct ftp_op op;
	struct peer_recv p; /* p.type is a duplicate: the program may free its own */
	bool ready, posted;
};

/* A collective call's arguments, as the program gave them. */
struct coll_args {
	enum ftp_fn fn;
	const void *sbuf;
	void *rbuf;
	int scount, rcount, root;
	const int *scounts, *sdispls, *rcounts, *rdispls;
	MPI_Datatype stype, rtype; /* the one type of a reduction or Bcast: rtype */
	MPI_Op op;
};

/* Where the MPI reads this process's input, and writes its output: count
 * elements of type at buf (count 0: none). */
struct coll_span {
	const void *buf;
	int64_t count;
	MPI_Datatype type;
};

/* A logged collective: its arguments with copies of the input and of the
 * arrays, and its own types (the program may free its own). */
struct coll_rec {
	struct coll_rec *next;
	uint64_t seq; /* its number among the team's collectives on the communicator */
	struct coll_args a;
	int *arrays;	  /* scounts, sdispls, rcounts, rdispls as present, size each */
	unsigned char *in; /* the input region's bytes */
	size_t in_bytes;
	MPI_Aint in_lb;
	bool in_rbuf; /* the input is in rbuf (MPI_IN_PLACE, Bcast's root) */
	bool own_stype, own_rtype;
};

/* A result the dead primary forwarded, as received (its bytes). */
struct fwd {
	struct fwd *next;
	int len;
	unsigned char data[];
};

/* --- comm.c: communicators ----------------------------------------------- */

/* The logical rank of this process in e's communicator. */
int ftp_repl_my_rank_in(const struct ftp_comm *e);
/* An error of the program's call on replicated c->comm: the
 * communicator's error handler, and the code. */
int ftp_repl_program_error(struct ftp_call *c, int code);
/* MPI_Comm_split of c's program ranks, the new communicator with
 * topology cart (NULL: none; taken over either way). */
int ftp_repl_split_as(struct ftp_call *c, int color, int key, struct ftp_repl_cart *cart,
		      MPI_Comm *newcomm);

/* --- stream.c: the stream ------------------------------------------------ */

/* One message to or from world rank peer on the stream; with the partner. */
int ftp_repl_stream_with(int peer, bool send, void *buf, int count, MPI_Datatype type, int tag,
			 MPI_Status *status);
int ftp_repl_stream_io(bool send, void *buf, int count, MPI_Datatype type, int tag,
		       MPI_Status *status);
/* The primary: its replica could not be told (it died). */
void ftp_repl_drop_replica(void);
/* The primary tells a record; the replica hears it (its length in *n). */
void ftp_repl_tell(const int *rec, int n);
int ftp_repl_hear(int *rec, int max, int *n);
/* rc of a read from the stream of primary `from`, or STREAM_ENDED. */
int ftp_repl_stream_end(int rc, int32_t from);

/* --- counts.c: counts and resends after a death -------------------------- */

/* Progress the resends (wait: until each is delivered or its peer dead). */
void ftp_repl_resends_progress(bool wait);
/* Tell world rank `to` what this process has of logical rank l's messages. */
void ftp_repl_tell_counts(int32_t l, int32_t to);
/* Give world rank w, in the dead copy's slot, what it lacks; skip what
 * it has. */
void ftp_repl_serve_one(int32_t w, enum ft_copy_slot slot);
/* The primary of a logical rank whose replica `dead` died: serve every
 * other replica. */
void ftp_repl_serve_counts(int32_t dead);

/* --- recv.c: receives that a death may move ------------------------------ */

/* A struct peer_recv's life: started (listed and posted), posted again
 * to the copy its source is addressed at now, polled, finished; and a
 * blocking one whole. */
void ftp_repl_recv_finish(struct peer_recv *p, int rc, const MPI_Status *st);
void ftp_repl_recv_post(struct peer_recv *p);
void ftp_repl_recv_start(struct peer_recv *p);
void ftp_repl_recv_poll(struct peer_recv *p);
int ftp_repl_recv_from(struct ftp_call *c, void *buf, int count, MPI_Datatype type, int source,
		       int tag, MPI_Status *status);
/* A message from MPI_ANY_SOURCE from a dead primary dropped from the view. */
bool ftp_repl_from_dropped(const struct ftp_comm *e, const MPI_Status *st);
/* A struct recv_op's operation. */
bool ftp_repl_recv_op_progress(struct ftp_op *op);
void ftp_repl_recv_op_destroy(struct ftp_op *op);
/* A struct any_recv's operation; whether a request is a receive from
 * MPI_ANY_SOURCE on a replicated communicator (*a: the follower's, not
 * posted yet); the follower's receive from the source its primary
 * matched. */
bool ftp_repl_any_progress(struct ftp_op *op);
void ftp_repl_any_destroy(struct ftp_op *op);
bool ftp_repl_is_any(MPI_Request request, struct any_recv **a);
void ftp_repl_any_resolve(struct any_recv *a, int source);

/* --- views.c: applying failures ------------------------------------------ */

/* The receives posted to dead copy `dead`: settle them, then post them
 * again to the copy that took over. */
void ftp_repl_settle_recvs_from(int32_t dead);
void ftp_repl_repost_recvs_from(int32_t dead);
/* Copy `dead` leaves every replicated communicator's view. */
void ftp_repl_view_forget(int32_t dead);
/* Wait until the death of w has been applied to the view here. */
void ftp_repl_await_applied(int32_t w);

/* --- promote.c: promotion and forwarded results -------------------------- */

/* Receive and drop the message a probe of e found. */
void ftp_repl_discard_one(const struct ftp_comm *e, const MPI_Status *st);
/* Whether the dead primary `from` told this process something unread. */
bool ftp_repl_records_left(int32_t from);
/* Free the forwarded results x holds. */
void ftp_repl_fwd_drop(struct ftp_repl_comm *x);
/* Primary `dead` died and its replica lives: the replica carries its
 * rank on. */
void ftp_repl_promote(int32_t dead);
/* A promoted replica has read all its dead primary told it. */
void ftp_repl_carry_on(void);

/* --- cart.c: Cartesian topologies ---------------------------------------- */

/* A topology of ndims dims and periods, or NULL (out of memory). */
struct ftp_repl_cart *ftp_repl_cart_new(int ndims, const int *dims, const int *periods);

/* --- complete.c: completion calls ---------------------------------------- */

/* Add to r the completion of request index (st: its message, or NULL). */
void ftp_repl_rec_add(struct rec *r, int index, const MPI_Status *st);

/* --- coll.c: collectives ------------------------------------------------- */

/* What this process gives a collective (in) and where its result lands
 * (out). */
void ftp_repl_coll_spans(const struct ftp_comm *e, const struct coll_args *a,
			 struct coll_span *in, struct coll_span *out);
/* Start a's collective on comm into *req. */
int ftp_repl_coll_start(const struct coll_args *a, MPI_Comm comm, MPI_Request *req);

/* --- coll_log.c: the log of collectives ---------------------------------- */

/* The bytes count elements of type span from buf, from *lb on. */
size_t ftp_repl_bytes_of(MPI_Datatype type, int64_t count, MPI_Aint *lb);
/* Forget the logged collectives of x numbered below seq. */
void ftp_repl_coll_log_trim(struct ftp_repl_comm *x, uint64_t seq);
/* Log collective seq of e, about to run (NULL: out of memory); say it
 * completed here (or its result was received). */
struct coll_rec *ftp_repl_coll_log_add(struct ftp_comm *e, const struct coll_args *a,
				       uint64_t seq);
void ftp_repl_coll_completed(struct ftp_repl_comm *x, const struct coll_rec *r, enum ftp_fn fn,
			     uint64_t seq);

/* --- team.c: teams ------------------------------------------------------- */

/* Wait for the collective c started on e's team while the team is the
 * one of epoch: TEAM_REBUILT once it is rebuilt. */
int ftp_repl_team_wait(struct ftp_call *c, int rc, uint32_t epoch);
/* The hash of a team's members (world ranks, in order). */
uint64_t ftp_repl_team_hash(const int32_t *w, uint32_t n);
/* After a promotion: rebuild every team, and run again what some member
 * lacks. */
bool ftp_repl_teams_rebuild(void);

#endif
