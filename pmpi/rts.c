/* rts.c: run-through stabilization (include/ftshim-rts.h, seed 004), the
 * interface that came before ULFM, on the same failure knowledge as
 * ftshim's ULFM calls. Failures are recognized per communicator and per
 * rank: MPI_Comm_validate_clear recognizes some locally, and a
 * recognized rank is MPI_PROC_NULL to every call on that communicator
 * (ftp_rts_rank_in, through the seam's one translation of ranks); a
 * receive from MPI_ANY_SOURCE fails while a member's failure is
 * unrecognized (pmpi/comm_health.c). MPI_Comm_validate_all is one of
 * ftshim's agreements on the members' failures: every live member gets
 * the same failed set, or the same error, and recognizes that set. A
 * collective on a communicator that lost a member fails, as under ULFM,
 * unless every failed member is one the last MPI_Comm_validate_all agreed
 * on: then it runs among the others, as a schedule of point-to-point
 * steps on ftshim's private channel (pmpi/view_coll.c), its counts,
 * displacements and root translated to the live members, so no
 * communicator of the MPI's is made and a further death only fails that
 * collective. The communicator gets this file's cover (pmpi/cover.h) at
 * the first MPI_Comm_validate_all that finds a failure; the cover runs
 * those collectives and refuses the calls it cannot run with one line.
 * Who writes and who reads the state: pmpi/rts_state.h. */
#include "ftshim_config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The definitions below are not weak, as the header declares them for
 * programs. */
#define FTSHIM_BUILDING 1
#include "ftshim-rts.h"
#include "pmpi/rts_state.h"
#include "pmpi/agree.h"
#include "pmpi/call.h"
#include "pmpi/coll_forms.h"
#include "pmpi/coll_p2p.h"
#include "pmpi/cover.h"
#include "pmpi/requests.h"
#include "pmpi/view_coll.h"
#include "src/agreement.h"
#include "src/events.h"
#include "src/hash.h"
#include "src/log.h"

static const struct ftp_cover_kind rts_kind;

/* Program rank `rank` of e's state (ftshim-rts.h). */
static int state_of(const struct ftp_comm *e, const struct ftp_rts *r, uint32_t rank)
{
	uint8_t f = ftp_rts_flags(r, rank);

	if (f & FTP_RTS_RECOGNIZED)
		return MPI_RANK_NULL;
	if (ft_proc_ever_failed(&ftp.procs, (uint32_t)ftp_member_job(e->core, rank)))
		return MPI_RANK_FAILED;
	return MPI_RANK_OK;
}

/* --- the calls ---------------------------------------------------------------- */

/* One line saying what was wrong, then comm's error handler with code,
 * which it returns. */
static int rts_bad(struct ftp_call *c, MPI_Comm comm, int code, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	ft_error("%s: %s", ftp_fn_name(c->fn), line);
	ftp_mpi.PMPI_Comm_call_errhandler(c->comm ? c->comm->handle : comm, code);
	return code;
}

/* Resolve c on comm for a call of this interface: MPI_SUCCESS, or the
 * error, said in one line where the program could not tell. */
static int rts_resolve(struct ftp_call *c, MPI_Comm comm)
{
	ftp_resolve(c, comm);
	if (!c->comm)
		return ftp_active() ? MPI_ERR_COMM : MPI_ERR_OTHER;
	if (c->comm->core->remote_size)
		return rts_bad(c, comm, MPI_ERR_COMM,
			       "intercommunicators are not supported (an intracommunicator is)");
	if (ftp_mode_on())
		return rts_bad(
		    c, comm, MPI_ERR_UNSUPPORTED_OPERATION,
		    "not supported under a recovery mode (FTSHIM_REPLICAS, FTSHIM_SPARES): "
		    "a program that stabilizes itself runs without one");
	if (ftp_seam_covered(c->comm) && c->comm->cover->kind != &rts_kind)
		return ftp_mode_refuse(c);
	return MPI_SUCCESS;
}

FT_EXPORT int MPI_Comm_validate_rank(MPI_Comm comm, int rank, MPI_Rank_info *rank_info)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Comm_validate_rank);
	int rc = rts_resolve(&c, comm);

	if (rc == MPI_SUCCESS && (rank < 0 || (uint32_t)rank >= c.comm->core->local_size))
		rc = rts_bad(&c, comm, MPI_ERR_RANK,
			     "rank %d is not a rank of the communicator (0 to %u)", rank,
			     c.comm->core->local_size - 1);
	if (rc == MPI_SUCCESS)
		*rank_info =
		    (MPI_Rank_info){.rank = rank,
				    .generation = 0,
				    .state = state_of(c.comm, ftp_rts_of(c.comm), (uint32_t)rank)};
	return ftp_post_plain(&c, rc);
}
FTP_ALSO_PMPI(MPI_Comm_validate_rank);

