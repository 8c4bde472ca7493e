/* thread.h: how ftshim starts a thread of its own (the detector's
 * engine, the checkpoint copier and writer, the injection timer). */
#ifndef FTSHIM_THREAD_H
#define FTSHIM_THREAD_H

#include <pthread.h>
#include <signal.h>

/* Start fn(arg) on a new thread that takes no signal: the program's
 * handlers, and the MPI's own (MPICH's SIGUSR1), must run on the
 * program's threads. 0, or pthread_create's error. */
static inline int ft_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(thread, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

#endif
