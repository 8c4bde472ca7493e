/* comms.c: communicator creation and release as ftshim sees them. After
 * the MPI has made a communicator, each member works out its job-wide id
 * (src/comm_table.h says how) and its members as job ranks, and enters
 * it in the registry (by id) and behind the lookup seam (by handle). A
 * communicator ftshim cannot describe (members outside MPI_COMM_WORLD, out
 * of memory) stays untracked: its calls pass straight through. */
#include "ftshim_config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi/comms.h"
#include "pmpi/rts_state.h"
#include "pmpi/errors.h"
#include "pmpi/hangwatch.h"
#include "pmpi/call_base.h"
#include "pmpi/cover.h"
#include "pmpi/mode/mode.h"
#include "pmpi/detect.h"
#include "pmpi/listen.h"
#include "pmpi/retire.h"
#include "src/log.h"

struct members {
	int32_t *local, *remote; /* remote is NULL for an intracommunicator */
	uint32_t nlocal, nremote;
};

_Static_assert(sizeof(int) == sizeof(int32_t), "MPI ranks are ints; the core keeps int32_t");

static void members_free(struct members *m)
{
	free(m->local);
	free(m->remote);
	memset(m, 0, sizeof *m);
}

static int members_of(MPI_Comm comm, struct members *m)
{
	MPI_Group group;
	int inter = 0;

	memset(m, 0, sizeof *m);
	if (ftp_mpi.PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
		return -1;
	if (ftp_mpi.PMPI_Comm_group(comm, &group) != MPI_SUCCESS)
		return -1;
	m->local = ftp_group_jobs(group, &m->nlocal);
	ftp_mpi.PMPI_Group_free(&group);
	if (inter) {
		if (ftp_mpi.PMPI_Comm_remote_group(comm, &group) != MPI_SUCCESS)
			goto out_fail;
		m->remote = ftp_group_jobs(group, &m->nremote);
		ftp_mpi.PMPI_Group_free(&group);
		if (!m->remote)
			goto out_fail;
	}
	if (!m->local)
		goto out_fail;
	return 0;

out_fail:
	members_free(m);
	return -1;
}

static void comm_release_map(struct ftp_comm *e);

/* What a view's entry has before anyone can find it (pmpi/spare_view.c):
 * its map and cover, which the entry owns from then on. */
struct comm_view {
	struct ft_rank_map *map;
	struct ftp_cover *cover;
};

/* Enter a communicator under id in the registry and behind the seam,
 * the MPI's `real` under the program's `handle` (the same but for the
 * program's MPI_COMM_WORLD under a mode that narrows it); its entry, or
 * NULL if it stays untracked (and view, if given, is freed). A
 * communicator made from a covered parent is covered too, before anyone
 * can find it. Under handle MPI_COMM_NULL the entry is the registry's
 * only (ftshim's own, ftp_comm_job), behind no handle. */
static struct ftp_comm *comm_track_as(MPI_Comm handle, MPI_Comm real, uint64_t id,
				      const struct members *m, const struct ftp_comm *parent,
				      const struct comm_view *view)
{
	struct ftp_comm *e = calloc(1, sizeof *e);

	if (!e)
		goto out_untracked;
	e->handle = handle;
	e->real = real;
	atomic_init(&e->refs, 1);
	if (view) {
		ftp_comm_give_map(e, view->map);
		e->cover = view->cover;
		e->real_is_world = true;
		view = NULL;
	}
	e->core = ft_comm_new(id, m->local, m->nlocal, m->remote, m->nremote);
	if (!e->core)
		goto out_free;
	e->in_world = true;
	for (uint32_t i = 0; i < ftp_members(e->core); i++)
		if (ftp_world_of_job(ftp_member_job(e->core, i)) < 0)
			e->in_world = false;
	if (ftp_seam_covered(parent))
		ftp_cover_derive(e, parent);
	int rc = ft_comm_registry_add(&ftp.comms, e->core);
	if (rc != 0) {
		ft_warn("communicator id %016llx is already in use (%d); this one is not tracked",
			(unsigned long long)id, rc);
		goto out_free_core;
	}
	if (handle != MPI_COMM_NULL && ftp_comm_insert(e) != 0)
		goto out_unregister;
	ftp_listen_comm_create(e->core);
	ft_debug("communicator %016llx: %u local + %u remote members", (unsigned long long)id,
		 m->nlocal, m->nremote);
	return e;

out_unregister:
	ft_comm_registry_remove(&ftp.comms, e->core);
out_free_core:
	ft_comm_free(e->core);
out_free:
	comm_release_map(e);
	free(e);
out_untracked:
	if (view) {
		ftp_cover_release(&(struct ftp_comm){.map = view->map, .cover = view->cover});
		ft_rank_map_fini(view->map);
		free(view->map);
	}
	ft_debug("communicator not tracked: its calls pass straight through");
	return NULL;
}

static struct ftp_comm *comm_track(MPI_Comm handle, uint64_t id, const struct members *m,
				   const struct ftp_comm *parent, const struct comm_view *view)
{
	return comm_track_as(handle, handle, id, m, parent, view);
}

int ftp_track(MPI_Comm handle, uint64_t id, const int32_t *local, uint32_t nlocal, const int32_t *remote,
	      uint32_t nremote)
{
	struct members m = { .local = (int32_t *)local, .nlocal = nlocal, .remote = (int32_t *)remote,
			     .nremote = nremote };

	return comm_track(handle, id, &m, NULL, NULL) ? 0 : -1;
}

void ftp_comm_give_map(struct ftp_comm *e, struct ft_rank_map *map)
{
	e->map = map;
	atomic_fetch_add_explicit(&ftp_seam_maps, 1, memory_order_relaxed);
	/* A thread may have cached e while it had none (MPI_COMM_WORLD):
	 * the cache holds no mapped entry. */
	atomic_fetch_add_explicit(&ftp_comm_erasures, 1, memory_order_release);
}

/* Free what translates e's ranks. */
static void comm_release_map(struct ftp_comm *e)
{
	if (e->cover)
		ftp_cover_release(e);
	ftp_rts_release(e);
	if (e->map) {
		ft_rank_map_fini(e->map);
		free(e->map);
		e->map = NULL;
		atomic_fetch_sub_explicit(&ftp_seam_maps, 1, memory_order_relaxed);
	}
}

/* Free an entry that is no longer behind the seam. */
static void comm_release(struct ftp_comm *e)
{
	ftp_listen_comm_release(e->core);
	ft_comm_registry_remove(&ftp.comms, e->core);
	comm_release_map(e); /* reads the core's id */
	ft_comm_free(e->core);
	free(e);
}

void ftp_comm_hold(struct ftp_comm *e)
{
	/* relaxed: whoever holds a reference already may take another. */
	atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
}

int ftp_comm_put(struct ftp_comm *e)
{
	int rc = MPI_SUCCESS;

	/* acq_rel: the last one sees everything the others did with e. */
	if (atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) != 1)
		return MPI_SUCCESS;
	/* After MPI_Finalize began, PMPI_Finalize frees what is left. */
	if (!e->mpi_freed && ftp_active())
		rc = ftp_comm_free_mpi(e);
	comm_release(e);
	return rc;
}

