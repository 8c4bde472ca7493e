/* agree.c: the MPI side of MPIX_Comm_agree, MPIX_Comm_shrink and their
 * nonblocking forms, and of ftshim's own agreements (ftp_agree_quiet,
 * ftp_agree_alive). The protocol itself, a uniform fault-tolerant
 * agreement among a communicator's live members carried by the control
 * plane (never MPI, so that a dead member cannot block it), is
 * src/agreement.c; this file gives it its views of communicators (from
 * the communicator table, in agreement order), the failures the process
 * table knows and the control plane (the host's mailbox, else TCP), wakes
 * the caller waiting for a decision, builds a shrink's communicator,
 * makes the requests of MPIX_Comm_iagree and MPIX_Comm_ishrink (which
 * pmpi/requests.c completes), and records each call in the events.
 *
 * The protocol runs on the detector thread (the control plane's messages
 * and the failures it learns) and on the application thread(s) (starting
 * an agreement, taking its decision, a communicator made): every call
 * into it holds lock. */
#include "ftshim_config.h"


#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "ftshim.h"
#include "pmpi/agree.h"
#include "pmpi/create_group.h"
#include "pmpi/hangwatch.h"
#include "pmpi/inject.h"
#include "pmpi/call.h"
#include "pmpi/requests.h"
#include "pmpi/spare_view.h"
#include "pmpi/ulfm.h"
#include "pmpi/detect.h"
#include "pmpi/comms.h"
#include "pmpi/hostmail.h"
#include "pmpi/mode/mode.h"
#include "pmpi/mpi_lib.h"
#include "src/agreement.h"
#include "src/clock.h"
#include "src/log.h"

_Static_assert((int)FT_AGREE_CONTRIB == (int)FTP_APP_AGREE_CONTRIB &&
		       (int)FT_AGREE_DECIDE == (int)FTP_APP_AGREE_DECIDE &&
		       (int)FT_AGREE_ASK == (int)FTP_APP_AGREE_ASK,
	       "the protocol's message kinds are the control plane's");
_Static_assert(MPI_SUCCESS == 0, "a decision's rc is 0 when every failure was acknowledged");

/* Every agreement this process knows (set up by the first user), under
 * lock. A waiting caller sleeps on the host mailbox's doorbell
 * (pmpi/hostmail.c), which a decision moves. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct ft_agreements agreements;
static bool agreements_ready;

/* The members of the communicator core in agreement order, and our index. */
static void copy_view(struct ft_comm *core, void *arg)
{
	struct ft_agree_view *v = arg;

	v->n = ftp_members(core);
	v->members = malloc((v->n + 1) * sizeof *v->members);
	if (!v->members)
		return;
	ft_agree_order(core, v->members);
	v->self = UINT32_MAX;
	for (uint32_t i = 0; i < v->n; i++)
		if (v->members[i] == ftp.rank)
			v->self = i;
}

/* The views of the last communicators released here, under lock: a
 * member that freed a communicator right after an agreement on it (a
 * program frees the old communicator once shrink returns) must still
 * answer one that was slower to hear the decision, whose coordinator died
 * as it sent it; the late member's contribution or question would
 * otherwise be held for a communicator that never comes back, and that
 * member would wait for ever. */
#define RETAINED 32
static struct {
	uint64_t id;
	struct ft_agree_view v; /* v.members: NULL in an empty slot */
} retained[RETAINED];
static uint32_t retained_next;

static bool view_of(void *ctx, uint64_t id, struct ft_agree_view *v)
{
	(void)ctx;
	if (ft_comm_registry_with(&ftp.comms, id, copy_view, v) && v->members)
		return true;
	for (uint32_t k = 0; k < RETAINED; k++) {
		if (!retained[k].v.members || retained[k].id != id)
			continue;
		*v = retained[k].v;
		v->members = malloc((v->n + 1) * sizeof *v->members);
		if (!v->members)
			return false;
		memcpy(v->members, retained[k].v.members, v->n * sizeof *v->members);
		return true;
	}
	return false;
}

static void view_done(void *ctx, struct ft_agree_view *v)
{
	(void)ctx;
	free(v->members);
}

