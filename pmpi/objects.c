/* objects.c: the policy of the window and file calls (see objects.h), and
 * the two releases written by hand, MPI_Win_free and MPI_File_close. A
 * release after a member failed does not call the MPI's: both MPIs wait
 * on every member in it, for ever on a dead one. ftshim then forgets the
 * object, and the MPI's stays allocated until the process ends. */
#include "ftshim_config.h"

#include <stdlib.h>

#include "pmpi/objects.h"
#include "pmpi/comm_health.h"
#include "pmpi/comms.h"
#include "pmpi/create.h"
#include "pmpi/hangwatch.h"
#include "pmpi/requests.h"
#include "src/log.h"

void ftp_obj_free(struct ftp_obj *o)
{
	free(o->access.world);
	free(o->exposure.world);
	free(o);
}

static struct ftp_obj *win_obj(MPI_Win win)
{
	return ftp_active() ? ftp_obj_lookup(FTP_OBJ_WIN, ftp_win_bits(win)) : NULL;
}

static struct ftp_obj *file_obj(MPI_File fh)
{
	return ftp_active() ? ftp_obj_lookup(FTP_OBJ_FILE, ftp_file_bits(fh)) : NULL;
}

/* Make c a call on o's communicator that waits on what kind and rank say, with
 * o's error handler, and check that. Untracked (o NULL): c stays direct. */
static int obj_call(struct ftp_call *c, struct ftp_obj *o, enum ftp_watch_kind kind, int rank)
{
	if (!o)
		return MPI_SUCCESS;
	ftp_call_on(c, o->comm, ftp_watch_on(o->comm, kind, rank, false));
	c->obj = o->kind;
	c->obj_bits = o->bits;
	return ftp_events() != 0 ? ftp_check(c, false) : MPI_SUCCESS;
}

/* The hang watch over every member of c's communicator. */
static void watch_all(struct ftp_call *c)
{
	const struct ft_comm *core = c->comm->core;

	ftp_hang_watch_begin(c->fn, ftp_member_jobs(core), ftp_members(core));
}

/* A collective with no nonblocking form: a barrier that can fail first
 * (a member already dead fails it on every survivor), then the hang watch
 * for a death during the call itself. */
static int obj_fence(struct ftp_call *c)
{
	int rc = ftp_block(c, ftp_mpi.PMPI_Ibarrier(c->real, &c->req), MPI_STATUS_IGNORE);

	if (rc == MPI_SUCCESS)
		watch_all(c);
	return rc;
}

/* Whether any of r has failed. */
static bool ranks_failed(const struct ftp_ranks *r)
{
	if (ftp_events() == 0)
		return false;
	for (uint32_t i = 0; i < r->n; i++)
		if (r->world[i] >= 0 && ft_proc_ever_failed(&ftp.procs, (uint32_t)r->world[i]))
			return true;
	return false;
}

int ftp_post_obj_wait(struct ftp_call *c, int rc)
{
	ftp_hang_watch_end();
	return ftp_post_plain(c, rc);
}

int ftp_post_win_peer(struct ftp_call *c, int rc)
{
	ftp_hang_watch_peer_end(c->peer_watch);
	return ftp_post_plain(c, rc);
}

/* --- creation ---------------------------------------------------------- */

int ftp_pre_win_create(struct ftp_call *c, MPI_Comm comm)
{
	int rc = ftp_pre_create(c, comm);

	if (rc == MPI_SUCCESS && !c->direct) {
		ftp_comm_hold(c->comm);
		c->held = c->comm;
	}
	return rc;
}

/* Enter the object the call made (rc MPI_SUCCESS) behind the seam, with
 * the reference the call took; or drop that. */
static void obj_register(struct ftp_call *c, int rc, enum ftp_obj_kind kind, uint64_t bits)
{
	struct ftp_comm *held = c->held;
	struct ftp_obj *o = NULL;

	c->held = NULL;
	if (!held)
		return;
	if (rc == MPI_SUCCESS && (o = calloc(1, sizeof *o))) {
		o->kind = kind;
		o->bits = bits;
		o->comm = held;
		if (ftp_obj_insert(kind, o->bits, o) == 0)
			return;
		ft_debug("a %s not tracked: its calls pass straight through", ftp_obj_noun(kind));
		free(o);
	}
	ftp_comm_put(held);
}