/* MPI_Comm_free (and MPI_Comm_disconnect) of a communicator: the handle
 * is gone for the application at once; the MPI's communicator and
 * ftshim's state stay while requests on it are pending. */
int ftp_comm_free_real(struct ftp_call *c)
{
	struct ftp_comm *e = c->comm;
	bool disconnect = c->fn == FTP_FN_MPI_Comm_disconnect;

	/* Freeing a predefined communicator is erroneous: the MPI says so,
	 * and ftshim keeps it. */
	if (!e || e->handle == ftp.world || e->handle == MPI_COMM_SELF)
		return disconnect ? ftp_mpi.PMPI_Comm_disconnect(&c->real) : ftp_mpi.PMPI_Comm_free(&c->real);
	/* MPI_Comm_disconnect waits for what is pending, so nothing is left
	 * to keep the MPI's communicator for. */
	if (disconnect) {
		int rc = ftp_mpi.PMPI_Comm_disconnect(&c->real);
		if (rc != MPI_SUCCESS)
			return rc;
		e->mpi_freed = true;
	}
	ftp_comm_erase(e);
	c->comm = NULL;
	c->direct = true;
	c->real = MPI_COMM_NULL;
	return ftp_comm_put(e);
}

/* Creation collective over the parent: every member of the parent takes a
 * number from the parent's counter, also those that get MPI_COMM_NULL. */
