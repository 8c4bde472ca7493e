/* create.c: the creation collectives, which the MPI cannot interrupt.
 * Before one over a parent (split, create, dup), a barrier that can fail
 * fences it, and the hang watch covers the call itself; MPI_Comm_create_group
 * and MPI_Intercomm_create are watched over their members. After the
 * creations over a parent, the members agree that it succeeded
 * everywhere (same_outcome) before the new communicator is registered
 * (pmpi/comms.c); a nonblocking dup that failed as it started reports its
 * error at completion (pmpi/requests.c). Application thread. */
#include "ftshim_config.h"

#include <stdlib.h>
#include <string.h>

#include "pmpi/agree.h"
#include "pmpi/call.h"
#include "pmpi/comms.h"
#include "pmpi/create.h"
#include "pmpi/detect.h"
#include "pmpi/hangwatch.h"
#include "pmpi/requests.h"

/* A creation's outcome is the same at every surviving member of the
 * parent, as in ULFM's Open MPI (which agrees on the new context id):
 * after the MPI's call each member says whether it succeeded, in an
 * agreement of ftshim's own over the parent; where another member failed
 * (its call found a failure first), the communicator made here is freed
 * and the call fails here too. Every member that called the creation
 * takes part, whatever happened to it, an error before the MPI was
 * called included, so that none waits for one that left. Not where
 * ftshim detects nothing, nor over an intercommunicator or a replicated
 * parent, whose creations are the mode's. */
static int same_outcome(struct ftp_call *c, int rc, MPI_Comm *newcomm)
{
	struct ftp_comm *e = c->comm;

	if (c->direct || !e || e->core->remote_size || ftp_seam_covered(e) || !ftp_detect_on())
		return rc;
	uint32_t ok = rc == MPI_SUCCESS;
	ftp_agree_quiet(e, &ok);
	if (ok || rc != MPI_SUCCESS)
		return rc;
	if (*newcomm != MPI_COMM_NULL)
		ftp_mpi.PMPI_Comm_free(newcomm);
	return ft_comm_is_revoked(e->core) ? FTP_ERR_REVOKED : FTP_ERR_PROC_FAILED;
}

/* A communicator made from a view's base (pmpi/spare_view.c: c->real is
 * not the view's own communicator) takes the view's error handler, as
 * one made from the view would have (the base's is ftshim's). */
static void inherit_errhandler(const struct ftp_call *c, int rc, MPI_Comm newcomm)
{
	MPI_Errhandler eh = MPI_ERRHANDLER_NULL;

	if (rc != MPI_SUCCESS || !c->comm || !c->comm->real_is_world || c->real == c->comm->real ||
	    newcomm == MPI_COMM_NULL)
		return;
	if (ftp_mpi.PMPI_Comm_get_errhandler(c->comm->real, &eh) != MPI_SUCCESS)
		return;
	ftp_mpi.PMPI_Comm_set_errhandler(newcomm, eh);
	ftp_mpi.PMPI_Errhandler_free(&eh);
}

int ftp_post_create(struct ftp_call *c, int rc, MPI_Comm *newcomm)
{
	ftp_hang_watch_end();
	rc = same_outcome(c, rc, newcomm);
	inherit_errhandler(c, rc, *newcomm);
	ftp_comm_register_create(c, rc, newcomm);
	return ftp_post_plain(c, rc);
}

int ftp_post_dup(struct ftp_call *c, int rc, MPI_Comm *newcomm)
{
	ftp_hang_watch_end();
	rc = same_outcome(c, rc, newcomm);
	inherit_errhandler(c, rc, *newcomm);
	ftp_comm_register_dup(c, rc, newcomm);
	return ftp_post_plain(c, rc);
}

int ftp_post_idup(struct ftp_call *c, int rc, MPI_Comm *newcomm, MPI_Request *request)
{
	/* A failure found at the start: no communicator, the error at
	 * completion (ftp_post_ireq). */
	if (rc != MPI_SUCCESS && c->comm && ftp_is_ft_error(rc))
		*newcomm = MPI_COMM_NULL;
	ftp_comm_register_dup(c, rc, newcomm);
	return ftp_post_ireq(c, rc, request, false);
}

/* A creation from a covered communicator: its kind's base, fenced first
 * where the kind asks (struct ftp_cover_kind.fenced). */
