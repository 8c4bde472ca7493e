/* spares.c: spare processes (FTSHIM_SPARES) as a recovery mode, the
 * first step of docs/DESIGN.md's plan for them: the launch split into N
 * program ranks and K spares (the last K job ranks), the program's
 * MPI_COMM_WORLD narrowed to the N, the spares waiting inside MPI_Init
 * until the program has ended, and the names FTSHIM_INJECT and the
 * report give them. The narrowed world is a communicator the MPI splits
 * off its own at MPI_Init, so the program's calls on it keep the MPI's
 * speed and ftshim's fast path (no rank map: its ranks are the job
 * ranks). Taking a failed rank's place (restart in place) is the next
 * step; until then a program rank's failure is the program's, as with no
 * mode, and a spare's is no one's.
 *
 * Sharing: everything here is written at MPI_Init by the application
 * thread before ftshim is on (parse, check) or before MPI_Init returns
 * (start, admit), and only read after; covered() is asked from any
 * thread. */
#include "ftshim_config.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "pmpi/mode/spares/spares.h"
#include "pmpi/call_base.h"
#include "pmpi/comms.h"
#include "pmpi/detect.h"
#include "pmpi/hangwatch.h"
#include "pmpi/ranks.h"
#include "pmpi/shm_repair.h"
#include "src/inject.h"
#include "src/log.h"
#include "src/replica_plan.h"

static struct ft_replica_spec spec;
/* The split of the launched processes: job ranks 0 to n - 1 run the
 * program, n to n + k - 1 are the spares; k is 0 in a spawned world
 * (its processes are the program's, the mode does not split them). */
static uint32_t n, k;
/* The program's MPI_COMM_WORLD as the MPI made it (MPI_COMM_NULL on a
 * spare). */
static MPI_Comm program_world = MPI_COMM_NULL;

static bool is_spare(int32_t j)
{
	return j >= (int32_t)n && (uint32_t)j < n + k;
}

static int parse(char *err, size_t errlen)
{
	int rc = ft_replica_spec_parse(&ft_split_spares, ftp.cfg.spares, &spec, err, errlen);

	return rc != 0 ? rc : spec.value > 0;
}

static int check(char *err, size_t errlen)
{
	if (ftp_world_spawned())
		return 0;
	return ft_replica_split(&ft_split_spares, &spec, (uint32_t)ftp.world_size, &n, &k, err, errlen);
}

/* Collective over the MPI's world, before the agreement that ends
 * MPI_Init: a process that dies in it ends the others' MPI_Init (status
 * 76), as a death in any of ftshim's start does, rather than hang it. */
static int start(void)
{
	if (k == 0)
		return 0;
	struct ftp_comm *world = ftp_seam_comm(ftp.world);
	if (world)
		ftp_hang_watch_begin(FTP_FN_MPI_Init, ftp_member_jobs(world->core), world->core->local_size);
	int rc = ftp_mpi.PMPI_Comm_split(ftp.world, is_spare(ftp.rank) ? MPI_UNDEFINED : 0, ftp.rank,
					 &program_world);
	ftp_hang_watch_end();
	/* The program asks its world's name too. */
	if (rc == MPI_SUCCESS && program_world != MPI_COMM_NULL)
		ftp_mpi.PMPI_Comm_set_name(program_world, "MPI_COMM_WORLD");
	if (rc != MPI_SUCCESS) {
		ft_error("FTSHIM_SPARES: cannot split the program's ranks off MPI_COMM_WORLD (error %d); "
			 "ending the job rather than run the program on its spares too", rc);
		ftp_mpi.PMPI_Abort(ftp.world, 1);
	}
	return 0;
}

/* Every program rank has entered MPI_Finalize or failed. */
static bool program_ended(void)
{
	for (uint32_t j = 0; j < n; j++)
		if (!ftp_departed(j) && !ft_proc_is_failed(&ftp.procs, j))
			return false;
	return true;
}

/* A spare's wait between looks: the detector thread answers heartbeats
 * meanwhile; this thread takes the host's mail (a revoke it relays) and
 * sleeps, a few microseconds of CPU every 10 ms. */
static void rest(void)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = 10 * 1000 * 1000};

	ftp_hostmail_poll();
	ftp_shm_repair_poll();
	nanosleep(&ts, NULL);
}

static enum ftp_admit admit(void)
{
	if (k == 0)
		return FTP_ADMIT_RUN;
	int32_t *jobs = malloc((size_t)n * sizeof *jobs);
	for (uint32_t j = 0; jobs && j < n; j++)
		jobs[j] = (int32_t)j;
	if (!jobs || ftp_comm_world_narrow(program_world, jobs, n) != 0) {
		ft_error("FTSHIM_SPARES: out of memory for the program's MPI_COMM_WORLD; ending the job "
			 "rather than run the program on its spares too");
		ftp_mpi.PMPI_Abort(ftp.world, 1);
	}
	free(jobs);
	if (!is_spare(ftp.rank)) {
		if (ftp.rank == 0 && k == 1)
			ft_info("spares: the program runs on ranks 0 to %u; 1 spare process (job rank %u) "
				"waits in MPI_Init", n - 1, n);
		else if (ftp.rank == 0)
			ft_info("spares: the program runs on ranks 0 to %u; %u spare processes (job ranks "
				"%u to %u) wait in MPI_Init", n - 1, k, n, n + k - 1);
		return FTP_ADMIT_RUN;
	}
	ft_debug("spare %u: waiting in MPI_Init", (uint32_t)ftp.rank - n);
	while (!program_ended())
		rest();
	ft_debug("spare %u: the program has ended; leaving", (uint32_t)ftp.rank - n);
	return FTP_ADMIT_END;
}

static int32_t program_rank(int32_t j)
{
	return k == 0 || j < (int32_t)n || (uint32_t)j >= n + k ? j : -1;
}

/* A spare's death is no program rank's. Any thread. */
static bool covered(int32_t j)
{
	return is_spare(j);
}

static const struct ft_inject_copies *inject_names(struct ft_inject_copies *room)
{
	if (k == 0)
		return NULL;
	*room = (struct ft_inject_copies){.n = n, .nspares = k, .variable = "FTSHIM_SPARES"};
	return room;
}

static bool report_rank(int32_t j, struct ftp_mode_rank *out)
{
	if (!is_spare(j))
		return false;
	*out = (struct ftp_mode_rank){.program = -1, .other = -1, .spare = j - (int32_t)n};
	return true;
}

const struct ftp_mode ftp_spares_mode = {
	.name = "spares",
	.variable = "FTSHIM_SPARES",
	.setting = &ftp.cfg.spares,
	.man_section = "SPARE PROCESSES",
	.parse = parse,
	.check = check,
	.start = start,
	.admit = admit,
	.hostmail = true,
	.program_rank = program_rank,
	.covered = covered,
	.inject_names = inject_names,
	.report_rank = report_rank,
};
