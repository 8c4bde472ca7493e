/* agree.c: MPIX_Comm_agree and MPIX_Comm_shrink: a uniform,
 * fault-tolerant agreement among the live members of a communicator,
 * carried by the control plane (never MPI, so that a dead member cannot
 * block it), and the shrink built on it.
 *
 * An agreement is numbered per communicator (every member calls them in
 * the same order). Each member sends its contribution (its flag, the
 * members it knows failed, those it has acknowledged) to the coordinator:
 * the member of lowest index it does not know failed. The coordinator
 * waits for every member it does not know failed, then decides the
 * bitwise AND of the flags received, the union of the failures reported
 * (and of those it knows), and whether every one of those was acknowledged
 * by every contributor; it sends the decision to every live member.
 *
 * If the coordinator dies, the members send their contributions to the
 * next one. A new coordinator (any but index 0) first asks every member
 * for a decision it may hold: a decision that reached anyone alive is
 * adopted and sent on, so every survivor returns the same result even
 * when the coordinator dies half-way through sending it. Decisions are
 * kept after the call returns, to answer such questions.
 *
 * The protocol runs on the detector thread (the control plane's messages
 * and the failures it learns); the application thread only starts an
 * agreement and waits for its decision, or, for MPIX_Comm_iagree and
 * MPIX_Comm_ishrink, hands it to a request that pmpi/ops.c completes. */
#include "ftshim_config.h"


#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi/call.h"
#include "pmpi/requests.h"
#include "pmpi/ulfm.h"
#include "src/clock.h"
#include "src/log.h"

/* Decisions kept per communicator for late questions. */
#define KEEP_DECIDED 64

struct agreement {
	uint64_t id;          /* the communicator's job-wide id */
	uint32_t seq;         /* the agreement's number on it */
	uint32_t n;           /* members (both groups) */
	/* as a participant */
	bool joined;          /* this process called it */
	bool wanted;          /* its caller has not taken the decision yet */
	uint64_t checked_ns;  /* when agree_take last looked at the coordinator */
	uint32_t my_value;
	uint8_t *my_bits;     /* 2 * bytes(n): failed, then acknowledged */
	uint32_t sent_to;     /* the member index the contribution went to */
	bool decided;
	uint32_t value;
	int rc;
	uint8_t *decided_failed; /* bytes(n) */
	/* as the coordinator */
	uint8_t *got;         /* bytes(n): contributions received */
	uint32_t and_value;
	uint8_t *failed;      /* bytes(n): union of failures reported */
	uint8_t *acked;       /* bytes(n): intersection of acknowledgements */
	bool asked;           /* asked everyone for a decision (took over) */
	struct agreement *next;
};

/* Every agreement this process knows: the application thread(s) and the
 * detector thread, under lock. A waiting caller sleeps on the host
 * mailbox's doorbell (pmpi/hostmail.c), which a decision moves. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct agreement *all;

static size_t nbytes(uint32_t n)
{
	return (n + 7) / 8;
}

static bool bit(const uint8_t *b, uint32_t i)
{
	return b[i / 8] & (1u << (i % 8));
}

static void set_bit(uint8_t *b, uint32_t i)
{
	b[i / 8] |= (uint8_t)(1u << (i % 8));
}

/* The members' state and our index, for a communicator we hold, by id. */
struct view {
	uint32_t n, self;
	int32_t *members; /* a copy, in the agreement's order */
};

/* The order every member uses for agreements (and their bitmaps): an
 * intercommunicator's two groups each list their own group first, so the
 * group whose first member has the lower world rank goes first, as it
 * does on the other side. Whether that puts core's remote group first: */
static bool remote_group_first(const struct ft_comm *core)
{
	return core->remote_size && core->members[core->local_size] < core->members[0];
}

