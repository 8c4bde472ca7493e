/* comm.c: what replication adds to a communicator and does when one is
 * made from a replicated one: ftp_repl_derive gives a new entry its map
 * and team, ftp_repl_release frees them (both called by pmpi/comms.c);
 * ftp_repl_creation agrees on the live copies before a creation (the
 * seam calls it), and MPI_Comm_split, MPI_Comm_split_type and
 * MPI_Comm_create have their replicated forms here (cart.c splits
 * through ftp_repl_split_as). It keeps the list of replicated
 * communicators that a view change walks (state.h), and a dead copy
 * leaves their maps here (ftp_repl_view_forget). Application thread. */
#include "ftshim_config.h"

#include <stdlib.h>

#include "pmpi/mode/replication/comm.h"
#include "pmpi/create_group.h"
#include "pmpi/mode/replication/coll_log.h"
#include "pmpi/mode/replication/stream.h"
#include "pmpi/mode/replication/team.h"
#include "pmpi/comms.h"
#include "pmpi/create.h"
#include "pmpi/hangwatch.h"
#include "pmpi/agree.h"
#include "src/log.h"

/* The next communicator's slot among the data tags. */
static uint32_t next_data_slot;

/* The room in ftp_repl_comms (state.c). */
static size_t repl_comms_cap;

void ftp_repl_release(struct ftp_comm *e)
{
	struct ftp_repl_comm *x = ftp_repl_of(e);

	if (!x)
		return;
	for (size_t i = 0; i < ftp_repl_ncomms; i++)
		if (ftp_repl_comms[i] == e) {
			ftp_repl_comms[i] = ftp_repl_comms[--ftp_repl_ncomms];
			break;
		}
	ft_msg_table_drop_comm(&ftp_repl_msg_counts, e->core->id);
	ft_send_log_drop_comm(&ftp_repl_send_log, e->core->id);
	ftp_repl_coll_log_trim(x, UINT64_MAX);
	ftp_repl_fwd_drop(x);
	free(x->team_view);
	if (x->team != MPI_COMM_NULL && ftp_active())
		ftp_mpi.PMPI_Comm_free(&x->team);
	if (x->base != MPI_COMM_NULL && ftp_active())
		ftp_mpi.PMPI_Comm_free(&x->base);
	free(x->topo);
	free(x);
	e->cover = NULL;
}

/* The key of the MPI_Comm_split under way on a replicated communicator
 * (ftp_repl_MPI_Comm_split), for ftp_repl_derive; and the topology the
 * communicator it makes takes (MPI_Cart_create, MPI_Cart_sub), which
 * ftp_repl_derive takes over. */
static int split_key;
static bool split_keyed;
static struct ftp_repl_topo *split_topo;

/* The copy of program rank k that leads, in copies (slot by slot), as
 * ft_rank_map_lead will in the map made from them. */
static int copy_lead(const int32_t *copies, uint32_t k)
{
	return copies[2 * k + FT_SLOT_PRIMARY] >= 0 ? copies[2 * k + FT_SLOT_PRIMARY]
						    : copies[2 * k + FT_SLOT_REPLICA];
}

/* The replication of e, whose members (e->core, in e->real's rank order)
 * are world ranks: primaries and singles give the program ranks in their
 * order, each replica goes with its primary; a replica whose primary is
 * not among them (it died) stands for its logical rank, and the program
 * ranks then follow their order in parent. Collective over e->real (the
 * team is split from it). */
