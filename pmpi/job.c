/* job.c: what the ranks of a job tell each other once, at MPI_Init, in a
 * single PMPI_Allgather: each rank's control-plane endpoint, pid, start
 * time and host name, and a nonce (rank 0's becomes the job's secret and,
 * in hex, part of its id). Everything else that needs the whole job's
 * picture starts from here: the detector, the run directory, injection.
 * A spawned process gets the same picture from its parents instead
 * (pmpi/spawn.c) and goes on from ftp_job_go. */
#include "ftshim_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "pmpi/job.h"
#include "pmpi/hangwatch.h"
#include "pmpi/call.h"
#include "pmpi/mode/mode.h"
#include "pmpi/agree.h"
#include "pmpi/coll_p2p.h"
#include "pmpi/spare_view.h"
#include "pmpi/detect.h"
#include "pmpi/hostmail.h"
#include "pmpi/inject.h"
#include "pmpi/leave.h"
#include "pmpi/rundir.h"
#include "pmpi/outcome.h"
#include "pmpi/ranks.h"
#include "src/clock.h"
#include "src/hash.h"
#include "src/log.h"
#include "src/prune.h"

static void fill_nonce(uint8_t *nonce, size_t len)
{
	if (getrandom(nonce, len, 0) == (ssize_t)len)
		return;
	uint64_t state = ft_clock_now() ^ ((uint64_t)getpid() << 32);
	for (size_t i = 0; i < len; i++)
		nonce[i] = (uint8_t)ft_splitmix64_next(&state);
}

/* Many polls before yielding when each rank of this host has a core of
 * its own, few when they share. (The host's cores, not this process's
 * affinity: a launcher that binds each rank to one core has not
 * oversubscribed it. A spare, which waits without the CPU, takes none.) */
static void set_spin_polls(void)
{
	int local = 0, ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);

	uint32_t n = atomic_load(&ftp.nprocs);

	for (uint32_t r = 0; r < n; r++)
		local += ftp.peers[r].ep.port && ftp_same_host(r, (uint32_t)ftp.rank) &&
			 !ft_proc_is_failed(&ftp.procs, r) && !ftp_mode_spare((int32_t)r);
	ftp.spin_polls = ncpu > 0 && local > ncpu ? 16 : 4096;
	ft_debug("%d ranks on this host, %d cores: waiting calls yield after %u polls", local, ncpu,
		 ftp.spin_polls);
}

int ftp_job_self(bool usable, struct ftp_peer *mine)
{
	char err[256];
	int listen_fd = -1;

	memset(mine, 0, sizeof *mine);
	if (usable) {
		listen_fd = ft_overlay_listen(ftp.cfg.iface, &mine->ep, err, sizeof err);
		if (listen_fd < 0)
			ft_error("cannot open the control-plane socket: %s", err);
	}
	mine->pid = (int32_t)getpid();
	mine->start_ticks = ft_process_start_ticks(getpid());
	mine->init_unix_ns = ftp.init_ns + (uint64_t)ftp.wall_offset_ns;
	if (gethostname(mine->host, sizeof mine->host) != 0)
		snprintf(mine->host, sizeof mine->host, "unknown");
	mine->host[sizeof mine->host - 1] = '\0';
	fill_nonce(mine->nonce, sizeof mine->nonce);
	return listen_fd;
}

struct ftp_peer *ftp_job_peers_alloc(void)
{
	struct ftp_peer *peers = calloc(ftp.procs.size ? ftp.procs.size : 1, sizeof *peers);

	if (!peers) {
		/* Without it this rank cannot take part in the collective, and
		 * the others would wait for it forever. */
		ft_error("out of memory for %u ranks' addresses at MPI_Init", ftp.procs.size);
		ftp_mpi.PMPI_Abort(ftp.world, 1);
	}
	return peers;
}