void ftp_comm_register_create(struct ftp_call *c, int rc, MPI_Comm *newcomm)
{
	struct members m;

	if (rc != MPI_SUCCESS || !c->comm)
		return;
	uint64_t seq = ft_seq_next(&c->comm->core->seqs, 0);
	if (*newcomm == MPI_COMM_NULL || members_of(*newcomm, &m) != 0)
		return;
	uint64_t id = ft_comm_child_id(c->comm->core->id, FT_COMM_KIND_CHILD, 0, seq,
				       ft_comm_result_hash(m.local, m.nlocal, m.remote, m.nremote));
	comm_track(*newcomm, id, &m, c->comm, NULL);
	members_free(&m);
}

/* Duplication: the members are the parent's, so the new communicator is
 * never queried (MPI_Comm_idup's may not be used before it completes);
 * unless the MPI duplicated another communicator than the parent's own
 * (a covered parent's creation base, pmpi/mode/mode.h): a creation. */
void ftp_comm_register_dup(struct ftp_call *c, int rc, MPI_Comm *newcomm)
{
	if (rc != MPI_SUCCESS || !c->comm)
		return;
	if (c->real != c->comm->real) {
		ftp_comm_register_create(c, rc, newcomm);
		return;
	}
	const struct ft_comm *p = c->comm->core;
	struct members m = {
		.local = (int32_t *)ftp_member_jobs(p),
		.nlocal = p->local_size,
		.remote = p->remote_size ? (int32_t *)ftp_member_jobs(p) + p->local_size : NULL,
		.nremote = p->remote_size,
	};
	uint64_t seq = ft_seq_next(&c->comm->core->seqs, 0);
	uint64_t id = ft_comm_child_id(p->id, FT_COMM_KIND_CHILD, 0, seq,
				       ft_comm_result_hash(m.local, m.nlocal, m.remote, m.nremote));
	if (*newcomm != MPI_COMM_NULL)
		comm_track(*newcomm, id, &m, c->comm, NULL);
}


/* MPI_Comm_create_group is collective over the group only, so the counter
 * is the parent's for this group and tag. The group argument is the new
 * communicator's group. */
static void register_create_group(struct ftp_call *c, int rc, MPI_Group group, int tag, MPI_Comm *newcomm,
				  const struct ftp_comm *parent)
{
	struct members m;

	(void)group;
	if (rc != MPI_SUCCESS || !c->comm || *newcomm == MPI_COMM_NULL)
		return;
	if (members_of(*newcomm, &m) != 0)
		return;
	uint64_t key = ft_comm_group_key(m.local, m.nlocal, tag);
	uint64_t seq = ft_seq_next(&c->comm->core->seqs, key);
	uint64_t id = ft_comm_child_id(c->comm->core->id, FT_COMM_KIND_GROUP, key, seq,
				       ft_comm_result_hash(m.local, m.nlocal, NULL, 0));
	comm_track(*newcomm, id, &m, parent, NULL);
	members_free(&m);
}

/* An intercommunicator made by MPI_Intercomm_create from the two groups
 * and tag, counted in seqs per (groups, tag) under parent (0: none). */
