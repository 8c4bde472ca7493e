/* replica.h: transparent partial replication (FTSHIM_REPLICAS; PartRePer,
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
 * Where each concern lives, in pmpi/mode/replication/ (internal.h holds
 * what its files share, and nothing outside the folder includes it):
 *   state.c     the folder's shared state, defined below every file
 *   setup.c     the plan at MPI_Init, the start (stream, MPI_COMM_WORLD,
 *               a replica's output) and MPI_Finalize; ftshim_rank_copies
 *   comm.c      a communicator's replication (derive, release), the
 *               creations on one (splits), refusing a call
 *   stream.c    the stream: telling and hearing records; MPI_Wtime
 *   p2p.c       sends, receives and probes
 *   recv.c      receives that a death may move; a follower's receives
 *               from MPI_ANY_SOURCE
 *   complete.c  the completion calls; the stream's record buffers
 *   coll.c      collectives on the team, their results forwarded
 *   coll_log.c  the log of collectives, for a rebuilt team to run again
 *   team.c      waiting on a team; its agreement and rebuild after a
 *               promotion
 *   cart.c      Cartesian topologies
 *   views.c     applying failures to the views; a dead replica dropped
 *   counts.c    the counts survivors exchange after a death, and the
 *               resends from the send log
 *   promote.c   a dead primary's replica carrying its rank on; the
 *               results its primary forwarded
 *   calls.c     the forms of the calls on a replicated communicator
 *   hooks.c     replication as a recovery mode (pmpi/mode/mode.h) */
#ifndef FTSHIM_PMPI_MODE_REPLICATION_REPLICA_H
#define FTSHIM_PMPI_MODE_REPLICATION_REPLICA_H

#include <mpi.h>
#include <stdbool.h>

#include "pmpi/call.h"
#include "pmpi/complete.h"
#include "pmpi/p2p.h"
#include "pmpi/mode/mode.h"
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

/* What a replicated communicator adds to its entry (struct ftp_comm.cover). */
struct ftp_repl_comm {
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
	/* The program's Cartesian topology on this communicator, or NULL
	 * (MPI_Cart_create, cart.c). */
	struct ftp_repl_cart *cart;
};

/* The replication of e (its cover), or NULL. */
static inline struct ftp_repl_comm *ftp_repl_of(const struct ftp_comm *e)
{
	return e->cover;
}

/* FTSHIM_REPLICAS asks for replicas (parsed at MPI_Init). */
bool ftp_repl_requested(void);

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

/* e is replicated (every wrapper with a communicator asks, on its
 * general path: a test of a field of the entry it has just found). */
static inline bool ftp_repl_comm(const struct ftp_comm *e)
{
	return ftp_seam_covered(e);
}

/* At MPI_Init: before PMPI_Init, parse FTSHIM_REPLICAS; once the
 * world's size is known, check that it fits (both: 0, or -EINVAL with
 * one line in err, the same on every rank); after the job's exchange,
 * collective over the world, place the replicas, make the stream and
 * replicate MPI_COMM_WORLD (0, or an error after which the job runs
 * without replicas). */
int ftp_repl_parse(char *err, size_t errlen);
int ftp_repl_check(char *err, size_t errlen);
/* ftp_repl_plan: who is whom (no MPI call; the plan is read by the
 * injection plan, pmpi/inject.c), once the job's hosts are known;
 * ftp_repl_start: the stream, MPI_COMM_WORLD's replication, the replica's
 * output, collectively, at the end of MPI_Init. */
int ftp_repl_plan(void);
int ftp_repl_start(void);

/* w, a world rank known failed here: if it is one copy of a replicated
 * rank, return once this process's view has applied its death (the
 * process table shows a death before its list of deaths, which the view
 * reads, does), so that a call's peer can be looked up again. Not while
 * a view is applied. */
void ftp_repl_await_view(int32_t w);

/* Apply the failures learned since the last call to the view: a dead
 * replica is dropped (see above). Called by ftp_check and before a
 * replicated call picks its peers; does nothing while one runs, or
 * without replication. ftp_repl_finish, at MPI_Finalize, also waits for
 * the resends of this process to be delivered. */
void ftp_repl_views(void);
void ftp_repl_finish(void);

