/* ckpt_watch.c: a checkpoint that not every rank calls (ckpt_watch.h).
 *
 * Sharing: peer_entered (one count per job rank) is written by the
 * listener on the detector thread (or a thread taking the host's mail)
 * and read by the application thread; it is published once, with
 * release, at start. world_epoch is the repair of the world the counts
 * are of, written by the application thread; a message of another
 * world's is dropped. ftp_ckpt_entered is the application thread's. */
#include "ftshim_config.h"

#include <stdlib.h>

#include "pmpi/ckpt_watch.h"
#include "pmpi/call_record.h"
#include "pmpi/detect.h"
#include "pmpi/errors.h"
#include "pmpi/hostmail.h"
#include "pmpi/mode/mode.h"
#include "pmpi/mpi_lib.h"
#include "pmpi/ranks.h"
#include "pmpi/state.h"
#include "src/clock.h"
#include "src/log.h"

_Atomic uint64_t ftp_ckpt_peer_max;
uint64_t ftp_ckpt_entered;
static _Atomic(_Atomic uint32_t *) peer_entered;
static _Atomic uint32_t world_epoch;

void ftp_ckpt_watch_start(uint32_t total)
{
	_Atomic uint32_t *entered = calloc(total, sizeof *entered);

	if (entered)
		atomic_store_explicit(&peer_entered, entered, memory_order_release);
}

void ftp_ckpt_watch_world(uint32_t epoch)
{
	_Atomic uint32_t *entered = atomic_load_explicit(&peer_entered, memory_order_acquire);

	atomic_store_explicit(&world_epoch, epoch, memory_order_relaxed);
	for (uint32_t j = 0; entered && j < (uint32_t)ftp.world_size; j++)
		atomic_store_explicit(&entered[j], 0, memory_order_relaxed);
	atomic_store_explicit(&ftp_ckpt_peer_max, 0, memory_order_relaxed);
	ftp_ckpt_entered = 0;
}

/* Detector thread (or one taking the host's mail). */
static void on_ckpt_msg(const struct ft_msg *m)
{
	_Atomic uint32_t *entered = atomic_load_explicit(&peer_entered, memory_order_acquire);

	if (!entered || m->from >= (uint32_t)ftp.world_size ||
	    m->app.key != atomic_load_explicit(&world_epoch, memory_order_relaxed))
		return;
	atomic_store_explicit(&entered[m->from], m->app.value, memory_order_relaxed);
	uint64_t max = atomic_load_explicit(&ftp_ckpt_peer_max, memory_order_relaxed);
	while (m->app.value > max &&
	       !atomic_compare_exchange_weak_explicit(&ftp_ckpt_peer_max, &max, m->app.value,
						      memory_order_relaxed, memory_order_relaxed))
		;
}

const struct ftp_listener ftp_ckpt_listener = {
	.on_msg = on_ckpt_msg,
	.kinds = 1u << FTP_APP_CKPT,
};

void ftp_ckpt_watch_enter(const int32_t *holder, uint32_t n)
{
	struct ft_msg m = { .type = FT_MSG_APP };

	ftp_ckpt_entered++;
	m.app.key = atomic_load_explicit(&world_epoch, memory_order_relaxed);
	m.app.kind = FTP_APP_CKPT;
	m.app.value = (uint32_t)ftp_ckpt_entered;
	for (uint32_t r = 0; r < n; r++) {
		uint32_t to = (uint32_t)holder[r];
		if ((int32_t)to != ftp.rank && !ftp_hostmail_post(to, &m))
			ftp_detect_post(to, &m);
	}
}

/* Job rank j waits in a checkpoint this rank has not entered. */
static bool ahead(int32_t j)
{
	_Atomic uint32_t *entered = atomic_load_explicit(&peer_entered, memory_order_acquire);

	return entered && j >= 0 && j < ftp.world_size && j != ftp.rank &&
	       atomic_load_explicit(&entered[j], memory_order_relaxed) > ftp_ckpt_entered;
}

int32_t ftp_ckpt_waited_on(const struct ftp_call *c)
{
	int32_t j = -1;

	if (!c->comm)
		return -1;
	if (c->watch.kind == FTP_WATCH_PEER) {
		int32_t peer = ftp_job_at(c->comm, c->watch.rank);
		if (ahead(peer))
			j = peer;
	} else if (c->watch.kind == FTP_WATCH_ALL) {
		const int32_t *members = ftp_member_jobs(c->comm->core);
		for (uint32_t i = 0; members && i < c->comm->core->local_size && j < 0; i++)
			if (ahead(members[i]))
				j = members[i];
	}
	return j;
}

void ftp_ckpt_check_waiting(const struct ftp_call *c, int32_t j)
{
	/* The call found waiting on such a rank, and since when: a message
	 * the rank sent before it entered may still be on its way. */
	static const struct ftp_call *suspect;
	static uint64_t since;

	uint64_t now = ft_clock_now();
	if (j < 0 || suspect != c) {
		suspect = j < 0 ? NULL : c;
		since = now;
		return;
	}
	if (now - since < FT_NSEC_PER_SEC)
		return;
	_Atomic uint32_t *entered = atomic_load_explicit(&peer_entered, memory_order_acquire);
	ft_error("ftshim_checkpoint: rank %d waits in %s on rank %d, which waits in ftshim_checkpoint (its "
		 "checkpoint %u) for this rank; every rank of MPI_COMM_WORLD must call it: ending the job",
		 ftp_mode_program_rank(ftp.rank), ftp_fn_name(c->fn), ftp_mode_program_rank(j),
		 atomic_load_explicit(&entered[j], memory_order_relaxed));
	ftp_detect_abort(1);
	ftp_mpi.PMPI_Abort(ftp.world, 1);
}

void ftp_ckpt_check_wait(const struct ftp_call *c)
{
	ftp_ckpt_check_waiting(c, ftp_ckpt_waited_on(c));
}