FT_EXPORT int MPI_Comm_validate(MPI_Comm comm, int incount, int *outcount,
				MPI_Rank_info rank_infos[])
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Comm_validate);
	int rc = rts_resolve(&c, comm);

	if (rc == MPI_SUCCESS && incount < 0)
		rc =
		    rts_bad(&c, comm, MPI_ERR_COUNT, "incount %d is negative (0 or more)", incount);
	if (rc == MPI_SUCCESS && incount > 0 && !rank_infos)
		rc = rts_bad(&c, comm, MPI_ERR_ARG, "rank_infos is NULL with incount %d", incount);
	if (rc == MPI_SUCCESS) {
		const struct ftp_rts *r = ftp_rts_of(c.comm);
		int n = 0;
		for (uint32_t i = 0; i < c.comm->core->local_size; i++) {
			int state = state_of(c.comm, r, i);
			if (state == MPI_RANK_OK)
				continue;
			if (n < incount)
				rank_infos[n] = (MPI_Rank_info){
				    .rank = (int)i, .generation = 0, .state = state};
			n++;
		}
		*outcount = n;
	}
	return ftp_post_plain(&c, rc);
}
FTP_ALSO_PMPI(MPI_Comm_validate);

FT_EXPORT int MPI_Comm_validate_clear(MPI_Comm comm, int count, MPI_Rank_info rank_infos[])
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Comm_validate_clear);
	int rc = rts_resolve(&c, comm);
	struct ftp_rts *r = NULL;

	if (rc == MPI_SUCCESS && count < 0)
		rc = rts_bad(&c, comm, MPI_ERR_COUNT, "count %d is negative (0 or more)", count);
	if (rc == MPI_SUCCESS && count > 0 && !rank_infos)
		rc = rts_bad(&c, comm, MPI_ERR_ARG, "rank_infos is NULL with count %d", count);
	if (rc == MPI_SUCCESS && count > 0 && !(r = ftp_rts_get(c.comm, &rts_kind)))
		rc = MPI_ERR_NO_MEM;
	/* All or nothing: every rank named must have failed. */
	for (int k = 0; rc == MPI_SUCCESS && k < count; k++) {
		int rank = rank_infos[k].rank;
		if (rank < 0 || (uint32_t)rank >= r->size)
			rc = rts_bad(
			    &c, comm, MPI_ERR_RANK,
			    "rank_infos[%d].rank %d is not a rank of the communicator (0 to %u)", k,
			    rank, r->size - 1);
		else if (state_of(c.comm, r, (uint32_t)rank) == MPI_RANK_OK)
			rc = rts_bad(
			    &c, comm, MPI_ERR_ARG,
			    "rank_infos[%d].rank %d has not failed; only a failed rank can be "
			    "recognized",
			    k, rank);
	}
	for (int k = 0; rc == MPI_SUCCESS && k < count; k++)
		atomic_fetch_or_explicit(&r->flags[rank_infos[k].rank], FTP_RTS_RECOGNIZED,
					 memory_order_release);
	return ftp_post_plain(&c, rc);
}
FTP_ALSO_PMPI(MPI_Comm_validate_clear);

/* After the agreement of a validation on e (rc its code, failed its
 * failed members in agreement order): recognize them, and let
 * collectives run among the others. MPI_SUCCESS with *count, or the
 * error, the same at every live member. */
