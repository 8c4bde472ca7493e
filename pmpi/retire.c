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
 * run then), unless a message too large to drain safely is there (see
 * RETIRE_DRAIN_MAX): then it is kept for good. Any application thread
 * that frees a communicator sweeps the list; the list is shared by those
 * threads under retire_lock. */
#include "ftshim_config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>

#include "pmpi/retire.h"
#include "pmpi/comm_health.h"
#include "pmpi/state.h"
#include "src/clock.h"
#include "src/log.h"

/* Messages are sent before the sender learns of the revocation or the
 * failure, which takes milliseconds; ten seconds is ample. */
#define RETIRE_AGE_NS (10ull * 1000000000ull)
/* Larger messages are not drained: above the MPIs' eager limits, the
 * data is still in the sender's buffer (MPICH's UCX reads it from there),
 * and a sender that gave up on the send on a revoked communicator may
 * have freed it since. Such a communicator is kept for good instead: a
 * context id lost, rather than a process killed by a bad read. */
#define RETIRE_DRAIN_MAX 4096

struct retired {
	MPI_Comm real;     /* the MPI's communicator, not yet freed */
	uint64_t id;       /* the job-wide id, for the log */
	uint64_t since_ns; /* when the application freed it */
	bool kept;         /* holds a message too large to drain: never freed */
};

static pthread_mutex_t retire_lock = PTHREAD_MUTEX_INITIALIZER;
static struct retired *retired; /* under retire_lock */
static size_t nretired, retired_cap;

/* Receive and discard whatever arrived on comm and was never received,
 * up to a message larger than RETIRE_DRAIN_MAX (then *large is set). */
static unsigned drain(MPI_Comm comm, bool *large)
{
	unsigned n = 0;

	for (;;) {
		MPI_Message msg;
		MPI_Status st;
		int flag = 0, count = 0;

		if (ftp_mpi.PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &st) != MPI_SUCCESS || !flag)
			return n;
		ftp_mpi.PMPI_Get_count(&st, MPI_BYTE, &count);
		if (count < 0 || count > RETIRE_DRAIN_MAX) {
			*large = true;
			return n;
		}
		if (ftp_mpi.PMPI_Improbe(st.MPI_SOURCE, st.MPI_TAG, comm, &flag, &msg, &st) != MPI_SUCCESS ||
		    !flag)
			return n;
		ftp_mpi.PMPI_Get_count(&st, MPI_BYTE, &count);
		void *buf = malloc(count > 0 ? (size_t)count : 1);
		if (!buf)
			return n; /* freed anyway: the risk is only stale data */
		ftp_mpi.PMPI_Mrecv(buf, count, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
		free(buf);
		n++;
	}
}

/* A retired communicator drained and ready to be freed. */
struct ready {
	MPI_Comm real;
	uint64_t id;
	unsigned stale; /* messages discarded */
};

/* Move the retired communicators older than RETIRE_AGE_NS, drained, to
 * *out (malloc'ed; their count returned). Under lock; the caller frees
 * them (free_ready) after releasing it: their attributes' delete
 * callbacks may free communicators too, through ftshim again. */
static size_t sweep(uint64_t now, struct ready **out)
{
	size_t kept = 0, n = 0;

	*out = NULL;
	for (size_t i = 0; i < nretired; i++) {
		struct retired *r = &retired[i];
		bool large = false;
		if (r->kept || now - r->since_ns < RETIRE_AGE_NS) {
			retired[kept++] = *r;
			continue;
		}
		if (!*out && !(*out = malloc((nretired - i) * sizeof **out))) {
			retired[kept++] = *r; /* the next sweep frees it */
			continue;
		}
		unsigned stale = drain(r->real, &large);
		if (large) {
			r->kept = true;
			retired[kept++] = *r;
			ft_debug("retired communicator %#" PRIx64 " holds a message of more than %d bytes "
				 "that nobody receives: kept, not freed (%u smaller one(s) discarded)",
				 r->id, RETIRE_DRAIN_MAX, stale);
			continue;
		}
		(*out)[n++] = (struct ready){ .real = r->real, .id = r->id, .stale = stale };
	}
	nretired = kept;
	return n;
}

/* Free what sweep took out, not under lock. */
static void free_ready(struct ready *ready, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		ftp_mpi.PMPI_Comm_free(&ready[i].real);
		ft_debug("freed retired communicator %#" PRIx64 ": %u stale message(s) discarded", ready[i].id,
			 ready[i].stale);
	}
	free(ready);
}

int ftp_comm_free_mpi(struct ftp_comm *e)
{
	MPI_Comm real = e->real;
	uint64_t now = ft_clock_now();
	struct ready *ready;
	bool retire = e->handle != ftp.world && e->handle != MPI_COMM_SELF && ftp_comm_tainted(e);

	pthread_mutex_lock(&retire_lock);
	size_t nready = sweep(now, &ready);
	if (retire && nretired == retired_cap) {
		size_t cap = retired_cap ? 2 * retired_cap : 8;
		struct retired *grown = realloc(retired, cap * sizeof *grown);
		if (grown) {
			retired = grown;
			retired_cap = cap;
		} else {
			retire = false; /* freed now: the risk, rather than a leak */
		}
	}
	if (retire) {
		retired[nretired++] = (struct retired){ .real = real, .id = e->core->id, .since_ns = now };
		ft_debug("MPI_Comm_free: communicator %#" PRIx64 " %s: retired, its MPI object freed "
			 "later, so that messages still on their way to it never match a later "
			 "communicator's receives",
			 e->core->id, ft_comm_is_revoked(e->core) ? "was revoked" : "lost a member");
	}
	pthread_mutex_unlock(&retire_lock);
	free_ready(ready, nready);
	return retire ? MPI_SUCCESS : ftp_mpi.PMPI_Comm_free(&real);
}
