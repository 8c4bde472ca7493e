/* spares.c: spare processes (FTSHIM_SPARES) as a recovery mode, the
 * first step of docs/DESIGN.md's plan for them: the launch split into N
 * program ranks and K spares (the last K job ranks), the program's
 * MPI_COMM_WORLD narrowed to the N, the spares waiting inside MPI_Init
 * until the program has ended, and the names FTSHIM_INJECT and the
 * report give them. The narrowed world is a communicator the MPI splits
 * off its own at MPI_Init, so the program's calls on it keep the MPI's
 * speed and ftshim's fast path (no rank map: its ranks are the job
 * ranks).
 *
 * Restart in place: when a program rank's process fails, every live
 * process, at its next MPI call, in one of ftshim's waits, in MPI_Finalize
 * or waiting as a spare (the failures hook), agrees with all the others
 * on who lives (ftshim's agreement over the whole job, ftp_comm_job),
 * gives each dead program rank's place to a spare (src/spare_plan.h, the
 * same plan everywhere from the same agreed set), and takes the next
 * spare context as the repaired MPI_COMM_WORLD (a view, pmpi/spare_view.c:
 * no MPI constructor, so a death meanwhile only starts another repair).
 * Then every program rank runs main again (pmpi/restart.h) and the spares
 * that took a rank return from MPI_Init into main for the first time. A
 * spare's own death is no one's failure. Once the spares are used up a
 * program rank's failure is the program's, as with no mode.
 *
 * Sharing: everything here is written at MPI_Init by the application
 * thread before ftshim is on (parse, check) or before MPI_Init returns
 * (start, admit), and only read after; covered() is asked from any
 * thread. */
#include "ftshim_config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pmpi/mode/spares/spares.h"
#include "pmpi/agree.h"
#include "pmpi/call_base.h"
#include "pmpi/ckpt.h"
#include "pmpi/restart.h"
#include "pmpi/spare_view.h"
#include "pmpi/comms.h"
#include "pmpi/detect.h"
#include "pmpi/errors.h"
#include "pmpi/hangwatch.h"
#include "pmpi/inject.h"
#include "pmpi/ranks.h"
#include "pmpi/shm_repair.h"
#include "src/ckpt_disk.h"
#include "src/events.h"
#include "src/inject.h"
#include "src/log.h"
#include "src/replica_plan.h"
#include "src/spare_plan.h"

static struct ft_replica_spec spec;
/* The split of the launched processes: job ranks 0 to n - 1 run the
 * program, n to n + k - 1 are the spares; k is 0 in a spawned world
 * (its processes are the program's, the mode does not split them). */
static uint32_t n, k;
/* The program's MPI_COMM_WORLD as the MPI made it (MPI_COMM_NULL on a
 * spare). */
static MPI_Comm program_world = MPI_COMM_NULL;
/* Who runs which program rank: the application thread's (other threads
 * ask waiting). */
static struct ft_spare_plan plan;
/* waiting[j]: job rank j is a spare that has taken no rank (set at
 * MPI_Init, cleared by the repair that gives it one; read by any
 * thread). */
static _Atomic bool *waiting;
static uint32_t repairs;   /* repairs made: the next world's number */
static bool exhausted;     /* a failure found no spare left: failures are the program's */
static bool repairing;     /* in repair (its agreement's waits apply failures too) */
static bool restore_again; /* a process failed during the restore: repair again */

