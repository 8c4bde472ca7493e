/* persist.c: persistent requests that ftshim starts itself (see
 * persist.h): their shells in the request table, MPI_Start running the
 * nonblocking form again, the completion calls' swap of a shell for its
 * running operation's request, and the forms of the persistent calls on
 * a covered communicator (point-to-point here; each collective's in
 * pmpi/coll_forms.c, which calls ftp_persist_coll). Application thread. */
#include "ftshim_config.h"

#include <stdlib.h>
#include <string.h>

#include "pmpi/persist.h"
#include "pmpi/call.h"
#include "pmpi/errors.h"
#include "pmpi/cover.h"
#include "pmpi/mode_calls.h"
#include "pmpi/mpi_lib.h"
#include "pmpi/requests.h"

_Atomic uint32_t ftp_persist_live;

int ftp_persist_make(struct ftp_call *c, struct ftp_persist *p, MPI_Request *request)
{
	MPI_Request shell = MPI_REQUEST_NULL;
	/* A receive from nobody, never started: a handle the MPI knows as
	 * an inactive persistent request, should the program hand it to a
	 * call ftshim does not wrap. */
	int rc = ftp_mpi.PMPI_Recv_init(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, &shell);

	p->active = MPI_REQUEST_NULL;
	if (rc == MPI_SUCCESS && !ftp_req_add_persist(c, shell, p))
		rc = MPI_ERR_NO_MEM;
	if (rc != MPI_SUCCESS) {
		if (shell != MPI_REQUEST_NULL)
			ftp_mpi.PMPI_Request_free(&shell);
		p->destroy(p);
		return ftp_post_plain(c, rc);
	}
	atomic_fetch_add_explicit(&ftp_persist_live, 1, memory_order_relaxed);
	*request = shell;
	return ftp_post_plain(c, MPI_SUCCESS);
}

struct ftp_persist *ftp_persist_of(MPI_Request request)
{
	struct ftp_req r;

	if (!ftp_persist_any() || !ftp_req_find(request, &r))
		return NULL;
	return r.persist;
}

int ftp_persist_swap_in(struct ftp_persist_swap *s, int count, const MPI_Request requests[])
{
	int found = -1;

	for (int i = 0; i < count && found < 0; i++)
		if (ftp_persist_of(requests[i]))
			found = i;
	if (found < 0)
		return 0;
	s->work = s->work_stack;
	s->shell = s->shell_stack;
	if (count > FTP_PERSIST_STACK) {
		s->work = malloc((size_t)count * sizeof *s->work);
		s->shell = malloc((size_t)count * sizeof *s->shell);
		if (!s->work || !s->shell) {
			free(s->work);
			free(s->shell);
			return -1;
		}
	}
	for (int i = 0; i < count; i++) {
		s->shell[i] = i < found ? NULL : ftp_persist_of(requests[i]);
		s->work[i] = s->shell[i] ? s->shell[i]->active : requests[i];
	}
	return 1;
}

void ftp_persist_swap_out(struct ftp_persist_swap *s, int count, MPI_Request requests[])
{
	for (int i = 0; i < count; i++) {
		if (s->shell[i])
			s->shell[i]->active = s->work[i];
		else
			requests[i] = s->work[i];
	}
	if (s->work != s->work_stack) {
		free(s->work);
		free(s->shell);
	}
}

int ftp_persist_start(struct ftp_persist *p)
{
	if (p->active != MPI_REQUEST_NULL) {
		struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Start);
		ftp_resolve(&c, p->comm);
		return ftp_post_plain(&c, ftp_refuse_call(&c, MPI_ERR_REQUEST,
							  "of a persistent request that is "
							  "active (started, not yet completed)"));
	}
	return p->start(p, &p->active);
}

void ftp_persist_free(MPI_Request *request, struct ftp_persist *p)
{
	struct ftp_req r;

	if (ftp_req_take(*request, &r))
		ftp_req_release(&r);
	ftp_mpi.PMPI_Request_free(request);
	p->destroy(p);
	atomic_fetch_sub_explicit(&ftp_persist_live, 1, memory_order_relaxed);
}

int ftp_persist_cancel(struct ftp_persist *p)
{
	return p->active != MPI_REQUEST_NULL ? ftp_mpi.PMPI_Cancel(&p->active) : MPI_SUCCESS;
}

/* --- point-to-point --------------------------------------------------------- */

struct p2p_persist {
	struct ftp_persist p;
	enum ftp_fn fn; /* the nonblocking call each start makes */
	void *buf;
	int count, peer, tag;
	MPI_Datatype type; /* ftp_type_keep's */
};

