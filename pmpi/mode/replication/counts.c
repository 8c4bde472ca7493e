/* counts.c: what the survivors of a copy's death exchange so that no
 * message is lost or repeated (PartRePer VI-B): each process that
 * received from the dead copy tells the copy it receives from now how
 * many messages of each tag it matched (ftp_repl_tell_counts), and that
 * copy gives it from its log what it lacks and skips later what it has
 * (ftp_repl_serve_one, ftp_repl_serve_counts), by sends that progress
 * until done (ftp_repl_resends_progress). It owns the message counts and
 * the send log (src/repl_log.h) that p2p.c and recv.c fill. views.c and
 * promote.c call it while they apply a death; setup.c waits for the
 * resends at MPI_Finalize. Application thread. */
#include "ftshim_config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi/mode/replication/counts.h"
#include "pmpi/mode/replication/stream.h"
#include "pmpi/detect.h"
#include "src/log.h"

/* Sends that hand a replica what its dead source's copy would have sent
 * (copies of logged bytes), until done. */
struct resend {
	MPI_Request req;
	int32_t to; /* world rank */
	struct resend *next;
	unsigned char data[];
};

void ftp_repl_resends_progress(bool wait)
{
	for (struct resend **link = &ftp_repl_resends; *link;) {
		struct resend *m = *link;
		int flag = 0;
		uint64_t polls = 0;
		do {
			ftp_mpi.PMPI_Test(&m->req, &flag, MPI_STATUS_IGNORE);
			if (!flag && (ft_proc_is_failed(&ftp.procs, (uint32_t)m->to))) {
				ftp_mpi.PMPI_Cancel(&m->req);
				ftp_mpi.PMPI_Request_free(&m->req);
				flag = 1;
			}
			if (!flag && wait)
				ftp_poll_pause(&polls);
		} while (!flag && wait);
		if (flag) {
			*link = m->next;
			free(m);
		} else {
			link = &m->next;
		}
	}
}

/* The program rank of logical rank l in e, or -1. */
static int prog_rank_of(const struct ftp_comm *e, int32_t l)
{
	const struct ftp_repl_comm *x = ftp_repl_of(e);

	for (uint32_t k = 0; k < x->size; k++) {
		int32_t w = ftp_repl_world_at(e, ftp_repl_lead_of(e, (int)k));
		if (w >= 0 && ftp_repl.plan.logical_of[w] == l)
			return (int)k;
	}
	return -1;
}

/* What a replica tells the primary of a logical rank whose replica died:
 * for each communicator and tag, how many messages from it it matched. */
struct counts_msg {
	uint64_t *v; /* (comm, tag, received) triples */
	size_t n, cap;
	uint64_t comm;
};

static void counts_add(struct ft_msg_counts *n, void *arg)
{
	struct counts_msg *m = arg;

	if (n->comm != m->comm || n->received == 0)
		return;
	if (m->n + 3 > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 48;
		uint64_t *v = realloc(m->v, cap * sizeof *v);
		if (!v)
			return;
		m->v = v;
		m->cap = cap;
	}
	m->v[m->n++] = n->comm;
	m->v[m->n++] = (uint64_t)(uint32_t)n->tag;
	m->v[m->n++] = n->received;
}

/* After a copy of logical rank l died: tell world rank `to`, the copy of
 * l this process receives from now, what it has of l's messages (every
 * pending receive from the dead copy has been settled). */
