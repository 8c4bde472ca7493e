/* view_coll.c: the executor of src/coll_sched.h's schedules on a view (a
 * set of processes addressed through a communicator of the MPI's that
 * holds them all, such as a private duplicate of MPI_COMM_WORLD), so
 * that recovery runs collectives among survivors without entering the
 * MPI's blocking constructors (docs/DESIGN.md, "Recovery without the
 * MPI's constructors"). Each round's sends and receives are posted
 * together and waited for by the caller's policy; local steps copy
 * (pack and unpack, so that the two types may differ) or reduce
 * (MPI_Reduce_local). Application thread: the caller's. */
#include "ftshim_config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi/view_coll.h"
#include "pmpi/held_msg.h"
#include "pmpi/call.h"
#include "pmpi/mode_calls.h"
#include "pmpi/requests.h"

/* A buffer of the schedule: where it starts and its type. */
struct region {
	char *base;
	MPI_Datatype type;
	MPI_Aint extent;
};

static int region_of(struct region *r, void *base, MPI_Datatype type)
{
	MPI_Aint lb = 0;

	r->base = base;
	r->type = type;
	r->extent = 0;
	if (type == MPI_DATATYPE_NULL)
		return MPI_SUCCESS;
	return ftp_mpi.PMPI_Type_get_extent(type, &lb, &r->extent);
}

/* Scratch blocks kept from one collective to the next. Open MPI sends
 * from memory that the heap has just grown into far more slowly than
 * from memory it sent from before, and glibc gives a freed block at the
 * top of the heap back to the system, so a collective that allocated its
 * scratch afresh each time ran several times slower
 * (docs/performance.md). The largest few blocks, up to a bound, are kept.
 * Any application thread (two views' collectives may run at once). */
#define KEEP_BLOCKS 4
#define KEEP_BYTES ((size_t)64 << 20)

struct scratch_block {
	void *mem;
	size_t cap;
};

static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static struct scratch_block kept[KEEP_BLOCKS];
static size_t kept_bytes;

/* A block of at least bytes: the smallest kept one that holds them, or a
 * new one. */
static struct scratch_block scratch_take(size_t bytes)
{
	struct scratch_block b = { NULL, 0 };
	int best = -1;

	pthread_mutex_lock(&kept_lock);
	for (int i = 0; i < KEEP_BLOCKS; i++)
		if (kept[i].mem && kept[i].cap >= bytes && (best < 0 || kept[i].cap < kept[best].cap))
			best = i;
	if (best >= 0) {
		b = kept[best];
		kept[best] = (struct scratch_block){ NULL, 0 };
		kept_bytes -= b.cap;
	}
	pthread_mutex_unlock(&kept_lock);
	if (!b.mem && (b.mem = malloc(bytes)) != NULL)
		b.cap = bytes;
	return b;
}

/* Keep b for a later collective in place of a smaller block, or free it. */
static void scratch_give(struct scratch_block b)
{
	if (!b.mem)
		return;
	pthread_mutex_lock(&kept_lock);
	/* The smallest kept block; an empty slot holds 0 bytes. */
	int smallest = 0;
	for (int i = 1; i < KEEP_BLOCKS; i++)
		if (kept[i].cap < kept[smallest].cap)
			smallest = i;
	struct scratch_block out = b;
	if (kept[smallest].cap < b.cap && kept_bytes - kept[smallest].cap + b.cap <= KEEP_BYTES) {
		out = kept[smallest];
		kept_bytes = kept_bytes - out.cap + b.cap;
		kept[smallest] = b;
	}
	pthread_mutex_unlock(&kept_lock);
	free(out.mem);
}

/* Scratch for count elements of type (its true extent at least), given
 * back unless a round was given up. */
static int scratch(struct region *r, struct scratch_block *mem, int64_t count, MPI_Datatype type)
{
	MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
	int rc = ftp_mpi.PMPI_Type_get_extent(type, &lb, &extent);

	if (rc == MPI_SUCCESS)
		rc = ftp_mpi.PMPI_Type_get_true_extent(type, &tlb, &textent);
	if (rc != MPI_SUCCESS)
		return rc;
	size_t bytes = count > 0 ? (size_t)(count - 1) * (size_t)extent + (size_t)textent : 1;
	*mem = scratch_take(bytes ? bytes : 1);
	if (!mem->mem)
		return MPI_ERR_NO_MEM;
	r->base = (char *)mem->mem - tlb;
	r->type = type;
	r->extent = extent;
	return MPI_SUCCESS;
}

