/* state.h: transparent partial replication (FTSHIM_REPLICAS; PartRePer,
 * docs/DESIGN.md "Replication"). The job runs N + R processes and the
 * program sees N: real ranks 0..N-1 are the logical ranks, each the only
 * copy (a single) or a primary; real ranks N..N+R-1 are replicas, each
 * running the program of the logical rank src/replica_plan.h gave it.
 *
 * Every communicator the program holds is, behind the seam, a real
 * communicator of every copy of its members (primaries and singles in the
 * program's rank order, so that the MPI's own ordering rules give the
 * same ranks as among the N), with a rank map that makes each process
 * address its own kind (a replica the replicas, and the single copy of a
 * rank that has no replica) and holds both copies of each rank
 * (ftp_repl_copy), the one map a view change updates. Point-to-point follows PartRePer V-B: a
 * single sends to both copies of a replicated rank; a replica does not
 * send to a single (its primary does). Collectives run among the
 * primaries and singles (the communicator's team) and each primary
 * forwards what the call returned to its replica (V-C). Whatever depends
 * on timing (MPI_ANY_SOURCE matching, the test and -any/-some completion
 * calls, probes) the primary decides and tells its replica, which then
 * does the same deterministically: the stream, primary to replica, on a
 * private duplicate of MPI_COMM_WORLD, read in program order.
 *
 * A replica's death goes unnoticed by the program: every process drops it
 * from its view when it learns of it (ftp_repl_views); the replicas that
 * received from it tell its primary how many messages of each tag they
 * have, and the primary, which logged its recent sends, resends what they
 * lack and skips what they have (PartRePer VI-B), then goes on alone.
 *
 * Sharing: ftp_repl is set at MPI_Init, before ftshim is on; after, only
 * the application thread changes it, as it applies a view. A
 * communicator's struct ftp_repl_comm is set before its entry is inserted
 * behind the seam and freed with it; views change its arrays and map.
 * Replication assumes the program calls MPI from one thread at a time
 * (the stream is read in call order).
 *
 * Its files, each with its header, lowest first (a file calls only the
 * files listed before it, and the core; the core reaches the
 * folder only through hooks.c, and a lower file asks for failures to
 * be applied to the views through the contract, ftp_mode_failures):
 *   state.h/.c  what every file shares: the plan, this process's copy,
 *               the types, the predicates on who is whom, the state
 *               more than one file reads (each says who writes it and
 *               who reads it); a topology made, forwarded results freed
 *   stream.c    the stream: telling and hearing records, its end (a
 *               promoted replica carries on); MPI_Wtime
 *   coll_args.c what a collective call reads and writes; starting one
 *   coll_log.c  the log of collectives, for a rebuilt team to run again
 *   counts.c    the counts survivors exchange after a death, and the
 *               resends from the send log
 *   recv.c      receives that a death may move, settled and posted
 *               again; a follower's receives from MPI_ANY_SOURCE
 *   runs.c      nonblocking collectives' runs on a team
 *   team.c      waiting on a team; its agreement and rebuild after a
 *               promotion
 *   complete.c  the completion calls; the stream's record buffers
 *   comm.c      a communicator's replication (derive, release, a copy
 *               forgotten), the creations on one (splits), refusing a
 *               call
 *   p2p.c       sends, receives and probes
 *   cart.c      Cartesian topologies
 *   graph.c     graph and distributed-graph topologies
 *   coll.c      collectives on the team, blocking and nonblocking,
 *               their results forwarded
 *   promote.c   a dead primary's replica carrying its rank on
 *   views.c     applying failures to the views; a dead replica dropped
 *   setup.c     the plan at MPI_Init, the start (stream, MPI_COMM_WORLD,
 *               a replica's output) and MPI_Finalize; ftshim_rank_copies
 *   calls.c     the forms of the calls on a replicated communicator
 *   hooks.c     replication as a recovery mode (pmpi/mode/mode.h)
 * Nothing outside the folder includes these headers but the registry
 * (pmpi/mode/registry.c), which names the mode through hooks.h. Every
 * symbol in them is hidden (the library is built with
 * -fvisibility=hidden and exports only what is marked FT_EXPORT). */