void ftp_repl_derive(struct ftp_comm *e, const struct ftp_comm *parent)
{
	const struct ft_comm *core = e->core;
	uint32_t nreal = core->local_size;
	struct ftp_repl_comm *x = calloc(1, sizeof *x);
	int32_t *pos = malloc(((size_t)ftp_repl.plan.n + ftp_repl.plan.r + 1) * sizeof *pos);
	int32_t *real_of = NULL;
	/* Each program rank's copies, slot by slot (copy_lead): the map's. */
	int32_t *copies = NULL;
	struct ft_rank_map *map = calloc(1, sizeof *map);
	bool ok = x && pos && map && core->remote_size == 0, lone = false;

	if (ok) {
		x->team = MPI_COMM_NULL;
		x->base = MPI_COMM_NULL;
		copies = malloc(((size_t)nreal + 1) * 2 * sizeof *copies);
		real_of = malloc(((size_t)nreal + 1) * sizeof *real_of);
		ok = copies && real_of;
	}
	for (uint32_t k = 0; ok && k < ftp_repl.plan.n + ftp_repl.plan.r; k++)
		pos[k] = -1;
	for (uint32_t q = 0; ok && q < nreal; q++) {
		int32_t w = ftp_member_job(core, q);
		if (w < 0 || (uint32_t)w >= ftp_repl.plan.n + ftp_repl.plan.r)
			ok = false;
		else
			pos[w] = (int32_t)q;
	}
	/* Program rank order: the primaries and singles in real order, and
	 * a replica alone where its primary would be. */
	for (uint32_t q = 0; ok && q < nreal; q++) {
		int32_t w = ftp_member_job(core, q), l = ftp_repl.plan.logical_of[w];
		if (ftp_repl_is_replica_world(w) && pos[l] >= 0)
			continue;
		int32_t rw = ftp_repl_is_replica_world(w)
				 ? w
				 : ftp_repl.plan.replica_of[w]; /* -1 once dropped */
		copies[2 * x->size + FT_SLOT_PRIMARY] = ftp_repl_is_replica_world(w) ? -1 : (int32_t)q;
		copies[2 * x->size + FT_SLOT_REPLICA] = rw >= 0 ? pos[rw] : -1;
		lone |= ftp_repl_is_replica_world(w);
		x->size++;
	}
	/* The exchange and the team's split below are the MPI's blocking
	 * calls on every copy: a member that dies in them would hold the
	 * others there for ever, so they are watched as any creation is. */
	ftp_hang_watch_begin(FTP_FN_MPI_Comm_split, ftp_member_jobs(core), nreal);
	if (ok && lone && parent && parent->cover) {
		/* The MPI ordered the new communicator by the program's key, then
		 * by rank in what it was made from, where a replica that stands
		 * alone comes after the primaries: order the program ranks by
		 * the key, then by rank in the parent, as among the N. */
		int mine[2] = {split_keyed ? split_key : 0, ftp_repl_my_rank_in(parent)};
		int *all = malloc(((size_t)nreal + 1) * 2 * sizeof *all);
		ok = all && ftp_mpi.PMPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, e->real) ==
				MPI_SUCCESS;
		for (uint32_t i = 1; ok && i < x->size; i++)
			for (uint32_t j = i; j > 0; j--) {
				const int *a = &all[2 * copy_lead(copies, j - 1)],
					  *b = &all[2 * copy_lead(copies, j)];
				if (a[0] < b[0] || (a[0] == b[0] && a[1] <= b[1]))
					break;
				for (int s = 0; s < 2; s++) {
					int32_t t = copies[2 * j + s];
					copies[2 * j + s] = copies[2 * (j - 1) + s];
					copies[2 * (j - 1) + s] = t;
				}
			}
		free(all);
	}
	bool replica = ftp_repl.copy == FTP_COPY_REPLICA, rclass = ftp_repl_replica_class();
	int me = 0;
	/* The team's members first (world ranks, for its hash), then the map. */
	for (uint32_t l = 0; ok && l < x->size; l++) {
		real_of[l] = ftp_repl_world_at(e, copy_lead(copies, l));
		if (real_of[l] == ftp.rank)
			me = (int)l;
	}
	if (ok)
		x->team_hash = ftp_repl_team_hash(real_of, x->size);
	for (uint32_t l = 0; ok && l < x->size; l++)
		real_of[l] = (rclass && copies[2 * l + FT_SLOT_REPLICA] >= 0) ||
				     copies[2 * l + FT_SLOT_PRIMARY] < 0
				 ? copies[2 * l + FT_SLOT_REPLICA]
				 : copies[2 * l + FT_SLOT_PRIMARY];
	int rc = MPI_SUCCESS;
	/* Every member splits, whatever went wrong here, or the others hang;
	 * the key puts the team in program rank order. */
	if (core->remote_size == 0)
		rc = ftp_mpi.PMPI_Comm_split(e->real, replica ? MPI_UNDEFINED : 0, me,
					     x ? &x->team : &(MPI_Comm){0});
	ftp_hang_watch_end();
	if (ok && ftp_repl_ncomms == repl_comms_cap) {
		size_t cap = repl_comms_cap ? 2 * repl_comms_cap : 16;
		struct ftp_comm **more = realloc(ftp_repl_comms, cap * sizeof *more);
		ok = more != NULL;
		if (more) {
			ftp_repl_comms = more;
			repl_comms_cap = cap;
		}
	}
	/* A collective abandoned on a team whose member died may fail later
	 * in the MPI's progress: never fatal (the call's own error reaches the
	 * program through the seam). */
	if (x && x->team != MPI_COMM_NULL)
		ftp_mpi.PMPI_Comm_set_errhandler(x->team, MPI_ERRORS_RETURN);
	if (ok && rc == MPI_SUCCESS && ft_rank_map_init(map, real_of, x->size, nreal) == 0 &&
	    ft_rank_map_set_copies(map, copies, 2) == 0) {
		x->stream_tag = TAG_DATA + (int)(next_data_slot++ % TAG_DATA_SLOTS);
		/* A split takes the topology it was made for; a dup keeps its
		 * parent's. */
		if (split_topo) {
			x->topo = split_topo;
			split_topo = NULL;
		} else if (!split_keyed && parent && parent->cover) {
			x->topo = ftp_repl_topo_copy(ftp_repl_of(parent)->topo);
		}
		ftp_repl_comms[ftp_repl_ncomms++] = e;
		e->cover = &x->cover;
		ftp_comm_give_map(e, map);
		x = NULL;
		map = NULL;
	} else {
		/* Its calls would run unreplicated, each copy for itself. */
		ft_error("a communicator of %u processes cannot be replicated (out of memory): the "
			 "job ends",
			 nreal);
		ftp_mpi.PMPI_Abort(ftp.world, 1);
	}
	if (x && x->team != MPI_COMM_NULL)
		ftp_mpi.PMPI_Comm_free(&x->team);
	free(x);
	if (map)
		ft_rank_map_fini(map); /* a map not handed over: what it holds, if any */
	free(map);
	free(copies);
	free(real_of);
	free(pos);
}

