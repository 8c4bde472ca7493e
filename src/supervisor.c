/* supervisor.c: the parent that records a rank's death by signal and
 * turns it into an exit, or dies of it too (see supervisor.h). The parent
 * is a copy of the process before main: it must touch nothing it shares
 * with the child (the PMI socket, which it closes, stdio buffers), so it
 * only relays signals, waits, records a death by signal for the job
 * report (a line appended with plain system calls to the file the child
 * named), says the PMIx finalize the child did not (on the connection
 * the child handed over, FT_SUPERVISE_PMIX_GOODBYE) and _exits or dies.
 * Before it exits after a death by signal, it waits for the job's other
 * ranks on this host to end (job_completed_here): the launcher's status
 * is to say whether the program completed, not that a rank was lost. */
#include "ftshim_config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "src/common.h"
#include "src/inject.h"
#include "src/pmix.h"
#include "src/prune.h"
#include "src/supervisor.h"

/* Written once by the parent before its handlers are installed. */
static pid_t supervised_child;
/* ft_supervise's flags; written before the fork. */
static unsigned supervise_flags;
/* With FT_SUPERVISE_PMIX_GOODBYE, each process's end of a socket pair
 * made before the fork, over which the child hands the parent its PMIx
 * connection (SCM_RIGHTS) and then closes it; -1 otherwise, and in the
 * child once it has. */
static int handoff_fd = -1;

/* A page shared by the parent and the child (MAP_SHARED, made before the
 * fork): the child fills it once after MPI_Init (ft_supervisor_tell); the
 * parent reads it only after the child has died. NULL when unsupervised. */
struct death_record {
	char path[PATH_MAX];
	char host[64];
	int rank;
	int ready; /* set last by the child */
	int pmix_finalized; /* set by the child, read by the parent after its death */
};
static struct death_record *record;

/* In the parent, after the child died of sig: one line for the report. */
static void record_death(pid_t child, int sig)
{
	struct timespec now;
	char line[512];

	if (!record || !record->ready)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	const char *name = ft_inject_signal_name(sig);
	int n = snprintf(line, sizeof line, "time=%lld.%06ld rank=%d host=%s pid=%ld how=%s by=supervisor\n",
			 (long long)now.tv_sec, now.tv_nsec / 1000, record->rank, record->host, (long)child,
			 name ? name : "signal");
	int fd = open(record->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0 || n <= 0)
		return;
	ssize_t w = write(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
	(void)w;
	close(fd);
}

/* Whether job rank r finished: its MPI_Finalize saw every other rank
 * leave or fail, and it wrote its rank in the job directory's "finished"
 * (ft_supervisor_finished). */
static bool finished(const char *jobdir, int r)
{
	char path[PATH_MAX + 32], line[32];
	bool found = false;

	snprintf(path, sizeof path, "%s/finished", jobdir);
	FILE *f = fopen(path, "re");
	while (f && !found && fgets(line, sizeof line, f))
		found = atoi(line) == r && line[0] >= '0' && line[0] <= '9';
	if (f)
		fclose(f);
	return found;
}

/* The job's directory, from the deaths file the child named; false if
 * the child never named one (it ended before MPI_Init did). */
static bool job_dir(char *out, size_t len)
{
	if (!record || !__atomic_load_n(&record->ready, __ATOMIC_ACQUIRE))
		return false;
	snprintf(out, len, "%s", record->path);
	char *slash = strrchr(out, '/');
	if (!slash)
		return false;
	*slash = '\0';
	return true;
}

static bool child_finished(void)
{
	char jobdir[PATH_MAX];

	return job_dir(jobdir, sizeof jobdir) && finished(jobdir, record->rank);
}

/* In the parent, after the child ended without finishing its program (a
 * signal, or a non-zero exit before MPI_Finalize ended): whether the
 * program completed all the same, as far as this host can tell. Yes if
 * the child had finished (it died in the MPI's own MPI_Finalize), else once every
 * other rank of the job on this host has ended (the run directory's
 * "ranks" names them, with pid and start time), yes if one of them
 * finished. No if the child had not told where the job's directory is
 * (it died before MPI_Init ended) or it was alone on this host: the
 * survivors elsewhere say the rest through their own statuses. */
static bool job_completed_here(void)
{
	char jobdir[PATH_MAX], path[PATH_MAX + 16], line[512];
	struct peer {
		int rank;
		pid_t pid;
		unsigned long long ticks;
	} *peers = NULL;
	size_t n = 0, cap = 0;

	if (!job_dir(jobdir, sizeof jobdir))
		return false;
	if (finished(jobdir, record->rank))
		return true;
	/* This host's other ranks, read once. */
	snprintf(path, sizeof path, "%s/ranks", jobdir);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof line, f)) {
		struct peer p;
		long pid;
		char host[64];
		if (sscanf(line, "%d %63s %ld %llu", &p.rank, host, &pid, &p.ticks) != 4 || p.rank == record->rank ||
		    strcmp(host, record->host) != 0)
			continue;
		if (n == cap) {
			struct peer *grown = realloc(peers, (cap = cap ? 2 * cap : 16) * sizeof *peers);
			if (!grown)
				break;
			peers = grown;
		}
		p.pid = (pid_t)pid;
		peers[n++] = p;
	}
	fclose(f);
	/* Until they have all ended; then whether one finished. */
	bool done = false;
	for (size_t live = n; live > 0;) {
		live = 0;
		for (size_t i = 0; i < n; i++) {
			if (peers[i].pid == 0)
				continue;
			if (ft_process_start_ticks(peers[i].pid) == peers[i].ticks) {
				live++;
				continue;
			}
			done = done || finished(jobdir, peers[i].rank);
			peers[i].pid = 0;
		}
		if (live) {
			struct timespec pause = { 0, 100 * 1000 * 1000 };
			nanosleep(&pause, NULL);
		}
	}
	free(peers);
	return done;
}