/* A member re-admitted since it failed (FTSHIM_READMIT) stays out of
 * agreements on the communicators that had it. */
static bool rank_failed(void *ctx, uint32_t rank)
{
	(void)ctx;
	return ft_proc_ever_failed(&ftp.procs, rank);
}

static void send_frame(void *ctx, uint32_t to, const struct ft_msg *m)
{
	(void)ctx;
	if (!ftp_hostmail_post(to, m))
		ftp_detect_post(to, m);
}

static void decided(void *ctx, const struct ft_agreement *a)
{
	(void)ctx;
	(void)a;
	ftp_hostmail_wake_self();
}

static struct ft_agreements *lock_agreements(void)
{
	static const struct ft_agree_ops ops = {
		.view = view_of,
		.view_done = view_done,
		.failed = rank_failed,
		.send = send_frame,
		.decided = decided,
	};

	pthread_mutex_lock(&lock);
	if (!agreements_ready) {
		ft_agree_init(&agreements, &ops, FTP_ERR_PROC_FAILED);
		agreements_ready = true;
	}
	return &agreements;
}

static void unlock_agreements(void)
{
	pthread_mutex_unlock(&lock);
}

/* A rank re-admitted itself takes part in no agreement: the others went
 * on without it in every communicator it was in. */
static bool left_out(void)
{
	return ft_proc_ever_failed(&ftp.procs, (uint32_t)ftp.rank);
}

static void on_comm_create(struct ft_comm *core)
{
	ft_agree_created(lock_agreements(), core->id);
	unlock_agreements();
}

static void on_comm_release(const struct ft_comm *core)
{
	struct ft_agree_view v = { 0 };

	copy_view((struct ft_comm *)core, &v);
	if (!v.members)
		return;
	lock_agreements();
	uint32_t k = retained_next++ % RETAINED;
	free(retained[k].v.members);
	retained[k].id = core->id;
	retained[k].v = v;
	unlock_agreements();
}

static void on_msg(const struct ft_msg *m)
{
	ft_agree_receive(lock_agreements(), m);
	unlock_agreements();
}

static void on_failure(uint32_t rank)
{
	(void)rank;
	ft_agree_failure(lock_agreements());
	unlock_agreements();
}

const struct ftp_listener ftp_agree_listener = {
	.on_failure = on_failure,
	.on_msg = on_msg,
	.kinds = 1u << FTP_APP_AGREE_CONTRIB | 1u << FTP_APP_AGREE_DECIDE | 1u << FTP_APP_AGREE_ASK,
	.on_comm_create = on_comm_create,
	.on_comm_release = on_comm_release,
};

/* Acknowledged: among the first *upto failures this process learned. */
static bool acked_among(void *arg, uint32_t rank)
{
	uint32_t upto = *(const uint32_t *)arg;

	for (uint32_t k = 0; k < upto; k++)
		if (ftp.procs.order[k] == (int32_t)rank)
			return true;
	return false;
}

/* Start the next agreement of the communicator e with this process's
 * value: contribute, and return it (kept until agree_take has taken its
 * decision), or NULL if e is not known or memory ran out. */
static struct ft_agreement *agree_start(struct ftp_comm *e, uint32_t value)
{
	uint32_t seq = atomic_fetch_add_explicit(&e->agree_seq, 1, memory_order_relaxed);
	uint32_t acked_upto = atomic_load_explicit(&e->acked, memory_order_acquire);
	struct ft_agreement *a = ft_agree_start(lock_agreements(), e->core->id, seq, value, acked_among,
						&acked_upto, ft_clock_now());

	unlock_agreements();
	return a;
}

/* If a is decided, take the decision (*value, *rc and, when failed is not
 * NULL, the failed members, a bitmap in agreement order) and return true
 * (see ft_agree_take). */
static bool agree_take(struct ft_agreement *a, uint32_t *value, uint8_t *failed, int *rc)
{
	bool done = ft_agree_take(lock_agreements(), a, ft_clock_now(), value, rc, failed);

	unlock_agreements();
	return done;
}

