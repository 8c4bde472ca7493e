/* inject.c: carrying out FTSHIM_INJECT (the language is in src/inject.h).
 * Before PMPI_Init the text is parsed (a mistake stops the rank there);
 * once the job is known, each rank works out its own part of the plan:
 * call triggers count calls in the wrappers (only while one is armed, so
 * that other runs pay nothing), time triggers wait on a small thread of
 * their own, counting from the moment every rank is through MPI_Init
 * (ftp.up_ns), point triggers wait for the program's ftshim_inject_point.
 * Every injection is logged and recorded in the run directory before it
 * happens. */
#include "ftshim_config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ftshim.h"
#include "pmpi/inject.h"
#include "src/thread.h"
#include "pmpi/ranks.h"
#include "pmpi/mode/mode.h"
#include "pmpi/leave.h"
#include "pmpi/rundir.h"
#include "src/clock.h"
#include "src/log.h"

#define MAX_ACTIONS 64

_Atomic bool ftp_inject_counting;

static const char *const fn_names[] = FTP_FN_NAMES;

/* This rank's part of the plan: written in MPI_Init, read-only after. */
static struct ft_inject_action actions[MAX_ACTIONS];
static int action_fn[MAX_ACTIONS]; /* FT_AT_CALL: the function's index */
static uint32_t nactions;

/* Calls per wrapped function, counted while a call trigger is armed. */
static _Atomic uint64_t call_counts[FTP_FN_COUNT];


int ftp_inject_parse(char *err, size_t errlen)
{
	if (!ftp.cfg.inject[0])
		return 0;
	return ft_inject_parse(ftp.cfg.inject, fn_names, FT_ARRAY_SIZE(fn_names), &ftp.inject, err,
			       errlen);
}

/* Stop this process's execution for a while: a helper sends SIGCONT.
 * The helper gets a clean environment: with this rank's LD_PRELOAD and
 * launcher variables it would itself look like a rank to the shim. */
static void pause_for(uint64_t ns)
{
	char script[128];
	char *envp[] = { "PATH=/usr/bin:/bin", NULL };
	pid_t pid;
	int status;

	/* The shell exits at once; its background job, now orphaned, wakes us. */
	snprintf(script, sizeof script, "(sleep %.3f; kill -CONT %ld) >/dev/null 2>&1 &",
		 (double)ns / 1e9, (long)getpid());
	char *argv[] = { "sh", "-c", script, NULL };
	if (posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, envp) != 0) {
		ft_error("cannot start the helper that would resume this rank; not pausing");
		return;
	}
	waitpid(pid, &status, 0);
	kill(getpid(), SIGSTOP);
}

/* Copy text for a "quoted" record field: backslash and quote escaped. */
static void quote(const char *text, char *out, size_t outlen)
{
	size_t n = 0;

	for (; *text && n + 3 < outlen; text++) {
		if (*text == '"' || *text == '\\')
			out[n++] = '\\';
		out[n++] = *text;
	}
	out[n] = '\0';
}

static void fire(const struct ft_inject_action *a, const char *trigger)
{
	const struct ft_inject_clause *c = a->clause;
	struct timespec now;
	char how[64], line[1024], clause[2 * sizeof c->text];

	ft_inject_describe_how(c, how, sizeof how);
	quote(c->text, clause, sizeof clause);
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(line, sizeof line,
		 "time=%lld.%06ld since_start=%.6f rank=%d host=%s pid=%ld how=%s by=FTSHIM_INJECT trigger=\"%s\" clause=\"%s\"",
		 (long long)now.tv_sec, now.tv_nsec / 1000, (double)(ft_clock_now() - (ftp.up_ns ? ftp.up_ns : ftp.init_ns)) / 1e9,
		 ftp.rank, ftp.peers ? ftp.peers[ftp.rank].host : "?", (long)getpid(), how,
		 trigger, clause);
	ftp_rundir_record_injection(line);
	ft_info("injecting %s now (%s; FTSHIM_INJECT \"%s\")", how, trigger, c->text);
	switch (c->how) {
	case FT_DO_SIGNAL:
		kill(getpid(), c->sig);
		break;
	case FT_DO_EXIT:
		_exit(c->exit_code);
	case FT_DO_ABORT:
		abort();
	case FT_DO_PAUSE:
		pause_for(c->pause_ns);
		break;
	}
}