struct exec {
	const struct ftp_view *v;
	struct region reg[FT_CB_TMP_B + 1];
	const MPI_Datatype *stypes, *rtypes; /* MPI_Alltoallw's, else NULL */
	MPI_Op op;
};

/* Where span s starts and the type it counts, in a step with peer: an
 * MPI_Alltoallw's block has its peer's type (the send buffer's, or the
 * receive buffer's in it and in the scratch copy of it), and a raw copy
 * (peer -1) bytes; every other span its buffer's type. */
static void *at(const struct exec *x, const struct ft_coll_span *s, int32_t peer,
		MPI_Datatype *type)
{
	const struct region *r = &x->reg[s->buf];

	*type = s->buf == FT_CB_NONE ? MPI_BYTE : r->type;
	if (x->rtypes && s->buf != FT_CB_NONE && peer >= 0)
		*type = s->buf == FT_CB_SEND ? x->stypes[peer] : x->rtypes[peer];
	return s->buf == FT_CB_NONE ? NULL : r->base + s->off * r->extent;
}

/* Copy span a to span b of a step with peer (types may differ,
 * signatures match). */
static int copy_span(const struct exec *x, const struct ft_coll_span *a,
		     const struct ft_coll_span *b, int32_t peer)
{
	MPI_Datatype ta, tb;
	void *pa = at(x, a, peer, &ta), *pb = at(x, b, peer, &tb);
	int bytes = 0, pos = 0;

	if (a->count > INT32_MAX || b->count > INT32_MAX)
		return MPI_ERR_COUNT;
	int rc = ftp_mpi.PMPI_Pack_size((int)a->count, ta, x->v->chan, &bytes);
	char *tmp = rc == MPI_SUCCESS ? malloc((size_t)bytes + 1) : NULL;
	if (rc == MPI_SUCCESS && !tmp)
		rc = MPI_ERR_NO_MEM;
	if (rc == MPI_SUCCESS)
		rc = ftp_mpi.PMPI_Pack(pa, (int)a->count, ta, tmp, bytes, &pos, x->v->chan);
	int packed = pos;
	pos = 0;
	if (rc == MPI_SUCCESS)
		rc = ftp_mpi.PMPI_Unpack(tmp, packed, &pos, pb, (int)b->count, tb, x->v->chan);
	free(tmp);
	return rc;
}

static int local_step(const struct exec *x, const struct ft_coll_step *s)
{
	if (s->op == FT_CS_COPY)
		return copy_span(x, &s->a, &s->b, s->peer);
	MPI_Datatype ta, tb;
	void *pa = at(x, &s->a, s->peer, &ta), *pb = at(x, &s->b, s->peer, &tb);
	if (s->a.count > INT32_MAX)
		return MPI_ERR_COUNT;
	return ftp_mpi.PMPI_Reduce_local(pa, pb, (int)s->a.count, tb, x->op);
}

/* Post the sends and receives of one round (steps[0..n)) into reqs. */
static int post(const struct exec *x, const struct ft_coll_step *steps, int n, MPI_Request *reqs)
{
	const struct ftp_view *v = x->v;
	int rc = MPI_SUCCESS;

	for (int i = 0; i < n; i++)
		reqs[i] = MPI_REQUEST_NULL;
	for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
		MPI_Datatype t;
		void *p = at(x, &steps[i].a, steps[i].peer, &t);
		int32_t peer = v->rank[steps[i].peer];
		if (steps[i].a.count > INT32_MAX)
			rc = MPI_ERR_COUNT;
		else if (steps[i].op == FT_CS_SEND)
			rc = ftp_mpi.PMPI_Isend(p, (int)steps[i].a.count, t, peer, v->tag, v->chan,
						&reqs[i]);
		else
			rc = ftp_mpi.PMPI_Irecv(p, (int)steps[i].a.count, t, peer, v->tag, v->chan,
						&reqs[i]);
	}
	return rc;
}

/* Give up the round: receives cancelled, sends cancelled and freed. */
static void give_up(const struct exec *x, const struct ft_coll_step *steps, int n,
		    MPI_Request *reqs, int err)
{
	for (int i = 0; i < n; i++)
		if (reqs[i] != MPI_REQUEST_NULL)
			ftp_cancel_p2p(&reqs[i], x->v->job[steps[i].peer],
				       steps[i].op == FT_CS_SEND ? FTP_P2P_SEND : FTP_P2P_RECV, err,
				       MPI_STATUS_IGNORE);
}