/* Run the next agreement of e with *value and wait for the decision.
 * Returns its rc; *value and (when failed is not NULL) the failed members
 * (a bitmap in agreement order) are filled in.
 *
 * The caller takes the messages of this host's ranks from the mailbox
 * itself while it waits, and yields a few times before it sleeps: the
 * decision comes within a few of the others' time slices when they are
 * in the same call. Asleep, it wakes on the doorbell (mail, or a decision
 * the detector thread took) or every 5 ms to run the MPI's progress: a
 * survivor's passive-target lock on this rank's window is granted only by
 * this rank's MPI (MPICH), and that survivor may be what the agreement
 * waits for. A recovery mode's failures are applied there too. */
static int agree_run(struct ftp_comm *e, uint32_t *value, uint8_t *failed)
{
	struct ft_agreement *a = agree_start(e, *value);
	int rc = MPI_SUCCESS;

	if (!a)
		return MPI_ERR_COMM;
	ftp_hostmail_listen(true);
	for (uint32_t idle = 0;; idle++) {
		uint32_t seen = ftp_hostmail_doorbell();
		ftp_hostmail_drain();
		if (agree_take(a, value, failed, &rc))
			break;
		/* A recovery mode's view of a failure, as any wait of ftshim's
		 * applies it (ftp_check): under replication the dead primary's
		 * replica, which this agreement waits for, is itself waiting
		 * for what this process tells it there. */
		ftp_mode_failures();
		if (idle < ftp.spin_polls) {
			sched_yield();
			continue;
		}
		if (!ftp_hostmail_sleep(seen, 5 * FT_NSEC_PER_MSEC))
			ftp_mpi_progress();
	}
	ftp_hostmail_listen(false);
	return rc;
}

int ftp_agree_quiet(struct ftp_comm *e, uint32_t *value)
{
	return agree_run(e, value, NULL);
}

int ftp_agree_failures(struct ftp_comm *e, uint8_t *failed)
{
	uint32_t value = 1;

	return agree_run(e, &value, failed);
}

struct ft_agreement *ftp_agree_begin(struct ftp_comm *e, uint32_t value)
{
	return agree_start(e, value);
}

bool ftp_agree_poll(struct ft_agreement *a, uint32_t *value, uint8_t *failed, int *rc)
{
	ftp_hostmail_drain();
	return agree_take(a, value, failed, rc);
}

/* The report's word for an agreement's or shrink's result. */
static const char *result_word(int rc)
{
	const char *name = ftp_code_name(rc);

	return name ? name : "error";
}

static void record_agree(const char *kind, const struct ftp_comm *e, uint32_t value, int rc, uint64_t start)
{
	uint64_t now = ftp_wall_now();

	ft_events_add(now, kind, ",\"comm\":\"%016llx\",\"flag\":%u,\"result\":\"%s\",\"duration_ms\":%.3f",
		      (unsigned long long)e->core->id, value, result_word(rc), (double)(now - start) / 1e6);
}

static void record_shrink(const char *kind, const struct ftp_comm *e, MPI_Comm newcomm, int rc, uint64_t start)
{
	uint64_t now = ftp_wall_now();
	struct ftp_comm *made = rc == MPI_SUCCESS ? ftp_seam_comm(newcomm) : NULL;
	int size = 0;

	if (made)
		size = ftp_seam_size(made);
	else if (rc == MPI_SUCCESS)
		ftp_mpi.PMPI_Comm_size(newcomm, &size);
	ft_events_add(now, kind, ",\"comm\":\"%016llx\",\"new_comm\":\"%016llx\",\"size\":%d,\"result\":\"%s\",\"duration_ms\":%.3f",
		      (unsigned long long)e->core->id, made ? (unsigned long long)made->core->id : 0ull, size,
		      result_word(rc), (double)(now - start) / 1e6);
}

