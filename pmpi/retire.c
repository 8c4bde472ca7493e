/* retire.c: MPI_Comm_free for communicators that a failure touched. A
 * communicator that was revoked or lost a member may still have messages
 * on their way to this process, sent for operations that were abandoned.
 * Freed at once, its context id goes to the next communicator the MPI
 * makes (MPICH takes the lowest free one), where those messages would
 * match new receives and hand the application stale data. So such a
 * communicator is retired instead: the application's handle is freed at
 * once, the MPI object kept for RETIRE_AGE_NS, long enough for anything
 * in flight to arrive; then what arrived unreceived is drained and
 * discarded, and the MPI object freed (its attributes' delete callbacks
 * run then). Any application thread that frees a communicator sweeps the
 * list; the list is shared by those threads under retire_lock. */
#include "ftshim_config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>

#include "pmpi/call.h"
#include "src/clock.h"
#include "src/log.h"

/* Messages are sent before the sender learns of the revocation or the
 * failure, which takes milliseconds; ten seconds is ample. */
#define RETIRE_AGE_NS (10ull * 1000000000ull)

struct retired {
	MPI_Comm real;     /* the MPI's communicator, not yet freed */
	uint64_t id;       /* the job-wide id, for the log */
	uint64_t since_ns; /* when the application freed it */
};

static pthread_mutex_t retire_lock = PTHREAD_MUTEX_INITIALIZER;
static struct retired *retired; /* under retire_lock */
static size_t nretired, retired_cap;

/* Receive and discard whatever arrived on comm and was never received. */
static unsigned drain(MPI_Comm comm)
{
	unsigned n = 0;

	for (;;) {
		MPI_Message msg;
		MPI_Status st;
		int flag = 0, count = 0;

		if (PMPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &msg, &st) != MPI_SUCCESS ||
		    !flag)
			return n;
		PMPI_Get_count(&st, MPI_BYTE, &count);
		void *buf = malloc(count > 0 ? (size_t)count : 1);
		if (!buf)
			return n; /* freed anyway: the risk is only stale data */
		PMPI_Mrecv(buf, count, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
		free(buf);
		n++;
	}
}

/* Free the retired communicators older than RETIRE_AGE_NS. Under lock. */
static void sweep(uint64_t now)
{
	size_t kept = 0;

	for (size_t i = 0; i < nretired; i++) {
		struct retired *r = &retired[i];
		if (now - r->since_ns < RETIRE_AGE_NS) {
			retired[kept++] = *r;
			continue;
		}
		unsigned stale = drain(r->real);
		PMPI_Comm_free(&r->real);
		ft_debug("freed retired communicator %#" PRIx64 ": %u stale message(s) discarded", r->id,
			 stale);
	}
	nretired = kept;
}

int ftp_comm_free_mpi(struct ftp_comm *e)
{
	MPI_Comm real = e->real;
	uint64_t now = ft_clock_now();

	pthread_mutex_lock(&retire_lock);
	sweep(now);
	if (e->handle != MPI_COMM_WORLD && e->handle != MPI_COMM_SELF && ftp_comm_tainted(e)) {
		if (nretired == retired_cap) {
			size_t cap = retired_cap ? 2 * retired_cap : 8;
			struct retired *grown = realloc(retired, cap * sizeof *grown);
			if (!grown) {
				pthread_mutex_unlock(&retire_lock);
				return PMPI_Comm_free(&real); /* the risk, rather than a leak */
			}
			retired = grown;
			retired_cap = cap;
		}
		retired[nretired++] = (struct retired){ .real = real, .id = e->core->id, .since_ns = now };
		ft_debug("MPI_Comm_free: communicator %#" PRIx64 " %s: retired, its MPI object freed "
			 "later, so that messages still on their way to it never match a later "
			 "communicator's receives",
			 e->core->id, ft_comm_is_revoked(e->core) ? "was revoked" : "lost a member");
		pthread_mutex_unlock(&retire_lock);
		return MPI_SUCCESS;
	}
	pthread_mutex_unlock(&retire_lock);
	return PMPI_Comm_free(&real);
}
