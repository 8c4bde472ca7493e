/* rundir.c: the run directory. Each job gets RUNDIR/JOBID, where the
 * lowest rank on each host writes what ftshim-inject needs to find the
 * job's processes (the file "job", and "ranks": one line per rank with its
 * host, pid and start time, so that a reused pid is never mistaken for a
 * rank) and where every injection is appended to "injections", one line
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

#include "pmpi/call.h"
#include "src/log.h"

/* Written in MPI_Init, read-only afterwards (any thread). */
static char jobdir[PATH_MAX];

static int make_dir(const char *path)
{
	if (mkdir(path, 0700) == 0 || errno == EEXIST)
		return 0;
	return -errno;
}

static void default_rundir(char *out, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (ftp.cfg.rundir[0])
		snprintf(out, len, "%s", ftp.cfg.rundir);
	else if (xdg && xdg[0])
		snprintf(out, len, "%s/ftshim", xdg);
	else
		snprintf(out, len, "/tmp/ftshim-%ld", (long)getuid());
}

/* Write path atomically (a temporary file, then rename). */
static int write_file(const char *path, const char *text)
{
	char tmp[PATH_MAX + 16];
	int fd, rc = 0;

	snprintf(tmp, sizeof tmp, "%s.%ld", path, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	size_t len = strlen(text);
	if (write(fd, text, len) != (ssize_t)len)
		rc = -EIO;
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc != 0)
		unlink(tmp);
	return rc;
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
	size_t cap = (size_t)ftp.world_size * 112 + 64, used = 0;
	char *ranks = malloc(cap);
	int rc;

	if (!ranks)
		return -ENOMEM;
	ssize_t n = readlink("/proc/self/exe", program, sizeof program - 1);
	if (n > 0)
		program[n] = '\0';
	for (int r = 0; r < ftp.world_size; r++) {
		const struct ftp_peer *p = &ftp.peers[r];
		int w = snprintf(ranks + used, cap - used, "%d %s %d %llu\n", r, p->host, p->pid,
				 (unsigned long long)p->start_ticks);
		if (w < 0 || (size_t)w >= cap - used)
			break;
		used += (size_t)w;
	}
	snprintf(path, sizeof path, "%s/ranks", jobdir);
	rc = write_file(path, ranks);
	free(ranks);
	if (rc != 0)
		return rc;
	char job[PATH_MAX + 256];
	snprintf(job, sizeof job, "job=%s\nsize=%d\nstarted=%lld\nlauncher=%s\nprogram=%s\n", ftp.job_id,
		 ftp.world_size, (long long)time(NULL), launcher_name(), program);
	snprintf(path, sizeof path, "%s/job", jobdir);
	return write_file(path, job);
}

void ftp_rundir_start(void)
{
	char base[PATH_MAX - 32];
	int rc;

	default_rundir(base, sizeof base);
	snprintf(jobdir, sizeof jobdir, "%s/%s", base, ftp.job_id);
	rc = make_dir(base);
	if (rc == 0)
		rc = make_dir(jobdir);
	int lowest = ftp.world_rank;
	for (int r = 0; r < ftp.world_rank; r++) {
		if (ftp.peers[r].ep.host_id == ftp.peers[ftp.world_rank].ep.host_id) {
			lowest = r;
			break;
		}
	}
	if (rc == 0 && lowest == ftp.world_rank)
		rc = write_job_files();
	if (rc != 0) {
		ft_warn("run directory %s: %s; ftshim-inject will not see this job", jobdir, strerror(-rc));
		return;
	}
	ft_debug("run directory %s", jobdir);
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