void ftp_repl_tell_counts(int32_t l, int32_t to)
{
	struct counts_msg m = {0};

	for (size_t i = 0; i < ftp_repl_ncomms; i++) {
		int k = prog_rank_of(ftp_repl_comms[i], l);
		m.comm = ftp_repl_comms[i]->core->id;
		if (k >= 0)
			ft_msg_table_each_peer(&ftp_repl_msg_counts, k, counts_add, &m);
	}
	for (size_t i = 0; i + 2 < m.n; i += 3)
		ft_debug("rank %d's messages of tag %d on communicator %llx: %llu matched here", l,
			 (int)(uint32_t)m.v[i + 1], (unsigned long long)m.v[i],
			 (unsigned long long)m.v[i + 2]);
	int rc = ftp_repl_stream_with(to, true, m.v ? (void *)m.v : (void *)&m.n, (int)m.n,
				      MPI_UINT64_T, TAG_COUNTS, MPI_STATUS_IGNORE);
	ft_debug("replication: told process %d what rank %d's messages matched here (%zu tags): %s",
		 to, l, m.n / 3, rc == MPI_SUCCESS ? "sent" : "not sent");
	free(m.v);
}

/* The surviving copy of this logical rank: hear world rank w's counts
 * (NULL: none are coming: it died or finished); *n entries. */
static uint64_t *hear_counts(int32_t w, size_t *n)
{
	MPI_Status st;
	uint64_t polls = 0;
	int flag = 0, count = 0;

	*n = 0;
	/* Probe first: the size is the sender's. A process that is alive
	 * and on its way tells within moments; one never heard from leaves
	 * this one unable to carry the rank on without a duplicate. */
	uint64_t start = ft_clock_now(), patience = 10 * FT_NSEC_PER_SEC + 4 * ftp.cfg.hb_timeout;
	for (;;) {
		if (ftp_mpi.PMPI_Iprobe(w, TAG_COUNTS, ftp_repl.stream, &flag, &st) != MPI_SUCCESS)
			return NULL;
		if (flag)
			break;
		if (ft_proc_is_failed(&ftp.procs, (uint32_t)w) || ftp_departed((uint32_t)w))
			return NULL;
		if (ft_clock_now() - start > patience) {
			ft_error("rank %d's copy (process %d) heard nothing from process %d about the "
				 "messages it received from rank %d in %.0f s: the job ends",
				 ftp_repl.plan.logical_of[ftp.rank], ftp.rank, w,
				 ftp_repl.plan.logical_of[ftp.rank], (double)patience / 1e9);
			ftp_mpi.PMPI_Abort(ftp.world, 1);
		}
		ftp_poll_pause(&polls);
	}
	ftp_mpi.PMPI_Get_count(&st, MPI_UINT64_T, &count);
	uint64_t *v = malloc(((size_t)count + 1) * sizeof *v);
	if (!v || ftp_mpi.PMPI_Recv(v, count, MPI_UINT64_T, w, TAG_COUNTS, ftp_repl.stream,
				    MPI_STATUS_IGNORE) != MPI_SUCCESS) {
		free(v);
		return NULL;
	}
	*n = (size_t)count / 3;
	ft_debug("replication: process %d matched rank %d's messages of %zu tags", w,
		 ftp_repl.plan.logical_of[ftp.rank], *n);
	return v;
}

/* A copy's report (v: n triples), read for one communicator e, where the
 * copy is real rank `to`, while resending to it. */
struct reported {
	const uint64_t *v;
	size_t n;
	uint64_t comm;
	struct ftp_comm *e;
	int32_t to; /* the copy's real rank in e */
	size_t resent;
	bool failed;
};

static uint64_t reported_of(int32_t tag, void *arg)
{
	const struct reported *r = arg;

	for (size_t i = 0; i < r->n; i++)
		if (r->v[3 * i] == r->comm && (int32_t)(uint32_t)r->v[3 * i + 1] == tag)
			return r->v[3 * i + 2];
	return 0;
}

static void resend_one(const struct ft_logged *m, void *arg)
{
	struct reported *r = arg;
	struct resend *x = malloc(sizeof *x + m->len);

	if (!x || m->len > INT_MAX) {
		free(x);
		r->failed = true;
		return;
	}
	memcpy(x->data, m->data, m->len);
	x->to = ftp_repl_world_at(r->e, r->to);
	if (ftp_mpi.PMPI_Isend(x->data, (int)m->len, MPI_PACKED, r->to, m->tag, r->e->real,
			       &x->req) != MPI_SUCCESS) {
		free(x);
		r->failed = true;
		return;
	}
	x->next = ftp_repl_resends;
	ftp_repl_resends = x;
	r->resent++;
}

