/* state.c: replication's state, defined here, below every file of the
 * folder that reads or writes it (internal.h and replica.h say who
 * writes and reads each): the plan and this process's copy, the
 * replicated communicators, the pending receives, the message counts
 * and send log, the resends under way, a replica's saved terminal, and
 * the flags of a view change. */
#include "ftshim_config.h"

#include "pmpi/mode/replication/internal.h"

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
 * (promote.c) puts them back. */
int ftp_repl_terminal_fd[2] = {-1, -1};

/* Set while a view change runs (views.c); a promotion was applied and
 * the teams are to be rebuilt once every death known is (promote.c). */
bool ftp_repl_in_views;
bool ftp_repl_rebuild_pending;