static void track_inter(uint64_t parent, struct ft_seq_map *seqs, int tag, MPI_Comm *newintercomm)
{
	struct members m;

	if (*newintercomm == MPI_COMM_NULL || members_of(*newintercomm, &m) != 0)
		return;
	uint64_t key = ft_comm_inter_key(m.local, m.nlocal, m.remote, m.nremote, tag);
	uint64_t seq = ft_seq_next(seqs, key);
	uint64_t id = ft_comm_child_id(parent, FT_COMM_KIND_INTER, key, seq,
				       ft_comm_result_hash(m.local, m.nlocal, m.remote, m.nremote));
	comm_track(*newintercomm, id, &m, NULL, NULL);
	members_free(&m);
}

/* MPI_Intercomm_create: the two sides have different local communicators,
 * so the id cannot come from a parent; it comes from the two groups and
 * the tag, counted in one process-wide counter per (groups, tag). */
static void register_create_inter(struct ftp_call *c, int rc, int tag, MPI_Comm *newintercomm)
{
	(void)c;
	if (rc == MPI_SUCCESS && ftp_active())
		track_inter(0, &ftp.comms.inter_seqs, tag, newintercomm);
}

/* ftp_comm_free_real left c->real MPI_COMM_NULL, or the MPI set it so. */
static void register_free(struct ftp_call *c, int rc, MPI_Comm *comm)
{
	if (rc == MPI_SUCCESS)
		*comm = c->real;
}

int ftp_comms_init(void)
{
	int32_t self = ftp.rank;
	struct members m = { .local = malloc((size_t)ftp.world_size * sizeof(int32_t)),
			     .nlocal = (uint32_t)ftp.world_size };

	if (!m.local)
		return -1;
	if (ft_comm_registry_init(&ftp.comms) != 0)
		goto out_free;
	if (ftp_job_group_init() != 0)
		goto out_registry;
	for (int i = 0; i < ftp.world_size; i++)
		m.local[i] = ftp_job_of_world(i);
	comm_track(ftp.world, ftp.world_id, &m, NULL, NULL);
	free(m.local);
	m = (struct members){ .local = &self, .nlocal = 1 };
	comm_track(MPI_COMM_SELF, ft_comm_self_id((uint32_t)ftp.rank), &m, NULL, NULL);
	return 0;

out_registry:
	ft_comm_registry_destroy(&ftp.comms);
out_free:
	free(m.local);
	return -1;
}

/* The whole job's communicator of ftshim's own under a mode that
 * narrows the program's world: the registry's (for agreements over every
 * process), never behind the seam. Application thread. */
static struct ftp_comm *job_entry;

struct ftp_comm *ftp_comm_job(void)
{
	return job_entry;
}

/* The program's MPI_COMM_WORLD entry is replaced by one on real (view:
 * with its map and cover), under the same handle. */
static struct ftp_comm *world_replace(MPI_Comm real, uint64_t id, const struct members *m,
				      const struct comm_view *view)
{
	struct ftp_comm *old = ftp_comm_lookup_table(ftp.world);

	if (!old)
		return NULL;
	ftp_comm_erase(old);
	old->mpi_freed = true; /* the MPI's object stays: the world, or the abandoned run's */
	ftp_comm_put(old);
	return comm_track_as(ftp.world, real, id, m, NULL, view);
}

int ftp_comm_world_narrow(MPI_Comm real, const int32_t *jobs, uint32_t n)
{
	struct ftp_comm *old = ftp_comm_lookup_table(ftp.world);
	struct members m = { .local = (int32_t *)jobs, .nlocal = n };

	if (!old)
		return -1;
	/* The job's entry: every process, under an id of its own, which
	 * the agreements that ended MPI_Init did not use. */
	const struct ft_comm *all = old->core;
	struct members every = { .local = (int32_t *)all->members, .nlocal = all->local_size };
	job_entry = comm_track_as(MPI_COMM_NULL, MPI_COMM_NULL,
				  ft_comm_child_id(all->id, FT_COMM_KIND_GROUP, 0x6a6f62 /* "job" */, 0, 0),
				  &every, NULL, NULL);
	/* The agreements over the world go on numbering where they were
	 * (the one that ended MPI_Init was over every process). */
	uint32_t agree_seq = atomic_load(&old->agree_seq);
	struct ftp_comm *e = world_replace(real, ftp.world_id, &m, NULL);
	if (!e)
		return -1;
	atomic_store(&e->agree_seq, agree_seq);
	return 0;
}