static int validated(struct ftp_comm *e, int rc, const uint8_t *failed, int *count,
		     const char *kind, uint64_t start)
{
	struct ftp_rts *r = ftp_rts_get(e, &rts_kind);
	uint32_t nfailed = 0;

	/* Its code says whether failures were acknowledged, which a
	 * validation does not ask (it recognizes them all). */
	if (rc == MPI_ERR_COMM || rc == MPI_ERR_NO_MEM)
		goto out;
	rc = r ? MPI_SUCCESS : MPI_ERR_NO_MEM;
	for (uint32_t i = 0; r && i < r->size; i++)
		nfailed += ft_agree_bit(failed, ft_agree_index(e->core, false, i));
	if (rc != MPI_SUCCESS || nfailed == 0)
		goto out;
	uint32_t nlive = r->size - nfailed;
	struct ftp_rts_live *l = calloc(1, sizeof *l + r->size * sizeof l->pos[0] +
					       3 * ((size_t)nlive + 1) * sizeof(int32_t));
	if (!l) {
		rc = MPI_ERR_NO_MEM;
		goto out;
	}
	l->world = (int32_t *)&l->pos[r->size];
	l->job = l->world + nlive + 1;
	l->prog = l->job + nlive + 1;
	l->me = UINT32_MAX;
	for (uint32_t i = 0; i < r->size; i++) {
		int32_t j = ftp_member_job(e->core, i);
		if (ft_agree_bit(failed, ft_agree_index(e->core, false, i))) {
			atomic_fetch_or_explicit(&r->flags[i], FTP_RTS_AGREED | FTP_RTS_RECOGNIZED,
						 memory_order_release);
			l->pos[i] = -1;
			continue;
		}
		if (j == ftp.rank)
			l->me = l->n;
		l->pos[i] = (int32_t)l->n;
		l->world[l->n] = ftp_world_of_job(j);
		l->job[l->n] = j;
		l->prog[l->n++] = (int32_t)i;
	}
	if (l->me == UINT32_MAX) { /* the others agreed this process failed */
		free(l);
		rc = FTP_ERR_PROC_FAILED;
		goto out;
	}
	l->tag_id = ft_mix64(e->core->id ^ (0x5254535f4c495645ull + ++r->validations));
	l->older = atomic_load_explicit(&r->live, memory_order_relaxed);
	atomic_store_explicit(&r->live, l, memory_order_release);
	if (!e->cover)
		e->cover = &r->cover;
out:;
	uint64_t now = ftp_wall_now();
	ft_events_add(now, kind,
		      ",\"comm\":\"%016llx\",\"failed\":%u,\"result\":\"%s\",\"duration_ms\":%.3f",
		      (unsigned long long)e->core->id, nfailed,
		      rc == MPI_SUCCESS ? "MPI_SUCCESS" : "error", (double)(now - start) / 1e6);
	if (rc == MPI_SUCCESS) {
		ft_debug("%s: %u failed rank(s) of communicator %016llx recognized", kind, nfailed,
			 (unsigned long long)e->core->id);
		*count = (int)nfailed;
	}
	return rc;
}

FT_EXPORT int MPI_Comm_validate_all(MPI_Comm comm, int *outcount)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Comm_validate_all);
	int rc = rts_resolve(&c, comm);

	if (rc != MPI_SUCCESS)
		return ftp_post_plain(&c, rc);
	if (ft_proc_ever_failed(&ftp.procs, (uint32_t)ftp.rank))
		return ftp_post_plain(&c, FTP_ERR_PROC_FAILED);
	uint8_t *failed = calloc(1, ft_agree_bytes(c.comm->core->local_size) + 1);
	uint64_t start = ftp_wall_now();
	rc = failed ? ftp_agree_failures(c.comm, failed) : MPI_ERR_NO_MEM;
	rc = validated(c.comm, rc, failed, outcount, "validate_all", start);
	free(failed);
	return ftp_post_plain(&c, rc);
}
FTP_ALSO_PMPI(MPI_Comm_validate_all);

/* A nonblocking validation: its agreement runs on the detector thread;
 * the decision is applied in whichever completion call finds it taken. */
struct validate_op {
	struct ftp_op op;
	struct ft_agreement *a;
	uint8_t *failed;
	int *outcount;
	uint64_t start;
};

static bool validate_progress(struct ftp_op *op)
{
	struct validate_op *o = (struct validate_op *)op;
	uint32_t value = 0;
	int rc = MPI_SUCCESS, count = 0;

	if (!ftp_agree_poll(o->a, &value, o->failed, &rc))
		return false;
	op->rc = validated(op->comm, rc, o->failed, &count, "icomm_validate_all", o->start);
	if (op->rc == MPI_SUCCESS && !op->orphaned)
		*o->outcount = count;
	return true;
}

static void validate_destroy(struct ftp_op *op)
{
	struct validate_op *o = (struct validate_op *)op;

	free(o->failed);
	free(o);
}