#ifndef FTSHIM_PMPI_MODE_REPLICATION_STATE_H
#define FTSHIM_PMPI_MODE_REPLICATION_STATE_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmpi/call.h"
#include "pmpi/coll_forms.h"
#include "pmpi/complete.h"
#include "pmpi/cover.h"
#include "pmpi/p2p.h"
#include "pmpi/mode/mode.h"
#include "pmpi/requests.h"
#include "src/repl_log.h"
#include "src/replica_plan.h"

enum ftp_copy {
	FTP_COPY_SINGLE = 0, /* the only copy of its logical rank */
	FTP_COPY_PRIMARY,    /* the copy the others talk to; tells its replica */
	FTP_COPY_REPLICA,    /* follows its primary */
	/* A replica whose primary died: it carries its logical rank alone.
	 * It still receives as a replica does (from replicas, and from
	 * singles), sends as a single does (to both copies), runs the
	 * collectives in the team, and follows what its primary told it
	 * before it died until the stream runs dry (then partner is -1). */
	FTP_COPY_PROMOTED,
};

struct ftp_replication {
	uint32_t r;	    /* replicas in the job; 0: replication is off */
	enum ftp_copy copy; /* this process */
	int partner;	    /* world rank of this process's other copy, or -1 */
	/* [n + r]: the other copy of each process as planned, or -1; never
	 * changes (ftp_repl_covered). */
	int32_t *copy_of;
	/* replica_of[l] becomes -1 when l's replica is dropped (it died). */
	struct ft_replica_plan plan;
	MPI_Comm stream; /* private duplicate of MPI_COMM_WORLD */
	/* [n + r]: 1 for a replica dropped from the view (dead, and no one
	 * addresses it any more). */
	uint8_t *dropped;
};

extern struct ftp_replication ftp_repl;

/* What a replicated communicator adds to its entry (struct ftp_comm.cover:
 * it starts with the struct ftp_cover the core reads). */
struct ftp_repl_comm {
	struct ftp_cover cover; /* first: e->cover points here */
	/* The primaries and singles, in program rank order: where collectives
	 * run. MPI_COMM_NULL on a replica. */
	MPI_Comm team;
	/* What the communicators made from this one are made from (creations,
	 * ftp_repl_creation): the entry's real communicator less the copies
	 * agreed dead; MPI_COMM_NULL while that is the real one. */
	MPI_Comm base;
	uint32_t size; /* program ranks */
	/* Collectives on the team: how many this process has completed (a
	 * follower: received), and the inputs of the latest ones, for a team
	 * rebuilt after a promotion to run again with those that had not
	 * completed them (coll_log.c, team.c). */
	uint64_t coll_done;
	struct coll_rec *coll_log, *coll_log_tail;
	/* The number of the latest collective this process started on it:
	 * coll_done, unless nonblocking ones are under way. coll.c writes
	 * it. */
	uint64_t coll_started;
	/* The nonblocking collectives started and not yet completed, in
	 * the order started (struct icoll): coll.c links and unlinks them,
	 * and moves a follower's onto the team at its promotion. */
	struct icoll *icoll_head, *icoll_tail;
	bool icolls_polling; /* coll.c is bringing them on (not reentered) */
	/* Their runs on the team (struct team_run) in that order: runs.c
	 * starts them, starts them again on a rebuilt team, steps them,
	 * and frees them when coll.c has taken their result. runs_held
	 * (team.c writes it, runs.c reads it): a rebuild of the team is
	 * under way, and no run starts again until this process has run
	 * again what it owes the members. */
	struct team_run *runs_head, *runs_tail;
	bool runs_held;
	/* Once rebuilt after a promotion, the team is a view (team.c): its
	 * members' world ranks, in program rank order (size of them), this
	 * process's index among them, and the tag of its collectives on the
	 * stream; team is then MPI_COMM_NULL. NULL before. */
	int32_t *team_view;
	uint32_t team_view_me;
	int team_view_tag;
	uint32_t team_epoch; /* changes when the team is rebuilt */
	uint64_t team_hash;  /* of the team's members (world ranks, in order) */
	/* The tag of this communicator's forwarded results on the stream
	 * (the same on both copies: communicators are made in program order). */
	int stream_tag;
	/* A promoted replica: the results its dead primary forwarded that it
	 * has not read yet, received at its promotion, and the collectives
	 * up to replay_lo, which it takes from them (after it, it runs them
	 * with the team, which had some member lacking them). */
	struct fwd *fwd_head, *fwd_tail;
	uint64_t fwd_count, replay_lo;
	/* A promoted replica whose receive of a forwarded result was under
	 * way at its promotion and had completed: that result counts as
	 * received (1), like those in fwd_head. */
	uint64_t fwd_in_flight;
	/* After a rebuild that agreed, the collectives this process runs
	 * again for the members that lack them: from replay_next (0: none
	 * left) to replay_hi and its own coll_done. They stay owed if a
	 * death starts the rebuilds over and leaves this team as it is
	 * (team.c). */
	uint64_t replay_next, replay_hi;
	/* The program's topology on this communicator, or NULL
	 * (MPI_Cart_create, cart.c; MPI_Graph_create and
	 * MPI_Dist_graph_create_adjacent, graph.c). */
	struct ftp_repl_topo *topo;
};

