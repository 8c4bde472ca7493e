/* promote.c: a primary's death while its replica lives (PartRePer's
 * promotion): the processes that received from the primary settle and
 * drop what they had from it and receive from the replica from now on;
 * the replica takes the results its dead primary forwarded (struct fwd,
 * read by coll.c), serves the others from its log (counts.c), and
 * follows what its primary told until the stream runs dry (then it
 * carries on, stream.c). views.c calls ftp_repl_promote as it applies
 * the death. Application thread. */
#include "ftshim_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "pmpi/mode/replication/promote.h"
#include "preload/replica_files.h"
#include "pmpi/mode/replication/coll.h"
#include "pmpi/mode/replication/comm.h"
#include "pmpi/mode/replication/counts.h"
#include "pmpi/mode/replication/p2p.h"
#include "pmpi/mode/replication/recv.h"
#include "pmpi/mode/replication/stream.h"
#include "src/events.h"
#include "src/log.h"

/* Messages the dead primary `dead` sent that no receive here matched:
 * never to be matched now (its replica gives them again), so that no
 * later receive from MPI_ANY_SOURCE takes one. */
static void discard_from(int32_t dead)
{
	for (size_t i = 0; i < ftp_repl_ncomms; i++) {
		struct ftp_comm *e = ftp_repl_comms[i];
		int q = ftp_member_index(e->core, dead);
		/* A few passes of the MPI's progress: what it sent is here. */
		for (int empty = 0; q >= 0 && empty < 4;) {
			MPI_Status st;
			int flag = 0;
			if (ftp_mpi.PMPI_Iprobe(q, MPI_ANY_TAG, e->real, &flag, &st) != MPI_SUCCESS)
				break;
			if (!flag) {
				empty++;
				continue;
			}
			ftp_repl_discard_one(e, &st);
		}
	}
}

/* A promoted replica: receive every result its dead primary forwarded
 * that it has not read (they are all here: ftp_dead_peer_pass), as
 * bytes, to read in program order. They count only as an unbroken run
 * from the first it lacks: one cut short (Open MPI's single copy from
 * the dead sender failed) ends it, and so does the receive it waits in
 * not having its message, which may have been matched and cut short, or
 * stay matched for ever: the ones after it are then dropped, and the
 * rebuilt team runs them all with this process. */
static void fwd_receive(int32_t dead)
{
	for (size_t i = 0; i < ftp_repl_ncomms; i++) {
		struct ftp_repl_comm *x = ftp_repl_of(ftp_repl_comms[i]);
		uint64_t start = ft_clock_now();
		bool cut = false;
		for (uint32_t pass = 0; !cut && ftp_dead_peer_pass(pass, start);) {
			MPI_Status st;
			int flag = 0, len = 0;
			ftp_mpi.PMPI_Iprobe(dead, x->stream_tag, ftp_repl.stream, &flag, &st);
			if (!flag) {
				pass++;
				continue;
			}
			ftp_mpi.PMPI_Get_count(&st, MPI_BYTE, &len);
			struct fwd *f = malloc(sizeof *f + (size_t)(len > 0 ? len : 1));
			if (!f) {
				ft_error("out of memory receiving what a dead primary forwarded: the job ends");
				ftp_mpi.PMPI_Abort(ftp.world, 1);
			}
			f->next = NULL;
			f->len = len;
			if (ftp_mpi.PMPI_Recv(f->data, len, MPI_BYTE, dead, x->stream_tag, ftp_repl.stream,
					      MPI_STATUS_IGNORE) != MPI_SUCCESS) {
				free(f);
				cut = true;
				break;
			}
			*(x->fwd_tail ? &x->fwd_tail->next : &x->fwd_head) = f;
			x->fwd_tail = f;
			x->fwd_count++;
		}
		/* One may have gone to the receive this process waits in:
		 * received too, and ahead of those. */
		int waiting = ftp_repl_stream_recv_state(dead, x->stream_tag);
		x->fwd_in_flight = waiting == STREAM_RECV_DONE;
		if (waiting == STREAM_RECV_PENDING || waiting == STREAM_RECV_CUT)
			ftp_repl_fwd_drop(x);
	}
}

/* Primary `dead` (of logical rank l) died and its replica lives: the
 * replica carries l on. Processes that received from the primary
 * settle what they had from it, tell the replica, and receive from it
 * from now on; the replica gives them from its log what they lack and
 * sends as a single does; every process of the teams rebuilds them. */
void ftp_repl_promote(int32_t dead)
{
	int32_t l = dead, rw = ftp_repl.plan.replica_of[l];
	bool receiver = !ftp_repl_replica_class(); /* received from the dead primary */

	ft_debug("replication: rank %d's primary died; process %d carries it on", l, rw);

	if (receiver) {
		ftp_repl_settle_recvs_from(dead);
		discard_from(dead);
		for (struct peer_recv *p = ftp_repl_recvs_head; p; p = p->next)
			ftp_repl_recv_poll(p);
	}
	ftp_repl.plan.replica_of[l] = -1;
	ftp_repl_view_forget(dead);
	if (receiver) {
		ftp_repl_tell_counts(l, rw);
		ftp_repl_repost_recvs_from(dead);
	} else if (ftp.rank == rw) {
		ftp_repl.copy = FTP_COPY_PROMOTED;
		ftp_repl_files_promote();
		ftp_repl_icolls_promoted(dead);
		fwd_receive(dead);
		for (uint32_t w = 0; w < ftp_repl.plan.n; w++)
			if ((int32_t)w != dead && !ft_proc_is_failed(&ftp.procs, w))
				ftp_repl_serve_one((int32_t)w, FT_SLOT_PRIMARY);
		ft_send_log_fini(&ftp_repl_send_log);
	}
	ftp_repl_rebuild_pending = true;
}