FT_EXPORT int MPI_Icomm_validate_all(MPI_Comm comm, int *outcount, MPI_Request *request)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Icomm_validate_all);
	int rc = rts_resolve(&c, comm);

	if (rc != MPI_SUCCESS)
		return ftp_post_plain(&c, rc);
	if (ft_proc_ever_failed(&ftp.procs, (uint32_t)ftp.rank)) /* the error at completion */
		return ftp_post_ireq(&c, FTP_ERR_PROC_FAILED, request, false);
	struct validate_op *o = calloc(1, sizeof *o);
	if (o)
		o->failed = calloc(1, ft_agree_bytes(c.comm->core->local_size) + 1);
	if (!o || !o->failed) {
		if (o)
			validate_destroy(&o->op);
		return ftp_post_plain(&c, MPI_ERR_NO_MEM);
	}
	o->outcount = outcount;
	o->start = ftp_wall_now();
	o->a = ftp_agree_begin(c.comm, 1);
	if (!o->a) {
		validate_destroy(&o->op);
		return ftp_post_plain(&c, MPI_ERR_COMM);
	}
	o->op.progress = validate_progress;
	o->op.destroy = validate_destroy;
	return ftp_post_plain(&c, ftp_op_start(&c, &o->op, request));
}
FTP_ALSO_PMPI(MPI_Icomm_validate_all);

/* --- collectives among the live members (the cover's runners) --------------- */

/* Where e's next collective among its live members runs. */
static struct ftp_view live_view(const struct ftp_comm *e)
{
	struct ftp_rts *r = ftp_rts_of(e);
	struct ftp_rts_live *l = atomic_load_explicit(&r->live, memory_order_acquire);

	return (struct ftp_view){.chan = ftp.private_world,
				 .rank = l->world,
				 .job = l->job,
				 .n = l->n,
				 .me = l->me,
				 .tag = ftp_coll_p2p_tag_seq(l->tag_id, l->colls++)};
}

/* The blocks of a reduce-scatter's input (count[r] elements of type for
 * program rank r, one after the other at src) that go to live members,
 * packed one after the other into a buffer of their own: *packed (its
 * first element), *mem (to free). */
static int pack_live_blocks(const struct ftp_rts_live *l, uint32_t size, const void *src,
			    MPI_Datatype type, const int *count, const void **packed, void **mem)
{
	int *len = malloc((l->n + 1) * sizeof *len), *disp = malloc((l->n + 1) * sizeof *disp);
	int64_t *off = malloc(((size_t)size + 1) * sizeof *off), total = 0;
	MPI_Datatype blocks = MPI_DATATYPE_NULL;
	MPI_Aint lb, extent, tlb, textent;
	char *bytes = NULL;
	int rc = len && disp && off ? MPI_SUCCESS : MPI_ERR_NO_MEM, nbytes = 0, at = 0;

	for (uint32_t r = 0; rc == MPI_SUCCESS && r < size; r++) {
		off[r] = total;
		total += count[r];
	}
	int64_t live = 0;
	for (uint32_t i = 0; rc == MPI_SUCCESS && i < l->n; i++) {
		len[i] = count[l->prog[i]];
		disp[i] = (int)off[l->prog[i]];
		live += len[i];
	}
	if (rc == MPI_SUCCESS && (total > INT32_MAX || live > INT32_MAX))
		rc = MPI_ERR_COUNT;
	if (rc == MPI_SUCCESS)
		rc = ftp_mpi.PMPI_Type_indexed((int)l->n, len, disp, type, &blocks);
	if (rc == MPI_SUCCESS)
		rc = ftp_mpi.PMPI_Type_commit(&blocks);
	if (rc == MPI_SUCCESS)
		rc = ftp_mpi.PMPI_Pack_size(1, blocks, ftp.world, &nbytes);
	if (rc == MPI_SUCCESS && !(bytes = malloc((size_t)nbytes + 1)))
		rc = MPI_ERR_NO_MEM;
	if (rc == MPI_SUCCESS)
		rc = ftp_mpi.PMPI_Pack(src, 1, blocks, bytes, nbytes, &at, ftp.world);
	if (rc == MPI_SUCCESS)
		rc = ftp_mpi.PMPI_Type_get_extent(type, &lb, &extent);
	if (rc == MPI_SUCCESS)
		rc = ftp_mpi.PMPI_Type_get_true_extent(type, &tlb, &textent);
	if (rc == MPI_SUCCESS) {
		size_t need = live > 0 ? (size_t)(live - 1) * (size_t)extent + (size_t)textent : 1;
		*mem = malloc(need ? need : 1);
		if (!*mem)
			rc = MPI_ERR_NO_MEM;
	}
	if (rc == MPI_SUCCESS) {
		char *base = (char *)*mem - tlb;
		int pos = 0;
		rc = ftp_mpi.PMPI_Unpack(bytes, at, &pos, base, (int)live, type, ftp.world);
		*packed = base;
	}
	if (rc != MPI_SUCCESS && *mem) {
		free(*mem);
		*mem = NULL;
	}
	if (blocks != MPI_DATATYPE_NULL)
		ftp_mpi.PMPI_Type_free(&blocks);
	free(bytes);
	free(len);
	free(disp);
	free(off);
	return rc;
}