/* The members of core in that order. */
static void agreement_order(const struct ft_comm *core, int32_t *out)
{
	uint32_t nl = core->local_size, nr = core->remote_size;

	if (remote_group_first(core)) {
		memcpy(out, core->members + nl, nr * sizeof *out);
		memcpy(out + nr, core->members, nl * sizeof *out);
	} else {
		memcpy(out, core->members, (nl + nr) * sizeof *out);
	}
}

static void copy_view(struct ft_comm *core, void *arg)
{
	struct view *v = arg;

	v->n = core->local_size + core->remote_size;
	v->members = malloc((v->n + 1) * sizeof *v->members);
	if (!v->members)
		return;
	agreement_order(core, v->members);
	v->self = UINT32_MAX;
	for (uint32_t i = 0; i < v->n; i++)
		if (v->members[i] == ftp.rank)
			v->self = i;
}

static bool get_view(uint64_t id, struct view *v)
{
	memset(v, 0, sizeof *v);
	if (!ft_comm_registry_with(&ftp.comms, id, copy_view, v) || !v->members)
		return false;
	if (v->self == UINT32_MAX) {
		free(v->members);
		return false;
	}
	return true;
}

/* A member re-admitted since it failed (FTSHIM_READMIT) stays out of
 * agreements on the communicators that had it. */
static bool member_failed(const struct view *v, uint32_t i)
{
	return ft_proc_ever_failed(&ftp.procs, (uint32_t)v->members[i]);
}

/* A rank re-admitted itself takes part in no agreement: the others went
 * on without it in every communicator it was in. */
static bool left_out(void)
{
	return ft_proc_ever_failed(&ftp.procs, (uint32_t)ftp.rank);
}

/* The coordinator: the lowest index this process does not know failed. */
static uint32_t coordinator(const struct view *v)
{
	for (uint32_t i = 0; i < v->n; i++)
		if (!member_failed(v, i))
			return i;
	return UINT32_MAX;
}

static struct agreement *find(uint64_t id, uint32_t seq)
{
	for (struct agreement *a = all; a; a = a->next)
		if (a->id == id && a->seq == seq)
			return a;
	return NULL;
}

static void destroy(struct agreement *a)
{
	free(a->my_bits);
	free(a->decided_failed);
	free(a->got);
	free(a->failed);
	free(a->acked);
	free(a);
}

/* Under lock. */
static struct agreement *get(uint64_t id, uint32_t seq, uint32_t n)
{
	struct agreement *a = find(id, seq);

	if (a)
		return a;
	a = calloc(1, sizeof *a);
	if (!a)
		return NULL;
	size_t b = nbytes(n);
	a->my_bits = calloc(2, b + 1);
	a->decided_failed = calloc(1, b + 1);
	a->got = calloc(1, b + 1);
	a->failed = calloc(1, b + 1);
	a->acked = malloc(b + 1);
	if (!a->my_bits || !a->decided_failed || !a->got || !a->failed || !a->acked) {
		destroy(a);
		return NULL;
	}
	memset(a->acked, 0xff, b + 1);
	a->id = id;
	a->seq = seq;
	a->n = n;
	a->and_value = UINT32_MAX;
	a->sent_to = UINT32_MAX;
	a->next = all;
	all = a;
	/* Forget old decisions of this communicator. */
	for (struct agreement **p = &all; *p;) {
		struct agreement *o = *p;
		if (o->id == id && o->decided && !o->wanted && o->seq + KEEP_DECIDED < seq) {
			*p = o->next;
			destroy(o);
		} else {
			p = &o->next;
		}
	}
	return a;
}

static void post(const struct view *v, uint32_t to, uint16_t kind, const struct agreement *a,
		 uint32_t value, const uint8_t *data, uint32_t len)
{
	struct ft_msg m = { .type = FT_MSG_APP };

	m.app.key = a->id;
	m.app.seq = a->seq;
	m.app.kind = kind;
	m.app.value = value;
	m.app.len = len;
	m.app.data = data;
	if (!ftp_hostmail_post((uint32_t)v->members[to], &m))
		ftp_detect_post((uint32_t)v->members[to], &m);
}