static int covered_creation(struct ftp_call *c)
{
	if (c->comm->cover->kind->fenced) {
		uint32_t all_live = 1;
		if (ftp_agree_quiet(c->comm, &all_live) != MPI_SUCCESS)
			return FTP_ERR_PROC_FAILED;
	}
	return ftp_cover_creation(c);
}

int ftp_pre_dup(struct ftp_call *c, MPI_Comm comm)
{
	int rc = ftp_pre_coll(c, comm);

	if (rc != MPI_SUCCESS || c->direct || !ftp_seam_covered(c->comm))
		return rc;
	return covered_creation(c);
}

int ftp_pre_create(struct ftp_call *c, MPI_Comm comm)
{
	int rc = ftp_pre_coll(c, comm);

	if (rc != MPI_SUCCESS || c->direct)
		return rc;
	if (ftp_seam_covered(c->comm))
		return covered_creation(c);
	/* MPI has no nonblocking split or create: a barrier that can fail
	 * first narrows the window in which a death could hang them to the
	 * call itself, which the hang watch covers. */
	rc = ftp_block(c, ftp_mpi.PMPI_Ibarrier(c->real, &c->req), MPI_STATUS_IGNORE);
	if (rc == MPI_SUCCESS)
		ftp_hang_watch_begin(c->fn, ftp_member_jobs(c->comm->core), ftp_members(c->comm->core));
	return rc;
}

int ftp_pre_create_inter(struct ftp_call *c, MPI_Comm local_comm, MPI_Comm peer_comm, int remote_leader)
{
	int rc = ftp_pre_coll(c, local_comm);

	if (rc != MPI_SUCCESS || c->direct)
		return rc;
	rc = ftp_block(c, ftp_mpi.PMPI_Ibarrier(c->real, &c->req), MPI_STATUS_IGNORE);
	if (rc != MPI_SUCCESS)
		return rc;
	/* peer_comm matters at the local leader only; elsewhere it may be
	 * anything, and then only the local members are watched (a leader
	 * that leaves stuck is a member whose failure frees the others). */
	uint32_t n = c->comm->core->local_size;
	int32_t *members = malloc((n + 1) * sizeof *members);
	if (!members)
		return MPI_SUCCESS;
	memcpy(members, ftp_member_jobs(c->comm->core), n * sizeof *members);
	struct ftp_comm *peer = peer_comm != MPI_COMM_NULL ? ftp_seam_comm(peer_comm) : NULL;
	int32_t leader = peer ? ftp_job_at(peer, ftp_rank_in(peer, remote_leader)) : -1;
	if (leader >= 0)
		members[n++] = leader;
	ftp_hang_watch_begin(c->fn, members, n);
	free(members);
	return MPI_SUCCESS;
}

int ftp_pre_create_group(struct ftp_call *c, MPI_Comm comm, MPI_Group group)
{
	int size = 0, rc = MPI_SUCCESS;

	ftp_resolve(c, comm);
	if (c->direct)
		return MPI_SUCCESS;
	if (ft_comm_is_revoked(c->comm->core))
		return FTP_ERR_REVOKED;
	if (ftp_mpi.PMPI_Group_size(group, &size) != MPI_SUCCESS || size <= 0)
		return MPI_SUCCESS; /* the MPI will say what is wrong */
	uint32_t n = 0;
	int32_t *ranks = ftp_group_jobs(group, &n);
	if (!ranks)
		return MPI_SUCCESS; /* a process ftshim cannot name: unwatched */
	/* As for any collective, a member re-admitted since it failed still
	 * counts (see ftp_comm_failed_member); one whose program rank the
	 * recovery mode carries on does not. */
	for (uint32_t i = 0; i < n && rc == MPI_SUCCESS; i++)
		if (ft_proc_ever_failed(&ftp.procs, (uint32_t)ranks[i]) && !ftp_mode_covered(ranks[i]))
			rc = FTP_ERR_PROC_FAILED;
	/* Collective over the group only, with nothing to fence on: a member
	 * may still be on its way, or die inside. */
	if (rc == MPI_SUCCESS)
		ftp_hang_watch_begin(c->fn, ranks, n);
	free(ranks);
	return rc;
}