FT_EXPORT int MPIX_Comm_agree(MPI_Comm comm, int *flag)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPIX_Comm_agree);
	int rc = MPI_ERR_COMM;

	ftp_resolve(&c, comm);
	if (c.comm && left_out()) {
		rc = FTP_ERR_PROC_FAILED;
	} else if (c.comm) {
		uint32_t value = (uint32_t)*flag;
		uint64_t start = ftp_wall_now();
		rc = agree_run(c.comm, &value, NULL);
		*flag = (int)value;
		record_agree("agree", c.comm, value, rc, start);
	}
	return ftp_post_plain(&c, rc);
}
FTP_ALSO_PMPI(MPIX_Comm_agree);

/* The tag of the MPI_Comm_create_group that builds a shrunk communicator;
 * a program using the same tag on the same communicator at the same time
 * would get mixed up with it. */
#define SHRINK_TAG 0x5f7e

/* The shrinks whose agreement this process has taken (ftshim's own
 * injection point ftshim.shrink counts them). Application thread. */
static long shrinks_decided;

/* What a shrink of an n-member communicator needs after its agreement. */
struct shrink {
	struct ftp_call call; /* the shrink's call, resolved */
	uint32_t n;           /* members, both groups of an intercommunicator */
	uint8_t *failed;      /* bytes(n): the agreed failures, in agreement order */
	uint8_t *next;        /* bytes(n): those of the agreement that settles them */
	int *ranks;           /* room for n */
	MPI_Comm *newcomm;
};

static void shrink_fini(struct shrink *s)
{
	free(s->failed);
	free(s->next);
	free(s->ranks);
	s->failed = s->next = NULL;
	s->ranks = NULL;
}

static bool shrink_init(struct shrink *s, const struct ftp_call *c, MPI_Comm *newcomm)
{
	s->call = *c;
	s->n = c->comm->core->local_size + c->comm->core->remote_size;
	s->failed = calloc(1, ft_agree_bytes(s->n) + 1);
	s->next = calloc(1, ft_agree_bytes(s->n) + 1);
	s->ranks = malloc((s->n + 1) * sizeof *s->ranks);
	s->newcomm = newcomm;
	if (s->failed && s->next && s->ranks)
		return true;
	shrink_fini(s);
	return false;
}

/* Whether member j of the local group (or, if remote, of the remote
 * group) is among the agreed failures (see ft_agree_order). */
static bool agreed_failed(const struct shrink *s, bool remote, uint32_t j)
{
	return ft_agree_bit(s->failed, ft_agree_index(s->call.comm->core, remote, j));
}

/* s->ranks: the job ranks of the local group's survivors (the members
 * the agreement did not name), in order, then the remote group's;
 * *nlocal, *nremote their numbers. false if one of them has died since
 * the agreement. */
static bool survivors(struct shrink *s, uint32_t *nlocal, uint32_t *nremote)
{
	const struct ft_comm *core = s->call.comm->core;
	uint32_t k = 0;
	bool settled = true;

	for (int g = 0; g < 2; g++) {
		uint32_t first = g ? core->local_size : 0;
		uint32_t count = g ? core->remote_size : core->local_size;
		for (uint32_t j = 0; j < count; j++) {
			int32_t w = ftp_member_job(core, first + j);
			if (agreed_failed(s, g == 1, j))
				continue;
			if (ft_proc_ever_failed(&ftp.procs, (uint32_t)w))
				settled = false;
			s->ranks[k++] = w;
		}
		if (g == 0)
			*nlocal = k;
	}
	*nremote = k - *nlocal;
	return settled;
}

/* The agreed failures made final together, before the MPI's constructor
 * is entered with the survivors: each member says in one more agreement
 * whether it knew of no other death among them, and all keep them only
 * if every member did; else the failures that agreement names are added
 * and tried the same way. A member that agreed again alone, on learning
 * of a death the others had not seen yet, would wait in an agreement the
 * others never join, or take the others' next one for this one. Returns
 * MPI_SUCCESS with s->ranks the survivors, or MPI_ERR_COMM. */
static int settle(struct shrink *s, uint32_t *nlocal, uint32_t *nremote)
{
	size_t bytes = ft_agree_bytes(s->n);

	for (;;) {
		uint32_t settled = survivors(s, nlocal, nremote);
		memset(s->next, 0, bytes);
		if (agree_run(s->call.comm, &settled, s->next) == MPI_ERR_COMM)
			return MPI_ERR_COMM;
		if (settled)
			return MPI_SUCCESS;
		for (size_t i = 0; i < bytes; i++)
			s->failed[i] |= s->next[i];
	}
}

