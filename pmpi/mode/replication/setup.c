/* setup.c: transparent partial replication (state.h says what and why,
 * and which file of pmpi/mode/replication/ holds each concern;
 * docs/DESIGN.md, "Replication", how it was chosen), and its setting up:
 * at MPI_Init the job is split into logical ranks and replicas
 * (ftp_repl_parse, ftp_repl_check, ftp_repl_plan), then the stream is
 * made, MPI_COMM_WORLD gets its map (comm.c: every communicator made from
 * a replicated one gets its own) and a replica's output goes to the run
 * directory (ftp_repl_start); at MPI_Finalize the copies meet, and a
 * primary waits for its replica (ftp_repl_finish). pmpi/init.c calls these, on the application
 * thread; the core asks ftp_repl_covered from any thread, the program
 * ftshim_rank_copies. The calls ftp_repl_calls lists (calls.c) come to
 * this folder from their wrappers, after the seam has found the
 * communicator and checked for failures; each returns through its call's
 * post.
 *
 * The stream (stream.c): a primary tells its replica, in program order,
 * the outcome of every call whose outcome depends on timing, and the
 * results of the collectives; the replica reads it at the same calls.
 * Records are ints: the call's result, its outcome (flag, index, count),
 * then (index, source, tag) for each request or message it completed or
 * matched. */
#include "ftshim_config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ftshim.h"
#include "pmpi/mode/replication/setup.h"
#include "preload/replica_files.h"
#include "pmpi/mode/replication/comm.h"
#include "pmpi/mode/replication/counts.h"
#include "pmpi/mode/replication/stream.h"
#include "pmpi/mode/replication/views.h"
#include "pmpi/hangwatch.h"
#include "pmpi/detect.h"
#include "pmpi/rundir.h"
#include "src/log.h"


static struct ft_replica_spec spec;

int ftp_repl_parse(char *err, size_t errlen)
{
	return ft_replica_spec_parse(&ft_split_replicas, ftp.cfg.replicas, &spec, err, errlen);
}

bool ftp_repl_requested(void)
{
	return spec.value > 0;
}

/* A host id per world rank: the index of the first rank on its host. */
static uint32_t *host_ids(uint32_t size)
{
	uint32_t *ids = malloc((size_t)size * sizeof *ids);

	for (uint32_t k = 0; ids && k < size; k++) {
		ids[k] = k;
		for (uint32_t j = 0; j < k; j++)
			if (strncmp(ftp.peers[j].host, ftp.peers[k].host,
				    sizeof ftp.peers[k].host) == 0) {
				ids[k] = j;
				break;
			}
	}
	return ids;
}

/* A replica's output would repeat its primary's: its stdout and stderr go
 * to replica-L.out and replica-L.err in the run directory (L its logical
 * rank); ftshim's own lines still reach the terminal. */
static void redirect_output(void)
{
	for (int i = 0; i < 2; i++) {
		char path[PATH_MAX];
		int fd = ftp_repl_output_path(i, path, sizeof path) == 0
			     ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600)
			     : -1;
		if (fd < 0) {
			ft_warn("cannot write the replica's %s in the run directory (%s): this replica's output goes to the terminal",
				i == 0 ? "stdout" : "stderr", strerror(errno));
			return;
		}
		fflush(i == 0 ? stdout : stderr);
		ftp_repl_terminal_fd[i] = fcntl(i + 1, F_DUPFD_CLOEXEC, 3);
		if (i == 1 && ftp_repl_terminal_fd[i] >= 0 && !ftp.cfg.log_file[0])
			ft_log_set_fd(ftp_repl_terminal_fd[i]);
		dup2(fd, i + 1);
		close(fd);
	}
}

/* The split of the launched processes, once the world's size is known. */
static uint32_t split_n, split_r;

int ftp_repl_check(char *err, size_t errlen)
{
	if (spec.value == 0 || ftp_world_spawned())
		return 0;
	return ft_replica_split(&ft_split_replicas, &spec, (uint32_t)ftp.world_size, &split_n, &split_r, err, errlen);
}

