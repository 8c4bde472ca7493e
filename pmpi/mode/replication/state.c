/* state.c: replication's state, defined here, below every file of the
 * folder that reads or writes it (state.h says who writes and reads
 * each): the plan and this process's copy, the
 * replicated communicators, the pending receives, the message counts
 * and send log, the resends under way, a replica's saved terminal, and
 * the flags of a view change; and what every file asks of them: whether
 * a copy is covered, this process's rank in a communicator, a topology
 * made, forwarded results freed. */
#include "ftshim_config.h"

#include <stdlib.h>
#include <string.h>

#include "pmpi/mode/replication/state.h"

struct ftp_replication ftp_repl = {.partner = -1, .stream = MPI_COMM_NULL};

/* Every replicated communicator this process holds: ftp_repl_derive adds
 * them, ftp_repl_release removes them. */
struct ftp_comm **ftp_repl_comms;
size_t ftp_repl_ncomms;

/* The pending receives, in posting order. */
struct peer_recv *ftp_repl_recvs_head;

/* What this process counted of its messages on replicated communicators
 * and, a primary, the bytes of its latest sends to replicated ranks
 * (src/repl_log.h). */
struct ft_msg_table ftp_repl_msg_counts;
struct ft_send_log ftp_repl_send_log;

/* Sends that hand a replica what its dead source's copy would have sent
 * (counts.c), until done. */
struct resend *ftp_repl_resends;

/* A replica's stdout and stderr as they were, before they went to the
 * run directory (-1: not moved): setup.c sets them, ftp_repl_carry_on
 * (stream.c) puts them back. */
int ftp_repl_terminal_fd[2] = {-1, -1};

/* Set while a view change runs (views.c); a promotion was applied and
 * the teams are to be rebuilt once every death known is (promote.c). */
bool ftp_repl_in_views;
bool ftp_repl_rebuild_pending;

bool ftp_repl_covered(int32_t w)
{
	if (ftp_repl.r == 0 || !ftp_repl.copy_of || w < 0 ||
	    (uint32_t)w >= ftp_repl.plan.n + ftp_repl.plan.r)
		return false;
	int32_t other = ftp_repl.copy_of[w];
	return other >= 0 && !ft_proc_ever_failed(&ftp.procs, (uint32_t)other);
}

/* The logical rank of this process in e's communicator: a replica's is
 * its primary's. */
int ftp_repl_my_rank_in(const struct ftp_comm *e)
{
	int me = -1;

	ftp_mpi.PMPI_Comm_rank(e->real, &me);
	ftp_rank_out(e, &me);
	return me;
}

struct ftp_repl_topo *ftp_repl_topo_new(int kind, int n, int m, bool weighted, size_t len)
{
	struct ftp_repl_topo *t = malloc(sizeof *t + len * sizeof t->v[0]);

	if (t)
		*t = (struct ftp_repl_topo){.kind = kind, .n = n, .m = m, .weighted = weighted, .len = len};
	return t;
}

struct ftp_repl_topo *ftp_repl_topo_copy(const struct ftp_repl_topo *t)
{
	struct ftp_repl_topo *c = t ? ftp_repl_topo_new(t->kind, t->n, t->m, t->weighted, t->len) : NULL;

	if (c)
		memcpy(c->v, t->v, t->len * sizeof t->v[0]);
	return c;
}

void ftp_repl_fwd_drop(struct ftp_repl_comm *x)
{
	while (x->fwd_head) {
		struct fwd *f = x->fwd_head;
		x->fwd_head = f->next;
		free(f);
	}
	x->fwd_tail = NULL;
	x->fwd_count = 0;
}