int ftp_comm_world_view(MPI_Comm real, uint64_t id, const int32_t *jobs, uint32_t n, struct ft_rank_map *map,
			struct ftp_cover *cover)
{
	struct members m = { .local = (int32_t *)jobs, .nlocal = n };
	struct comm_view view = { .map = map, .cover = cover };

	return world_replace(real, id, &m, &view) ? 0 : -1;
}

void ftp_comms_fini(void (*release_obj)(struct ftp_obj *o))
{
	if (job_entry)
		comm_release(job_entry);
	job_entry = NULL;
	ftp_comm_lookup_fini(comm_release, release_obj);
	ft_comm_registry_destroy(&ftp.comms);
}

void ftp_register_group_child(struct ftp_call *c, MPI_Group group, int tag, MPI_Comm *newcomm)
{
	register_create_group(c, MPI_SUCCESS, group, tag, newcomm, NULL);
}

int ftp_track_view(struct ftp_call *c, MPI_Comm handle, const int32_t *jobs, uint32_t n, int tag,
		   struct ft_rank_map *map, struct ftp_cover *cover)
{
	struct members m = { .local = (int32_t *)jobs, .nlocal = n };
	struct comm_view view = { .map = map, .cover = cover };
	uint64_t key = ft_comm_group_key(jobs, n, tag);
	uint64_t seq = ft_seq_next(&c->comm->core->seqs, key);
	uint64_t id = ft_comm_child_id(c->comm->core->id, FT_COMM_KIND_GROUP, key, seq,
				       ft_comm_result_hash(jobs, n, NULL, 0));

	return comm_track(handle, id, &m, NULL, &view) ? 0 : -1;
}

void ftp_register_inter_child(struct ftp_call *c, int tag, MPI_Comm *newintercomm)
{
	if (c->comm)
		track_inter(c->comm->core->id, &c->comm->core->seqs, tag, newintercomm);
}

int ftp_post_create_group(struct ftp_call *c, int rc, MPI_Group group, int tag, MPI_Comm *newcomm)
{
	ftp_hang_watch_end();
	/* The program's own: a recovery mode that covers the parent covers
	 * the new communicator too (replication's derive). */
	register_create_group(c, rc, group, tag, newcomm, c->comm);
	return ftp_post_plain(c, rc);
}

int ftp_post_create_inter(struct ftp_call *c, int rc, int tag, MPI_Comm *newintercomm)
{
	ftp_hang_watch_end();
	register_create_inter(c, rc, tag, newintercomm);
	return ftp_post_plain(c, rc);
}

int ftp_post_free(struct ftp_call *c, int rc, MPI_Comm *comm)
{
	register_free(c, rc, comm);
	return ftp_post_plain(c, rc);
}

#if MPI_VERSION >= 4
/* MPI-4's creations from groups (the sessions model) have no parent
 * communicator: the id comes from the groups and the string tag, counted
 * per (groups, tag) in the process-wide counter of such creations. They
 * are collective over the group(s) with nothing to fence on: a member
 * known failed fails them at once, and one dying inside makes the others
 * leave by the hang watch, as for MPI_Comm_create_group. */