static void on_contribution(struct agreement *a, const struct view *v, uint32_t from,
			    const struct ft_msg *m);

/* CONTRIB data: u32 n, then the failed and acknowledged bitmaps. DECIDE
 * data: u32 n, u32 rc, then the failed bitmap. */
static void send_contribution(struct agreement *a, const struct view *v)
{
	size_t b = nbytes(a->n);
	uint8_t *d = malloc(4 + 2 * b);
	uint32_t to = coordinator(v);

	if (!d || to == UINT32_MAX) {
		free(d);
		return;
	}
	memcpy(d, &a->n, 4);
	memcpy(d + 4, a->my_bits, 2 * b);
	a->sent_to = to;
	if (to == v->self) {
		/* Its own contribution, taken here (under lock) rather than
		 * sent round through the detector thread. */
		struct ft_msg m = { .type = FT_MSG_APP, .from = (uint32_t)ftp.rank };
		m.app.key = a->id;
		m.app.seq = a->seq;
		m.app.kind = FTP_APP_AGREE_CONTRIB;
		m.app.value = a->my_value;
		m.app.len = (uint32_t)(4 + 2 * b);
		m.app.data = d;
		on_contribution(a, v, to, &m);
	} else {
		post(v, to, FTP_APP_AGREE_CONTRIB, a, a->my_value, d, (uint32_t)(4 + 2 * b));
	}
	free(d);
}

static void send_decision(struct agreement *a, const struct view *v, uint32_t to)
{
	size_t b = nbytes(a->n);
	uint8_t *d = malloc(8 + b);
	uint32_t rc = (uint32_t)a->rc;

	if (!d)
		return;
	memcpy(d, &a->n, 4);
	memcpy(d + 4, &rc, 4);
	memcpy(d + 8, a->decided_failed, b);
	post(v, to, FTP_APP_AGREE_DECIDE, a, a->value, d, (uint32_t)(8 + b));
	free(d);
}

static void broadcast_decision(struct agreement *a, const struct view *v)
{
	for (uint32_t i = 0; i < v->n; i++)
		if (i != v->self && !member_failed(v, i))
			send_decision(a, v, i);
}

static void set_decided(struct agreement *a, uint32_t value, int rc, const uint8_t *failed)
{
	a->decided = true;
	a->value = value;
	a->rc = rc;
	memcpy(a->decided_failed, failed, nbytes(a->n));
	ftp_hostmail_wake_self();
}

/* As the coordinator: decide once every live member has contributed. A
 * coordinator other than index 0 first asks everyone for a decision.
 * Under lock. */
static void try_decide(struct agreement *a, const struct view *v)
{
	if (a->decided || coordinator(v) != v->self || !a->joined)
		return;
	if (v->self != 0 && !a->asked) {
		a->asked = true;
		for (uint32_t i = 0; i < v->n; i++)
			if (i != v->self && !member_failed(v, i))
				post(v, i, FTP_APP_AGREE_ASK, a, 0, NULL, 0);
	}
	for (uint32_t i = 0; i < v->n; i++)
		if (!bit(a->got, i) && !member_failed(v, i))
			return;
	size_t b = nbytes(a->n);
	uint8_t *failed = calloc(1, b + 1);
	if (!failed)
		return;
	int rc = MPI_SUCCESS;
	for (uint32_t i = 0; i < a->n; i++) {
		if (bit(a->failed, i) || member_failed(v, i))
			set_bit(failed, i);
		if (bit(failed, i) && !bit(a->acked, i))
			rc = FTP_ERR_PROC_FAILED;
	}
	set_decided(a, a->and_value, rc, failed);
	free(failed);
	broadcast_decision(a, v);
}

