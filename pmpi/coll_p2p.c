/* coll_p2p.c: MPI_Barrier and small MPI_Allreduce on Open MPI, run as
 * watched point-to-point exchanges. Every other blocking collective runs
 * as its nonblocking twin (pmpi/call.h); on Open MPI 4.1 the only
 * nonblocking collectives are libnbc's, whose Iallreduce of a few bytes is
 * a binomial reduce and then a broadcast, 2 log p rounds where the
 * blocking MPI_Allreduce takes log p, and whose schedules cost more per
 * round: with the twin, 8-byte MPI_Allreduce took 1.6-1.9 times as long at
 * 8 ranks. Recursive doubling (and a dissemination barrier) over
 * MPI_Isend/MPI_Irecv costs what Open MPI's blocking ones do. MPICH's
 * nonblocking collectives already use these algorithms, so MPICH keeps the
 * twins.
 *
 * The exchanges travel on one private duplicate of MPI_COMM_WORLD, made
 * at MPI_Init (pmpi/spare_view.c), so that they never match the
 * application's receives (an MPI_ANY_TAG one, say), addressed by world
 * rank (pmpi/ranks.h) and tagged by the communicator's job-wide id (the
 * collectives of a view on a spare context use the same tags). Not a duplicate per
 * communicator: making one
 * is itself a collective, and one abandoned because a member died leaves
 * Open MPI's context-id allocation stuck for every later creation.
 * Matching stays right because every member runs a communicator's
 * collectives in the same order and messages between two ranks do not
 * overtake each other; two communicators whose tags coincide can only
 * meet through messages left over from a collective abandoned after a
 * failure, with odds of one in coll_tag_ub / 2 per pair of communicators.
 *
 * Each exchange is watched like the collective it is part of (every
 * member): a member that fails anywhere makes every survivor give up with
 * MPI_ERR_PROC_FAILED, whether or not it was this round's partner, since
 * the partner may itself be waiting on the dead one; but only once the
 * round could not complete in ftp_completes_anyway's time (the dead one
 * may have sent its part). Given up, receives are cancelled and sends
 * freed.
 *
 * Sharing: application threads; ftp.private_world is immutable after
 * MPI_Init, and MPI forbids two threads to run collectives on one
 * communicator at once. */
#include "ftshim_config.h"

#include <stdlib.h>
#include <string.h>

#include "pmpi/coll_p2p.h"
#include "pmpi/call.h"
#include "pmpi/mode_calls.h"

#ifdef OPEN_MPI
#define COLL_P2P 1
#else
#define COLL_P2P 0
#endif

/* Larger reductions stay with the twin (and its bandwidth-minded
 * algorithms). */
#define ALLREDUCE_P2P_MAX 2048

enum { TAG_BARRIER = 0, TAG_ALLREDUCE = 1 };

void ftp_coll_p2p_start(void)
{
	int *ub = NULL, flag = 0;

	ftp_mpi.PMPI_Comm_get_attr(ftp.world, MPI_TAG_UB, &ub, &flag);
	ftp.coll_tag_ub = flag && ub ? *ub : 32767;
}

bool ftp_coll_p2p_wanted(void)
{
	return COLL_P2P;
}

/* Tags below this are left to intercommunicator shrinks, which also run
 * on ftp.private_world (pmpi/agree.c). */
#define TAG_FIRST 32768

/* Whether c's collectives can run here: an intracommunicator ftshim
 * knows, of processes of this one's world (not mixed with spawned ones),
 * once the private communicator exists, with room for its tags (MPI
 * promises only 32767; Open MPI's is far larger). */
static bool usable(const struct ftp_call *c)
{
	return COLL_P2P && ftp.private_world != MPI_COMM_NULL && ftp_coll_p2p_tags_fit() &&
	       c->comm->core->remote_size == 0 && c->comm->in_world;
}

int ftp_coll_p2p_tag(uint64_t id, int kind)
{
	uint64_t h = id * UINT64_C(0x9e3779b97f4a7c15);
	uint64_t pairs = (uint64_t)(ftp.coll_tag_ub - TAG_FIRST) / 2;

	return TAG_FIRST + (int)((h >> 17) % pairs) * 2 + kind;
}

int ftp_coll_p2p_tag_seq(uint64_t id, uint32_t seq)
{
	uint64_t pairs = (uint64_t)(ftp.coll_tag_ub - TAG_FIRST) / 2;
	uint64_t first = (uint64_t)(ftp_coll_p2p_tag(id, 0) - TAG_FIRST) / 2;

	return TAG_FIRST + (int)((first + seq % FTP_COLL_P2P_SEQ_TAGS) % pairs) * 2;
}

bool ftp_coll_p2p_tags_fit(void)
{
	return ftp.coll_tag_ub >= 2 * TAG_FIRST;
}

/* The tag of kind for c's communicator: the same at every member. */
static int tag_of(const struct ftp_call *c, int kind)
{
	return ftp_coll_p2p_tag(c->comm->core->id, kind);
}