/* A collective under way on a view: its schedule, buffers, and the round
 * it waits for (reqs[0..n), steps from `at`). */
struct ftp_view_run {
	struct ftp_view v; /* rank and job: the caller's, for the run's life */
	struct ft_coll_sched s;
	struct exec x;
	struct scratch_block tmp[2];
	MPI_Request *reqs;
	uint32_t next; /* the next step to take */
	uint32_t at;   /* the first step of the round posted, if n */
	int n;	       /* the requests of the round posted (0: none) */
	bool abandoned;
};

int ftp_view_run_start(const struct ftp_view *v, const struct ft_coll_args *a,
		       const struct ftp_view_bufs *b, struct ftp_view_run **out)
{
	struct ftp_view_run *r = calloc(1, sizeof *r);
	int rc;

	*out = NULL;
	if (!r)
		return MPI_ERR_NO_MEM;
	r->v = *v;
	r->x = (struct exec){.v = &r->v, .stypes = b->stypes, .rtypes = b->rtypes, .op = b->op};
	struct ft_coll_args fa = *a;
	if (fa.kind == FT_COLL_ALLTOALLW && fa.in_place)
		fa.w_span = ftp_coll_w_span(fa.rcounts, fa.rdispls, b->rtypes, (int)v->n);
	rc = ft_coll_sched(&fa, v->n, v->me, &r->s);
	if (rc != 0) {
		free(r);
		return rc == -ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_ARG;
	}
	rc = region_of(&r->x.reg[FT_CB_SEND], (void *)b->sbuf, b->stype);
	if (rc == MPI_SUCCESS)
		rc = region_of(&r->x.reg[FT_CB_RECV], b->rbuf, b->rtype);
	for (int k = 0; k < 2 && rc == MPI_SUCCESS; k++)
		if (r->s.tmp_count[k] > 0)
			rc = scratch(&r->x.reg[FT_CB_TMP_A + k], &r->tmp[k], r->s.tmp_count[k], b->rtype);
	r->reqs = malloc(((size_t)r->s.nsteps + 1) * sizeof *r->reqs);
	if (rc == MPI_SUCCESS && !r->reqs)
		rc = MPI_ERR_NO_MEM;
	*out = r;
	return rc;
}

int ftp_view_run_step(struct ftp_view_run *r, int *n, MPI_Request **reqs)
{
	const struct ft_coll_sched *s = &r->s;
	int rc = MPI_SUCCESS;

	r->n = 0;
	while (rc == MPI_SUCCESS && r->next < s->nsteps) {
		const struct ft_coll_step *st = &s->steps[r->next];
		if (st->op == FT_CS_COPY || st->op == FT_CS_REDUCE) {
			rc = local_step(&r->x, st);
			r->next++;
			continue;
		}
		uint32_t j = r->next;
		while (j < s->nsteps && s->steps[j].group == st->group &&
		       (s->steps[j].op == FT_CS_SEND || s->steps[j].op == FT_CS_RECV))
			j++;
		r->at = r->next;
		r->n = (int)(j - r->next);
		r->next = j;
		rc = post(&r->x, st, r->n, r->reqs);
		if (rc == MPI_SUCCESS) {
			*n = r->n;
			*reqs = r->reqs;
			return MPI_SUCCESS;
		}
		ftp_view_run_give_up(r, rc);
	}
	*n = 0;
	return rc;
}

void ftp_view_run_give_up(struct ftp_view_run *r, int err)
{
	if (r->n == 0)
		return;
	give_up(&r->x, &r->s.steps[r->at], r->n, r->reqs, err);
	r->n = 0;
	r->abandoned = true;
}

bool ftp_view_run_end(struct ftp_view_run *r)
{
	bool abandoned;

	if (!r)
		return false;
	abandoned = r->abandoned;
	/* A round given up may still have its sends read by the MPI. */
	if (!abandoned) {
		scratch_give(r->tmp[0]);
		scratch_give(r->tmp[1]);
	}
	free(r->reqs);
	ft_coll_sched_fini(&r->s);
	free(r);
	return abandoned;
}

int ftp_view_coll(const struct ftp_view *v, const struct ft_coll_args *a,
		  const struct ftp_view_bufs *b, ftp_view_wait_fn wait, void *arg, bool *abandoned)
{
	struct ftp_view_run *r;
	MPI_Request *reqs;
	int n = 0, rc = ftp_view_run_start(v, a, b, &r);

	while (rc == MPI_SUCCESS) {
		rc = ftp_view_run_step(r, &n, &reqs);
		if (rc != MPI_SUCCESS || n == 0)
			break;
		rc = wait(arg, n, reqs);
		if (rc != MPI_SUCCESS)
			ftp_view_run_give_up(r, rc);
	}
	*abandoned = ftp_view_run_end(r);
	return rc;
}