void ftp_inject_after_call(enum ftp_fn fn)
{
	uint64_t n = atomic_fetch_add_explicit(&call_counts[fn], 1, memory_order_relaxed) + 1;
	char trigger[128];

	for (uint32_t i = 0; i < nactions; i++) {
		if (actions[i].when != FT_AT_CALL || action_fn[i] != (int)fn ||
		    (uint64_t)actions[i].clause->nth != n)
			continue;
		snprintf(trigger, sizeof trigger, "after call %llu of %s", (unsigned long long)n,
			 fn_names[fn]);
		fire(&actions[i], trigger);
	}
}

void ftp_inject_point(const char *name, long value)
{
	char trigger[128];

	for (uint32_t i = 0; i < nactions; i++) {
		const struct ft_inject_clause *c = actions[i].clause;
		if (actions[i].when != FT_AT_POINT || c->nth != value || strcmp(c->name, name) != 0)
			continue;
		snprintf(trigger, sizeof trigger, "at point %s %ld", name, value);
		fire(&actions[i], trigger);
	}
}

FT_EXPORT void ftshim_inject_point(const char *name, long value)
{
	if (ftp_active() && name)
		ftp_inject_point(name, value);
}

/* The time triggers, in order, on a thread that takes no signals. */
static void *timer_main(void *arg)
{
	bool done[MAX_ACTIONS] = { false };
	char trigger[96];

	(void)arg;
	for (;;) {
		int next = -1;
		for (uint32_t i = 0; i < nactions; i++)
			if (actions[i].when == FT_AT_TIME && !done[i] &&
			    (next < 0 || actions[i].at_ns < actions[next].at_ns))
				next = (int)i;
		if (next < 0)
			return NULL;
		uint64_t at = ftp.up_ns + actions[next].at_ns;
		struct timespec ts = { .tv_sec = (time_t)(at / FT_NSEC_PER_SEC),
				       .tv_nsec = (long)(at % FT_NSEC_PER_SEC) };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		done[next] = true;
		if (!ftp_active())
			return NULL; /* MPI_Finalize is over: too late */
		snprintf(trigger, sizeof trigger, "%.3f s after every rank's MPI_Init",
			 (double)actions[next].at_ns / 1e9);
		fire(&actions[next], trigger);
	}
}

/* Rank 0 says once what the plan is, so that a log shows what to expect.
 * A list may name the ranks of processes the job will spawn; in a
 * replicated job, the processes are named after the program's ranks. */
static void log_plan(void)
{
	struct ft_inject_copies room;
	const struct ft_inject_copies *copies = ftp_mode_inject_names(&room);

	uint64_t *host_ids = malloc((size_t)ftp.world_size * sizeof *host_ids);
	uint32_t *victims = malloc((size_t)ftp.procs.size * sizeof *victims);

	for (int r = 0; host_ids && r < ftp.world_size; r++)
		host_ids[r] = ftp.peers[r].ep.host_id;
	for (uint32_t i = 0; host_ids && victims && i < ftp.inject.n; i++) {
		const struct ft_inject_clause *c = &ftp.inject.clauses[i];
		char list[256] = "", how[64];
		size_t used = 0;
		uint32_t n = c->spawned ? ftp.procs.size : (uint32_t)ftp.world_size;
		uint32_t nv = ft_inject_victims(c, ft_inject_pool(c, n, copies), host_ids, copies,
						victims, ftp.procs.size);
		bool later = false;
		for (uint32_t k = 0; k < nv && used + 40 < sizeof list; k++) {
			uint32_t v = victims[k];
			const char *sep = k ? "," : "";
			bool named = copies && copies->replica_of && !c->spawned && !c->spare &&
				     c->ranks_kind != FT_RANKS_HOST && v < copies->n;
			int32_t rep = named ? copies->replica_of[v] : -1;
			if (c->spare && copies)
				used += (size_t)snprintf(list + used, sizeof list - used,
							 "%sspare %u (process %u)", sep, v - copies->n, v);
			else if (named && c->copy == FT_COPY_REPLICA && rep >= 0)
				used += (size_t)snprintf(list + used, sizeof list - used,
							 "%s%u's replica (process %d)", sep, v, rep);
			else if (named && c->copy == FT_COPY_REPLICA)
				used += (size_t)snprintf(list + used, sizeof list - used, "%s%u (no replica)",
							 sep, v);
			else if (named && c->copy == FT_COPY_BOTH && rep >= 0)
				used += (size_t)snprintf(list + used, sizeof list - used,
							 "%s%u and its replica (process %d)", sep, v, rep);
			else
				used += (size_t)snprintf(list + used, sizeof list - used, "%s%u", sep, v);
			later |= victims[k] >= (uint32_t)ftp.world_size;
		}
		ft_inject_describe_how(c, how, sizeof how);
		ft_info("FTSHIM_INJECT \"%s\": %s for rank%s %s%s", c->text, how, nv == 1 ? "" : "s",
			nv ? list : "(none)", later ? " (processes the job will spawn, if it does)" : "");
	}
	free(host_ids);
	free(victims);
}