static bool is_spare(int32_t j)
{
	return waiting && j >= 0 && (uint32_t)j < n + k && atomic_load_explicit(&waiting[j], memory_order_relaxed);
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
	int rc = ft_replica_split(&ft_split_spares, &spec, (uint32_t)ftp.world_size, &n, &k, err, errlen);
	int level = MPI_THREAD_SINGLE;
	ftp_mpi.PMPI_Query_thread(&level);
	if (rc == 0 && level == MPI_THREAD_MULTIPLE) {
		snprintf(err, errlen,
			 "FTSHIM_SPARES=%s: the program runs with MPI_THREAD_MULTIPLE, and another thread "
			 "may be inside MPI when a rank goes back to the start of main; accepted: "
			 "MPI_Init, or MPI_Init_thread up to MPI_THREAD_SERIALIZED",
			 ftp.cfg.spares);
		return -EINVAL;
	}
	if (rc == 0 && !ftp_restart_possible()) {
		snprintf(err, errlen,
			 "FTSHIM_SPARES=%s: this program's main cannot be run again in place (it did not "
			 "start through glibc's __libc_start_main with libftshim.so preloaded: a static "
			 "binary, or an interpreter's own start); accepted: a dynamically linked program",
			 ftp.cfg.spares);
		return -EINVAL;
	}
	if (rc == 0 && ftp.cfg.ckpt_dir[0])
		rc = ft_ckpt_disk_check_dir(ftp.cfg.ckpt_dir, err, errlen);
	if (rc == 0 && (ft_spare_plan_init(&plan, n, k) != 0 || !(waiting = calloc(n + k, sizeof *waiting)))) {
		snprintf(err, errlen, "FTSHIM_SPARES: out of memory");
		return -ENOMEM;
	}
	for (uint32_t j = n; rc == 0 && j < n + k; j++)
		atomic_init(&waiting[j], true);
	return rc;
}

/* One repaired world per spare, each on a context made now; at most
 * FTP_SPARE_CONTEXTS_MAX, so that many repairs at most. */
static uint32_t contexts(void)
{
	return k < FTP_SPARE_CONTEXTS_MAX ? k : FTP_SPARE_CONTEXTS_MAX;
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
	/* Collective too; without it the program restarts from its own
	 * files only. */
	ftp_ckpt_start();
	return 0;
}

/* Every program rank has entered MPI_Finalize or failed. */
static bool program_ended(void)
{
	for (uint32_t r = 0; r < n; r++) {
		uint32_t j = (uint32_t)plan.holder[r];
		if (!ftp_departed(j) && !ft_proc_is_failed(&ftp.procs, j))
			return false;
	}
	return true;
}

/* A spare's wait between looks: the detector thread answers heartbeats
 * meanwhile; this thread takes the host's mail (a revoke it relays) and
 * sleeps until its doorbell moves from seen (read before the looks: a
 * failure rings it) or 10 ms have passed, a few microseconds of CPU
 * each time. */
static void rest(uint32_t seen)
{
	ftp_hostmail_poll();
	ftp_shm_repair_poll();
	ftp_hostmail_sleep(seen, 10 * FT_NSEC_PER_MSEC);
}

/* A program rank's process has failed since the last repair, and a
 * repair may give its place to a spare. */
static bool repair_due(void)
{
	if (k == 0 || exhausted || !plan.holder || !ftp_comm_job())
		return false;
	for (uint32_t r = 0; r < n; r++)
		if (ft_proc_is_failed(&ftp.procs, (uint32_t)plan.holder[r]))
			return true;
	return false;
}

/* Out of spares (or of contexts for repaired worlds): each program rank
 * says so (the first to raise the error may end the job before another
 * could say it for all); from then on a failure is the program's. */
static void say_exhausted(const bool *alive, const char *what)
{
	exhausted = true;
	if (is_spare(ftp.rank))
		return;
	for (uint32_t r = 0; r < n; r++)
		if (!alive[plan.holder[r]]) {
			ft_error("spares: rank %u (process %d) failed and %s (FTSHIM_SPARES=%s, %u rank(s) "
				 "replaced so far): the failure is the program's",
				 r, plan.holder[r], what, ftp.cfg.spares, plan.replaced);
			return;
		}
}

/* The whole repair, on every live process alike: agree on who lives,
 * replace the dead program ranks, make the repaired world. Returns
 * whether this process now runs a program rank in it. */
