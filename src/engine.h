/* engine.h: the detector thread. It owns the control-plane sockets, moves
 * frames between them and the detector's state machine (src/detector.h),
 * keeps time, and reports what the detector learns through hooks. It
 * never calls MPI.
 *
 * Sharing: the application thread starts and finishes the engine; in
 * between it only reads the statistics (atomics). The hooks run on the
 * detector thread. */
#ifndef FTSHIM_ENGINE_H
#define FTSHIM_ENGINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "src/detector.h"
#include "src/frame.h"
#include "src/overlay.h"

struct ft_engine;

/* A process of this host, named as /proc names it (its start time in
 * clock ticks, src/prune.h), so that a reused pid is never mistaken for it. */
struct ft_local_proc {
	int32_t pid;
	uint64_t start_ticks;
};

struct ft_engine_config {
	struct ft_det_config det;
	/* det.nprocs entries (the capacity), copied; all-zero for a rank not
	 * joined, which the engine never connects to until it learns the
	 * rank's endpoint from its FT_EV_JOINED entry (or from det.known). */
	const struct ft_endpoint *endpoints;
	uint8_t secret[FT_SECRET_LEN];
	int listen_fd;                       /* bound and listening; the engine owns it */
	/* The processes of this host (det.nprocs entries, copied; pid 0 for
	 * a rank of another host, or unknown): the engine watches each with
	 * a pidfd and learns the moment one ends, before any socket or
	 * heartbeat tells. NULL: none. */
	const struct ft_local_proc *local_procs;
	/* A socket that other processes of this host write to when they want
	 * this one's detector thread to look (the engine owns it and reads
	 * and discards what comes, then calls hooks.bell); -1: none. */
	int bell_fd;
};

struct ft_engine_hooks {
	void *ctx;
	/* The detector learned news (detector thread); for FT_EV_JOINED, the
	 * engine has the rank's endpoint already. */
	void (*learned)(void *ctx, const struct ft_entry *e, uint32_t told_by);
	/* The others declared this process failed (detector thread). After it
	 * returns the engine stops talking. */
	void (*excluded)(void *ctx, uint32_t by, uint32_t how);
	/* This process is on the losing side of a partition (detector
	 * thread; see ft_det_ops.lost_quorum). After it returns the engine
	 * stops talking. */
	void (*lost_quorum)(void *ctx, uint32_t reached, uint32_t members, uint32_t lowest);
	/* With re-admission, the others declared this process failed; it goes
	 * on and waits to be re-admitted (detector thread; see
	 * ft_det_ops.declared_self). May be NULL. */
	void (*declared_self)(void *ctx, uint32_t by, uint32_t how);
	/* A message of the MPI side (FT_MSG_APP) from a rank not known
	 * failed, or posted to this rank itself (detector thread). */
	void (*app)(void *ctx, const struct ft_msg *m);
	/* Something came on cfg.bell_fd (detector thread). May be NULL. */
	void (*bell)(void *ctx);
	/* The engine ends the process with status (ft_engine_exit_soon),
	 * its last words out (detector thread): the hook may end it itself,
	 * having told the launcher. May be NULL. */
	void (*leave)(void *ctx, int status);
};

/* Counters kept by the detector thread, readable from any thread. */
struct ft_engine_stats {
	_Atomic uint64_t frames_in, frames_out;
	_Atomic uint64_t dropped[FT_FRAME_ERR_COUNT]; /* frames rejected, by reason */
	_Atomic uint64_t connections, probes, send_overflow;
	/* Bytes still queued when the thread ended (peers that never took
	 * them: a connection that broke or never connected). */
	_Atomic uint64_t unsent_at_exit;
};

/* Start the detector thread. 0, or -errno (nothing is left running).
 * *out is set before the thread starts, so that its hooks can use it. */
int ft_engine_start(struct ft_engine **out, const struct ft_engine_config *cfg,
		    const struct ft_engine_hooks *hooks);

/* Leave: tell everyone this process departs, keep detecting (and
 * answering) until every other rank has departed or failed, or until
 * timeout_ns passes, then stop the thread and free everything. While it
 * waits, the calling thread runs wait_step(arg) every millisecond or so
 * (NULL: it just waits); while wait_step returns true the process stays
 * on the control plane even once every rank has left (to send or receive
 * the last APP messages; what it posted goes out before it leaves).
 * Returns 0, or -ETIMEDOUT if it gave up waiting. */
int ft_engine_finish(struct ft_engine *e, uint64_t timeout_ns, bool (*wait_step)(void *), void *arg);

/* Whether this process, leaving, has seen every other rank leave
 * (depart or fail); any thread, until ft_engine_finish returns. */
bool ft_engine_everyone_left(struct ft_engine *e);

/* Send m to rank to, from any thread: the detector thread sends it soon
 * after. To this rank itself, an APP is handed to hooks.app and a NOTICE's
 * entries to ft_det_join. 0 or -ENOMEM. */
int ft_engine_post(struct ft_engine *e, uint32_t to, const struct ft_msg *m);

/* rank joined the job (a spawned process, whose listening socket is ep),
 * as this process learned outside the control plane; from any thread: the
 * detector thread soon learns it (ft_det_join), floods it and, like every
 * process that learns it, reports it through hooks.learned (FT_EV_JOINED)
 * before it talks to the rank. Ignored if known. 0, -EINVAL (rank outside
 * the capacity, or port 0) or -ENOMEM. */
int ft_engine_join(struct ft_engine *e, uint32_t rank, const struct ft_endpoint *ep);

/* From a hook (detector thread): end the process with status once the
 * news this iteration sends is out (so that an abort passes on before
 * this rank goes). */
void ft_engine_exit_soon(struct ft_engine *e, int status);

/* Tell every rank that this one ends the job with exit status status (0
 * to 65535), and wait (at most timeout_ns) until that is on its way. The
 * engine keeps running; the caller then ends the process. Any thread. */
void ft_engine_abort(struct ft_engine *e, int status, uint64_t timeout_ns);

/* Stop at once, without telling anyone (for a process that is leaving
 * because it was excluded, or that is about to abort). */
void ft_engine_kill(struct ft_engine *e);

const struct ft_engine_stats *ft_engine_stats(const struct ft_engine *e);

#endif
