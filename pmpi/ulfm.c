/* ulfm.c: the local calls of the ULFM API: acknowledging failures and
 * asking which processes of a communicator failed. Both generations of
 * names work (MPIX_Comm_failure_ack / failure_get_acked, and
 * MPIX_Comm_get_failed / ack_failed).
 *
 * The failed processes of a communicator are listed in the order this
 * process learned of them (a subsequence of ftp.procs.order), so every
 * group returned is a prefix of the next one. A communicator's
 * acknowledgement mark is a prefix of that global order: acknowledging
 * its first k failures moves the mark just past the k-th. */
#include "ftshim_config.h"

#include <pthread.h>
#include <stdlib.h>

#include "pmpi/call.h"
#include "pmpi/ulfm.h"

/* MPIX_FT (mpi-ext.h): an attribute key made on first use, set on
 * MPI_COMM_WORLD to whether ftshim is on. Any application thread, under
 * ft_key_lock. */
static pthread_mutex_t ft_key_lock = PTHREAD_MUTEX_INITIALIZER;
static int ft_keyval = MPI_KEYVAL_INVALID;
static int ft_on;

FT_EXPORT int ftshim_ft_keyval(void)
{
	int init = 0, fin = 0;

	pthread_mutex_lock(&ft_key_lock);
	if (ft_keyval == MPI_KEYVAL_INVALID && ftp_mpi.PMPI_Initialized(&init) == MPI_SUCCESS && init &&
	    ftp_mpi.PMPI_Finalized(&fin) == MPI_SUCCESS && !fin &&
	    ftp_mpi.PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ft_keyval,
				    NULL) == MPI_SUCCESS) {
		ft_on = ftp_active();
		ftp_mpi.PMPI_Comm_set_attr(MPI_COMM_WORLD, ft_keyval, &ft_on);
	}
	int key = ft_keyval;
	pthread_mutex_unlock(&ft_key_lock);
	return key;
}

/* The comm's failed members in the order learned, among the first upto
 * entries of the global order: their job ranks to out (room for the
 * communicator's size) and, in pos, the index after each in the global
 * order. Returns how many. */
static int failed_members(const struct ftp_comm *e, uint32_t upto, int *out, uint32_t *pos)
{
	int n = 0;

	for (uint32_t i = 0; i < upto; i++) {
		if (ftp_member_index(e->core, ftp.procs.order[i]) < 0)
			continue;
		out[n] = ftp.procs.order[i];
		if (pos)
			pos[n] = i + 1;
		n++;
	}
	return n;
}

/* Resolve a call on comm for the local ULFM calls; false (with *rc set) if
 * the shim cannot answer for it. */
static bool ulfm_resolve(struct ftp_call *c, MPI_Comm comm, int *rc)
{
	ftp_resolve(c, comm);
	if (c->comm)
		return true;
	*rc = ftp_active() ? MPI_ERR_COMM : MPI_ERR_OTHER;
	return false;
}

FT_EXPORT int MPIX_Comm_failure_ack(MPI_Comm comm)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPIX_Comm_failure_ack);
	int rc = MPI_SUCCESS;

	if (ulfm_resolve(&c, comm, &rc))
		atomic_store_explicit(&c.comm->acked, ft_proc_nfailed(&ftp.procs), memory_order_release);
	return ftp_post_plain(&c, rc);
}
FTP_ALSO_PMPI(MPIX_Comm_failure_ack);

static int get_group(MPI_Comm comm, MPI_Group *failedgrp, enum ftp_fn fn, bool acked_only)
{
	struct ftp_call c = FTP_CALL_INIT(fn);
	int rc = MPI_SUCCESS;

	if (ulfm_resolve(&c, comm, &rc)) {
		uint32_t upto = acked_only ? atomic_load_explicit(&c.comm->acked, memory_order_acquire)
					   : ft_proc_nfailed(&ftp.procs);
		int *world = malloc((c.comm->core->local_size + c.comm->core->remote_size + 1) * sizeof *world);
		if (!world)
			rc = MPI_ERR_NO_MEM;
		else
			rc = ftp_group_of_jobs(world, (int)failed_members(c.comm, upto, world, NULL), failedgrp);
		free(world);
	}
	return ftp_post_plain(&c, rc);
}

FT_EXPORT int MPIX_Comm_failure_get_acked(MPI_Comm comm, MPI_Group *failedgrp)
{
	return get_group(comm, failedgrp, FTP_FN_MPIX_Comm_failure_get_acked, true);
}
FTP_ALSO_PMPI(MPIX_Comm_failure_get_acked);

FT_EXPORT int MPIX_Comm_get_failed(MPI_Comm comm, MPI_Group *failedgrp)
{
	return get_group(comm, failedgrp, FTP_FN_MPIX_Comm_get_failed, false);
}
FTP_ALSO_PMPI(MPIX_Comm_get_failed);

FT_EXPORT int MPIX_Comm_ack_failed(MPI_Comm comm, int num_to_ack, int *num_acked)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPIX_Comm_ack_failed);
	int rc = MPI_SUCCESS;

	if (!ulfm_resolve(&c, comm, &rc))
		return ftp_post_plain(&c, rc);
	uint32_t size = c.comm->core->local_size + c.comm->core->remote_size;
	int *world = malloc((size + 1) * sizeof *world);
	uint32_t *pos = malloc((size + 1) * sizeof *pos);
	if (!world || !pos) {
		rc = MPI_ERR_NO_MEM;
		goto out;
	}
	int n = failed_members(c.comm, ft_proc_nfailed(&ftp.procs), world, pos);
	uint32_t acked = atomic_load_explicit(&c.comm->acked, memory_order_acquire);
	/* The mark only moves forward. */
	if (num_to_ack > 0) {
		int k = num_to_ack < n ? num_to_ack : n;
		if (k > 0 && pos[k - 1] > acked) {
			acked = pos[k - 1];
			atomic_store_explicit(&c.comm->acked, acked, memory_order_release);
		}
	}
	int counted = 0;
	for (int i = 0; i < n && pos[i] <= acked; i++)
		counted++;
	*num_acked = counted;
out:
	free(world);
	free(pos);
	return ftp_post_plain(&c, rc);
}
FTP_ALSO_PMPI(MPIX_Comm_ack_failed);