/* The shrunk communicator keeps its parent's error handler, as under
 * ULFM (MPI_Comm_create_group and MPI_Intercomm_create give the new
 * communicator MPI_ERRORS_ARE_FATAL on MPICH; Open MPI copies the
 * parent's): a program that set MPI_ERRORS_RETURN once survives its
 * next failure too. */
static void inherit_errhandler(MPI_Comm parent, MPI_Comm child)
{
	MPI_Errhandler eh = MPI_ERRHANDLER_NULL;

	if (ftp_mpi.PMPI_Comm_get_errhandler(parent, &eh) == MPI_SUCCESS) {
		ftp_mpi.PMPI_Comm_set_errhandler(child, eh);
		ftp_mpi.PMPI_Errhandler_free(&eh);
	}
}

/* The tag of an intercommunicator shrink's creations on ftp.private_world:
 * from the parent's id, so that shrinks of different intercommunicators
 * (by other processes at the same time) do not match each other; below
 * 32768, where pmpi/coll_p2p.c's exchanges never are. */
static int shrink_inter_tag(uint64_t id)
{
	return (int)((id * UINT64_C(0x9e3779b97f4a7c15)) >> 49); /* 15 bits: within any MPI_TAG_UB */
}

/* An intercommunicator has no creation collective over a subset of its
 * members: the local survivors make their communicator from
 * ftp.private_world (the world, or its private duplicate), and the two
 * leaders (each group's first survivor) join the two through it. The new
 * intercommunicator keeps the parent's error handler. */
static int shrink_build_inter(struct shrink *s, uint32_t nlocal, uint32_t nremote)
{
	MPI_Comm local = MPI_COMM_NULL;
	int tag = shrink_inter_tag(s->call.comm->core->id);

	*s->newcomm = MPI_COMM_NULL;
	if (ftp.private_world == MPI_COMM_NULL)
		return MPI_ERR_INTERN;
	/* The two sides meet through this process's world, which a spawned
	 * process does not share with its parents. */
	if (!s->call.comm->in_world) {
		ft_warn("MPIX_Comm_shrink of an intercommunicator between processes of different "
			"MPI_COMM_WORLDs (spawned ones and their parents) is not supported; "
			"merge it (MPI_Intercomm_merge) and shrink that");
		return MPI_ERR_INTERN;
	}
	/* No survivor on the other side: there is no intercommunicator to
	 * make (MPI has none with an empty group). */
	if (nremote == 0)
		return FTP_ERR_PROC_FAILED;
	int rc = ftp_create_group_of(ftp.private_world, s->ranks, nlocal, tag, s->call.fn, &local);
	if (rc == MPI_SUCCESS) {
		ftp_hang_watch_begin(s->call.fn, s->ranks, nlocal + nremote);
		rc = ftp_mpi.PMPI_Intercomm_create(local, 0, ftp.private_world, ftp_world_of_job(s->ranks[nlocal]),
						   tag, s->newcomm);
		ftp_hang_watch_end();
	}
	if (local != MPI_COMM_NULL)
		ftp_mpi.PMPI_Comm_free(&local);
	if (rc != MPI_SUCCESS)
		return rc;
	inherit_errhandler(s->call.real, *s->newcomm);
	ftp_register_inter_child(&s->call, tag, s->newcomm);
	return MPI_SUCCESS;
}

/* After the agreement on s->failed, whose value is agreed (the spares
 * every member offered): make the others' communicator, a view on a
 * spare context where the members agreed on one (pmpi/spare_view.h),
 * with no call of the MPI's that another process takes part in, so that
 * a member dying now cannot stop the others; it stays a member, as ULFM's
 * shrink may keep one that died during it. Else settle the failures
 * (so that nobody enters the creation with a member it knows dead), then
 * build it with the MPI and return its result. */