static bool repair_once(void)
{
	uint32_t total = n + k, nalive = 0;
	int32_t *alive_jobs = malloc((size_t)total * sizeof *alive_jobs);
	bool *alive = calloc(total, sizeof *alive);
	uint64_t *hosts = malloc((size_t)total * sizeof *hosts);
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPIX_Comm_shrink);
	uint64_t t0 = ft_clock_now();

	c.comm = ftp_comm_job();
	c.real = MPI_COMM_NULL;
	c.direct = false;
	if (!alive_jobs || !alive || !hosts || ftp_agree_alive(&c, alive_jobs, &nalive) != MPI_SUCCESS) {
		ft_error("spares: the repair could not agree on the live processes; failures are the program's");
		exhausted = true;
		goto out;
	}
	for (uint32_t i = 0; i < nalive; i++)
		alive[alive_jobs[i]] = true;
	/* For tests: a death in the repair, between the agreement and the
	 * restart (FTSHIM_INJECT "at=point:ftshim.repair:N", N the repair's
	 * number from 1). */
	ftp_inject_point("ftshim.repair", (long)repairs + 1);
	for (uint32_t j = 0; j < total; j++)
		hosts[j] = ftp.peers[j].ep.host_id;
	int32_t *before = malloc((size_t)n * sizeof *before);
	if (before)
		memcpy(before, plan.holder, (size_t)n * sizeof *before);
	/* With more spares than contexts, the contexts run out first. */
	bool no_context = repairs == contexts() && contexts() < k;
	int got = no_context ? -EMLINK : ft_spare_plan_replace(&plan, alive, hosts);
	for (uint32_t j = n; got > 0 && j < total; j++)
		if (plan.serving[j] >= 0)
			atomic_store_explicit(&waiting[j], false, memory_order_relaxed);
	if (got < 0) {
		say_exhausted(alive, got == -EMLINK ? "the job has made as many repairs as it can"
						    : "no spare is left");
		free(before);
		goto out;
	}
	repairs++;
	for (uint32_t r = 0; before && r < n; r++)
		if (before[r] != plan.holder[r] && ftp.rank == plan.holder[r])
			ft_events_add(ftp_wall_now(), "substitution",
				      ",\"program_rank\":%u,\"lost\":%d,\"by\":%d,\"spare\":%d,\"repair\":%u,\"repair_ms\":%.3f",
				      r, before[r], plan.holder[r], plan.holder[r] - (int32_t)n, repairs,
				      (double)(ft_clock_now() - t0) / 1e6);
	for (uint32_t r = 0; before && r < n && ftp.rank == plan.holder[0]; r++)
		if (before[r] != plan.holder[r])
			ft_info("spares: rank %u's process %d (%s) lost; spare %d (process %d, %s) takes rank %u, "
				"and every rank runs main again (repair %u, %.1f ms after it began here)",
				r, before[r], ftp.peers[before[r]].host, plan.holder[r] - (int32_t)n,
				plan.holder[r], ftp.peers[plan.holder[r]].host, r, repairs,
				(double)(ft_clock_now() - t0) / 1e6);
	free(before);
	uint64_t id = ft_comm_child_id(FT_COMM_WORLD_ID, FT_COMM_KIND_GROUP, 0x72657374 /* "rest" */, repairs,
				       ft_comm_result_hash(plan.holder, n, NULL, 0));
	int rc = ftp_spare_view_world(plan.holder, n, id);
	if (rc != MPI_SUCCESS) {
		ft_error("spares: cannot make the repaired MPI_COMM_WORLD (%s); ending the job",
			 rc == -1 ? "no spare context left" : "out of memory");
		ftp_detect_abort(1);
	}
	ftp_ckpt_world(plan.holder, n, repairs);
	/* Every process that runs a program rank goes back to the latest
	 * checkpoint all have; a death meanwhile is repaired anew. */
	if (plan.serving[ftp.rank] >= 0 && ftp_ckpt_restore(repair_due) == -EAGAIN)
		restore_again = true;
out:
	free(alive_jobs);
	free(alive);
	free(hosts);
	return plan.serving && plan.serving[ftp.rank] >= 0;
}

/* A repair, not entered again from the waits of its own agreement. */
static bool repair(void)
{
	bool runs;

	repairing = true;
	do {
		restore_again = false;
		runs = repair_once();
	} while (restore_again && !exhausted);
	repairing = false;
	return runs;
}

