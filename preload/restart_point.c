/* restart_point.c: the restart point (restart_point.h), in libftshim.so
 * only: a program linked with it gets its __libc_start_main. glibc's start-up
 * calls __libc_start_main with the program's main; this one, found first
 * because libftshim.so is preloaded, hands glibc's its own wrapper of
 * main instead, which saves the arguments, keeps a sigjmp_buf in its
 * frame (live for as long as main runs) and calls main. A static binary
 * or a program started another way never comes here, and is not armed.
 * It also wraps pthread_create, to count the program's own threads still
 * running: main cannot be run again beside them.
 *
 * Sharing: written by the main thread before main runs, and by the
 * thread that restarts (the same one); armed is read from any thread;
 * the count of the program's threads is an atomic every thread moves. */
#include "ftshim_config.h"

#include "preload/restart_point.h"

#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/common.h"

typedef int (*main_fn)(int, char **, char **);
typedef int (*start_fn)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *);

static main_fn program_main;
static int first_argc;
static char **first_argv; /* a copy of the array: main or MPI_Init may edit argv */
static char **first_envp;
static char **run_argv; /* this run's copy, reachable until the next run */
static sigjmp_buf restart_env;
static _Atomic bool armed;
static _Atomic unsigned restarts; /* read from any thread */

static int main_wrapper(int argc, char **argv, char **envp)
{
	first_argc = argc;
	first_envp = envp;
	first_argv = malloc(((size_t)argc + 1) * sizeof *first_argv);
	if (first_argv)
		memcpy(first_argv, argv, ((size_t)argc + 1) * sizeof *argv);
	if (sigsetjmp(restart_env, 1) != 0)
		atomic_fetch_add_explicit(&restarts, 1, memory_order_relaxed);
	atomic_store(&armed, first_argv != NULL);
	if (!first_argv)
		return program_main(argc, argv, envp);
	/* A fresh array each run: the last run may have edited it. */
	free(run_argv);
	run_argv = malloc(((size_t)first_argc + 1) * sizeof *run_argv);
	if (!run_argv)
		abort();
	memcpy(run_argv, first_argv, ((size_t)first_argc + 1) * sizeof *run_argv);
	return program_main(first_argc, run_argv, first_envp);
}

/* glibc's, which declares it in no header. */
int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
		      void (*rtld_fini)(void), void *stack_end);

FT_EXPORT int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void),
				void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
	start_fn next = (start_fn)(uintptr_t)dlsym(RTLD_NEXT, "__libc_start_main");

	if (!next)
		abort();
	program_main = main;
	return next(main_wrapper, argc, argv, init, fini, rtld_fini, stack_end);
}

bool ft_restart_point_armed(void)
{
	return atomic_load(&armed);
}

unsigned ft_restart_count(void)
{
	return atomic_load_explicit(&restarts, memory_order_relaxed);
}

_Noreturn void ft_restart_main(void)
{
	siglongjmp(restart_env, 1);
}

/* --- the program's own threads ----------------------------------------------- */

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static _Atomic unsigned program_threads;

struct thread_start {
	void *(*fn)(void *);
	void *arg;
};

static void thread_gone(void *unused)
{
	(void)unused;
	atomic_fetch_sub_explicit(&program_threads, 1, memory_order_relaxed);
}

/* Counted until it returns, calls pthread_exit or is cancelled. */
static void *counted_start(void *p)
{
	struct thread_start s = *(struct thread_start *)p;
	void *ret;

	free(p);
	pthread_cleanup_push(thread_gone, NULL);
	ret = s.fn(s.arg);
	pthread_cleanup_pop(1);
	return ret;
}

/* A thread whose start routine lies in the program's executable, or in
 * the C++ runtime (std::thread), is the program's; a library's (the
 * MPI's, ftshim's, an OpenMP runtime's pool) is not. */
static bool programs_thread(void *(*fn)(void *))
{
	Dl_info at, prog;

	if (!program_main || !dladdr((void *)(uintptr_t)fn, &at) ||
	    !dladdr((void *)(uintptr_t)program_main, &prog))
		return false;
	if (at.dli_fbase == prog.dli_fbase)
		return true;
	const char *base = at.dli_fname ? strrchr(at.dli_fname, '/') : NULL;
	base = base ? base + 1 : at.dli_fname;
	return base && (strncmp(base, "libstdc++.", 10) == 0 || strncmp(base, "libc++.", 7) == 0);
}

FT_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	static _Atomic(create_fn) next_create;
	create_fn next = atomic_load_explicit(&next_create, memory_order_acquire);

	if (!next) {
		next = (create_fn)(uintptr_t)dlsym(RTLD_NEXT, "pthread_create");
		if (!next)
			abort();
		atomic_store_explicit(&next_create, next, memory_order_release);
	}
	struct thread_start *s = programs_thread(fn) ? malloc(sizeof *s) : NULL;
	if (!s)
		return next(thread, attr, fn, arg);
	*s = (struct thread_start){ .fn = fn, .arg = arg };
	atomic_fetch_add_explicit(&program_threads, 1, memory_order_relaxed);
	int rc = next(thread, attr, counted_start, s);
	if (rc != 0) {
		atomic_fetch_sub_explicit(&program_threads, 1, memory_order_relaxed);
		free(s);
	}
	return rc;
}

unsigned ft_program_threads(void)
{
	return atomic_load_explicit(&program_threads, memory_order_relaxed);
}
