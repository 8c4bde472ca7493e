/* spare_view.c: communicators that recovery makes without entering the
 * MPI's constructors, where a member's death would leave the others
 * stuck (docs/DESIGN.md, "Recovery without the MPI's constructors").
 * At MPI_Init, while nothing has failed, every rank makes a few
 * duplicates of MPI_COMM_WORLD, the spare contexts
 * (FTSHIM_RECOVERY_CONTEXTS), together with ftshim's private exchange
 * channel (ftp.private_world) where a view or the MPI needs one. Once
 * MPIX_Comm_shrink's agreement has named the dead, with each member
 * offering the spares it has not taken, the survivors' communicator is a
 * view on the lowest spare that none of them has taken: the program's
 * handle is the spare itself, its rank map sends program rank r to the
 * world rank of the r-th survivor, point-to-point runs on it with the
 * program's own tags, and local queries answer from the map. Its
 * blocking collectives run as schedules of point-to-point steps
 * (pmpi/view_coll.c) on ftp.private_world, under the view's tag there
 * (pmpi/coll_p2p.h), so that the program's receives never match them;
 * the nonblocking ones are the same schedules, a round at a time, from
 * the completion calls; a member's death or a revocation fails the
 * collective. A creation from a
 * view (dup, split, create, topologies, spawn) runs the MPI's constructor on a
 * communicator of the view's members (its base), made once by
 * MPI_Comm_create_group on ftp.private_world: the program's own creation,
 * with the window any creation has; windows and files made from a view
 * are the base's. What else a view refuses, it refuses with one line
 * (views_runs_as_is).
 *
 * A process takes each spare once, so the spare's messages, attributes
 * and error handler are that view's alone; two views with no member in
 * common may take the same spare, since their messages never meet.
 *
 * Sharing: the spares and their mask are written at MPI_Init and then
 * by the application thread that shrinks (MPI forbids two threads to
 * run collectives on one communicator at once; two shrinks on different
 * communicators from two threads at once are not supported); a view is
 * written when made and read by the calls on it. */
#include "ftshim_config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi/spare_view.h"
#include "pmpi/call.h"
#include "pmpi/coll_forms.h"
#include "pmpi/create_group.h"
#include "pmpi/coll_p2p.h"
#include "pmpi/comms.h"
#include "pmpi/cover.h"
#include "pmpi/hangwatch.h"
#include "pmpi/mode_calls.h"
#include "pmpi/requests.h"
#include "pmpi/view_coll.h"
#include "src/log.h"
#include "src/rank_map.h"

/* The most spares FTSHIM_RECOVERY_CONTEXTS may ask for (its bound in
 * src/config_vars.h), within a mask of 32 bits. */
#define SPARES_MAX FTP_SPARE_CONTEXTS_MAX

/* The tag of the MPI_Comm_create_group that makes a view's creation base
 * on its spare. */
#define BASE_TAG 0x5f7c

static MPI_Comm spares[SPARES_MAX];
static uint32_t spares_free; /* bit k: spares[k] is this process's to take */

/* A view's cover: what its calls need besides the entry (whose map gives
 * member i's world rank, its rank on the spare and on ftp.private_world,
 * and whose core gives its members' job ranks and its id). */
struct spare_view {
	struct ftp_cover cover; /* first: the entry's cover points here */
	uint32_t me;		/* this process's member index */
	uint32_t colls;		/* the collectives started on it: the next one's number */
	/* Its members' communicator of the MPI's, once a creation needed it,
	 * tracked as a communicator of its own (windows and files made from
	 * the view are on it; the program never sees its handle). */
	struct ftp_comm *base;
};

static struct spare_view *view_of(const struct ftp_comm *e)
{
	return (struct spare_view *)e->cover;
}