int ftp_post_win_create(struct ftp_call *c, int rc, MPI_Win *win)
{
	ftp_hang_watch_end();
	obj_register(c, rc, FTP_OBJ_WIN, ftp_win_bits(*win));
	return ftp_post_plain(c, rc);
}

int ftp_post_file_open(struct ftp_call *c, int rc, MPI_File *fh)
{
	ftp_hang_watch_end();
	obj_register(c, rc, FTP_OBJ_FILE, ftp_file_bits(*fh));
	return ftp_post_plain(c, rc);
}

/* --- windows ----------------------------------------------------------- */

int ftp_pre_win_fence(struct ftp_call *c, MPI_Win win)
{
	int rc = obj_call(c, win_obj(win), FTP_WATCH_ALL, 0);

	return rc != MPI_SUCCESS || c->direct ? rc : obj_fence(c);
}

int ftp_pre_win_peer(struct ftp_call *c, MPI_Win win, int rank)
{
	int rc = obj_call(c, win_obj(win), FTP_WATCH_PEER, rank);

	if (rc == MPI_SUCCESS && !c->direct) {
		int32_t w = ftp_job_at(c->comm, c->watch.rank);
		if (w >= 0)
			c->peer_watch = ftp_hang_watch_peer_begin(c->fn, w);
	}
	return rc;
}

int ftp_pre_win_all(struct ftp_call *c, MPI_Win win)
{
	int rc = obj_call(c, win_obj(win), FTP_WATCH_ALL, 0);

	if (rc == MPI_SUCCESS && !c->direct)
		watch_all(c);
	return rc;
}

int ftp_pre_rma(struct ftp_call *c, MPI_Win win, int target_rank)
{
	return obj_call(c, win_obj(win), FTP_WATCH_PEER, target_rank);
}

/* MPI_Win_start (the access group: it may wait for their posts) and
 * MPI_Win_post (the exposure group: it only tells them, so a dead member
 * fails the MPI_Win_wait that follows, not this): remember the group and,
 * for start, check it; each watched while in the MPI. */
int ftp_pre_win_group(struct ftp_call *c, MPI_Win win, MPI_Group group)
{
	struct ftp_obj *o = win_obj(win);
	int rc = obj_call(c, o, FTP_WATCH_NONE, 0);

	if (rc != MPI_SUCCESS || c->direct)
		return rc;
	bool start = c->fn == FTP_FN_MPI_Win_start;
	struct ftp_ranks *r = start ? &o->access : &o->exposure;
	free(r->world);
	r->n = 0;
	r->world = ftp_group_jobs(group, &r->n);
	if (!r->world)
		r->n = 0;
	if (start && ranks_failed(r))
		return FTP_ERR_PROC_FAILED;
	ftp_hang_watch_begin(c->fn, r->world, r->n);
	return MPI_SUCCESS;
}

/* MPI_Win_complete (start's group; no nonblocking form: watched) and
 * MPI_Win_test (post's group; returns at once). */
int ftp_pre_win_epoch(struct ftp_call *c, MPI_Win win)
{
	struct ftp_obj *o = win_obj(win);
	int rc = obj_call(c, o, FTP_WATCH_NONE, 0);

	if (rc != MPI_SUCCESS || c->direct)
		return rc;
	bool complete = c->fn == FTP_FN_MPI_Win_complete;
	const struct ftp_ranks *r = complete ? &o->access : &o->exposure;
	if (ranks_failed(r))
		return FTP_ERR_PROC_FAILED;
	if (complete)
		ftp_hang_watch_begin(c->fn, r->world, r->n);
	return MPI_SUCCESS;
}

/* MPI_Win_wait runs as MPI_Win_test, polled until the epoch ends or one
 * of post's group fails (or the communicator is revoked). */
FT_EXPORT int MPI_Win_wait(MPI_Win win)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Win_wait);
	struct ftp_obj *o = win_obj(win);
	int rc = obj_call(&c, o, FTP_WATCH_NONE, 0);
	uint64_t polls = 0;

	while (rc == MPI_SUCCESS) {
		if (c.direct) {
			rc = ftp_mpi.PMPI_Win_wait(win);
			break;
		}
		if (ranks_failed(&o->exposure)) {
			rc = FTP_ERR_PROC_FAILED;
			break;
		}
		if (ft_comm_is_revoked(o->comm->core)) {
			rc = FTP_ERR_REVOKED;
			break;
		}
		int flag = 0;
		rc = ftp_mpi.PMPI_Win_test(win, &flag);
		if (flag)
			break;
		ftp_poll_pause(&polls);
	}
	return ftp_post_plain(&c, rc);
}
FTP_ALSO_PMPI(MPI_Win_wait);