int ftp_view_coll_args(const struct coll_args *a, struct ft_coll_args *f, struct ftp_view_bufs *b)
{
	static const struct {
		enum ftp_fn fn;
		enum ft_coll_kind kind;
	} kinds[] = {
	    {FTP_FN_MPI_Barrier, FT_COLL_BARRIER},
	    {FTP_FN_MPI_Bcast, FT_COLL_BCAST},
	    {FTP_FN_MPI_Reduce, FT_COLL_REDUCE},
	    {FTP_FN_MPI_Allreduce, FT_COLL_ALLREDUCE},
	    {FTP_FN_MPI_Scan, FT_COLL_SCAN},
	    {FTP_FN_MPI_Exscan, FT_COLL_EXSCAN},
	    {FTP_FN_MPI_Reduce_scatter_block, FT_COLL_REDUCE_SCATTER_BLOCK},
	    {FTP_FN_MPI_Reduce_scatter, FT_COLL_REDUCE_SCATTER},
	    {FTP_FN_MPI_Gather, FT_COLL_GATHER},
	    {FTP_FN_MPI_Gatherv, FT_COLL_GATHERV},
	    {FTP_FN_MPI_Scatter, FT_COLL_SCATTER},
	    {FTP_FN_MPI_Scatterv, FT_COLL_SCATTERV},
	    {FTP_FN_MPI_Allgather, FT_COLL_ALLGATHER},
	    {FTP_FN_MPI_Allgatherv, FT_COLL_ALLGATHERV},
	    {FTP_FN_MPI_Alltoall, FT_COLL_ALLTOALL},
	    {FTP_FN_MPI_Alltoallv, FT_COLL_ALLTOALLV},
	    {FTP_FN_MPI_Alltoallw, FT_COLL_ALLTOALLW},
	};
	size_t k = 0;

	while (k < sizeof kinds / sizeof kinds[0] && kinds[k].fn != a->fn)
		k++;
	if (k == sizeof kinds / sizeof kinds[0])
		return MPI_ERR_INTERN;
	bool scatter = a->fn == FTP_FN_MPI_Scatter || a->fn == FTP_FN_MPI_Scatterv;
	*f = (struct ft_coll_args){
	    .kind = kinds[k].kind,
	    .root = a->root,
	    .scount = a->scount,
	    .rcount = a->rcount,
	    .scounts = a->scounts,
	    .sdispls = a->sdispls,
	    .rcounts = a->rcounts,
	    .rdispls = a->rdispls,
	    .in_place = a->sbuf == MPI_IN_PLACE || (scatter && a->rbuf == MPI_IN_PLACE),
	};
	int size = 0;
	if (a->rtype != MPI_DATATYPE_NULL && ftp_mpi.PMPI_Type_size(a->rtype, &size) == MPI_SUCCESS)
		f->elem_bytes = size;
	/* A reduction's one type is its send type too. */
	*b = (struct ftp_view_bufs){.sbuf = a->sbuf,
				    .stype = a->stype == MPI_DATATYPE_NULL ? a->rtype : a->stype,
				    .rbuf = a->rbuf,
				    .rtype = a->rtype,
				    .op = a->op};
	if (a->fn == FTP_FN_MPI_Alltoallw)
		*b = (struct ftp_view_bufs){.sbuf = a->sbuf, .stype = MPI_BYTE, .rbuf = a->rbuf,
					    .rtype = MPI_BYTE, .stypes = a->stypes,
					    .rtypes = a->rtypes, .op = MPI_OP_NULL};
	return MPI_SUCCESS;
}

/* --- the runners of cover kinds whose collectives run on views ------------ */

const struct ftp_mode_calls ftp_view_coll_calls = {
	.MPI_Mprobe = ftp_held_MPI_Mprobe,
	.MPI_Improbe = ftp_held_MPI_Improbe,
	FTP_COVER_COLL_FORMS,
	FTP_COVER_ICOLL_FORMS,
#if MPI_VERSION >= 4
	FTP_COVER_PCOLL_FORMS, /* each start is the nonblocking form (pmpi/persist.h) */
#endif
#ifdef FTP_HAVE_MPIX_PCOLL
	FTP_COVER_MPIX_PCOLL_FORMS,
#endif
};