int ftp_repl_plan(void)
{
	uint32_t n = split_n, r = split_r;
	char err[256];

	if (r == 0 || ftp_world_spawned())
		return 0;
	uint32_t *hosts = host_ids((uint32_t)ftp.world_size);
	int rc = hosts ? ft_replica_plan_make(&ftp_repl.plan, n, r, hosts) : -ENOMEM;
	free(hosts);
	if (rc != 0) {
		snprintf(err, sizeof err, "FTSHIM_REPLICAS=%s: cannot place %u replicas (%s)",
			 ftp.cfg.replicas, r, strerror(-rc));
		ft_error("%s; the job goes on without replicas", err);
		return rc;
	}
	ftp_repl.r = r;
	ftp_repl.copy = ft_replica_plan_is_replica(&ftp_repl.plan, ftp.rank) ? FTP_COPY_REPLICA
			: ftp_repl.plan.replica_of[ftp.rank] >= 0	     ? FTP_COPY_PRIMARY
									     : FTP_COPY_SINGLE;
	ftp_repl.partner = ft_replica_plan_partner(&ftp_repl.plan, ftp.rank);
	ft_msg_table_init(&ftp_repl_msg_counts);
	ft_send_log_init(&ftp_repl_send_log, (size_t)ftp.cfg.replica_log_mib << 20);
	ftp_repl.dropped = calloc((size_t)n + r, 1);
	ftp_repl.copy_of = malloc(((size_t)n + r) * sizeof *ftp_repl.copy_of);
	for (uint32_t k = 0; ftp_repl.copy_of && k < n + r; k++)
		ftp_repl.copy_of[k] = ft_replica_plan_partner(&ftp_repl.plan, (int32_t)k);
	return 0;
}

int ftp_repl_start(void)
{
	uint32_t n = ftp_repl.plan.n, r = ftp_repl.r;

	if (r == 0)
		return 0;
	/* Collectives over every copy, before any copy can be dropped: one
	 * that dies in them ends the others' MPI_Init (status 76), as a death
	 * in any creation does, rather than hang it. */
	struct ftp_comm *world = ftp_seam_comm(ftp.world);
	if (world)
		ftp_hang_watch_begin(FTP_FN_MPI_Init, ftp_member_jobs(world->core), world->core->local_size);
	ftp_mpi.PMPI_Comm_dup(ftp.world, &ftp_repl.stream);
	/* A receive from a copy that dies can complete in error (Open MPI's
	 * single copy from a dead sender ends in MPI_ERR_TRUNCATE): the
	 * error is this process's to handle, as the copy's failure, not a
	 * reason to abort it. */
	ftp_mpi.PMPI_Comm_set_errhandler(ftp_repl.stream, MPI_ERRORS_RETURN);
	if (world)
		ftp_cover_derive(world, NULL); /* through the core: the cover gets its kind */
	ftp_hang_watch_end();
	if (ftp_repl.copy == FTP_COPY_REPLICA) {
		redirect_output();
		ftp_repl_files_begin(ftp_repl.plan.logical_of[ftp.rank]);
	}
	if (ftp_repl.copy == FTP_COPY_REPLICA)
		ft_debug("replica of rank %d (process %d of %u launched)",
			 ftp_repl.plan.logical_of[ftp.rank], ftp.rank, n + r);
	else if (ftp.rank == 0) {
		char dir[PATH_MAX];
		if (ftp_rundir_path("", dir, sizeof dir) != 0)
			snprintf(dir, sizeof dir, "(none)/");
		ft_info("replication: %u logical ranks, %u of them with a replica; replicas write "
			"their output to %sreplica-RANK.out and .err",
			n, r, dir);
	}
	return 0;
}

FT_EXPORT int ftshim_rank_copies(int rank)
{
	uint32_t n = ftp_repl.r ? ftp_repl.plan.n : atomic_load(&ftp.nprocs);

	if (!ftp_active() || rank < 0 || (uint32_t)rank >= n)
		return -1;
	int copies = ft_proc_is_failed(&ftp.procs, (uint32_t)rank) ? 0 : FTSHIM_COPY_PRIMARY;
	int32_t replica = ftp_repl.r && ftp_repl.copy_of ? ftp_repl.copy_of[rank] : -1;
	if (replica >= 0 && !ft_proc_is_failed(&ftp.procs, (uint32_t)replica))
		copies |= FTSHIM_COPY_REPLICA;
	return copies;
}

void ftp_repl_finish(void)
{
	uint64_t polls = 0;

	if (ftp_repl.r == 0)
		return;
	ftp_repl_meet_at_end();
	/* A primary stays until its replica has entered MPI_Finalize too: if
	 * the replica dies first, the other replicas still need from this
	 * rank what it would have sent them (drop_copy, views.c, serves them,
	 * and makes this rank a single). */
	for (;;) {
		ftp_repl_views();
		if (ftp_repl.copy != FTP_COPY_PRIMARY || ftp_departed((uint32_t)ftp_repl.partner))
			break;
		ftp_poll_pause(&polls);
	}
	ftp_repl_resends_progress(true);
}