static int p2p_start(struct ftp_persist *p, MPI_Request *active)
{
	struct p2p_persist *q = (struct p2p_persist *)p;
	/* The program called MPI_Start: its lines and FTSHIM_INJECT's call
	 * counts say so. */
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Start);
	bool recv = q->fn == FTP_FN_MPI_Irecv;
	int rc = recv ? ftp_pre_irecv(&c, p->comm, q->peer) : ftp_pre_isend(&c, p->comm, q->peer);

	if (rc != MPI_SUCCESS)
		return ftp_post_ireq(&c, rc, active, false);
	const struct ftp_mode_calls *calls =
	    ftp_seam_covered(c.comm) ? ftp_cover_calls(c.comm) : NULL;
	if (calls && recv && calls->MPI_Irecv)
		return calls->MPI_Irecv(&c, q->buf, q->count, q->type, q->peer, q->tag, active);
	if (calls && q->fn == FTP_FN_MPI_Issend && calls->MPI_Issend)
		return calls->MPI_Issend(&c, q->buf, q->count, q->type, q->peer, q->tag, active);
	if (calls && q->fn == FTP_FN_MPI_Isend && calls->MPI_Isend)
		return calls->MPI_Isend(&c, q->buf, q->count, q->type, q->peer, q->tag, active);
	/* Made on a covered communicator with these forms, it keeps them. */
	return ftp_post_plain(&c, ftp_mode_refuse(&c));
}

static void p2p_destroy(struct ftp_persist *p)
{
	struct p2p_persist *q = (struct p2p_persist *)p;

	ftp_type_drop(&q->type);
	free(q);
}

static int p2p_make(struct ftp_call *c, enum ftp_fn fn, const void *buf, int count,
		    MPI_Datatype type, int peer, int tag, MPI_Request *request)
{
	struct p2p_persist *q = calloc(1, sizeof *q);

	if (!q)
		return ftp_post_plain(c, MPI_ERR_NO_MEM);
	*q = (struct p2p_persist){
	    .p = {.start = p2p_start, .destroy = p2p_destroy, .comm = c->comm->handle},
	    .fn = fn,
	    .buf = (void *)buf,
	    .count = count,
	    .peer = peer,
	    .tag = tag,
	    .type = MPI_DATATYPE_NULL};
	int rc = ftp_type_keep(type, &q->type);
	if (rc != MPI_SUCCESS) {
		free(q);
		return ftp_post_plain(c, rc);
	}
	return ftp_persist_make(c, &q->p, request);
}

int ftp_cover_MPI_Send_init(struct ftp_call *c, const void *buf, int count, MPI_Datatype datatype,
			    int dest, int tag, MPI_Request *request)
{
	return p2p_make(c, FTP_FN_MPI_Isend, buf, count, datatype, dest, tag, request);
}

int ftp_cover_MPI_Ssend_init(struct ftp_call *c, const void *buf, int count, MPI_Datatype datatype,
			     int dest, int tag, MPI_Request *request)
{
	return p2p_make(c, FTP_FN_MPI_Issend, buf, count, datatype, dest, tag, request);
}

int ftp_cover_MPI_Rsend_init(struct ftp_call *c, const void *buf, int count, MPI_Datatype datatype,
			     int dest, int tag, MPI_Request *request)
{
	return p2p_make(c, FTP_FN_MPI_Isend, buf, count, datatype, dest, tag, request);
}

int ftp_cover_MPI_Recv_init(struct ftp_call *c, void *buf, int count, MPI_Datatype datatype,
			    int source, int tag, MPI_Request *request)
{
	return p2p_make(c, FTP_FN_MPI_Irecv, buf, count, datatype, source, tag, request);
}

/* --- collectives ------------------------------------------------------------ */

struct coll_persist {
	struct ftp_persist p;
	struct coll_kept k; /* the call's arguments, kept */
	void *copy;	    /* ftp_coll_start's, reused by every start */
};

static int coll_start(struct ftp_persist *p, MPI_Request *active)
{
	struct coll_persist *q = (struct coll_persist *)p;
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Start); /* as for point-to-point */
	int rc = ftp_pre_coll(&c, p->comm);

	if (rc == MPI_SUCCESS && ftp_seam_covered(c.comm))
		return c.comm->cover->kind->icoll ? c.comm->cover->kind->icoll(&c, &q->k.a, active)
						  : ftp_post_plain(&c, ftp_mode_refuse(&c));
	/* Any other communicator: the MPI's nonblocking collective, watched
	 * as the program's own would be. */
	struct coll_args a = q->k.a;
	if (a.root >= 0)
		a.root = ftp_rank_in(c.comm, a.root);
	if (rc == MPI_SUCCESS)
		rc = ftp_coll_start(&a, c.real, active, &q->copy);
	return ftp_post_ireq(&c, rc, active, false);
}

static void coll_destroy(struct ftp_persist *p)
{
	struct coll_persist *q = (struct coll_persist *)p;

	ftp_coll_kept_free(&q->k);
	if (p->active == MPI_REQUEST_NULL) /* else the MPI may still read it */
		free(q->copy);
	free(q);
}

int ftp_persist_coll(struct ftp_call *c, const struct coll_args *a, MPI_Request *request)
{
	struct coll_persist *q = calloc(1, sizeof *q);
	int me = 0, rc = ftp_mpi.PMPI_Comm_rank(c->comm->real, &me);

	ftp_rank_out(c->comm, &me);
	if (rc == MPI_SUCCESS)
		rc = q ? ftp_coll_keep(&q->k, a, ftp_seam_size(c->comm), me) : MPI_ERR_NO_MEM;

	if (rc != MPI_SUCCESS) {
		free(q);
		return ftp_post_plain(c, rc);
	}
	q->p = (struct ftp_persist){
	    .start = coll_start, .destroy = coll_destroy, .comm = c->comm->handle};
	return ftp_persist_make(c, &q->p, request);
}