int ftp_job_go(bool usable, int listen_fd, const struct ft_entry *known, uint32_t nknown)
{
	ft_events_start((uint32_t)ftp.rank, ftp.job_start_unix_ns);
	for (int i = 0; i < 6; i++)
		snprintf(ftp.job_id + 2 * i, 3, "%02x", ftp.secret[8 + i]);
	set_spin_polls();
	ftp_coll_p2p_start();
	ftp_spare_view_start();
	ftp_hang_watch_end(); /* ftp_job_start's */
	if (!usable)
		return -1;
	ftp_hostmail_start();
	ftp_detect_start(listen_fd, ftp_hostmail_bell_fd(), known, nknown);
	ftp_mode_plan();
	ftp_rundir_start();
	ftp_outcome_start();
	ftp_inject_start();
	return 0;
}

void ftp_job_up(void)
{
	/* A spawned process does not wait for its siblings. */
	bool together = !ftp_world_spawned();
	struct ftp_comm *world = together && ftp_detect_on() ? ftp_seam_comm(ftp.world) : NULL;

	if (world) {
		uint32_t value = 0;
		uint64_t t0 = ft_clock_now();
		int rc = ftp_agree_quiet(world, &value);
		ft_debug("every rank is up: agreed in %.3f ms (%s)", (double)(ft_clock_now() - t0) / 1e6,
			 rc == MPI_SUCCESS ? "none failed" : "some failed");
	}
	ftp.up_ns = ft_clock_now();
	ft_log_set_origin(ftp.up_ns);
	ftp_inject_arm();
}

/* A collective of ftshim's start failed: the MPI saw a rank die before
 * ftshim could watch it (MPICH over UCX's shared memory reports such a
 * death rather than wait). This rank leaves as when the start is stuck
 * (pmpi/hangwatch.c), with one line rather than the MPI's abort. */
static _Noreturn void start_failed(const char *what, int rc)
{
	int class = rc;

	ftp_mpi.PMPI_Error_class(rc, &class);
	ft_error("ftshim's start in MPI_Init failed (the MPI's %s returned error class %d): a rank "
		 "must have died while the job was starting, before ftshim could watch it, so this "
		 "rank exits (status %d) rather than go on without it",
		 what, class, FT_EXIT_STUCK);
	ftp_leave(FT_EXIT_STUCK);
}

int ftp_job_start(bool usable)
{
	struct ftp_peer mine;
	int listen_fd = ftp_job_self(usable, &mine);
	MPI_Errhandler program_errh = MPI_ERRHANDLER_NULL;

	ftp.peers = ftp_job_peers_alloc();
	/* Until the detector runs, nothing sees a rank die: one that dies
	 * now (after the MPI's MPI_Init returned) would hold the others in
	 * this collective, and in the private duplicate of ftp_job_go, for
	 * ever. They end under a deadline instead, or at once if the MPI
	 * reports the death: its error is this start's to raise, not the
	 * world's handler's (the program's, restored after). */
	ftp_hang_watch_deadline(FTP_FN_MPI_Init, ftp_hang_watch_long(), NULL);
	ftp_mpi.PMPI_Comm_get_errhandler(ftp.world, &program_errh);
	ftp_mpi.PMPI_Comm_set_errhandler(ftp.world, MPI_ERRORS_RETURN);
	int rc = ftp_mpi.PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, ftp.peers, sizeof mine, MPI_BYTE,
					ftp.world);
	if (rc != MPI_SUCCESS)
		start_failed("MPI_Allgather", rc);
	memcpy(ftp.secret, ftp.peers[0].nonce, sizeof ftp.secret);
	ftp.job_start_unix_ns = mine.init_unix_ns;
	for (int r = 0; r < ftp.world_size; r++)
		if (ftp.peers[r].init_unix_ns < ftp.job_start_unix_ns)
			ftp.job_start_unix_ns = ftp.peers[r].init_unix_ns;
	rc = ftp_job_go(usable, listen_fd, NULL, 0);
	if (program_errh != MPI_ERRHANDLER_NULL) {
		ftp_mpi.PMPI_Comm_set_errhandler(ftp.world, program_errh);
		ftp_mpi.PMPI_Errhandler_free(&program_errh);
	}
	return rc;
}