void ftp_spare_view_start(void)
{
	uint32_t want = ftp.cfg.recovery_contexts;
	bool private = ftp_coll_p2p_wanted();
	MPI_Comm made[SPARES_MAX + 1];
	MPI_Request reqs[SPARES_MAX + 1];
	MPI_Status st[SPARES_MAX + 1];
	int n = 0, rc = MPI_SUCCESS;

	/* A recovery mode recovers its own way, with the contexts it asks
	 * for (its repaired worlds); a spawned world shrinks the MPI's way;
	 * and the collectives need the exchanges' tags. */
	if (ftp_mode_on())
		want = ftp_mode_contexts();
	if (want > SPARES_MAX || ftp_world_spawned() || !ftp_coll_p2p_tags_fit())
		want = 0;
	private = private || want > 0;
	ftp.private_world = private ? MPI_COMM_NULL : ftp.world;
	for (uint32_t k = 0; k < want + private && rc == MPI_SUCCESS; k++, n++)
		rc = ftp_mpi.PMPI_Comm_idup(ftp.world, &made[n], &reqs[n]);
	/* Every rank makes them, so either all have them or the MPI failed
	 * the call everywhere; then shrink is the MPI's, and on Open MPI the
	 * collectives are the MPI's too. */
	if (rc == MPI_SUCCESS && n)
		rc = ftp_mpi.PMPI_Waitall(n, reqs, st);
	if (rc != MPI_SUCCESS) {
		ft_warn("ftshim could not make its own duplicates of MPI_COMM_WORLD at MPI_Init (error "
			"%d): MPIX_Comm_shrink makes its communicators with the MPI's constructors",
			rc);
		ftp.private_world = ftp_coll_p2p_wanted() ? MPI_COMM_NULL : ftp.world;
		return;
	}
	for (int k = 0; k < n; k++)
		ftp_mpi.PMPI_Comm_set_errhandler(made[k], MPI_ERRORS_RETURN);
	if (private)
		ftp.private_world = made[--n];
	for (int k = 0; k < n; k++) {
		spares[k] = made[k];
		spares_free |= 1u << k;
	}
	ft_debug("MPI_Init: %d spare context(s) for recovery", n);
}

uint32_t ftp_spare_view_offer(const struct ftp_comm *e)
{
	/* A recovery mode's contexts are its own. */
	if (ftp_mode_on() || !e->in_world || e->core->remote_size || (e->cover && !e->real_is_world))
		return 0;
	return spares_free;
}

/* --- the calls on a view -------------------------------------------------- */

/* Where e's next collective runs: every member numbers them alike, as
 * MPI has every member call them in the same order. */
static struct ftp_view view_on(const struct ftp_comm *e)
{
	struct spare_view *v = view_of(e);

	return (struct ftp_view){ .chan = ftp.private_world,
				  .rank = e->map->real_of,
				  .job = ftp_member_jobs(e->core),
				  .n = e->map->size,
				  .me = v->me,
				  .tag = ftp_coll_p2p_tag_seq(e->core->id, v->colls++) };
}

/* The runner of a view's blocking collectives (struct ftp_cover_kind.coll). */
static int view_coll(struct ftp_call *c, const struct coll_args *a)
{
	return ftp_view_coll_call(c, a, view_on, NULL);
}

/* The runner of a view's nonblocking collectives (struct
 * ftp_cover_kind.icoll). */
static int view_icoll(struct ftp_call *c, const struct coll_args *a, MPI_Request *request)
{
	return ftp_view_icoll_call(c, a, view_on, NULL, request);
}

/* Whether fn makes a window or opens a file: the object lives on the
 * view's base, whose ranks (the program's) its calls address. */
static bool makes_object(int fn)
{
	return fn == FTP_FN_MPI_Win_create || fn == FTP_FN_MPI_Win_allocate ||
	       fn == FTP_FN_MPI_Win_allocate_shared || fn == FTP_FN_MPI_Win_create_dynamic ||
	       fn == FTP_FN_MPI_File_open;
}

