/* rundir.c: the run directory. Each job gets RUNDIR/JOBID, where the
 * lowest rank on each host writes what ftshim-inject needs to find the
 * job's processes (the file "job", and "ranks": one line per rank with its
 * host, pid and start time, so that a reused pid is never mistaken for a
 * rank, and, for a replica, "replica-of=RANK") and where every injection is appended to "injections", one line
 * each. The directory is per user and per host (it lives under /tmp or
 * $XDG_RUNTIME_DIR unless FTSHIM_RUNDIR says otherwise); losing it loses
 * nothing but that bookkeeping, so errors only warn. */
#include "ftshim_config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pmpi/rundir.h"
#include "pmpi/ranks.h"
#include "pmpi/mode/mode.h"
#include "pmpi/detect.h"
#include "src/log.h"
#include "src/prune.h"
#include "src/report.h"
#include "src/supervisor.h"

/* Earlier jobs' directories are kept this long (then removed by the next
 * job on the host, once none of their ranks here runs). */
#define RUNDIR_KEEP_S (7 * 86400)

/* Written in MPI_Init, read-only afterwards (any thread). */
static char jobdir[PATH_MAX];
static bool lowest_on_host; /* this rank keeps the host's files */

static int make_dir(const char *path)
{
	if (mkdir(path, 0700) == 0 || errno == EEXIST)
		return 0;
	return -errno;
}

static const char *launcher_name(void)
{
	if (getenv("OMPI_COMM_WORLD_RANK"))
		return "openmpi";
	if (getenv("PMI_RANK"))
		return "hydra";
	return "unknown";
}

/* "job" and "ranks", by the lowest rank on this host. */
static int write_job_files(void)
{
	char path[PATH_MAX + 16], program[PATH_MAX] = "unknown";
	uint32_t nprocs = atomic_load(&ftp.nprocs);
	size_t cap = (size_t)nprocs * 112 + 64, used = 0;
	char *ranks = malloc(cap);
	int rc;

	if (!ranks)
		return -ENOMEM;
	ssize_t n = readlink("/proc/self/exe", program, sizeof program - 1);
	if (n > 0)
		program[n] = '\0';
	for (uint32_t r = 0; r < nprocs; r++) {
		const struct ftp_peer *p = &ftp.peers[r];
		if (!p->pid)
			continue; /* joined where this process did not see it */
		/* A process that serves another's program rank (a replica) names
		 * it (ftshim-inject --copy). */
		char serves[32] = "";
		struct ftp_mode_rank m;
		if (ftp_mode_report_rank((int32_t)r, &m) && m.serves_other)
			snprintf(serves, sizeof serves, " replica-of=%d", m.program);
		else if (ftp_mode_report_rank((int32_t)r, &m) && m.spare >= 0)
			snprintf(serves, sizeof serves, " spare=%d", m.spare);
		int w = snprintf(ranks + used, cap - used, "%u %s %d %llu%s\n", r, p->host, p->pid,
				 (unsigned long long)p->start_ticks, serves);
		if (w < 0 || (size_t)w >= cap - used)
			break;
		used += (size_t)w;
	}
	snprintf(path, sizeof path, "%s/ranks", jobdir);
	rc = ft_write_file_atomically(path, ranks, strlen(ranks));
	free(ranks);
	if (rc != 0)
		return rc;
	char job[PATH_MAX + 256];
	snprintf(job, sizeof job, "job=%s\nsize=%u\nstarted=%lld\nlauncher=%s\nprogram=%s\n", ftp.job_id,
		 nprocs, (long long)time(NULL), launcher_name(), program);
	snprintf(path, sizeof path, "%s/job", jobdir);
	return ft_write_file_atomically(path, job, strlen(job));
}

void ftp_rundir_start(void)
{
	char base[PATH_MAX - 32];
	int rc;

	ft_rundir_base(ftp.cfg.rundir, base, sizeof base);
	snprintf(jobdir, sizeof jobdir, "%s/%s", base, ftp.job_id);
	rc = make_dir(base);
	if (rc == 0)
		rc = make_dir(jobdir);
	if (rc != 0) {
		ft_warn("run directory %s: %s; ftshim-inject will not see this job, and the job report will lack "
			"this host's events", jobdir, strerror(-rc));
		jobdir[0] = '\0';
		return;
	}
	/* The lowest of the job's first ranks on this host; in a spawned
	 * world, the lowest of that world (which rewrites them with its own). */
	int lowest = ftp.rank;
	for (int r = ftp_job_of_world(0); r < ftp.rank; r++) {
		if (ftp_same_host((uint32_t)r, (uint32_t)ftp.rank)) {
			lowest = r;
			break;
		}
	}
	lowest_on_host = lowest == ftp.rank;
	if (rc == 0 && lowest_on_host)
		rc = write_job_files();
	if (rc != 0) {
		ft_warn("run directory %s: %s; ftshim-inject will not see this job", jobdir, strerror(-rc));
		return;
	}
	char deaths[PATH_MAX + 16];
	snprintf(deaths, sizeof deaths, "%s/deaths", jobdir);
	ft_supervisor_tell(deaths, ftp.rank, ftp.peers[ftp.rank].host);
	ft_debug("run directory %s", jobdir);
}

const char *ftp_rundir_dir(void)
{
	return jobdir[0] ? jobdir : NULL;
}

int ftp_rundir_path(const char *name, char *out, size_t len)
{
	if (!jobdir[0])
		return -ENOENT;
	int n = snprintf(out, len, "%s/%s", jobdir, name);
	return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

void ftp_rundir_write_events(void)
{
	char path[PATH_MAX + 32];

	ft_events_add(ftp_wall_now(), "finalize", NULL);
	if (!jobdir[0])
		return;
	/* Earlier jobs' directories go at the end of this one, not at
	 * MPI_Init, where the application waits. */
	if (lowest_on_host) {
		char base[PATH_MAX];
		ft_rundir_base(ftp.cfg.rundir, base, sizeof base);
		unsigned n = ft_rundir_prune(base, ftp.peers[ftp.rank].host, time(NULL), RUNDIR_KEEP_S);
		if (n)
			ft_debug("removed %u job director%s older than %d days from %s", n, n == 1 ? "y" : "ies",
				 RUNDIR_KEEP_S / 86400, base);
	}
	snprintf(path, sizeof path, "%s/events.%d.jsonl", jobdir, ftp.rank);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || ft_events_write(fd) != 0)
		ft_warn("cannot write this rank's events to %s: %s; the job report will lack them", path,
			strerror(errno));
	if (fd >= 0)
		close(fd);
}

void ftp_rundir_record_injection(const char *line)
{
	char path[PATH_MAX + 16], buf[1024];
	int n = snprintf(buf, sizeof buf, "%s\n", line);

	if (!jobdir[0] || n <= 0)
		return;
	snprintf(path, sizeof path, "%s/injections", jobdir);
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0) {
		ft_warn("cannot record the injection in %s: %s", path, strerror(errno));
		return;
	}
	/* One write: lines from ranks injecting at once do not mix. */
	ssize_t w = write(fd, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
	(void)w;
	close(fd);
}