/* One side of a gather, scatter, all-gather or all-to-all among l's
 * members, into c and d (which *tc and *td then name): member i's count
 * and displacement are its program rank p's, from the v form's counts
 * and displs, or count and p * count for the form with one count
 * (counts NULL); displs NULL: counts only. */
static void live_side(const struct ftp_rts_live *l, int count, const int *counts, const int *displs,
		      int *c, int *d, const int **tc, const int **td)
{
	for (uint32_t i = 0; i < l->n; i++) {
		int p = l->prog[i];
		c[i] = counts ? counts[p] : count;
		d[i] = counts ? (displs ? displs[p] : 0) : p * count;
	}
	*tc = c;
	*td = displs || !counts ? d : NULL;
}

/* a's collective as the live members of l run it: *t, whose arrays
 * (*arrays) and packed input (*mem) the caller frees. MPI_SUCCESS, or
 * the error every live member gets alike. */
static int translate(struct ftp_call *c, const struct ftp_rts_live *l, uint32_t size,
		     const struct coll_args *a, struct coll_args *t, int **arrays, void **mem)
{
	bool rooted = a->fn == FTP_FN_MPI_Bcast || a->fn == FTP_FN_MPI_Reduce ||
		      a->fn == FTP_FN_MPI_Gather || a->fn == FTP_FN_MPI_Gatherv ||
		      a->fn == FTP_FN_MPI_Scatter || a->fn == FTP_FN_MPI_Scatterv;
	uint32_t n = l->n;

	*t = *a;
	if (rooted) {
		if (a->root < 0 || (uint32_t)a->root >= size)
			return rts_bad(c, c->comm->handle, MPI_ERR_ROOT,
				       "root %d is not a rank of the communicator (0 to %u)",
				       a->root, size - 1);
		/* A root that takes part as MPI_PROC_NULL sends and receives
		 * nothing: no member could get the result, and every live
		 * member knows it alike (the validation agreed on it). */
		if (l->pos[a->root] < 0)
			return FTP_ERR_PROC_FAILED;
		t->root = l->pos[a->root];
	}
	bool at_root = rooted && (uint32_t)t->root == l->me;
	int *sc = malloc(4 * ((size_t)n + 1) * sizeof *sc);
	if (!sc)
		return MPI_ERR_NO_MEM;
	int *sd = sc + n + 1, *rcs = sd + n + 1, *rd = rcs + n + 1;
	*arrays = sc;
	/* Every form becomes its v form over the live members. */
	switch (a->fn) {
	case FTP_FN_MPI_Gather:
	case FTP_FN_MPI_Gatherv:
		t->fn = FTP_FN_MPI_Gatherv;
		t->rcount = 0;
		t->rcounts = t->rdispls = NULL;
		if (at_root)
			live_side(l, a->rcount, a->rcounts, a->rdispls, rcs, rd, &t->rcounts, &t->rdispls);
		break;
	case FTP_FN_MPI_Scatter:
	case FTP_FN_MPI_Scatterv:
		t->fn = FTP_FN_MPI_Scatterv;
		t->scount = 0;
		t->scounts = t->sdispls = NULL;
		if (at_root)
			live_side(l, a->scount, a->scounts, a->sdispls, sc, sd, &t->scounts, &t->sdispls);
		break;
	case FTP_FN_MPI_Allgather:
	case FTP_FN_MPI_Allgatherv:
		t->fn = FTP_FN_MPI_Allgatherv;
		t->rcount = 0;
		live_side(l, a->rcount, a->rcounts, a->rdispls, rcs, rd, &t->rcounts, &t->rdispls);
		break;
	case FTP_FN_MPI_Alltoall:
	case FTP_FN_MPI_Alltoallv:
		t->fn = FTP_FN_MPI_Alltoallv;
		t->scount = t->rcount = 0;
		if (a->sbuf != MPI_IN_PLACE)
			live_side(l, a->scount, a->scounts, a->sdispls, sc, sd, &t->scounts, &t->sdispls);
		live_side(l, a->rcount, a->rcounts, a->rdispls, rcs, rd, &t->rcounts, &t->rdispls);
		break;
	case FTP_FN_MPI_Reduce_scatter_block:
	case FTP_FN_MPI_Reduce_scatter: {
		/* The blocks of failed ranks are left out of the input. */
		int *per = malloc(((size_t)size + 1) * sizeof *per);
		if (!per)
			return MPI_ERR_NO_MEM;
		for (uint32_t r = 0; r < size; r++)
			per[r] = a->fn == FTP_FN_MPI_Reduce_scatter ? a->rcounts[r] : a->rcount;
		const void *src = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
		int rc = pack_live_blocks(l, size, src, a->rtype, per, &t->sbuf, mem);
		free(per);
		if (rc != MPI_SUCCESS)
			return rc;
		if (a->fn == FTP_FN_MPI_Reduce_scatter)
			live_side(l, 0, a->rcounts, NULL, rcs, rd, &t->rcounts, &t->rdispls);
		break;
	}
	default:
		break;
	}
	return MPI_SUCCESS;
}