static int shrink_build(struct shrink *s, uint32_t agreed)
{
	uint32_t nalive = 0, nremote = 0;

	(void)survivors(s, &nalive, &nremote);
	ftp_inject_point("ftshim.shrink", (long)++shrinks_decided);
	if (!s->call.comm->core->remote_size) {
		int rc = ftp_spare_view_make(&s->call, agreed, s->ranks, nalive, SHRINK_TAG, s->newcomm);
		if (rc == MPI_SUCCESS)
			inherit_errhandler(s->call.real, *s->newcomm);
		if (rc != -1)
			return rc;
	}
	int rc = settle(s, &nalive, &nremote);
	if (rc != MPI_SUCCESS)
		return rc;
	if (s->call.comm->core->remote_size)
		return shrink_build_inter(s, nalive, nremote);
	/* A view's creation talks on the private channel, where the
	 * program's receives on its spare cannot match the MPI's messages. */
	MPI_Comm parent = s->call.comm->real_is_world ? ftp.private_world : s->call.real;
	rc = ftp_create_group_of(parent, s->ranks, nalive, SHRINK_TAG, s->call.fn, s->newcomm);
	if (rc == MPI_SUCCESS && *s->newcomm != MPI_COMM_NULL)
		inherit_errhandler(s->call.real, *s->newcomm);
	if (rc == MPI_SUCCESS)
		ftp_register_group_child(&s->call, MPI_GROUP_NULL, SHRINK_TAG, s->newcomm);
	return rc;
}

int ftp_agree_alive(struct ftp_call *c, int32_t *alive, uint32_t *n)
{
	struct shrink s;
	uint32_t nremote = 0;
	int rc = MPI_ERR_COMM;

	if (c->comm->core->remote_size)
		return MPI_ERR_COMM;
	if (!shrink_init(&s, c, NULL))
		return MPI_ERR_NO_MEM;
	uint32_t value = 1;
	if (agree_run(c->comm, &value, s.failed) != MPI_ERR_COMM)
		rc = settle(&s, n, &nremote);
	for (uint32_t i = 0; rc == MPI_SUCCESS && i < *n; i++)
		alive[i] = s.ranks[i];
	shrink_fini(&s);
	return rc;
}

FT_EXPORT int MPIX_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPIX_Comm_shrink);
	struct shrink s;
	int rc = MPI_ERR_COMM;

	ftp_resolve(&c, comm);
	if (!c.comm)
		return ftp_post_plain(&c, rc);
	if (left_out())
		return ftp_post_plain(&c, FTP_ERR_PROC_FAILED);
	if (!shrink_init(&s, &c, newcomm))
		return ftp_post_plain(&c, MPI_ERR_NO_MEM);
	uint64_t start = ftp_wall_now();
	uint32_t value = ftp_spare_view_offer(c.comm);
	/* Its code says whether failures were acknowledged, which does not
	 * matter here. */
	if (agree_run(c.comm, &value, s.failed) != MPI_ERR_COMM)
		rc = shrink_build(&s, value);
	record_shrink("shrink", c.comm, *newcomm, rc, start);
	shrink_fini(&s);
	return ftp_post_plain(&c, rc);
}
FTP_ALSO_PMPI(MPIX_Comm_shrink);

/* --- the nonblocking forms (requests completed by pmpi/requests.c) ------------- */

struct agree_op {
	struct ftp_op op;
	struct ft_agreement *a;
	int *flag;          /* iagree: where the value goes */
	bool shrinking;     /* ishrink: s is set */
	struct shrink s;
	MPI_Comm result;    /* ishrink from Fortran: s.newcomm points here, */
	MPI_Fint *fnewcomm; /* and this gets its Fortran handle at completion */
	uint64_t start;     /* wall clock, for the report */
};

static void agree_op_destroy(struct ftp_op *op)
{
	struct agree_op *o = (struct agree_op *)op;

	if (o->shrinking)
		shrink_fini(&o->s);
	free(o);
}