/* An error of the program's call on replicated c->comm that the MPI
 * would have raised there: the communicator's error handler, and the
 * code. */
int ftp_repl_program_error(struct ftp_call *c, int code)
{
	ftp_mpi.PMPI_Comm_call_errhandler(c->comm->handle, code);
	return code;
}

/* The tag of the MPI_Comm_create_group that makes a creation base. */
#define BASE_TAG 0x5f7d

/* Wait until this process knows every member of e not in alive[0..n)
 * failed (the agreement may have heard of it first), apply the view, and
 * say whether each was a replica, dropped now. */
static int settle_dead(const struct ftp_comm *e, const int32_t *alive, uint32_t n)
{
	int rc = MPI_SUCCESS;

	for (uint32_t q = 0, i = 0; q < e->core->local_size; q++) {
		int32_t w = ftp_member_job(e->core, q);
		if (i < n && alive[i] == w) {
			i++;
			continue;
		}
		uint64_t polls = 0;
		while (!ft_proc_ever_failed(&ftp.procs, (uint32_t)w))
			ftp_poll_pause(&polls);
	}
	ftp_mode_failures();
	for (uint32_t q = 0, i = 0; q < e->core->local_size; q++) {
		int32_t w = ftp_member_job(e->core, q);
		if (i < n && alive[i] == w)
			i++;
		else if (!ftp_repl_covered(w))
			rc = FTP_ERR_PROC_FAILED;
	}
	return rc;
}

int ftp_repl_creation(struct ftp_call *c)
{
	struct ftp_comm *e = c->comm;
	struct ftp_repl_comm *x = ftp_repl_of(e);
	int32_t *alive = malloc(((size_t)e->core->local_size + 1) * sizeof *alive);
	uint32_t n = 0;
	int size = 0;

	if (!alive)
		return MPI_ERR_NO_MEM;
	int rc = ftp_agree_alive(c, alive, &n);
	if (rc == MPI_SUCCESS)
		rc = settle_dead(e, alive, n);
	MPI_Comm base = x->base != MPI_COMM_NULL ? x->base : e->real;
	if (rc == MPI_SUCCESS)
		rc = ftp_mpi.PMPI_Comm_size(base, &size);
	if (rc == MPI_SUCCESS && (uint32_t)size != n) {
		MPI_Comm smaller = MPI_COMM_NULL;
		rc = ftp_create_group_of(ftp_repl.stream, alive, n, BASE_TAG, c->fn, &smaller);
		if (rc == MPI_SUCCESS) {
			if (x->base != MPI_COMM_NULL)
				ftp_mpi.PMPI_Comm_free(&x->base);
			x->base = base = smaller;
		}
	}
	if (rc == MPI_SUCCESS) {
		c->real = base;
		c->direct = true;
		ftp_hang_watch_begin(c->fn, alive, n);
	}
	free(alive);
	return rc;
}