/* A creation from a view runs on a communicator of its members made by
 * the MPI (struct ftp_cover_kind.creation), once. Made on the private
 * channel: the MPI's creation talks on its parent with its tag (Open
 * MPI's), which a receive of the program's on the spare with MPI_ANY_TAG
 * would match. */
static int view_creation(struct ftp_call *c)
{
	struct spare_view *v = view_of(c->comm);
	const int32_t *jobs = ftp_member_jobs(c->comm->core);
	uint32_t n = ftp_members(c->comm->core);

	if (!v->base) {
		MPI_Comm base = MPI_COMM_NULL;
		int rc = ftp_create_group_of(ftp.private_world, jobs, n, BASE_TAG, c->fn, &base);
		if (rc != MPI_SUCCESS)
			return rc;
		ftp_mpi.PMPI_Comm_set_errhandler(base, MPI_ERRORS_RETURN);
		ftp_register_group_child(c, MPI_GROUP_NULL, BASE_TAG, &base);
		v->base = ftp_seam_comm(base);
		if (!v->base) { /* untracked (out of memory): not usable as a base */
			ftp_mpi.PMPI_Comm_free(&base);
			return MPI_ERR_NO_MEM;
		}
	}
	/* Not direct: the call's errors are the view's, and a spawn's
	 * children join the job through it (pmpi/spawn.c). A window or a
	 * file is the base's, as its calls address the base's ranks. */
	c->real = v->base->real;
	if (makes_object(c->fn))
		c->comm = v->base;
	ftp_hang_watch_begin(c->fn, jobs, n);
	return MPI_SUCCESS;
}

static void view_release(struct ftp_comm *e)
{
	struct spare_view *v = view_of(e);

	/* After MPI_Finalize began, ftshim's own end releases the base's
	 * entry with every other. */
	if (v->base && ftp_active()) {
		ftp_comm_erase(v->base);
		ftp_comm_put(v->base);
	}
	free(v);
	e->cover = NULL;
}

/* Without a form, a call runs on the spare as on any communicator when
 * the seam's translations are all it needs (queries, point-to-point,
 * completion, the fault-tolerance calls), and so do the creations whose
 * base is the view's (view_creation: dup, split, create, topologies,
 * spawn, windows and files; the base's ranks are the view's, so a graph's
 * ranks need no translation) or that are collective over a group of its
 * members, and freeing it. What would be collective over the spare's
 * every process (disconnect, intercommunicators) or has no schedule yet
 * (persistent and neighbourhood collectives, MPI_Alltoallw and
 * MPI_Ialltoallw) is refused. */
static bool views_runs_as_is(int fn, enum ftp_mode_role role)
{
	if (ftp_cover_role_translated(role))
		return true;
	switch (role) {
	case FTP_ROLE_CREATE:
		return fn == FTP_FN_MPI_Comm_dup || fn == FTP_FN_MPI_Comm_dup_with_info ||
		       fn == FTP_FN_MPI_Comm_idup || fn == FTP_FN_MPI_Comm_split ||
		       fn == FTP_FN_MPI_Comm_split_type || fn == FTP_FN_MPI_Comm_create ||
		       fn == FTP_FN_MPI_Comm_create_group || fn == FTP_FN_MPI_Cart_create ||
		       fn == FTP_FN_MPI_Graph_create || fn == FTP_FN_MPI_Dist_graph_create ||
		       fn == FTP_FN_MPI_Dist_graph_create_adjacent || fn == FTP_FN_MPI_Comm_free;
	case FTP_ROLE_PROCESS:
		return fn == FTP_FN_MPI_Abort || fn == FTP_FN_MPI_Comm_spawn ||
		       fn == FTP_FN_MPI_Comm_spawn_multiple;
	case FTP_ROLE_ONESIDED:
	case FTP_ROLE_IO:
		return makes_object(fn);
	default:
		return false;
	}
}