void ft_supervisor_tell(const char *deaths_path, int rank, const char *host)
{
	if (!record)
		return;
	snprintf(record->path, sizeof record->path, "%s", deaths_path);
	snprintf(record->host, sizeof record->host, "%s", host);
	record->rank = rank;
	__atomic_store_n(&record->ready, 1, __ATOMIC_RELEASE);
}

/* The hand-off's one message: a byte, and room for one descriptor. */
struct handoff_message {
	char byte;
	struct iovec iov;
	union {
		struct cmsghdr align;
		char space[CMSG_SPACE(sizeof(int))];
	} control;
	struct msghdr msg;
};

static void handoff_message_init(struct handoff_message *m)
{
	memset(m, 0, sizeof *m);
	m->byte = 'P';
	m->iov.iov_base = &m->byte;
	m->iov.iov_len = 1;
	m->msg.msg_iov = &m->iov;
	m->msg.msg_iovlen = 1;
	m->msg.msg_control = m->control.space;
	m->msg.msg_controllen = sizeof m->control.space;
}

void ft_supervisor_hand_over_pmix(void)
{
	if (handoff_fd < 0)
		return;
	int fd = ft_pmix_server_socket();
	if (fd >= 0) {
		struct handoff_message m;
		handoff_message_init(&m);
		struct cmsghdr *c = CMSG_FIRSTHDR(&m.msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof fd);
		while (sendmsg(handoff_fd, &m.msg, MSG_NOSIGNAL) < 0 && errno == EINTR)
			;
	}
	close(handoff_fd);
	handoff_fd = -1;
}

void ft_supervisor_finished(void)
{
	char jobdir[PATH_MAX], path[PATH_MAX + 16], line[32];

	if (!job_dir(jobdir, sizeof jobdir))
		return;
	snprintf(path, sizeof path, "%s/finished", jobdir);
	int n = snprintf(line, sizeof line, "%d\n", record->rank);
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	/* One short write with O_APPEND: lines of ranks never mix. */
	ssize_t w = write(fd, line, (size_t)n);
	(void)w;
	close(fd);
}

void ft_supervisor_pmix_finalized(void)
{
	if (record)
		__atomic_store_n(&record->pmix_finalized, 1, __ATOMIC_RELEASE);
}

/* In the parent: the connection the child hands over, or -1 once the
 * child closed its end without one (it has no PMIx server, or died
 * first). Blocks until then, which is at the child's MPI_Init or end. */