/* Whether the live members can run collectives here: ftshim's private
 * channel holds them all. */
static int runnable(struct ftp_call *c)
{
	if (c->comm->in_world && ftp.private_world != MPI_COMM_NULL &&
	    ftp.private_world != ftp.world && ftp_coll_p2p_tags_fit())
		return MPI_SUCCESS;
	return rts_bad(c, c->comm->handle, MPI_ERR_UNSUPPORTED_OPERATION,
		       "collectives among the ranks MPI_Comm_validate_all left need ftshim's own "
		       "duplicate of MPI_COMM_WORLD (FTSHIM_RECOVERY_CONTEXTS of 1 or more, and no "
		       "spawned processes in the communicator)");
}

/* The cover's runners (struct ftp_cover_kind.coll and .icoll). */
static int rts_coll(struct ftp_call *c, const struct coll_args *a)
{
	struct ftp_rts *r = ftp_rts_of(c->comm);
	struct coll_args t;
	int *arrays = NULL;
	void *mem = NULL;
	int rc = runnable(c);

	if (rc == MPI_SUCCESS)
		rc = translate(c, atomic_load_explicit(&r->live, memory_order_acquire), r->size, a,
			       &t, &arrays, &mem);
	if (rc == MPI_SUCCESS)
		rc = ftp_view_coll_call(c, &t, live_view, mem);
	else {
		free(mem);
		rc = ftp_post_coll(c, rc);
	}
	free(arrays);
	return rc;
}

static int rts_icoll(struct ftp_call *c, const struct coll_args *a, MPI_Request *request)
{
	struct ftp_rts *r = ftp_rts_of(c->comm);
	struct coll_args t;
	int *arrays = NULL;
	void *mem = NULL;
	int rc = runnable(c);

	if (rc == MPI_SUCCESS)
		rc = translate(c, atomic_load_explicit(&r->live, memory_order_acquire), r->size, a,
			       &t, &arrays, &mem);
	if (rc == MPI_SUCCESS)
		rc = ftp_view_icoll_call(c, &t, live_view, mem, request);
	else {
		free(mem);
		rc = ftp_post_ireq(c, rc, request, false);
	}
	free(arrays);
	return rc;
}

/* Without a form, what needs only the seam's translation runs as on any
 * communicator: queries, point-to-point (a recognized rank is
 * MPI_PROC_NULL), completion, the fault-tolerance calls, MPI_Abort and
 * freeing it. Creations, windows, files and the collectives without a
 * schedule (persistent, neighbourhood, MPI_Alltoallw) would need every
 * member: refused with one line; MPIX_Comm_shrink makes a communicator of
 * the live members. */
static bool rts_runs_as_is(int fn, enum ftp_mode_role role)
{
	if (ftp_cover_role_translated(role))
		return true;
	switch (role) {
	case FTP_ROLE_CREATE:
		return fn == FTP_FN_MPI_Comm_free;
	case FTP_ROLE_PROCESS:
		return fn == FTP_FN_MPI_Abort;
	default:
		return false;
	}
}

static void rts_cover_release(struct ftp_comm *e)
{
	/* The state it is part of goes with the entry (ftp_rts_release). */
	e->cover = NULL;
}

static const struct ftp_cover_kind rts_kind = {
    .covered_as = "validated (one whose failures MPI_Comm_validate_all recognized, ftshim-rts(3))",
    .calls = &ftp_view_coll_calls,
    .runs_as_is = rts_runs_as_is,
    .coll = rts_coll,
    .icoll = rts_icoll,
    .release = rts_cover_release,
};
