/* hangwatch.h: the last resort for a wait inside the MPI that a death
 * could hold for ever (pmpi/hangwatch.c). */
#ifndef FTSHIM_PMPI_HANGWATCH_H
#define FTSHIM_PMPI_HANGWATCH_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "pmpi/listen.h"
#include "pmpi/fn_table.h"

/* While an application thread is inside a call of the MPI that a member's
 * death could block for ever (communicator creation), watch the members
 * (job ranks): if one fails and the call does not return within a grace
 * period, the process exits with one line instead of hanging
 * (pmpi/hangwatch.c). end is harmless without a begin. */
void ftp_hang_watch_begin(enum ftp_fn fn, const int32_t *members, uint32_t n);
void ftp_hang_watch_end(void);
/* The run directory's file of deaths by signal on this host (appended
 * to by supervisors) and its size at one moment: a death recorded there
 * since makes the file longer. */
struct ftp_deaths_mark {
	char path[PATH_MAX];
	off_t size;
};
/* Mark this host's file now (path "" without a run directory). */
void ftp_deaths_mark(struct ftp_deaths_mark *m);
/* Watch the current call with a plain deadline: if it has not returned
 * after ns, the process exits as above. With deaths (or NULL), a death
 * recorded since that mark ends the wait a second later. */
void ftp_hang_watch_deadline(enum ftp_fn fn, uint64_t ns, const struct ftp_deaths_mark *deaths);
/* The deadline of a call that every rank makes at about the same moment
 * but that a death nobody can see would hold for ever (the MPI's
 * MPI_Finalize; ftshim's collectives at MPI_Init, before its detector
 * runs): 10 heartbeat timeouts, at least 5 s. */
uint64_t ftp_hang_watch_long(void);
/* How long parents and children wait for each other's part of the
 * spawn handshake (pmpi/spawn.c), and a spawned process for the MPI's
 * start: 10 heartbeat timeouts, at least 10 s. */
uint64_t ftp_spawn_handshake_ns(void);
/* Give this thread's member watch a deadline too (ns), which a member's
 * failure still shortens to the grace period. */
void ftp_hang_watch_limit(uint64_t ns);
/* The same for a call that waits on one peer (job rank), without a
 * lock while nothing fails: begin returns a token for end, 0 if not
 * watched (another such call is). */
uint64_t ftp_hang_watch_peer_begin(enum ftp_fn fn, int32_t peer);
void ftp_hang_watch_peer_end(uint64_t token);
/* It hears of failures from the detector (pmpi/detect.c). */
extern const struct ftp_listener ftp_hang_watch_listener;

/* Whether this thread is inside one of the watched calls above (all of
 * them blocking calls of the MPI's own, whose wait loop ftshim does not
 * run), set by their begin and cleared by their end, and how many empty
 * polls of the MPI's progress it has made there since it last progressed
 * (pmpi/ucx_yield.c). Only its own thread touches it. */
struct ftp_mpi_wait {
	bool inside;
	uint32_t empty_polls;
};
extern _Thread_local struct ftp_mpi_wait ftp_mpi_wait __attribute__((tls_model("initial-exec")));

#endif