static int receive_pmix_connection(void)
{
	struct handoff_message m;
	ssize_t n;
	int fd = -1;

	handoff_message_init(&m);
	while ((n = recvmsg(handoff_fd, &m.msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&m.msg) : NULL;
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&fd, CMSG_DATA(c), sizeof fd);
	close(handoff_fd);
	handoff_fd = -1;
	return fd;
}

/* The signals a launcher or a user sends to the process it knows, which
 * is the parent; the rank must get them. SIGKILL and SIGSTOP cannot be
 * caught: SIGKILL kills the parent, and the child with it. */
static const int relayed[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2,
			       SIGALRM, SIGCONT, SIGTSTP, SIGTTIN, SIGTTOU, SIGWINCH };

static void relay(int sig)
{
	int saved = errno;

	kill(supervised_child, sig);
	errno = saved;
}

/* The parent keeps no descriptor but stdio (and the hand-off socket).
 * Above all not its copy of the PMI socket: Hydra's proxy marks a rank
 * whose PMI socket closes without a finalize with a provisional raw
 * status 1, and keeps it if that close is handled after it has reaped
 * the process. Held by the
 * parent too, the socket closed only when the parent exited, at the
 * moment its status was reaped, and one job in a few then ended with
 * "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Hangup (signal 1)"
 * (raw status 1 read as a death by SIGHUP) and exit status 1. Closed
 * here, it closes when the rank itself dies, well before. */
static void close_inherited(int keep)
{
	if (keep < 3) {
		if (close_range(3, ~0u, 0) == 0)
			return;
	} else if ((keep == 3 || close_range(3, (unsigned)keep - 1, 0) == 0) &&
		   close_range((unsigned)keep + 1, ~0u, 0) == 0) {
		return;
	}
	long max = sysconf(_SC_OPEN_MAX);
	for (long fd = 3; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
		if (fd != keep)
			close((int)fd);
}

static _Noreturn void supervise_child(pid_t child)
{
	struct sigaction sa;
	int status;

	supervised_child = child;
	close_inherited(handoff_fd);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = relay;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < FT_ARRAY_SIZE(relayed); i++)
		sigaction(relayed[i], &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	int pmix_fd = handoff_fd >= 0 ? receive_pmix_connection() : -1;
	while (waitpid(child, &status, 0) < 0) {
		if (errno != EINTR)
			_exit(127);
	}
	if (pmix_fd >= 0) {
		bool finalized = record ? __atomic_load_n(&record->pmix_finalized, __ATOMIC_ACQUIRE)
					: !WIFSIGNALED(status);
		if (!finalized)
			ft_pmix_goodbye(pmix_fd, 2000);
		close(pmix_fd);
	}
	/* A rank lost: the launcher's status says whether the program
	 * completed without it. A rank that exits after finishing keeps its
	 * own status (the program's). Not under Open MPI's mpirun (DIE_ALIKE
	 * alone), whose status says nothing either way and whose daemons
	 * expect the death they saw. */
	bool lost = WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0 && !child_finished());
	bool outcome = !(supervise_flags & FT_SUPERVISE_DIE_ALIKE) || (supervise_flags & FT_SUPERVISE_PMIX_GOODBYE);
	if (WIFSIGNALED(status))
		record_death(child, WTERMSIG(status));
	if (lost && outcome && job_completed_here())
		_exit(0);
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		if (supervise_flags & FT_SUPERVISE_DIE_ALIKE) {
			/* No core of the parent: the child's is the one that
			 * matters, and the parent's could overwrite it. */
			struct rlimit none = { 0, 0 };
			sigset_t set;
			setrlimit(RLIMIT_CORE, &none);
			signal(sig, SIG_DFL);
			sigemptyset(&set);
			sigaddset(&set, sig);
			sigprocmask(SIG_UNBLOCK, &set, NULL);
			kill(getpid(), sig);
		}
		_exit(128 + sig);
	}
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 127);
}

int ft_supervise(unsigned flags)
{
	supervise_flags = flags;
	pid_t parent = getpid();
	void *page = mmap(NULL, sizeof *record, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	record = page == MAP_FAILED ? NULL : page;
	int pair[2] = { -1, -1 };
	if ((flags & FT_SUPERVISE_PMIX_GOODBYE) && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
		pair[0] = pair[1] = -1;
	pid_t child = fork();

	if (child < 0) {
		int err = errno;
		if (pair[0] >= 0) {
			close(pair[0]);
			close(pair[1]);
		}
		return -err;
	}
	if (child > 0) {
		if (pair[1] >= 0)
			close(pair[1]);
		handoff_fd = pair[0];
		supervise_child(child);
	}
	if (pair[0] >= 0)
		close(pair[0]);
	handoff_fd = pair[1];
	/* The rank must not outlive its supervisor: a launcher that kills the
	 * process it knows expects the rank gone too. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	return 0;
}
