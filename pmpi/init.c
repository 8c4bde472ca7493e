/* init.c: the hand-written wrappers of the MPI life cycle: MPI_Init,
 * MPI_Init_thread, MPI_Finalize, MPI_Session_init, MPI_Session_finalize,
 * MPI_Abort, MPI_Initialized and MPI_Finalized. Until MPI_Init or the
 * first MPI_Session_init runs, ftshim does nothing at all, so the library
 * is inert in processes that never call them (a launcher that inherited
 * LD_PRELOAD, a shell). Whichever comes first reads the configuration
 * before anything else (a bad FTSHIM_* value stops the rank there, with
 * one line) and starts ftshim over the job's processes; ftshim ends with
 * the last of the world model (MPI_Finalize) and the sessions. */
#include "ftshim_config.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmpi/call.h"
#include "pmpi/hangwatch.h"
#include "pmpi/mode/mode.h"
#include "pmpi/restart.h"
#include "pmpi/mode/registry.h"
#include "pmpi/mpi_lib.h"
#include "pmpi/objects.h"
#include "pmpi/comms.h"
#include "pmpi/detect.h"
#include "pmpi/hostmail.h"
#include "pmpi/listen.h"
#include "pmpi/inject.h"
#include "pmpi/job.h"
#include "pmpi/agree.h"
#include "pmpi/ckpt_watch.h"
#include "pmpi/leave.h"
#include "pmpi/report_merge.h"
#include "pmpi/revoke.h"
#include "pmpi/rundir.h"
#include "pmpi/self_attrs.h"
#include "pmpi/shm_repair.h"
#include "pmpi/spawn.h"
#include "pmpi/ucx_yield.h"
#include "src/clock.h"
#include "src/log.h"
#include "src/pmi.h"
#include "src/pmix.h"
#include "src/preflight.h"
#include "src/supervisor.h"

extern char **environ;

/* ftp.done_request (see ftp_done_at_once): Open MPI exports the object,
 * though its mpi.h does not declare it; an Open MPI without it gets NULL,
 * which no request is, and so no shortcut. */
static void find_done_request(void)
{
#ifdef OPEN_MPI
	ftp.done_request = (MPI_Request)dlsym(RTLD_DEFAULT, "ompi_request_empty");
#endif
}

/* Whether this process is the job's first, as its launcher numbers it
 * before MPI_Init (Hydra's PMI_RANK, Open MPI's, PMIx's, Slurm's), or
 * was started without one: it alone says what every rank would. */
static bool first_of_job(void)
{
	static const char *const names[] = {"PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK",
					    "SLURM_PROCID"};

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		const char *v = getenv(names[i]);
		if (v && *v)
			return strcmp(v, "0") == 0;
	}
	return true;
}

/* A configuration error ends the rank before PMPI_Init: there is nothing to
 * clean up yet, and every rank with the same environment stops the same
 * way, so the first says why, once for the job. */
static void say_config_error(const char *err)
{
	char line[FT_CONFIG_ERR_MAX + 16];
	int n = first_of_job() ? snprintf(line, sizeof line, "ftshim: %s\n", err) : 0;

	if (n > 0) {
		ssize_t w = write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
		(void)w;
	}
}

static void stop_on_config_error(const char *err)
{
	say_config_error(err);
	exit(FT_EXIT_CONFIG);
}

/* Under srun, an MPI and a --mpi plugin that do not match start nothing
 * useful: Debian's Open MPI 4.1 has no PMI-2 client (its MPI_Init fails
 * under --mpi=pmi2), and MPICH finds no PMI-2 server under --mpi=pmix or
 * none, so that each task runs as a job of its own. Task 0 names the
 * launch line that works, once. */
static bool slurm_task_0(void)
{
	const char *id = getenv("SLURM_PROCID");

	return getenv("SLURM_STEP_ID") && id && strcmp(id, "0") == 0;
}