/* Applied at every wait and call of ftshim's (ftp_check): a program
 * rank's death starts a repair, after which a program rank runs main
 * again. A spare that is waiting repairs in admit instead. */
static void failures(void)
{
	if (repairing || !repair_due() || is_spare(ftp.rank) || !ftp_active())
		return;
	if (repair() && !exhausted) {
		char why[160];
		if (ftp_restart_blocked(why, sizeof why)) {
			ft_error("spares: rank %d cannot run main again: %s; restart in place needs main's thread "
				 "alone in the program's code: ending the job", plan.serving[ftp.rank], why);
			ftp_detect_abort(1);
			ftp_mpi.PMPI_Abort(ftp.world, 1);
			abort();
		}
		ftp_restart_program();
	}
}

/* A call fails because a member failed: the failure reaches this
 * process's table within moments of the call's finding it (an agreement
 * can learn it from the others first); the repair starts then, and the
 * program never sees the error. */
static void error(int code)
{
	if (k == 0 || exhausted || repairing || is_spare(ftp.rank) ||
	    (code != FTP_ERR_PROC_FAILED && code != FTP_ERR_PROC_FAILED_PENDING))
		return;
	uint64_t until = ft_clock_now() + 2 * FT_NSEC_PER_SEC;
	while (!repair_due() && ft_clock_now() < until) {
		struct timespec ts = {.tv_sec = 0, .tv_nsec = 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	failures();
}

static enum ftp_admit admit(void)
{
	if (k == 0)
		return FTP_ADMIT_RUN;
	int32_t *jobs = malloc((size_t)n * sizeof *jobs);
	for (uint32_t j = 0; jobs && j < n; j++)
		jobs[j] = (int32_t)j;
	if (!jobs || ftp_comm_world_narrow(program_world, jobs, n) != 0 || !ftp_comm_job()) {
		ft_error("FTSHIM_SPARES: out of memory for the program's MPI_COMM_WORLD; ending the job "
			 "rather than run the program on its spares too");
		ftp_mpi.PMPI_Abort(ftp.world, 1);
	}
	free(jobs);
	ftp_ckpt_world(plan.holder, n, 0);
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
	for (;;) {
		uint32_t seen = ftp_hostmail_doorbell();
		if (program_ended())
			break;
		if (repair_due()) {
			if (repair()) {
				ft_debug("spare %u: runs rank %d from the start of main", (uint32_t)ftp.rank - n,
					 plan.serving[ftp.rank]);
				return FTP_ADMIT_RUN;
			}
			continue;
		}
		rest(seen);
	}
	ft_debug("spare %u: the program has ended; leaving", (uint32_t)ftp.rank - n);
	return FTP_ADMIT_END;
}

/* At MPI_Finalize: the program has ended only once every program rank
 * has come here; one that failed before (or meanwhile) is replaced and
 * every rank runs main again rather than finish without it. */
static void finish(void)
{
	struct ftp_comm *world = ftp_seam_comm(ftp.world);

	if (k == 0 || !world)
		return;
	for (;;) {
		uint32_t value = ftp_ckpt_finish_flag();
		int rc = ftp_agree_quiet(world, &value);
		if (rc == MPI_SUCCESS)
			ftp_ckpt_finish_check(value);
		if (rc == MPI_SUCCESS || !repair_due())
			return;
		failures();
	}
}

static int32_t program_rank(int32_t j)
{
	if (k == 0 || j < 0 || (uint32_t)j >= n + k)
		return j;
	return is_spare(j) ? -1 : plan.serving[j];
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

/* A process launched as a spare is named as one, also once it took a
 * rank. */
static bool report_rank(int32_t j, struct ftp_mode_rank *out)
{
	if (k == 0 || j < (int32_t)n || (uint32_t)j >= n + k)
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
	.contexts = contexts,
	.admit = admit,
	.hostmail = true,
	.program_rank = program_rank,
	.covered = covered,
	.inject_names = inject_names,
	.report_rank = report_rank,
	.failures = failures,
	.error = error,
	.finish = finish,
};
