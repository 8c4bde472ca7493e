/* supervisor.c: the parent that records a rank's death by signal and
 * turns it into an exit, or dies of it too (see supervisor.h). The parent
 * is a copy of the process before main: it must touch nothing it shares
 * with the child (the PMI socket, which it closes, stdio buffers), so it
 * only relays signals, waits, records a death by signal for the job
 * report (a line appended with plain system calls to the file the child
 * named) and _exits or dies. */
#include "ftshim_config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "src/common.h"
#include "src/inject.h"
#include "src/supervisor.h"

/* Written once by the parent before its handlers are installed. */
static pid_t supervised_child;
/* Whether the parent dies of the child's signal rather than exit (see
 * ft_supervise). */
static bool die_alike;

/* A page shared by the parent and the child (MAP_SHARED, made before the
 * fork): the child fills it once after MPI_Init (ft_supervisor_tell); the
 * parent reads it only after the child has died. NULL when unsupervised. */
struct death_record {
	char path[PATH_MAX];
	char host[64];
	int rank;
	int ready; /* set last by the child */
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

void ft_supervisor_tell(const char *deaths_path, int rank, const char *host)
{
	if (!record)
		return;
	snprintf(record->path, sizeof record->path, "%s", deaths_path);
	snprintf(record->host, sizeof record->host, "%s", host);
	record->rank = rank;
	__atomic_store_n(&record->ready, 1, __ATOMIC_RELEASE);
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

/* The parent keeps no descriptor but stdio. Above all not its copy of
 * the PMI socket: Hydra's proxy marks a rank whose PMI socket closes
 * without a finalize with a provisional raw status 1, and keeps it if
 * that close is handled after it has reaped the process. Held by the
 * parent too, the socket closed only when the parent exited, at the
 * moment its status was reaped, and one job in a few then ended with
 * "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Hangup (signal 1)"
 * (raw status 1 read as a death by SIGHUP) and exit status 1. Closed
 * here, it closes when the rank itself dies, well before. */
static void close_inherited(void)
{
	if (close_range(3, ~0u, 0) == 0)
		return;
	long max = sysconf(_SC_OPEN_MAX);
	for (long fd = 3; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
		close((int)fd);
}

static _Noreturn void supervise_child(pid_t child)
{
	struct sigaction sa;
	int status;

	supervised_child = child;
	close_inherited();
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = relay;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < FT_ARRAY_SIZE(relayed); i++)
		sigaction(relayed[i], &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	while (waitpid(child, &status, 0) < 0) {
		if (errno != EINTR)
			_exit(127);
	}
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		record_death(child, sig);
		if (die_alike) {
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

int ft_supervise(bool die_of_signal)
{
	die_alike = die_of_signal;
	pid_t parent = getpid();
	void *page = mmap(NULL, sizeof *record, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	record = page == MAP_FAILED ? NULL : page;
	pid_t child = fork();

	if (child < 0)
		return -errno;
	if (child > 0)
		supervise_child(child);
	/* The rank must not outlive its supervisor: a launcher that kills the
	 * process it knows expects the rank gone too. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	return 0;
}