static void check_srun_before_init(void)
{
#ifdef OPEN_MPI
	if (slurm_task_0() && getenv("PMI_FD") && !getenv("PMIX_RANK") && !getenv("OMPI_COMM_WORLD_RANK"))
		say_config_error("srun --mpi=pmi2 started this Open MPI program, which may have no PMI-2 client "
				 "(Debian's Open MPI 4.1 has none: its MPI_Init fails); launch it with srun --mpi=pmix");
#endif
}

static void check_srun_after_init(void)
{
	const char *tasks = getenv("SLURM_STEP_NUM_TASKS");

	if (ftp.world_size == 1 && tasks && atoi(tasks) > 1 && slurm_task_0())
		ft_warn("srun started %s tasks, but each is an MPI job of one rank: the MPI and srun's --mpi "
			"plugin do not match; launch MPICH with srun --mpi=pmi2, Open MPI with srun --mpi=pmix",
			tasks);
}

/* Before PMPI_Init: read the configuration. Returns true if ftshim is on. */
static bool init_config(void)
{
	char err[FT_CONFIG_ERR_MAX];

	if (ftp_mpi.PMPI_Init == NULL)
		stop_on_config_error("the library below libftshim.so exports no PMPI_Init: ftshim needs an MPI library built with its profiling interface");
	ftp.init_ns = ft_clock_now();
	ftp.wall_offset_ns = ft_clock_wall_offset();
	if (ft_config_load(&ftp.cfg, environ, err, sizeof err) != 0)
		stop_on_config_error(err);
	if (ftp.cfg.disable)
		return false;
	/* A name far from every variable's is no typo of one: said once, and
	 * the job goes on (a near miss stopped it above). */
	if (ft_preflight_unknown(environ, err, sizeof err) > 0)
		say_config_error(err);
	/* A log file template with a bad %-sequence is a configuration error
	 * too; find it now, before MPI starts. */
	if (ft_preflight_log_file(&ftp.cfg, err, sizeof err) != 0)
		stop_on_config_error(err);
	if (ftp_inject_parse(err, sizeof err) != 0)
		stop_on_config_error(err);
	if (ftp_mode_select(err, sizeof err) != 0)
		stop_on_config_error(err);
	if (ft_preflight_iface(&ftp.cfg, err, sizeof err) != 0)
		stop_on_config_error(err);
	ft_log_set_level((enum ft_log_level)ftp.cfg.log_level);
	ft_log_set_origin(ftp.init_ns);
	check_srun_before_init();
	return true;
}

/* After PMPI_Init: the tables and the log. */
static int init_state(void)
{
	char err[256];

	atomic_store(&ftp.nprocs, (uint32_t)ftp_job_of_world(ftp.world_size));
	ft_log_set_rank(ftp.rank);
	if (ftp.cfg.log_file[0]) {
		int fd = ft_log_open_file(ftp.cfg.log_file, ftp.rank, err, sizeof err);
		if (fd >= 0)
			ft_log_set_fd(fd);
		else
			ft_warn("FTSHIM_LOG_FILE: %s; logging to stderr", err);
	}
	if (ft_proc_table_init(&ftp.procs, ftp_spawn_capacity()) != 0)
		return -1;
	/* Who hears of failures, messages and communicators, in this order. */
	ftp_listen(&ftp_agree_listener);
	ftp_listen(&ftp_revoke_listener);
	ftp_listen(&ftp_hang_watch_listener);
	ftp_listen(&ftp_merge_listener);
	ftp_listen(&ftp_hostmail_listener);
	ftp_listen(&ftp_shm_repair_listener);
	ftp_listen(&ftp_ckpt_listener);
	ftp_shm_repair_init();
	if (ftp_comms_init() != 0) {
		ft_proc_table_destroy(&ftp.procs);
		return -1;
	}
	find_done_request();
	atomic_store(&ftp.phase, FTP_PHASE_ON);
	if (ftp_world_spawned())
		ft_debug("on: rank %d, spawned (rank %d of %d in its MPI_COMM_WORLD), %s", ftp.rank,
			 ftp_world_of_job(ftp.rank), ftp.world_size, FT_MPI_FLAVOUR);
	else
		ft_debug("on: rank %d of %d, %s", ftp.rank, ftp.world_size, FT_MPI_FLAVOUR);
	if (ftp_mpi_entries_missing() > 0)
		ft_debug("the MPI library exports no PMPI_ entry for %d function(s) its mpi.h declares",
			 ftp_mpi_entries_missing());
	return 0;
}