/* Wait for one round of a collective: its n requests, or the failure of
 * a member (once the round could not complete anyway) or a revocation. */
static int round_wait(void *arg, int n, MPI_Request *reqs)
{
	struct ftp_call *c = arg;
	MPI_Status st[n > 0 ? n : 1];
	uint64_t seen = 0, polls = 0;

	for (;;) {
		int flag = 0;
		int rc = ftp_mpi.PMPI_Testall(n, reqs, &flag, st);
		if (rc != MPI_SUCCESS || flag)
			return rc;
		int err = ftp_poll_step(c, false, &seen, &polls);
		if (err == FTP_ERR_PROC_FAILED && ftp_completes_anyway(reqs, n, st))
			return MPI_SUCCESS;
		if (err != MPI_SUCCESS)
			return err;
	}
}

/* What a collective on a view watches: every member, unless the call's
 * pre-check narrowed it (pmpi/rts_state.h). */
static void watch_members(struct ftp_call *c)
{
	if (c->watch.kind != FTP_WATCH_LIVE)
		c->watch = (struct ftp_watch){ .kind = FTP_WATCH_ALL };
}

int ftp_view_coll_call(struct ftp_call *c, const struct coll_args *a, ftp_view_on_fn on, void *owned)
{
	struct ft_coll_args f;
	struct ftp_view_bufs b;
	bool abandoned = false;
	int rc = ftp_view_coll_args(a, &f, &b);

	watch_members(c);
	if (rc == MPI_SUCCESS) {
		struct ftp_view v = on(c->comm);
		rc = ftp_view_coll(&v, &f, &b, round_wait, c, &abandoned);
	}
	if (!abandoned)
		free(owned);
	return ftp_post_coll(c, rc);
}

/* A nonblocking collective on a view: its run, progressed from the
 * completion calls (pmpi/requests.c). */
struct view_op {
	struct ftp_op op;
	struct ftp_call call; /* the call that started it, watching every member */
	struct ftp_view_run *run;
	MPI_Request *reqs;    /* the round posted: n of them */
	int n;
	void *owned;          /* the caller's, freed with the run */
};

/* Test the round posted; once done, take the next steps. */
static bool view_op_progress(struct ftp_op *op)
{
	struct view_op *o = (struct view_op *)op;

	for (;;) {
		if (o->n > 0) {
			MPI_Status st[o->n];
			int flag = 0, rc = ftp_mpi.PMPI_Testall(o->n, o->reqs, &flag, st);
			if (rc == MPI_SUCCESS && !flag && ftp_events() != 0) {
				rc = ftp_check(&o->call, false);
				if (rc == FTP_ERR_PROC_FAILED && ftp_completes_anyway(o->reqs, o->n, st))
					rc = MPI_SUCCESS, flag = 1;
			}
			if (rc != MPI_SUCCESS) {
				ftp_view_run_give_up(o->run, rc);
				op->rc = rc;
				return true;
			}
			if (!flag)
				return false;
		}
		op->rc = ftp_view_run_step(o->run, &o->n, &o->reqs);
		if (op->rc != MPI_SUCCESS || o->n == 0)
			return true;
	}
}

static void view_op_destroy(struct ftp_op *op)
{
	struct view_op *o = (struct view_op *)op;

	/* A round given up may still have its sends read by the MPI: what
	 * they send from is kept, as the run keeps its scratch. */
	if (!ftp_view_run_end(o->run))
		free(o->owned);
	free(o);
}

int ftp_view_icoll_call(struct ftp_call *c, const struct coll_args *a, ftp_view_on_fn on,
			void *owned, MPI_Request *request)
{
	struct view_op *o = calloc(1, sizeof *o);
	struct ft_coll_args f;
	struct ftp_view_bufs b;
	int rc = o ? ftp_view_coll_args(a, &f, &b) : MPI_ERR_NO_MEM;

	watch_members(c);
	if (rc == MPI_SUCCESS) {
		struct ftp_view v = on(c->comm);
		o->call = *c;
		o->owned = owned;
		rc = ftp_view_run_start(&v, &f, &b, &o->run);
		if (rc == MPI_SUCCESS)
			rc = ftp_view_run_step(o->run, &o->n, &o->reqs);
	}
	if (rc != MPI_SUCCESS) {
		if (o)
			view_op_destroy(&o->op);
		else
			free(owned);
		return ftp_post_plain(c, rc);
	}
	o->op.progress = view_op_progress;
	o->op.destroy = view_op_destroy;
	return ftp_post_plain(c, ftp_op_start(c, &o->op, request));
}