static const struct ftp_cover_kind views_kind = {
	.covered_as = "repaired (MPIX_Comm_shrink's, or MPI_COMM_WORLD once a spare took a rank)",
	.calls = &ftp_view_coll_calls,
	.runs_as_is = views_runs_as_is,
	.coll = view_coll,
	.icoll = view_icoll,
	.creation = view_creation,
	.fenced = true,
	.release = view_release,
};

/* Take spare context k for a view of the n job ranks jobs (this process
 * one of them): *spare, and its cover and map, for the entry to own. 0,
 * or an MPI error (nothing made; the context stays taken, as the others
 * take it too). */
static int view_new(int k, const int32_t *jobs, uint32_t n, MPI_Comm *spare, struct spare_view **cover,
		    struct ft_rank_map **map)
{
	struct spare_view *v = calloc(1, sizeof *v);
	struct ft_rank_map *m = calloc(1, sizeof *m);
	int32_t *world = malloc((n + 1) * sizeof *world); /* the map's, copied */
	int rc = v && m && world ? 0 : MPI_ERR_NO_MEM;

	spares_free &= ~(1u << k);
	*spare = spares[k];
	spares[k] = MPI_COMM_NULL;
	if (rc == 0) {
		v->cover.kind = &views_kind;
		v->me = UINT32_MAX;
		for (uint32_t i = 0; i < n; i++) {
			world[i] = ftp_world_of_job(jobs[i]);
			if (jobs[i] == ftp.rank)
				v->me = i;
		}
		if (v->me == UINT32_MAX || ft_rank_map_init(m, world, n, (uint32_t)ftp.world_size) != 0)
			rc = MPI_ERR_INTERN;
	}
	free(world);
	if (rc != 0) {
		free(v);
		free(m);
		return rc;
	}
	*cover = v;
	*map = m;
	return 0;
}

int ftp_spare_view_world(const int32_t *jobs, uint32_t n, uint64_t id)
{
	struct spare_view *v;
	struct ft_rank_map *map;
	MPI_Comm spare;
	bool member = false;

	if (!spares_free)
		return -1;
	int k = __builtin_ctz(spares_free);
	for (uint32_t i = 0; i < n; i++)
		member |= jobs[i] == ftp.rank;
	if (!member) {
		spares_free &= ~(1u << k); /* a spare left waiting: no world of its own yet */
		return MPI_SUCCESS;
	}
	int rc = view_new(k, jobs, n, &spare, &v, &map);
	if (rc != 0)
		return rc;
	/* A new run of main finds MPI_COMM_WORLD's handler as the MPI
	 * starts it. */
	ftp_mpi.PMPI_Comm_set_errhandler(spare, MPI_ERRORS_ARE_FATAL);
	if (ftp_comm_world_view(spare, id, jobs, n, map, &v->cover) != 0)
		return MPI_ERR_NO_MEM; /* the entry freed map and cover */
	ft_debug("restart: MPI_COMM_WORLD of %u ranks is a view on spare context %d", n, k);
	return MPI_SUCCESS;
}

int ftp_spare_view_make(struct ftp_call *c, uint32_t agreed, const int32_t *jobs, uint32_t n,
			int tag, MPI_Comm *newcomm)
{
	struct spare_view *v;
	struct ft_rank_map *map;
	MPI_Comm spare;

	agreed &= (1u << SPARES_MAX) - 1;
	if (!agreed)
		return -1;
	int k = __builtin_ctz(agreed);
	int rc = view_new(k, jobs, n, &spare, &v, &map);
	if (rc != 0)
		return rc;
	if (ftp_track_view(c, spare, jobs, n, tag, map, &v->cover) != 0) {
		ftp_mpi.PMPI_Comm_free(&spare);
		return MPI_ERR_NO_MEM;
	}
	*newcomm = spare;
	ft_debug("shrink: the %u survivors' communicator is a view on spare context %d", n, k);
	return MPI_SUCCESS;
}