/* A communicator e was just made from the replicated parent (NULL for
 * MPI_COMM_WORLD; collective over e's members): give it its map and team
 * (pmpi/comms.c). */
void ftp_repl_derive(struct ftp_comm *e, const struct ftp_comm *parent);
/* Free what ftp_repl_derive gave e (with the entry). */
void ftp_repl_release(struct ftp_comm *e);

/* Before a creation on replicated c->comm (MPI_Comm_split, MPI_Comm_dup):
 * its live copies agree on which of them live (a copy whose death is not
 * known everywhere yet would never join the MPI's creation), and c->real
 * becomes the communicator of those, which the MPI makes the new one from
 * by the blocking call (c->direct), under the hang watch. A dead copy
 * that was not a dropped replica is the call's MPIX_ERR_PROC_FAILED. */
int ftp_repl_creation(struct ftp_call *c);
/* MPI_Comm_split on a replicated communicator: as on any, once
 * ftp_repl_creation has run; the key orders the program ranks of a new
 * communicator where a replica stands alone for its rank. */
int ftp_repl_MPI_Comm_split(struct ftp_call *c, int color, int key, MPI_Comm *newcomm);
/* MPI_Comm_split_type on a replicated communicator: grouped as the
 * leading copies (primaries, singles) are by the MPI, a replica taking
 * its primary's group. */
int ftp_repl_MPI_Comm_split_type(struct ftp_call *c, int split_type, int key, MPI_Info info,
				 MPI_Comm *newcomm);

/* Cartesian topologies on a replicated communicator. The real
 * communicator holds every copy, so it cannot carry the program's
 * topology: MPI_Cart_create and MPI_Cart_sub split it (keeping the
 * program's ranks: reorder is not acted on, as MPI allows), the new
 * communicator keeps the topology (struct ftp_repl_comm.cart, kept by
 * MPI_Comm_dup), and the queries are answered from it, in the MPI's
 * row-major numbering. */
int ftp_repl_MPI_Cart_create(struct ftp_call *c, int ndims, const int dims[], const int periods[],
			     int reorder, MPI_Comm *comm_cart);
int ftp_repl_MPI_Cart_sub(struct ftp_call *c, const int remain_dims[], MPI_Comm *newcomm);
int ftp_repl_MPI_Cart_get(struct ftp_call *c, int maxdims, int dims[], int periods[], int coords[]);
int ftp_repl_MPI_Cart_rank(struct ftp_call *c, const int coords[], int *rank);
int ftp_repl_MPI_Cart_coords(struct ftp_call *c, int rank, int maxdims, int coords[]);
int ftp_repl_MPI_Cart_shift(struct ftp_call *c, int direction, int disp, int *rank_source,
			    int *rank_dest);
int ftp_repl_MPI_Cart_map(struct ftp_call *c, int ndims, const int dims[], const int periods[],
			  int *newrank);
int ftp_repl_MPI_Cartdim_get(struct ftp_call *c, int *ndims);
int ftp_repl_MPI_Topo_test(struct ftp_call *c, int *status);

/* MPI_Wtime of a replicated process (stream.c). */
double ftp_repl_wtime(void);

/* Replication's side of the calls on a covered communicator
 * (pmpi/mode/replication/calls.c): its forms (the ftp_repl_MPI_* below),
 * and whether a call without one runs as on any communicator. */
extern const struct ftp_mode_calls ftp_repl_calls;
bool ftp_repl_runs_as_is(int fn, enum ftp_mode_role role);

/* Completion calls of a paired process (pmpi/complete.c calls these, and
 * they call the plain forms there). */
int ftp_repl_wait(MPI_Request *request, MPI_Status *status);
int ftp_repl_test(MPI_Request *request, int *flag, MPI_Status *status);
int ftp_repl_waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
int ftp_repl_testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]);
int ftp_repl_waitany(int count, MPI_Request requests[], int *index, MPI_Status *status);
int ftp_repl_testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status);
int ftp_repl_waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
		      MPI_Status statuses[]);
int ftp_repl_testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
		      MPI_Status statuses[]);

/* The replicated forms of the calls (ftp_repl_calls lists them): the
 * call's arguments (less its communicator, which is c's). Each returns
 * through the call's post, except those of hand-written wrappers that
 * post themselves (MPI_Probe, MPI_Sendrecv: pmpi/p2p.c), which return
 * the call's result. */