static void on_contribution(struct agreement *a, const struct view *v, uint32_t from,
			    const struct ft_msg *m)
{
	size_t b = nbytes(a->n);

	if (m->app.len != 4 + 2 * b)
		return;
	if (a->decided) {
		send_decision(a, v, from); /* late, or asking again */
		return;
	}
	if (!bit(a->got, from)) {
		set_bit(a->got, from);
		a->and_value &= m->app.value;
		for (size_t i = 0; i < b; i++) {
			a->failed[i] |= m->app.data[4 + i];
			a->acked[i] &= m->app.data[4 + b + i];
		}
	}
	try_decide(a, v);
}

static void on_decision(struct agreement *a, const struct view *v, const struct ft_msg *m)
{
	size_t b = nbytes(a->n);
	uint32_t rc;

	if (m->app.len != 8 + b || a->decided)
		return;
	memcpy(&rc, m->app.data + 4, 4);
	set_decided(a, m->app.value, (int)rc, m->app.data + 8);
	/* A coordinator that took over adopts a decision someone held, and
	 * makes sure every live member gets it. */
	if (coordinator(v) == v->self)
		broadcast_decision(a, v);
}

/* Messages about a communicator this process has not made yet (MPI does
 * not order creation across processes): kept, and replayed when it is
 * made. Under held_lock; at most MAX_HELD, the oldest dropped first. */
#define MAX_HELD 4096

struct held {
	struct held *next;
	struct ft_msg m;
	uint8_t data[];
};

static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static struct held *held, **held_tail = &held;
static uint32_t nheld;

static void hold(const struct ft_msg *m)
{
	struct held *h = malloc(sizeof *h + m->app.len);

	if (!h)
		return;
	h->next = NULL;
	h->m = *m;
	memcpy(h->data, m->app.data, m->app.len);
	h->m.app.data = h->data;
	pthread_mutex_lock(&held_lock);
	*held_tail = h;
	held_tail = &h->next;
	if (++nheld > MAX_HELD) {
		struct held *old = held;
		held = old->next;
		if (!held)
			held_tail = &held;
		nheld--;
		free(old);
	}
	pthread_mutex_unlock(&held_lock);
}

void ftp_agree_on_create(uint64_t id)
{
	struct held *mine = NULL, **tail = &mine;

	pthread_mutex_lock(&held_lock);
	for (struct held **p = &held; *p;) {
		struct held *h = *p;
		if (h->m.app.key == id) {
			*p = h->next;
			h->next = NULL;
			*tail = h;
			tail = &h->next;
			nheld--;
		} else {
			p = &h->next;
		}
	}
	held_tail = &held;
	while (*held_tail)
		held_tail = &(*held_tail)->next;
	pthread_mutex_unlock(&held_lock);
	while (mine) {
		struct held *next = mine->next;
		ftp_agree_on_msg(&mine->m);
		free(mine);
		mine = next;
	}
}

