/* prune.c: removing old job directories (see prune.h). A directory's own
 * modification time moves whenever a file is created or renamed in it
 * (every rank's events, the report, at the job's end), so one stat per
 * directory tells its age; only old ones have their "ranks" file read. */
#include "ftshim_config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "src/prune.h"

void ft_rundir_base(const char *configured, char *out, size_t outlen)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (configured && configured[0])
		snprintf(out, outlen, "%s", configured);
	else if (xdg && xdg[0])
		snprintf(out, outlen, "%s/ftshim", xdg);
	else
		snprintf(out, outlen, "/tmp/ftshim-%ld", (long)getuid());
}

/* Field 3 (the state) and field 22 (the start time) of /proc/PID/stat;
 * false if there is no such process. */
static bool read_stat(pid_t pid, char *state, unsigned long long *ticks)
{
	char path[64], buf[1024];

	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* After the command name, which may hold spaces and parentheses. */
	char *p = strrchr(buf, ')');
	return p && sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
			   state, ticks) == 2;
}

uint64_t ft_process_start_ticks(pid_t pid)
{
	char state;
	unsigned long long ticks;

	return read_stat(pid, &state, &ticks) ? ticks : 0;
}

char ft_process_state(pid_t pid, uint64_t start_ticks)
{
	char state;
	unsigned long long ticks;

	if (!read_stat(pid, &state, &ticks) || ticks != start_ticks)
		return 0;
	return state;
}

int ft_process_pidfd(pid_t pid, uint64_t start_ticks)
{
	if (pid <= 0)
		return -EINVAL;
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		return -errno;
	if (ft_process_start_ticks(pid) != start_ticks) {
		close(fd);
		return -ESRCH;
	}
	return fd;
}

static bool is_job_id(const char *name)
{
	size_t n = 0;

	for (; name[n]; n++)
		if (!((name[n] >= '0' && name[n] <= '9') || (name[n] >= 'a' && name[n] <= 'f')))
			return false;
	return n == 12;
}

/* Is a rank of this job on this host still running? Unreadable: assume so. */
static bool has_live_rank(const char *dir, const char *host)
{
	char path[PATH_MAX], line[512];

	if ((size_t)snprintf(path, sizeof path, "%s/ranks", dir) >= sizeof path)
		return true;
	FILE *f = fopen(path, "re");
	if (!f)
		return access(path, F_OK) == 0;
	bool live = false;
	while (!live && fgets(line, sizeof line, f)) {
		char rank_host[256];
		long pid;
		unsigned long long ticks;
		if (sscanf(line, "%*d %255s %ld %llu", rank_host, &pid, &ticks) == 3 && strcmp(rank_host, host) == 0 &&
		    pid > 0)
			live = ft_process_start_ticks((pid_t)pid) == ticks;
	}
	fclose(f);
	return live;
}

/* Remove dir if it holds only regular files; true if it is gone. */
static bool remove_job_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[PATH_MAX];
	struct stat st;

	if (!d)
		return false;
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= sizeof path ||
		    lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
			closedir(d);
			return false; /* not ours as we made it: leave it alone */
		}
	}
	rewinddir(d);
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, de->d_name) < sizeof path)
			unlink(path);
	}
	closedir(d);
	return rmdir(dir) == 0;
}

unsigned ft_rundir_prune(const char *base, const char *host, time_t now, time_t keep_s)
{
	DIR *d = opendir(base);
	struct dirent *de;
	unsigned removed = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) != NULL) {
		char dir[PATH_MAX];
		struct stat st;
		if (!is_job_id(de->d_name))
			continue;
		if ((size_t)snprintf(dir, sizeof dir, "%s/%s", base, de->d_name) >= sizeof dir ||
		    lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || now - st.st_mtime < keep_s)
			continue;
		if (!has_live_rank(dir, host) && remove_job_dir(dir))
			removed++;
	}
	closedir(d);
	return removed;
}