int ftp_repl_MPI_Send(struct ftp_call *c, const void *buf, int count, MPI_Datatype datatype,
		      int dest, int tag);
int ftp_repl_MPI_Ssend(struct ftp_call *c, const void *buf, int count, MPI_Datatype datatype,
		       int dest, int tag);
int ftp_repl_MPI_Rsend(struct ftp_call *c, const void *buf, int count, MPI_Datatype datatype,
		       int dest, int tag);
int ftp_repl_MPI_Recv(struct ftp_call *c, void *buf, int count, MPI_Datatype datatype, int source,
		      int tag, MPI_Status *status);
int ftp_repl_MPI_Isend(struct ftp_call *c, const void *buf, int count, MPI_Datatype datatype,
		       int dest, int tag, MPI_Request *request);
int ftp_repl_MPI_Issend(struct ftp_call *c, const void *buf, int count, MPI_Datatype datatype,
			int dest, int tag, MPI_Request *request);
int ftp_repl_MPI_Irecv(struct ftp_call *c, void *buf, int count, MPI_Datatype datatype, int source,
		       int tag, MPI_Request *request);
int ftp_repl_MPI_Iprobe(struct ftp_call *c, int source, int tag, int *flag, MPI_Status *status);
int ftp_repl_MPI_Probe(struct ftp_call *c, int source, int tag, MPI_Status *status);
int ftp_repl_MPI_Sendrecv(struct ftp_call *c, const void *sendbuf, int sendcount,
			  MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
			  int recvcount, MPI_Datatype recvtype, int source, int recvtag,
			  MPI_Status *status);

int ftp_repl_MPI_Barrier(struct ftp_call *c);
int ftp_repl_MPI_Bcast(struct ftp_call *c, void *buffer, int count, MPI_Datatype datatype,
		       int root);
int ftp_repl_MPI_Reduce(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
			MPI_Datatype datatype, MPI_Op op, int root);
int ftp_repl_MPI_Allreduce(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
			   MPI_Datatype datatype, MPI_Op op);
int ftp_repl_MPI_Scan(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
		      MPI_Datatype datatype, MPI_Op op);
int ftp_repl_MPI_Exscan(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
			MPI_Datatype datatype, MPI_Op op);
int ftp_repl_MPI_Reduce_scatter_block(struct ftp_call *c, const void *sendbuf, void *recvbuf,
				      int recvcount, MPI_Datatype datatype, MPI_Op op);
int ftp_repl_MPI_Reduce_scatter(struct ftp_call *c, const void *sendbuf, void *recvbuf,
				const int recvcounts[], MPI_Datatype datatype, MPI_Op op);
int ftp_repl_MPI_Gather(struct ftp_call *c, const void *sendbuf, int sendcount,
			MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
			int root);
int ftp_repl_MPI_Gatherv(struct ftp_call *c, const void *sendbuf, int sendcount,
			 MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
			 const int displs[], MPI_Datatype recvtype, int root);
int ftp_repl_MPI_Scatter(struct ftp_call *c, const void *sendbuf, int sendcount,
			 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
			 int root);
int ftp_repl_MPI_Scatterv(struct ftp_call *c, const void *sendbuf, const int sendcounts[],
			  const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount,
			  MPI_Datatype recvtype, int root);
int ftp_repl_MPI_Allgather(struct ftp_call *c, const void *sendbuf, int sendcount,
			   MPI_Datatype sendtype, void *recvbuf, int recvcount,
			   MPI_Datatype recvtype);
int ftp_repl_MPI_Allgatherv(struct ftp_call *c, const void *sendbuf, int sendcount,
			    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
			    const int displs[], MPI_Datatype recvtype);
int ftp_repl_MPI_Alltoall(struct ftp_call *c, const void *sendbuf, int sendcount,
			  MPI_Datatype sendtype, void *recvbuf, int recvcount,
			  MPI_Datatype recvtype);
int ftp_repl_MPI_Alltoallv(struct ftp_call *c, const void *sendbuf, const int sendcounts[],
			   const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
			   const int recvcounts[], const int rdispls[], MPI_Datatype recvtype);

#endif