/* Complete one round, reqs[0] a receive (or null) from job rank from
 * and reqs[1] a send (or null) to job rank to, watching every member of
 * c's communicator. */
static int exchange_wait(struct ftp_call *c, MPI_Request reqs[2], int32_t from, int32_t to)
{
	uint64_t seen = 0, polls = 0;
	MPI_Status st[2]; /* not MPI_STATUSES_IGNORE: GCC takes MPICH's for an empty array */
	int flag = 0;

	for (;;) {
		int rc = ftp_mpi.PMPI_Testall(2, reqs, &flag, st);
		if (rc != MPI_SUCCESS || flag)
			return rc;
		int err = ftp_poll_step(c, false, &seen, &polls);
		if (err == FTP_ERR_PROC_FAILED && ftp_completes_anyway(reqs, 2, st))
			return MPI_SUCCESS;
		if (err != MPI_SUCCESS) {
			/* Even a receive that won the race: the round is lost. */
			ftp_cancel_p2p(&reqs[0], from, FTP_P2P_RECV, err, MPI_STATUS_IGNORE);
			ftp_cancel_p2p(&reqs[1], to, FTP_P2P_SEND, err, MPI_STATUS_IGNORE);
			return err;
		}
	}
}

/* Receive count items from rank src of c's communicator into rbuf and
 * send count items of sbuf to its rank dst (either may be MPI_PROC_NULL),
 * on the private communicator. */
static int exchange(struct ftp_call *c, int tag, void *rbuf, const void *sbuf, int count,
		    MPI_Datatype datatype, int src, int dst)
{
	MPI_Request reqs[2] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL };
	const struct ft_comm *core = c->comm->core;
	int32_t from = src != MPI_PROC_NULL ? ftp_member_job(core, (uint32_t)src) : -1;
	int32_t to = dst != MPI_PROC_NULL ? ftp_member_job(core, (uint32_t)dst) : -1;
	int rc = MPI_SUCCESS;

	/* No call at all for a missing side: Open MPI refuses a NULL buffer
	 * even with MPI_PROC_NULL. */
	if (from >= 0)
		rc = ftp_mpi.PMPI_Irecv(rbuf, count, datatype, ftp_world_of_job(from), tag, ftp.private_world,
					&reqs[0]);
	if (rc == MPI_SUCCESS && to >= 0)
		rc = ftp_mpi.PMPI_Isend(sbuf, count, datatype, ftp_world_of_job(to), tag, ftp.private_world,
					&reqs[1]);
	if (rc != MPI_SUCCESS) {
		ftp_cancel_p2p(&reqs[0], from, FTP_P2P_RECV, rc, MPI_STATUS_IGNORE);
		return rc;
	}
	return exchange_wait(c, reqs, from, to);
}

/* Dissemination barrier: ceil(log2 p) rounds of empty messages. */
static int barrier_p2p(struct ftp_call *c)
{
	int rank, size, rc = MPI_SUCCESS, tag = tag_of(c, TAG_BARRIER);

	ftp_mpi.PMPI_Comm_rank(c->real, &rank);
	ftp_mpi.PMPI_Comm_size(c->real, &size);
	for (int k = 1; k < size && rc == MPI_SUCCESS; k <<= 1)
		rc = exchange(c, tag, NULL, NULL, 0, MPI_BYTE, (rank - k + size) % size,
			      (rank + k) % size);
	return rc;
}

/* Whether count items of datatype are plain contiguous bytes this module
 * can copy with memcpy and keep on the stack. */
static bool fits_p2p(int count, MPI_Datatype datatype, size_t *bytes)
{
	MPI_Aint lb, extent, tlb, textent;
	int size;

	if (count < 0 || ftp_mpi.PMPI_Type_size(datatype, &size) != MPI_SUCCESS ||
	    ftp_mpi.PMPI_Type_get_extent(datatype, &lb, &extent) != MPI_SUCCESS ||
	    ftp_mpi.PMPI_Type_get_true_extent(datatype, &tlb, &textent) != MPI_SUCCESS)
		return false;
	if (size <= 0 || lb != 0 || tlb != 0 || extent != size || textent != size ||
	    (size_t)count > ALLREDUCE_P2P_MAX / (size_t)size)
		return false;
	*bytes = (size_t)count * (size_t)size;
	return true;
}

/* Recursive doubling (after folding the ranks beyond the largest power of
 * two into their neighbours), keeping rank order in every reduction so
 * that non-commutative operations get the order MPI requires. */