/* A survivor must not die of writing to a dead peer's socket: the MPI's
 * own TCP transports (UCX, Open MPI's btl) may, across hosts. Ignored
 * only if the program left SIGPIPE at its default. */
static void ignore_sigpipe(void)
{
	struct sigaction old;

	if (sigaction(SIGPIPE, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
		signal(SIGPIPE, SIG_IGN);
}

/* Under Hydra with -disable-auto-cleanup, mpiexec sends SIGUSR1 to every
 * rank when one ends without MPI_Finalize, and MPICH 4's handler (set in
 * its MPI_Init) then asks the launcher, in its progress loop, for the list
 * of dead processes, which it throws away. ftshim detects failures itself,
 * and such a request is harmful: a rank that is cut off, or ends, while
 * its request waits makes mpiexec answer a proxy that has gone, and
 * mpiexec then fails and ends the whole job. So the disposition the
 * program had before MPI_Init comes back (ignored if it was the default,
 * which would end the rank). */
static struct sigaction usr1_before_init;
static bool usr1_saved;

static void save_sigusr1(void)
{
	usr1_saved = sigaction(SIGUSR1, NULL, &usr1_before_init) == 0;
}

static void restore_sigusr1(void)
{
	struct sigaction sa = usr1_before_init;

	if (!usr1_saved || ft_pmi_fd() < 0)
		return;
	if (!(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_DFL)
		sa.sa_handler = SIG_IGN;
	sigaction(SIGUSR1, &sa, NULL);
}

static int init_common(int rc)
{
	if (rc != MPI_SUCCESS)
		return rc;
	restore_sigusr1();
	ignore_sigpipe();
	ft_supervisor_hand_over_pmix();
	int world_rank = 0;
	ftp_mpi.PMPI_Comm_rank(ftp.world, &world_rank);
	ftp_mpi.PMPI_Comm_size(ftp.world, &ftp.world_size);
	ftp.world_id = FT_COMM_WORLD_ID;
	ftp.nfirst = (uint32_t)ftp.world_size;
	/* A launch size that does not fit FTSHIM_REPLICAS stops every rank
	 * alike, before anything starts, rank 0 saying why. */
	char err[FT_CONFIG_ERR_MAX];
	if (ftp_mode_check(err, sizeof err) != 0) {
		if (world_rank == 0)
			say_config_error(err);
		ftp_mpi.PMPI_Finalize();
		exit(FT_EXIT_CONFIG);
	}
	/* A spawned process takes its job rank from its parents first. */
	bool spawned = ftp_spawn_child_join(world_rank);
	ftp.rank = ftp_job_of_world(world_rank);
	bool ok = init_state() == 0;
	check_srun_after_init();
	if (!ok) {
		/* Without its tables ftshim cannot help; say so and get out of
		 * the way rather than fail the application. */
		ft_error("out of memory at MPI_Init; ftshim is off for this rank");
		atomic_store(&ftp.phase, FTP_PHASE_PASS);
	}
	/* Collective: every rank takes part, whatever happened above; a rank
	 * that cannot detect turns detection off for the whole job. */
	if (spawned)
		ftp_spawn_child_go(ok);
	else
		ftp_job_start(ok);
	if (ok && !spawned)
		ftp_mode_start();
	ftp_job_up();
	if (ok && !spawned && ftp_mode_admit() == FTP_ADMIT_END) {
		/* A spare the program never needed: it leaves as a rank that
		 * finished, its main never run past MPI_Init. */
		MPI_Finalize();
		exit(0);
	}
	return rc;
}

/* Open MPI: finalize this rank's PMIx client, as the MPI's own
 * MPI_Finalize would have, and, from the lowest rank of this world still
 * here, have the launcher kill this world's ranks that crashed: without
 * both, mpirun never ends a job whose failures were on another node (see
 * src/pmix.h). Every rank here knows the same failures. */
static void pmix_done(void)
{
	uint32_t size = (uint32_t)ftp.world_size, n = 0, lowest = 0;
	uint32_t *crashed = malloc((size_t)size * sizeof *crashed);

	while (lowest < size && ft_proc_is_failed(&ftp.procs, (uint32_t)ftp_job_of_world((int)lowest)))
		lowest++;
	if (crashed && ftp_job_of_world((int)lowest) == ftp.rank) {
		for (uint32_t w = 0; w < size; w++) {
			uint32_t r = (uint32_t)ftp_job_of_world((int)w);
			if (ft_proc_is_failed(&ftp.procs, r) && ft_how_is_crash(ftp.procs.procs[r].how))
				crashed[n++] = w;
		}
	}
	if (n > 0 && ft_pmix_kill(crashed, n) == 0)
		ft_debug("asked the launcher to kill the %u rank(s) that crashed (they are gone: it counts them then)", n);
	if (ft_pmix_finalize() == 0) {
		ft_supervisor_pmix_finalized();
		ft_debug("PMIx client finalized");
	}
	free(crashed);
}

/* What is open: the world model (MPI_Init to MPI_Finalize) and the
 * sessions made while ftshim is on. ftshim ends with the last of them.
 * Application thread only (MPI_Init, MPI_Finalize and the session calls
 * of a process are its own). */
static bool world_open;
static int sessions_open;
/* ftp.world was made from a session's process set: ftshim frees it. */
static bool world_from_session;

/* Before the MPI's own start: whether ftshim starts with it. Not if it
 * started already (by MPI_Init or a session) or decided to stay off;
 * FTSHIM_DISABLE turns it off here. */
static bool start_here(void)
{
	ftp_mpi_ready();
	if (atomic_load(&ftp.phase) != FTP_PHASE_OFF)
		return false;
	const char *foreign = ftp_mpi_foreign();
	if (foreign) {
		char err[FT_CONFIG_ERR_MAX];
		snprintf(err, sizeof err,
			 "this libftshim.so was built for %s, but the program runs on %s: preload "
			 "the one built for the program's MPI (PREFIX/lib/ftshim/FLAVOUR/libftshim.so)",
			 FT_MPI_FLAVOUR, foreign);
		stop_on_config_error(err);
	}
	if (!init_config()) {
		atomic_store(&ftp.phase, FTP_PHASE_PASS);
		return false;
	}
	save_sigusr1();
	return true;
}

/* A spawned process waits in the MPI's own start for its parents, which
 * may die in MPI_Comm_spawn: then it would wait for ever. The launchers
 * say so in its environment (Open MPI, Hydra). */
static void watch_spawned_start(enum ftp_fn fn)
{
	if (getenv("OMPI_PARENT_PORT") || getenv("PMI_SPAWNED"))
		ftp_hang_watch_deadline(fn, ftp_spawn_handshake_ns(), NULL);
}

/* The level MPI_Init_thread provided, for a run of main after a restart
 * in place (pmpi/restart.h). */
static int thread_provided = MPI_THREAD_SINGLE;

FT_EXPORT int MPI_Init(int *argc, char ***argv)
{
	/* main runs again after a restart in place: the MPI and ftshim are
	 * on already, and MPI_COMM_WORLD is the repaired world. */
	if (ftp_active() && ftp_restarted())
		return MPI_SUCCESS;
	bool start = start_here();

	if (start) {
		ftp.world = MPI_COMM_WORLD;
		watch_spawned_start(FTP_FN_MPI_Init);
	}
	int rc = ftp_mpi.PMPI_Init(argc, argv);
	ftp_hang_watch_end();
	if (start)
		rc = init_common(rc);
	world_open = rc == MPI_SUCCESS;
	return rc;
}
FTP_ALSO_PMPI(MPI_Init);

FT_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	if (ftp_active() && ftp_restarted()) {
		*provided = thread_provided;
		return MPI_SUCCESS;
	}
	bool start = start_here();

	if (start) {
		ftp.world = MPI_COMM_WORLD;
		watch_spawned_start(FTP_FN_MPI_Init_thread);
	}
	int rc = ftp_mpi.PMPI_Init_thread(argc, argv, required, provided);
	if (rc == MPI_SUCCESS)
		thread_provided = *provided;
	ftp_hang_watch_end();
	if (start)
		rc = init_common(rc);
	world_open = rc == MPI_SUCCESS;
	return rc;
}
FTP_ALSO_PMPI(MPI_Init_thread);

/* The MPI's own end: MPI_Finalize, or MPI_Session_finalize of *session
 * (a MPI_Session *, NULL for MPI_Finalize; void, as Open MPI 4.1 has no
 * sessions). */
static int mpi_end(void *session)
{
#if MPI_VERSION >= 4
	if (session)
		return ftp_mpi.PMPI_Session_finalize(session);
#endif
	(void)session;
	return ftp_mpi.PMPI_Finalize();
}

/* The end of the world model or of a session while the other remains:
 * ftshim stays on. Once a rank has failed the MPI's end could wait for
 * it (see end_shim), so it is skipped. */
static int end_one(void *session)
{
	if (atomic_load(&ftp.procs.nfailed) > 0)
		return MPI_SUCCESS;
	return mpi_end(session);
}

/* The last end: ftshim leaves the job, writes the report, and ends the
 * MPI (or does not, see below). */
static int end_shim(void *session)
{
	/* Deaths on this host from here on are ones the control plane may
	 * not have told: a rank that dies as the others leave it. Marked
	 * before the release, since rank 0 merges the report after it and a
	 * death meanwhile must still count. */
	struct ftp_deaths_mark deaths;
	ftp_deaths_mark(&deaths);
	ftp_job_group_release();
	ftp_rundir_write_events();
	ftp_detect_finish();
	ft_supervisor_finished();
	ftp_hostmail_stop();
	ftp_job_report();
	int rc = MPI_SUCCESS;
	uint32_t nfailed = atomic_load(&ftp.procs.nfailed);
	/* Once a rank has failed, the MPI's own MPI_Finalize can wait for it
	 * forever: MPICH's always does (a PMI barrier over every rank), Open
	 * MPI 4.1's did in half of our runs with several deaths. Every rank
	 * still here has left the control plane knowing the same failures,
	 * so all of them skip it alike (a rank re-admitted, FTSHIM_READMIT,
	 * has its own failure in its table). */
	if (nfailed > 0) {
		ft_debug("%u rank(s) failed: not calling the MPI library's %s, which could wait for them forever",
			 nfailed, session ? "MPI_Session_finalize" : "MPI_Finalize");
		/* But tell the launcher that this rank is done. */
		ftp_pmi_done(2000);
		pmix_done();
	} else {
		/* The MPI wants every object of a session freed before it. */
		if (world_from_session)
			ftp_mpi.PMPI_Comm_free(&ftp.world);
		/* All agree that nobody failed; but a rank that died after it
		 * had left the control plane would hold this for ever. */
		ftp_hang_watch_deadline(FTP_FN_MPI_Finalize, ftp_hang_watch_long(), &deaths);
		ftp_leave_mpi_finalizing();
		rc = mpi_end(session);
		ftp_hang_watch_end();
		ft_supervisor_pmix_finalized();
	}
	atomic_store(&ftp.phase, FTP_PHASE_DONE);
	ftp_comms_fini(ftp_obj_free);
	ft_proc_table_destroy(&ftp.procs);
	if (ftp_ucx_yields() > 0)
		ft_debug("the MPI's own waits yielded the CPU %llu time(s) (ucp_worker_progress)",
			 (unsigned long long)ftp_ucx_yields());
	ft_debug("finalized");
	ft_log_close();
	return rc;
}

FT_EXPORT int MPI_Finalize(void)
{
	if (!ftp_active())
		return ftp_mpi.PMPI_Finalize();
	world_open = false;
	/* As the MPI's own would, first delete MPI_COMM_SELF's attributes:
	 * their callbacks may call MPI, and the MPI's own finalize may be
	 * skipped. The shim stays on through PMPI_Finalize too, for
	 * attributes set where ftshim does not see them (Fortran). */
	ftp_self_attrs_delete();
	ftp_mode_finish();
	return sessions_open > 0 ? end_one(NULL) : end_shim(NULL);
}
FTP_ALSO_PMPI(MPI_Finalize);

#if MPI_VERSION >= 4
/* A program on sessions alone has no MPI_COMM_WORLD: ftshim starts over
 * a communicator of the session's mpi://WORLD process set, made while
 * every process is in its first MPI_Session_init. */
static int world_of_session(MPI_Session session)
{
	MPI_Group group;
	int rc = ftp_mpi.PMPI_Group_from_session_pset(session, "mpi://WORLD", &group);

	if (rc != MPI_SUCCESS)
		return rc;
	rc = ftp_mpi.PMPI_Comm_create_from_group(group, "org.ftshim.world", MPI_INFO_NULL, MPI_ERRORS_RETURN,
						 &ftp.world);
	ftp_mpi.PMPI_Group_free(&group);
	world_from_session = rc == MPI_SUCCESS;
	return rc;
}

FT_EXPORT int MPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
	bool start = start_here();
	int rc = ftp_mpi.PMPI_Session_init(info, errhandler, session);

	if (start && rc == MPI_SUCCESS && world_of_session(*session) != MPI_SUCCESS) {
		ft_error("MPI_Session_init: cannot make a communicator of the process set mpi://WORLD; ftshim is off for this process");
		atomic_store(&ftp.phase, FTP_PHASE_PASS);
		return rc;
	}
	if (start)
		rc = init_common(rc);
	if (rc == MPI_SUCCESS && ftp_active())
		sessions_open++;
	return rc;
}
FTP_ALSO_PMPI(MPI_Session_init);

FT_EXPORT int MPI_Session_finalize(MPI_Session *session)
{
	if (!ftp_active() || sessions_open == 0)
		return ftp_mpi.PMPI_Session_finalize(session);
	sessions_open--;
	if (sessions_open > 0 || world_open)
		return end_one(session);
	return end_shim(session);
}
FTP_ALSO_PMPI(MPI_Session_finalize);
#endif

FT_EXPORT int MPI_Abort(MPI_Comm comm, int errorcode)
{
	if (ftp_active()) {
		ft_info("MPI_Abort(errorcode %d) called by the application: ending every rank", errorcode);
		ftp_detect_abort(errorcode);
	}
	return ftp_mpi.PMPI_Abort(ftp_seam_real(comm), errorcode);
}
FTP_ALSO_PMPI(MPI_Abort);

FT_EXPORT int MPI_Initialized(int *flag)
{
	ftp_mpi_ready();
	return ftp_mpi.PMPI_Initialized(flag);
}
FTP_ALSO_PMPI(MPI_Initialized);

/* After ftshim's MPI_Finalize the answer is yes, whatever the MPI says. */
FT_EXPORT int MPI_Finalized(int *flag)
{
	ftp_mpi_ready();
	if (atomic_load(&ftp.phase) == FTP_PHASE_DONE) {
		*flag = 1;
		return MPI_SUCCESS;
	}
	return ftp_mpi.PMPI_Finalized(flag);
}
FTP_ALSO_PMPI(MPI_Finalized);