static int from_groups_start(struct ftp_call *c, MPI_Group a, MPI_Group b)
{
	uint32_t na = 0, nb = 0;
	int32_t *wa = ftp_group_jobs(a, &na);
	int32_t *wb = b != MPI_GROUP_NULL ? ftp_group_jobs(b, &nb) : NULL;
	int32_t *all = wa && (b == MPI_GROUP_NULL || wb) ? realloc(wa, (na + nb + 1) * sizeof *wa) : NULL;
	int rc = MPI_SUCCESS;

	if (!all) {
		free(wa);
		free(wb);
		return MPI_SUCCESS; /* untracked: straight through */
	}
	if (nb)
		memcpy(all + na, wb, nb * sizeof *wb);
	for (uint32_t i = 0; i < na + nb && rc == MPI_SUCCESS; i++)
		if (ft_proc_ever_failed(&ftp.procs, (uint32_t)all[i]))
			rc = FTP_ERR_PROC_FAILED;
	if (rc == MPI_SUCCESS)
		ftp_hang_watch_begin(c->fn, all, na + nb);
	free(all);
	free(wb);
	return rc;
}

static void from_groups_register(MPI_Comm *newcomm, const char *stringtag)
{
	struct members m;

	if (*newcomm == MPI_COMM_NULL || members_of(*newcomm, &m) != 0)
		return;
	uint64_t groups = m.remote ? ft_comm_inter_key(m.local, m.nlocal, m.remote, m.nremote, 0)
				   : ft_comm_group_key(m.local, m.nlocal, 0);
	uint64_t key = ft_comm_string_key(groups, stringtag);
	uint64_t seq = ft_seq_next(&ftp.comms.inter_seqs, key);
	uint64_t id = ft_comm_child_id(0, m.remote ? FT_COMM_KIND_INTER : FT_COMM_KIND_GROUP, key, seq,
				       ft_comm_result_hash(m.local, m.nlocal, m.remote, m.nremote));
	comm_track(*newcomm, id, &m, NULL, NULL);
	members_free(&m);
}

/* The call's errors go to its errhandler argument, which no object holds
 * yet: MPI_ERRORS_RETURN returns them; any other is taken as
 * MPI_COMM_SELF's handler (fatal unless the program changed it). */
static int from_groups_post(struct ftp_call *c, int rc, MPI_Errhandler errhandler)
{
	ftp_hang_watch_end();
	if (errhandler == MPI_ERRORS_RETURN && ftp_is_ft_error(rc)) {
		ft_info("%s returned %s: a member of the group has failed", ftp_fn_name(c->fn), ftp_code_name(rc));
		ftp_post_common(c);
		return rc;
	}
	c->real = MPI_COMM_SELF;
	return ftp_post_plain(c, rc);
}

FT_EXPORT int MPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
					 MPI_Errhandler errhandler, MPI_Comm *newcomm)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Comm_create_from_group);
	bool on = ftp_active();
	int rc = on ? from_groups_start(&c, group, MPI_GROUP_NULL) : MPI_SUCCESS;

	if (rc == MPI_SUCCESS)
		rc = ftp_mpi.PMPI_Comm_create_from_group(group, stringtag, info, errhandler, newcomm);
	if (rc == MPI_SUCCESS && on)
		from_groups_register(newcomm, stringtag);
	return from_groups_post(&c, rc, errhandler);
}
FTP_ALSO_PMPI(MPI_Comm_create_from_group);

FT_EXPORT int MPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader, MPI_Group remote_group,
					       int remote_leader, const char *stringtag, MPI_Info info,
					       MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Intercomm_create_from_groups);
	bool on = ftp_active();
	int rc = on ? from_groups_start(&c, local_group, remote_group) : MPI_SUCCESS;

	if (rc == MPI_SUCCESS)
		rc = ftp_mpi.PMPI_Intercomm_create_from_groups(local_group, local_leader, remote_group,
							       remote_leader, stringtag, info, errhandler,
							       newintercomm);
	if (rc == MPI_SUCCESS && on)
		from_groups_register(newintercomm, stringtag);
	return from_groups_post(&c, rc, errhandler);
}
FTP_ALSO_PMPI(MPI_Intercomm_create_from_groups);
#endif