/* MPI_Comm_split of c's program ranks, the new communicator with
 * topology topo (NULL: none; taken over either way). */
int ftp_repl_split_as(struct ftp_call *c, int color, int key, struct ftp_repl_topo *topo,
		      MPI_Comm *newcomm)
{
	split_key = key;
	split_keyed = true;
	split_topo = topo;
	int rc = ftp_post_create(c, ftp_mpi.PMPI_Comm_split(c->real, color, key, newcomm), newcomm);
	split_keyed = false;
	free(split_topo); /* not taken: this process is not in a new communicator */
	split_topo = NULL;
	return rc;
}

int ftp_repl_MPI_Comm_split(struct ftp_call *c, int color, int key, MPI_Comm *newcomm)
{
	return ftp_repl_split_as(c, color, key, NULL, newcomm);
}

/* The program's group holds, for each of its program ranks, the copy
 * this process addresses (what MPI_Comm_group gave it here), so this
 * process's place in it is its program rank's at either copy. */
int ftp_repl_MPI_Comm_create(struct ftp_call *c, MPI_Group group, MPI_Comm *newcomm)
{
	int pos = MPI_UNDEFINED;

	if (group != MPI_GROUP_NULL)
		ftp_mpi.PMPI_Group_rank(group, &pos);
	/* Every member splits, whatever the group, or the others hang. */
	return ftp_repl_split_as(c, pos == MPI_UNDEFINED ? MPI_UNDEFINED : 0,
				 pos == MPI_UNDEFINED ? 0 : pos, NULL, newcomm);
}

/* The tag of the MPI's creations that MPI_Comm_create_group makes on the
 * stream (the stream's own tags stop below it, and its bases use
 * BASE_TAG). */
#define CREATE_GROUP_TAG 0x5f7b

/* Program rank of e that world rank w is a copy of, or -1. */
static int program_rank_of(const struct ftp_comm *e, int32_t w)
{
	int32_t l = w >= 0 && (uint32_t)w < ftp_repl.plan.n + ftp_repl.plan.r ? ftp_repl.plan.logical_of[w]
									     : -1;

	for (uint32_t k = 0; l >= 0 && k < ftp_repl_of(e)->size; k++) {
		int32_t lead = ftp_repl_world_at(e, ftp_repl_lead_of(e, (int)k));
		if (lead >= 0 && ftp_repl.plan.logical_of[lead] == l)
			return (int)k;
	}
	return -1;
}

/* MPI_Comm_create_group on a replicated communicator: only the group's
 * program ranks call it, each with its live copies, and the MPI's
 * creation runs over those copies: the leading ones in the group's
 * order, then the others, so that ftp_repl_derive gives the new
 * communicator the group's order (keyed by the place in the group, as a
 * split is). It runs on the stream, which nothing receives from with
 * MPI_ANY_TAG: the MPI's creation sends on its parent with its tag. A
 * copy that dies inside it is the window every creation has (the hang
 * watch). */
int ftp_repl_MPI_Comm_create_group(struct ftp_call *c, MPI_Group group, int tag, MPI_Comm *newcomm)
{
	struct ftp_comm *e = c->comm;
	uint32_t n = 0, m = 0;
	int32_t *jobs = group != MPI_GROUP_NULL ? ftp_group_jobs(group, &n) : NULL;
	int32_t *real = jobs ? malloc((2 * (size_t)n + 1) * sizeof *real) : NULL;
	int *prog = jobs ? malloc(((size_t)n + 1) * sizeof *prog) : NULL;
	int me = ftp_repl_my_rank_in(e), pos = -1, rc = real && prog ? MPI_SUCCESS : MPI_ERR_GROUP;

	for (uint32_t i = 0; rc == MPI_SUCCESS && i < n; i++) {
		prog[i] = program_rank_of(e, jobs[i]);
		if (prog[i] < 0)
			rc = MPI_ERR_GROUP; /* not a process of the communicator */
		else
			real[m++] = ftp_repl_world_at(e, ftp_repl_lead_of(e, prog[i]));
		if (prog[i] == me)
			pos = (int)i;
	}
	for (uint32_t i = 0; rc == MPI_SUCCESS && i < n; i++)
		for (int s = FT_SLOT_PRIMARY; s <= FT_SLOT_REPLICA; s++) {
			int32_t q = ftp_repl_copy(e, prog[i], (enum ft_copy_slot)s);
			if (q >= 0 && q != ftp_repl_lead_of(e, prog[i]))
				real[m++] = ftp_repl_world_at(e, q);
		}
	*newcomm = MPI_COMM_NULL;
	/* The pre-check's hang watch was over the group's program copies;
	 * the creation watches the copies it runs over. */
	ftp_hang_watch_end();
	if (rc == MPI_SUCCESS && pos >= 0) {
		split_key = pos;
		split_keyed = true;
		rc = ftp_create_group_of(ftp_repl.stream, real, m, CREATE_GROUP_TAG, c->fn, newcomm);
		MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
		if (rc == MPI_SUCCESS && ftp_mpi.PMPI_Comm_get_errhandler(e->real, &eh) == MPI_SUCCESS) {
			ftp_mpi.PMPI_Comm_set_errhandler(*newcomm, eh);
			ftp_mpi.PMPI_Errhandler_free(&eh);
		}
	}
	rc = ftp_post_create_group(c, rc, group, tag, newcomm);
	split_keyed = false;
	free(jobs);
	free(real);
	free(prog);
	return rc;
}