/* --- files ------------------------------------------------------------- */

/* Watched too: an MPI whose nonblocking collective I/O runs the
 * blocking one inside its start (Open MPI's ompio, for the collective
 * components with no nonblocking form) would not return from that. */
int ftp_pre_file_coll(struct ftp_call *c, MPI_File fh)
{
	int rc = obj_call(c, file_obj(fh), FTP_WATCH_ALL, 0);

	if (rc == MPI_SUCCESS && !c->direct)
		watch_all(c);
	return rc;
}

int ftp_post_file_icoll(struct ftp_call *c, int rc, MPI_Request *request)
{
	ftp_hang_watch_end();
	return ftp_post_ireq(c, rc, request, false);
}

int ftp_pre_file_sync(struct ftp_call *c, MPI_File fh)
{
	int rc = obj_call(c, file_obj(fh), FTP_WATCH_ALL, 0);

	return rc != MPI_SUCCESS || c->direct ? rc : obj_fence(c);
}

int ftp_pre_file_wait(struct ftp_call *c, MPI_File fh)
{
	int rc = obj_call(c, file_obj(fh), FTP_WATCH_ALL, 0);

	if (rc == MPI_SUCCESS && !c->direct)
		watch_all(c);
	return rc;
}

/* --- release ----------------------------------------------------------- */

/* Whether o's MPI object can be released through the MPI: no member has
 * failed and it is not revoked, as a fence shows; then under the hang
 * watch. */
static bool release_through_mpi(struct ftp_call *c, struct ftp_obj *o)
{
	obj_call(c, o, FTP_WATCH_ALL, 0);
	if (ftp_comm_tainted(o->comm))
		return false;
	return obj_fence(c) == MPI_SUCCESS;
}

static void obj_forget(struct ftp_obj *o)
{
	ftp_obj_erase(o->kind, o->bits, o);
	ftp_comm_put(o->comm);
	ftp_obj_free(o);
}

/* MPI_Win_free and MPI_File_close of o (NULL: untracked): release runs
 * the MPI's on the handle, which null sets to the null handle. After a
 * failure only ftshim's entry goes, and the handle. Its errors are the
 * MPI's, on no object of ftshim's. */
static int obj_release(struct ftp_call *c, struct ftp_obj *o, int (*release)(void *handle),
		       void (*null)(void *handle), void *handle)
{
	int rc;

	if (!o) {
		rc = release(handle);
	} else if (release_through_mpi(c, o)) {
		rc = release(handle);
		ftp_hang_watch_end();
		if (rc == MPI_SUCCESS)
			obj_forget(o);
	} else {
		static const char *const names[] = FTP_FN_NAMES;
		ft_info("%s: a member of the %s has failed, and the MPI's own release would wait for it for "
			"ever: the handle is released, the MPI's %s stays allocated until the process ends",
			names[c->fn], ftp_obj_noun(o->kind),
			o->kind == FTP_OBJ_WIN ? "window (and its memory)" : "file (still open)");
		obj_forget(o);
		null(handle);
		rc = MPI_SUCCESS;
	}
	c->obj = FTP_OBJ_COMM;
	return ftp_post_plain(c, rc);
}

static int win_release(void *win)
{
	return ftp_mpi.PMPI_Win_free(win);
}

static void win_null(void *win)
{
	*(MPI_Win *)win = MPI_WIN_NULL;
}

static int file_release(void *fh)
{
	return ftp_mpi.PMPI_File_close(fh);
}

static void file_null(void *fh)
{
	*(MPI_File *)fh = MPI_FILE_NULL;
}

FT_EXPORT int MPI_Win_free(MPI_Win *win)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Win_free);

	return obj_release(&c, win ? win_obj(*win) : NULL, win_release, win_null, win);
}
FTP_ALSO_PMPI(MPI_Win_free);

FT_EXPORT int MPI_File_close(MPI_File *fh)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_File_close);

	return obj_release(&c, fh ? file_obj(*fh) : NULL, file_release, file_null, fh);
}
FTP_ALSO_PMPI(MPI_File_close);