/* The replication of e (its cover), or NULL. */
static inline struct ftp_repl_comm *ftp_repl_of(const struct ftp_comm *e)
{
	return (struct ftp_repl_comm *)e->cover;
}

/* This process has a copy to tell or to follow. */
static inline bool ftp_repl_paired(void)
{
	return ftp_repl.partner >= 0;
}

/* World rank w's logical rank has another copy that lives: w's death is
 * not the program's failure (the other carries on, promote.c). */
bool ftp_repl_covered(int32_t w);

/* The rank in MPI_COMM_WORLD the program knows job rank w by: its
 * logical rank under replication, else w. */
static inline int32_t ftp_repl_program_rank(int32_t w)
{
	return ftp_repl.r != 0 && w >= 0 && (uint32_t)w < ftp_repl.plan.n + ftp_repl.plan.r
		   ? ftp_repl.plan.logical_of[w]
		   : w;
}

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
 * only copy of a rank that has no replica (state.h). */
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
	return ftp_job_at(e, q);
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
 * ftp_repl_release); comm.c, counts.c, promote.c and team.c walk them.
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
 * MPI_Init, stream.c (ftp_repl_carry_on) puts them back. Application
 * thread. */
extern int ftp_repl_terminal_fd[2];

/* The pending receives that a death may move, in posting order (struct
 * peer_recv; recv.c): recv.c links and unlinks them, and settles and
 * moves those from a dead copy (for views.c and promote.c); promote.c
 * polls them. Application thread. */
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

/* A topology the program gave a replicated communicator: kind
 * MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH, and its integers in v:
 *   MPI_CART        dims, then periods (0 or 1): n each (n: ndims)
 *   MPI_GRAPH       index (n: nnodes), then the edges (m: index[n - 1])
 *   MPI_DIST_GRAPH  sources (n: indegree), destinations (m: outdegree),
 *                   then, if weighted, their weights (n, then m) */
struct ftp_repl_topo {
	int kind, n, m;
	bool weighted;
	size_t len; /* the integers in v */
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

/* Where the MPI reads this process's input, and writes its output: count
 * elements of type at buf (count 0: none). */
struct coll_span {
	const void *buf;
	int64_t count;
	MPI_Datatype type;
};

/* A logged collective: its arguments with copies of the input, of the
 * arrays and of its types (the program may free its own). */
struct coll_rec {
	struct coll_rec *next;
	uint64_t seq; /* its number among the team's collectives on the communicator */
	struct coll_kept kept; /* its arguments: kept.a */
	unsigned char *in; /* the input region's bytes */
	size_t in_bytes;
	MPI_Aint in_lb;
	bool in_rbuf; /* the input is in rbuf (MPI_IN_PLACE, Bcast's root) */
	/* A nonblocking collective under way still reads it (coll.c sets
	 * and clears it): the log keeps it past its byte budget. */
	bool pinned;
};

/* A result the dead primary forwarded, as received (its bytes). */
struct fwd {
	struct fwd *next;
	int len;
	unsigned char data[];
};


/* The logical rank of this process in e's communicator. */
int ftp_repl_my_rank_in(const struct ftp_comm *e);
/* A topology of ndims dims and periods, or NULL (out of memory). */
/* A topology of len integers (v left to the caller), and a copy of t
 * (NULL: NULL); NULL when out of memory. */
struct ftp_repl_topo *ftp_repl_topo_new(int kind, int n, int m, bool weighted, size_t len);
struct ftp_repl_topo *ftp_repl_topo_copy(const struct ftp_repl_topo *t);
/* Free the forwarded results x holds. */
void ftp_repl_fwd_drop(struct ftp_repl_comm *x);

#endif