static int allreduce_p2p(struct ftp_call *c, const void *sendbuf, void *recvbuf, int count,
			 MPI_Datatype datatype, MPI_Op op, size_t bytes)
{
	_Alignas(max_align_t) char tmp[ALLREDUCE_P2P_MAX];
	int rank, size, rc = MPI_SUCCESS, tag = tag_of(c, TAG_ALLREDUCE);

	ftp_mpi.PMPI_Comm_rank(c->real, &rank);
	ftp_mpi.PMPI_Comm_size(c->real, &size);
	if (sendbuf != MPI_IN_PLACE && bytes)
		memcpy(recvbuf, sendbuf, bytes);
	int pof2 = 1;
	while (pof2 <= size / 2)
		pof2 <<= 1;
	int rem = size - pof2, vrank = rank - rem;
	if (rank < 2 * rem) {
		/* Even ranks hand their data to the next rank and wait. */
		if (rank % 2 == 0) {
			rc = exchange(c, tag, NULL, recvbuf, count, datatype,
				      MPI_PROC_NULL, rank + 1);
			vrank = -1;
		} else {
			rc = exchange(c, tag, tmp, NULL, count, datatype, rank - 1,
				      MPI_PROC_NULL);
			if (rc == MPI_SUCCESS)
				rc = ftp_mpi.PMPI_Reduce_local(tmp, recvbuf, count, datatype, op);
			vrank = rank / 2;
		}
	}
	for (int mask = 1; vrank >= 0 && mask < pof2 && rc == MPI_SUCCESS; mask <<= 1) {
		int vpeer = vrank ^ mask;
		int peer = vpeer < rem ? 2 * vpeer + 1 : vpeer + rem;
		rc = exchange(c, tag, tmp, recvbuf, count, datatype, peer, peer);
		if (rc != MPI_SUCCESS)
			break;
		if (peer < rank) {
			rc = ftp_mpi.PMPI_Reduce_local(tmp, recvbuf, count, datatype, op);
		} else {
			/* mine op theirs, kept in tmp, then back. */
			rc = ftp_mpi.PMPI_Reduce_local(recvbuf, tmp, count, datatype, op);
			memcpy(recvbuf, tmp, bytes);
		}
	}
	if (rc == MPI_SUCCESS && rank < 2 * rem)
		rc = rank % 2 ? exchange(c, tag, NULL, recvbuf, count, datatype,
					 MPI_PROC_NULL, rank - 1)
			      : exchange(c, tag, recvbuf, NULL, count, datatype,
					 rank + 1, MPI_PROC_NULL);
	return rc;
}

/* The MPI's own errors on the private communicator (an invalid operation
 * given to MPI_Reduce_local, ...) go to the application's communicator's
 * handler, as the MPI's collective would have sent them; ftshim's own go
 * there in ftp_post_coll. */
static int mpi_error(struct ftp_call *c, int rc)
{
	if (rc != MPI_SUCCESS && !ftp_is_ft_error(rc))
		ftp_mpi.PMPI_Comm_call_errhandler(c->real, rc);
	return rc;
}

FT_EXPORT int MPI_Barrier(MPI_Comm comm)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Barrier);
	int rc = ftp_pre_coll(&c, comm);

	if (rc == MPI_SUCCESS && ftp_seam_covered(c.comm)) {
		const struct ftp_mode_calls *mode = ftp_cover_calls(c.comm);

		if (mode && mode->MPI_Barrier)
			return mode->MPI_Barrier(&c);
		rc = ftp_cover_as_is(&c, FTP_FN_MPI_Barrier, FTP_ROLE_COLL);
	}
	if (rc == MPI_SUCCESS) {
		if (c.direct)
			rc = ftp_mpi.PMPI_Barrier(c.real);
		else if (usable(&c))
			rc = mpi_error(&c, barrier_p2p(&c));
		else
			rc = ftp_block(&c, ftp_mpi.PMPI_Ibarrier(c.real, &c.req), MPI_STATUS_IGNORE);
	}
	return ftp_post_coll(&c, rc);
}
FTP_ALSO_PMPI(MPI_Barrier);

FT_EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
			    MPI_Op op, MPI_Comm comm)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Allreduce);
	int rc = ftp_pre_coll(&c, comm);
	size_t bytes;

	if (rc == MPI_SUCCESS && ftp_seam_covered(c.comm)) {
		const struct ftp_mode_calls *mode = ftp_cover_calls(c.comm);

		if (mode && mode->MPI_Allreduce)
			return mode->MPI_Allreduce(&c, sendbuf, recvbuf, count, datatype, op);
		rc = ftp_cover_as_is(&c, FTP_FN_MPI_Allreduce, FTP_ROLE_COLL);
	}
	if (rc == MPI_SUCCESS) {
		if (c.direct)
			rc = ftp_mpi.PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, c.real);
		else if (usable(&c) && fits_p2p(count, datatype, &bytes))
			rc = mpi_error(&c, allreduce_p2p(&c, sendbuf, recvbuf, count, datatype, op, bytes));
		else
			rc = ftp_block(&c, ftp_mpi.PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, c.real,
							   &c.req),
				       MPI_STATUS_IGNORE);
	}
	return ftp_post_coll(&c, rc);
}
FTP_ALSO_PMPI(MPI_Allreduce);