static bool iagree_progress(struct ftp_op *op)
{
	struct agree_op *o = (struct agree_op *)op;
	uint32_t value = 0;

	ftp_hostmail_drain();
	bool done = agree_take(o->a, &value, NULL, &op->rc);
	if (done && !op->orphaned)
		*o->flag = (int)value;
	if (done)
		record_agree("iagree", op->comm, value, op->rc, o->start);
	return done;
}

FT_EXPORT int MPIX_Comm_iagree(MPI_Comm comm, int *flag, MPI_Request *request)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPIX_Comm_iagree);
	struct agree_op *o = NULL;
	int rc = MPI_ERR_COMM;

	ftp_resolve(&c, comm);
	if (c.comm && left_out()) /* the error at completion */
		return ftp_post_ireq(&c, FTP_ERR_PROC_FAILED, request, false);
	if (c.comm && !(o = calloc(1, sizeof *o)))
		rc = MPI_ERR_NO_MEM;
	if (o && (o->a = agree_start(c.comm, (uint32_t)*flag))) {
		o->flag = flag;
		o->start = ftp_wall_now();
		o->op.progress = iagree_progress;
		o->op.destroy = agree_op_destroy;
		rc = ftp_op_start(&c, &o->op, request);
	} else {
		free(o);
	}
	return ftp_post_plain(&c, rc);
}
FTP_ALSO_PMPI(MPIX_Comm_iagree);

/* The agreement runs on the detector thread; the creation, which needs
 * every survivor (and, where the MPI makes it, the agreement that settles
 * the failures first), runs in whichever completion call or waiting loop
 * of this process comes next once it is decided. */
static bool ishrink_progress(struct ftp_op *op)
{
	struct agree_op *o = (struct agree_op *)op;
	uint32_t value;
	int rc;

	ftp_hostmail_drain();
	if (!agree_take(o->a, &value, o->s.failed, &rc))
		return false;
	op->rc = shrink_build(&o->s, value);
	record_shrink("ishrink", o->s.call.comm, *o->s.newcomm, op->rc, o->start);
	if (o->fnewcomm) /* shrink_build made it MPI_COMM_NULL first */
		*o->fnewcomm = MPI_Comm_c2f(o->result);
	return true;
}

/* MPIX_Comm_ishrink; from Fortran (fnewcomm set, newcomm NULL), the new
 * communicator's Fortran handle goes to *fnewcomm at completion. */
static int ishrink(MPI_Comm comm, MPI_Comm *newcomm, MPI_Fint *fnewcomm, MPI_Request *request)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPIX_Comm_ishrink);
	struct agree_op *o = NULL;
	int rc = MPI_ERR_COMM;

	ftp_resolve(&c, comm);
	if (c.comm && left_out()) { /* the error at completion */
		if (fnewcomm)
			*fnewcomm = MPI_Comm_c2f(MPI_COMM_NULL);
		else
			*newcomm = MPI_COMM_NULL;
		return ftp_post_ireq(&c, FTP_ERR_PROC_FAILED, request, false);
	}
	if (c.comm) {
		o = calloc(1, sizeof *o);
		rc = MPI_ERR_NO_MEM;
	}
	if (o && fnewcomm) {
		o->fnewcomm = fnewcomm;
		newcomm = &o->result;
	}
	if (o && (o->shrinking = shrink_init(&o->s, &c, newcomm)) &&
	    (o->a = agree_start(c.comm, ftp_spare_view_offer(c.comm)))) {
		o->start = ftp_wall_now();
		o->op.progress = ishrink_progress;
		o->op.destroy = agree_op_destroy;
		rc = ftp_op_start(&c, &o->op, request);
	} else if (o) {
		if (o->a == NULL && o->shrinking)
			rc = MPI_ERR_COMM;
		agree_op_destroy(&o->op);
	}
	return ftp_post_plain(&c, rc);
}

FT_EXPORT int MPIX_Comm_ishrink(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
	return ishrink(comm, newcomm, NULL, request);
}
FTP_ALSO_PMPI(MPIX_Comm_ishrink);

int ftp_ishrink_fortran(MPI_Comm comm, MPI_Fint *newcomm, MPI_Request *request)
{
	return ishrink(comm, NULL, newcomm, request);
}
