/* supervisor.c: the parent that turns a rank's death by signal into an
 * exit (see supervisor.h). The parent is a copy of the process before
 * main: it must touch nothing it shares with the child (the PMI socket,
 * stdio buffers), so it only relays signals, waits and _exits. */
#include "ftshim_config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/common.h"
#include "src/supervisor.h"

/* Written once by the parent before its handlers are installed. */
static pid_t supervised_child;

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

static _Noreturn void supervise_child(pid_t child)
{
	struct sigaction sa;
	int status;

	supervised_child = child;
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
	if (WIFSIGNALED(status))
		_exit(128 + WTERMSIG(status));
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 127);
}

int ft_supervise(void)
{
	pid_t parent = getpid();
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
