/* objects.h: windows and files as ftshim sees them. A window or file made
 * on a communicator ftshim tracks keeps a reference on that communicator's
 * entry (and so on the MPI's communicator, should the program free its
 * handle): the object's group and ranks are the communicator's. Its calls
 * are then ordinary watched calls on that communicator: checked against
 * its members' failures by the ranks the object uses, collectives with no
 * nonblocking form fenced by a watched barrier on it and covered by the
 * hang watch, and blocking collective I/O run as its nonblocking form
 * under ftp_block. Their errors are raised on the object's own error
 * handler. Not a private duplicate per object: making one is a
 * collective, and one abandoned because a member died leaves Open MPI
 * unable to make any other communicator. The fence's barrier is a
 * barrier on the program's communicator: harmless among the program's
 * own barriers, in whatever order they meet.
 *
 * Sharing: an entry is made, used and freed by application threads; it is
 * found through the lookup seam (pmpi/comm_lookup.h) like a communicator.
 * The PSCW groups are written by MPI_Win_start and MPI_Win_post and read
 * by the calls that end those epochs, which MPI orders on one window. */
#ifndef FTSHIM_PMPI_OBJECTS_H
#define FTSHIM_PMPI_OBJECTS_H

#include <mpi.h>
#include <stdint.h>
#include <string.h>

#include "pmpi/call.h"

/* Some processes, as job ranks. */
struct ftp_ranks {
	int32_t *world;
	uint32_t n;
};

struct ftp_obj {
	enum ftp_obj_kind kind;
	uint64_t bits;          /* the application's handle, its key */
	struct ftp_comm *comm;  /* the communicator it was made on: one reference */
	struct ftp_ranks access;   /* MPI_Win_start's group, until MPI_Win_complete */
	struct ftp_ranks exposure; /* MPI_Win_post's group, until MPI_Win_wait */
};

/* Free an entry no longer behind the seam (not its communicator). */
void ftp_obj_free(struct ftp_obj *o);

/* Window creation (MPI_Win_create, _allocate, _allocate_shared,
 * _create_dynamic) and MPI_File_open: collective over comm, with no
 * nonblocking form: fenced and watched as communicator creation is. */
int ftp_pre_win_create(struct ftp_call *c, MPI_Comm comm);
int ftp_post_win_create(struct ftp_call *c, int rc, MPI_Win *win);
#define ftp_pre_file_open ftp_pre_win_create
int ftp_post_file_open(struct ftp_call *c, int rc, MPI_File *fh);

/* Window calls. The hang watch covers each call that can wait: it
 * watches the processes the call waits on. */
/* MPI_Win_fence: collective, no nonblocking form: a watched barrier
 * first. */
int ftp_pre_win_fence(struct ftp_call *c, MPI_Win win);
/* Passive-target calls on one target (lock, unlock, flush, flush_local). */
int ftp_pre_win_peer(struct ftp_call *c, MPI_Win win, int rank);
/* ... on every member (lock_all, unlock_all, flush_all, flush_local_all). */
int ftp_pre_win_all(struct ftp_call *c, MPI_Win win);
/* MPI_Win_start and MPI_Win_post: remember the group. */
int ftp_pre_win_group(struct ftp_call *c, MPI_Win win, MPI_Group group);
/* MPI_Win_complete (start's group) and MPI_Win_test (post's group).
 * MPI_Win_wait is written by hand, as MPI_Win_test polled. */
int ftp_pre_win_epoch(struct ftp_call *c, MPI_Win win);
/* RMA operations and their request-based forms: the target is checked;
 * a request is watched on it until completion. */
int ftp_pre_rma(struct ftp_call *c, MPI_Win win, int target_rank);

/* MPI_Rput, MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate: as above, but
 * neither MPI can cancel such a request (Open MPI's MPI_Cancel fails
 * with MPI_ERR_REQUEST on MPI_COMM_WORLD, fatal by default): one given up
 * on is left to the MPI, as a partitioned one is. */
static inline int ftp_pre_rma_req(struct ftp_call *c, MPI_Win win, int target_rank)
{
	int rc = ftp_pre_rma(c, win, target_rank);

	c->watch.keep = true;
	return rc;
}

/* File calls, all collective over the file's group except the shared
 * file pointer's. Blocking collective reads and writes run as their
 * nonblocking forms (file_coll), watched like any blocking collective,
 * and both are under the hang watch until the start returns. */
int ftp_pre_file_coll(struct ftp_call *c, MPI_File fh);
#define ftp_pre_file_icoll ftp_pre_file_coll
/* Collective, with no nonblocking form: a watched barrier first. */
int ftp_pre_file_sync(struct ftp_call *c, MPI_File fh);
/* Not collective, but waits on the others (the shared file pointer, the
 * end of a split collective). */
int ftp_pre_file_wait(struct ftp_call *c, MPI_File fh);

/* After a call the hang watch covered. */
int ftp_post_obj_wait(struct ftp_call *c, int rc);
#define ftp_post_win_fence ftp_post_obj_wait
int ftp_post_win_peer(struct ftp_call *c, int rc);
#define ftp_post_win_all ftp_post_obj_wait
#define ftp_post_win_group ftp_post_obj_wait
#define ftp_post_win_epoch ftp_post_obj_wait
#define ftp_post_file_sync ftp_post_obj_wait
#define ftp_post_file_wait ftp_post_obj_wait
#define ftp_post_file_coll ftp_post_obj_wait
int ftp_post_file_icoll(struct ftp_call *c, int rc, MPI_Request *request);
#define ftp_post_rma ftp_post_plain

#endif