/* The lowest program rank of e whose leading copy (primary, single, or
 * replica carrying on) is in kind, a communicator of some of e's real
 * processes; MPI_UNDEFINED if none. */
static int lowest_lead_in(const struct ftp_comm *e, MPI_Comm kind)
{
	const struct ftp_repl_comm *x = ftp_repl_of(e);
	MPI_Group in = MPI_GROUP_NULL, real = MPI_GROUP_NULL;
	int n = 0, color = MPI_UNDEFINED;

	ftp_mpi.PMPI_Comm_group(kind, &in);
	ftp_mpi.PMPI_Comm_group(e->real, &real);
	ftp_mpi.PMPI_Group_size(in, &n);
	int *idx = malloc(((size_t)n + 1) * sizeof *idx), *q = malloc(((size_t)n + 1) * sizeof *q);
	for (int i = 0; idx && i < n; i++)
		idx[i] = i;
	if (idx && q && ftp_mpi.PMPI_Group_translate_ranks(in, n, idx, real, q) == MPI_SUCCESS)
		for (int i = 0; i < n; i++)
			for (uint32_t k = 0; k < x->size && (color == MPI_UNDEFINED || (int)k < color); k++)
				if (q[i] != MPI_UNDEFINED && ftp_repl_lead_of(e, (int)k) == q[i])
					color = (int)k;
	free(idx);
	free(q);
	ftp_mpi.PMPI_Group_free(&in);
	ftp_mpi.PMPI_Group_free(&real);
	return color;
}

/* MPI_Comm_split_type on a replicated communicator: what the MPI groups
 * depends on where each copy runs (a replica is on another host than its
 * primary), so the leading copies decide. Every live copy takes part in
 * the MPI's split; each leading copy's group is named by its lowest
 * program rank, which a primary tells its replica; then the program's
 * ranks are split by those names. */
int ftp_repl_MPI_Comm_split_type(struct ftp_call *c, int split_type, int key, MPI_Info info,
				 MPI_Comm *newcomm)
{
	MPI_Comm kind = MPI_COMM_NULL;
	int color = MPI_UNDEFINED;
	int rc = ftp_mpi.PMPI_Comm_split_type(c->real, split_type, key, info, &kind);

	if (rc == MPI_SUCCESS && kind != MPI_COMM_NULL) {
		color = lowest_lead_in(c->comm, kind);
		ftp_mpi.PMPI_Comm_free(&kind);
	}
	int v[REC_HEAD + 1] = {rc, 0, color}, n = 0;
	if (ftp_repl_following()) {
		if (ftp_repl_hear(v, REC_HEAD + 1, &n) == MPI_SUCCESS && n == REC_HEAD + 1)
			color = v[REC_HEAD];
	} else {
		ftp_repl_tell(v, REC_HEAD + 1);
	}
	/* Every member splits, whatever went wrong here, or the others hang. */
	return ftp_repl_split_as(c, color, key, NULL, newcomm);
}

/* Copy `dead` leaves every replicated communicator's view: its slot
 * empties, and where this process addressed it, the program rank now
 * addresses the other copy. */
void ftp_repl_view_forget(int32_t dead)
{
	for (size_t i = 0; i < ftp_repl_ncomms; i++) {
		struct ftp_comm *e = ftp_repl_comms[i];
		ft_rank_map_forget(e->map, ftp_member_index(e->core, dead));
	}
}