void ftp_inject_start(void)
{
	char err[FT_CONFIG_ERR_MAX];
	uint64_t *host_ids;
	/* Random and host clauses draw from the ranks the job started with,
	 * alike everywhere; a spawned process is picked only by spawned:N. */
	bool spawned = ftp_world_spawned();
	uint32_t nprocs = atomic_load(&ftp.nprocs);

	if (ftp.inject.n == 0)
		return;
	struct ft_inject_copies room;
	const struct ft_inject_copies *copies = ftp_mode_inject_names(&room);

	if (!spawned && ft_inject_check_ranks(&ftp.inject, ftp.nfirst, ftp.procs.size - ftp.nfirst, copies,
					      err, sizeof err) != 0) {
		/* Every rank has the same text and stops the same way; rank 0
		 * says why, once for the job. */
		if (ftp.rank == 0)
			fprintf(stderr, "ftshim: %s\n", err);
		ftp_leave(FT_EXIT_CONFIG);
	}
	/* spawned:N is job rank nfirst + N; spare:J is job rank n + J. */
	for (uint32_t i = 0; i < ftp.inject.n; i++) {
		struct ft_inject_clause *c = &ftp.inject.clauses[i];
		for (uint32_t k = 0; c->spawned && k < c->nranks; k++)
			c->ranks[k] += ftp.nfirst;
		for (uint32_t k = 0; c->spare && copies && k < c->nranks; k++)
			c->ranks[k] += copies->n;
	}
	host_ids = malloc((size_t)nprocs * sizeof *host_ids);
	if (!host_ids) {
		ft_error("out of memory: FTSHIM_INJECT is ignored");
		return;
	}
	for (uint32_t r = 0; r < nprocs; r++)
		host_ids[r] = ftp.peers[r].ep.host_id;
	nactions = ft_inject_plan(&ftp.inject, spawned ? nprocs : ftp.nfirst, (uint32_t)ftp.rank, host_ids,
				  copies, actions, MAX_ACTIONS);
	free(host_ids);
	if (spawned) {
		uint32_t kept = 0;
		for (uint32_t i = 0; i < nactions; i++)
			if (actions[i].clause->spawned)
				actions[kept++] = actions[i];
		nactions = kept;
	}
	if (ftp.rank == 0)
		log_plan();
	for (uint32_t i = 0; i < nactions; i++) {
		if (actions[i].when != FT_AT_CALL)
			continue;
		for (size_t f = 0; f < FT_ARRAY_SIZE(fn_names); f++)
			if (strcmp(fn_names[f], actions[i].clause->name) == 0)
				action_fn[i] = (int)f;
		atomic_store(&ftp_inject_counting, true);
	}
}

void ftp_inject_arm(void)
{
	bool any_time = false;

	for (uint32_t i = 0; i < nactions; i++)
		any_time |= actions[i].when == FT_AT_TIME;
	if (!any_time)
		return;
	pthread_t timer;
	int rc = ft_thread_start(&timer, timer_main, NULL);
	if (rc != 0)
		ft_error("cannot start the injection timer: time triggers are ignored");
	else
		pthread_detach(timer);
}