/* How many sends to (comm, peer) the copy lacks, per its report; the
 * copy's slot has what it reported, and is skipped for those later. */
struct lack {
	struct reported *r;
	enum ft_copy_slot slot;
	uint64_t missing;
};

static void lack_add(struct ft_msg_counts *n, void *arg)
{
	struct lack *k = arg;

	if (n->comm != k->r->comm)
		return;
	uint64_t have = reported_of(n->tag, k->r);
	ft_debug("rank %d's copy: %llu of tag %d matched there, %llu sent here", n->peer,
		 (unsigned long long)have, n->tag, (unsigned long long)n->sent);
	if (n->sent > have)
		k->missing += n->sent - have;
	/* What it has beyond what was sent, it need not get again. */
	n->skip[k->slot] = have;
}

/* This process's copy of its logical rank died: world rank w, which
 * received from that copy and now receives from this one (in the copy's
 * slot), says what it has; give it from the log what it lacks, and skip
 * later what it has. */
void ftp_repl_serve_one(int32_t w, enum ft_copy_slot slot)
{
	size_t n = 0;
	uint64_t *v = hear_counts(w, &n);
	int32_t j = ftp_repl.plan.logical_of[w];

	for (size_t i = 0; v && i < ftp_repl_ncomms; i++) {
		struct ftp_comm *e = ftp_repl_comms[i];
		int k = prog_rank_of(e, j);
		int32_t to = ftp_repl_copy(e, k, slot);
		if (to < 0)
			continue;
		struct reported r = {.v = v, .n = n, .comm = e->core->id, .e = e, .to = to};
		struct lack lk = {.r = &r, .slot = slot};
		ft_msg_table_each_peer(&ftp_repl_msg_counts, k, lack_add, &lk);
		/* A tag this rank has not sent with yet, which the dead copy
		 * had: skip as many of those sends too. */
		for (size_t t = 0; t < n; t++) {
			if (v[3 * t] != r.comm)
				continue;
			int32_t tag = (int32_t)(uint32_t)v[3 * t + 1];
			if (ft_msg_counts_find(&ftp_repl_msg_counts, r.comm, k, tag))
				continue;
			struct ft_msg_counts *c =
			    ft_msg_counts_get(&ftp_repl_msg_counts, r.comm, k, tag);
			if (c)
				c->skip[slot] = v[3 * t + 2];
		}
		ft_send_log_each_after(&ftp_repl_send_log, r.comm, k, reported_of, resend_one, &r);
		if (r.failed || r.resent != lk.missing) {
			ft_error("rank %d cannot give rank %d's copy (process %d) the %llu message(s) it "
				 "lacks: %zu are still in its log (FTSHIM_REPLICA_LOG_MIB=%llu); the job ends",
				 ftp_repl.plan.logical_of[ftp.rank], j, w, (unsigned long long)lk.missing,
				 r.resent, (unsigned long long)ftp.cfg.replica_log_mib);
			ftp_mpi.PMPI_Abort(ftp.world, 1);
		}
	}
	free(v);
}

/* The primary of a logical rank whose replica died: give every other
 * replica what it lacks of this rank's messages, from the log, and skip
 * later what it has. */
void ftp_repl_serve_counts(int32_t dead)
{
	uint32_t total = ftp_repl.plan.n + ftp_repl.plan.r;

	for (uint32_t w = ftp_repl.plan.n; w < total; w++)
		if ((int32_t)w != dead && !ftp_repl.dropped[w] && !ft_proc_is_failed(&ftp.procs, w))
			ftp_repl_serve_one((int32_t)w, FT_SLOT_REPLICA);
	/* Nobody can need this rank's log again: it has no copy left. */
	ft_send_log_fini(&ftp_repl_send_log);
}