void ftp_agree_on_msg(const struct ft_msg *m)
{
	struct view v;
	uint32_t n;

	if (!get_view(m->app.key, &v)) {
		hold(m);
		/* The communicator may have appeared meanwhile, its replay
		 * done before this message was held: look again. */
		if (get_view(m->app.key, &v)) {
			free(v.members);
			ftp_agree_on_create(m->app.key);
		}
		return;
	}
	memcpy(&n, m->app.len >= 4 ? m->app.data : (const uint8_t *)&v.n, 4);
	uint32_t from = UINT32_MAX;
	for (uint32_t i = 0; i < v.n; i++)
		if ((uint32_t)v.members[i] == m->from)
			from = i;
	if (from == UINT32_MAX || (m->app.len >= 4 && n != v.n)) {
		free(v.members);
		return;
	}
	pthread_mutex_lock(&lock);
	struct agreement *a = get(m->app.key, m->app.seq, v.n);
	if (a) {
		switch (m->app.kind) {
		case FTP_APP_AGREE_CONTRIB:
			on_contribution(a, &v, from, m);
			break;
		case FTP_APP_AGREE_DECIDE:
			on_decision(a, &v, m);
			break;
		case FTP_APP_AGREE_ASK:
			if (a->decided)
				send_decision(a, &v, from);
			else if (a->joined)
				send_contribution(a, &v);
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	free(v.members);
}

/* A process failed: contributions sent to a dead coordinator go to the
 * next one, and a coordinator may now have all it waits for. */
void ftp_agree_on_failure(void)
{
	pthread_mutex_lock(&lock);
	for (struct agreement *a = all; a; a = a->next) {
		struct view v;
		if (a->decided || !get_view(a->id, &v))
			continue;
		if (a->joined && a->sent_to != UINT32_MAX && member_failed(&v, a->sent_to))
			send_contribution(a, &v);
		try_decide(a, &v);
		free(v.members);
	}
	pthread_mutex_unlock(&lock);
}

/* Start the next agreement of the communicator e with this process's
 * value: contribute, and return it (kept until agree_take has taken its
 * decision), or NULL if e is not known or memory ran out. */
static struct agreement *agree_start(struct ftp_comm *e, uint32_t value)
{
	struct view v;
	uint32_t seq = atomic_fetch_add_explicit(&e->agree_seq, 1, memory_order_relaxed);

	if (!get_view(e->core->id, &v))
		return NULL;
	size_t b = nbytes(v.n);
	uint32_t acked_upto = atomic_load_explicit(&e->acked, memory_order_acquire);
	pthread_mutex_lock(&lock);
	struct agreement *a = get(e->core->id, seq, v.n);
	if (a) {
		a->joined = true;
		a->wanted = true;
		a->my_value = value;
		for (uint32_t i = 0; i < v.n; i++) {
			if (member_failed(&v, i))
				set_bit(a->my_bits, i);
			/* Acknowledged: among the first acked_upto failures learned. */
			for (uint32_t k = 0; k < acked_upto; k++)
				if (ftp.procs.order[k] == v.members[i])
					set_bit(a->my_bits + b, i);
		}
		send_contribution(a, &v);
		a->checked_ns = ft_clock_now();
	}
	pthread_mutex_unlock(&lock);
	free(v.members);
	return a;
}

/* Under lock: if a is decided, take the decision (*value, *rc and, when
 * failed is not NULL, the failed members into room for bytes(n)) and let
 * the agreement be forgotten in time; true then. While it is not, and at
 * most every 50 ms, re-send the contribution if its coordinator is known
 * dead (in case that death was learned without a message). */
static bool agree_take(struct agreement *a, uint32_t *value, uint8_t *failed, int *rc)
{
	if (!a->decided) {
		uint64_t now = ft_clock_now();
		if (now - a->checked_ns < 50 * 1000 * 1000)
			return false;
		a->checked_ns = now;
		struct view v;
		if (a->sent_to != UINT32_MAX && get_view(a->id, &v)) {
			if (member_failed(&v, a->sent_to))
				send_contribution(a, &v);
			free(v.members);
		}
		return false;
	}
	*value = a->value;
	*rc = a->rc;
	if (failed)
		memcpy(failed, a->decided_failed, nbytes(a->n));
	a->wanted = false;
	return true;
}

/* Run the next agreement of e with *value and wait for the decision.
 * Returns its rc; *value and (when failed is not NULL) the failed members
 * (a bitmap in agreement_order) are filled in.
 *
 * The caller takes the messages of this host's ranks from the mailbox
 * itself while it waits, and yields a few times before it sleeps: the
 * decision comes within a few of the others' time slices when they are
 * in the same call. Asleep, it wakes on the doorbell (mail, or a decision
 * the detector thread took) or every 5 ms to run the MPI's progress: a
 * survivor's passive-target lock on this rank's window is granted only by
 * this rank's MPI (MPICH), and that survivor may be what the agreement
 * waits for. */
static int agree_run(struct ftp_comm *e, uint32_t *value, uint8_t *failed)
{
	struct agreement *a = agree_start(e, *value);
	int rc = MPI_SUCCESS;

	if (!a)
		return MPI_ERR_COMM;
	ftp_hostmail_listen(true);
	for (uint32_t idle = 0;; idle++) {
		uint32_t seen = ftp_hostmail_doorbell();
		ftp_hostmail_drain();
		pthread_mutex_lock(&lock);
		bool done = agree_take(a, value, failed, &rc);
		pthread_mutex_unlock(&lock);
		if (done)
			break;
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

	if (rc == MPI_SUCCESS)
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

/* What a shrink of an n-member communicator needs after its agreement. */
struct shrink {
	struct ftp_call call; /* the shrink's call, resolved */
	uint32_t n;           /* members, both groups of an intercommunicator */
	uint8_t *failed;      /* bytes(n): the agreed failures, in agreement order */
	int *ranks;           /* room for n */
	MPI_Comm *newcomm;
};

static bool shrink_init(struct shrink *s, const struct ftp_call *c, MPI_Comm *newcomm)
{
	s->call = *c;
	s->n = c->comm->core->local_size + c->comm->core->remote_size;
	s->failed = calloc(1, nbytes(s->n) + 1);
	s->ranks = malloc((s->n + 1) * sizeof *s->ranks);
	s->newcomm = newcomm;
	if (s->failed && s->ranks)
		return true;
	free(s->failed);
	free(s->ranks);
	s->failed = NULL;
	s->ranks = NULL;
	return false;
}

static void shrink_fini(struct shrink *s)
{
	free(s->failed);
	free(s->ranks);
}

/* Whether member j of the local group (or, if remote, of the remote
 * group) is among the agreed failures (see agreement_order). */
static bool agreed_failed(const struct shrink *s, bool remote, uint32_t j)
{
	const struct ft_comm *core = s->call.comm->core;
	uint32_t nl = core->local_size, nr = core->remote_size;
	bool swapped = remote_group_first(core);
	uint32_t i = remote ? (swapped ? j : nl + j) : (swapped ? nr + j : j);

	return bit(s->failed, i);
}

/* s->ranks: the world ranks of the local group's survivors, in order, then
 * the remote group's; *nlocal, *nremote their numbers. false if one of
 * them has died since the agreement. */
static bool survivors(struct shrink *s, uint32_t *nlocal, uint32_t *nremote)
{
	const struct ft_comm *core = s->call.comm->core;
	uint32_t k = 0;

	for (int g = 0; g < 2; g++) {
		uint32_t first = g ? core->local_size : 0;
		uint32_t count = g ? core->remote_size : core->local_size;
		for (uint32_t j = 0; j < count; j++) {
			int32_t w = core->members[first + j];
			if (agreed_failed(s, g == 1, j))
				continue;
			if (ft_proc_ever_failed(&ftp.procs, (uint32_t)w))
				return false;
			s->ranks[k++] = w;
		}
		if (g == 0)
			*nlocal = k;
	}
	*nremote = k - *nlocal;
	return true;
}

/* The group is made from comm's own (MPICH 4.0's MPI_Comm_create_group
 * crashes on the same processes taken from MPI_COMM_WORLD's group). */
int ftp_create_group_of(MPI_Comm comm, const int32_t *world, uint32_t n, int tag, enum ftp_fn fn,
			MPI_Comm *out)
{
	MPI_Group parent = MPI_GROUP_NULL, group = MPI_GROUP_NULL, named = MPI_GROUP_NULL;
	int *ranks = malloc((n + 1) * sizeof *ranks), *idx = malloc((n + 1) * sizeof *idx);

	if (!ranks || !idx) {
		free(ranks);
		free(idx);
		return MPI_ERR_NO_MEM;
	}
	for (uint32_t i = 0; i < n; i++)
		idx[i] = (int)i;
	ftp_mpi.PMPI_Comm_group(comm, &parent);
	if (ftp_group_of_jobs(world, (int)n, &named) == MPI_SUCCESS &&
	    ftp_mpi.PMPI_Group_translate_ranks(named, (int)n, idx, parent, ranks) == MPI_SUCCESS)
		ftp_mpi.PMPI_Group_incl(parent, (int)n, ranks, &group);
	free(ranks);
	free(idx);
	if (named != MPI_GROUP_NULL)
		ftp_mpi.PMPI_Group_free(&named);
	ftp_mpi.PMPI_Group_free(&parent);
	if (group == MPI_GROUP_NULL)
		return MPI_ERR_INTERN;
	ftp_hang_watch_begin(fn, world, n);
	int rc = ftp_mpi.PMPI_Comm_create_group(comm, group, tag, out);
	ftp_hang_watch_end();
	ftp_mpi.PMPI_Group_free(&group);
	return rc;
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
		rc = ftp_mpi.PMPI_Intercomm_create(local, 0, ftp.private_world, s->ranks[nlocal] - ftp.world_base,
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

/* After the agreement on s->failed: build the communicator of the others
 * and return the MPI's result, or return -1 if one of them has died since
 * (agree again then, so that nobody enters the creation with a member it
 * knows dead). */
static int shrink_build(struct shrink *s)
{
	uint32_t nalive = 0, nremote = 0;

	if (!survivors(s, &nalive, &nremote))
		return -1;
	if (s->call.comm->core->remote_size)
		return shrink_build_inter(s, nalive, nremote);
	int rc = ftp_create_group_of(s->call.real, s->ranks, nalive, SHRINK_TAG, s->call.fn, s->newcomm);
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
	for (;;) {
		uint32_t value = 1;
		memset(s.failed, 0, nbytes(s.n));
		if (agree_run(c->comm, &value, s.failed) == MPI_ERR_COMM)
			break;
		if (survivors(&s, n, &nremote)) {
			for (uint32_t i = 0; i < *n; i++)
				alive[i] = s.ranks[i];
			rc = MPI_SUCCESS;
			break;
		}
	}
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
	do {
		uint32_t value = 1;
		memset(s.failed, 0, nbytes(s.n));
		/* Its code says whether failures were acknowledged, which
		 * does not matter here. */
		if (agree_run(c.comm, &value, s.failed) == MPI_ERR_COMM) {
			rc = MPI_ERR_COMM;
			break;
		}
	} while ((rc = shrink_build(&s)) == -1);
	record_shrink("shrink", c.comm, *newcomm, rc, start);
	shrink_fini(&s);
	return ftp_post_plain(&c, rc);
}
FTP_ALSO_PMPI(MPIX_Comm_shrink);

/* --- the nonblocking forms (requests completed by pmpi/ops.c) ------------- */

struct agree_op {
	struct ftp_op op;
	struct agreement *a;
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
	pthread_mutex_lock(&lock);
	bool done = agree_take(o->a, &value, NULL, &op->rc);
	pthread_mutex_unlock(&lock);
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
 * every survivor, runs in whichever completion call or waiting loop of
 * this process comes next once it is decided. */
static bool ishrink_progress(struct ftp_op *op)
{
	struct agree_op *o = (struct agree_op *)op;
	uint32_t value;
	int rc;

	ftp_hostmail_drain();
	pthread_mutex_lock(&lock);
	bool decided = agree_take(o->a, &value, o->s.failed, &rc);
	pthread_mutex_unlock(&lock);
	if (!decided)
		return false;
	op->rc = shrink_build(&o->s);
	if (op->rc != -1) {
		record_shrink("ishrink", o->s.call.comm, *o->s.newcomm, op->rc, o->start);
	} else {
		memset(o->s.failed, 0, nbytes(o->s.n));
		o->a = agree_start(o->s.call.comm, 1);
		if (o->a)
			return false;
		op->rc = MPI_ERR_COMM;
	}
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
	    (o->a = agree_start(c.comm, 1))) {
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
