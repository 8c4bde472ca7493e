/* revoke.c: MPIX_Comm_revoke and MPIX_Comm_is_revoked. Revoking marks the
 * communicator locally (every pending and later non-local operation on it
 * then fails with MPI_ERR_REVOKED, pmpi/block.c) and floods the news
 * through the control plane, never MPI: each member that learns it first
 * passes it on to the members at distances 1, 2, 4, ... of its own index
 * (those it knows alive), so it reaches every live member in a
 * logarithmic number of steps even if the revoker dies at once.
 *
 * A revoke may arrive before this process has made the communicator
 * (MPI does not order creation across processes): the ids seen are kept,
 * and a communicator made later with one of them is revoked at birth. */
#include "ftshim_config.h"

#include <pthread.h>
#include <stdlib.h>

#include "pmpi/call.h"
#include "pmpi/ulfm.h"
#include "src/log.h"

/* The revoked ids this process has seen: any thread, under seen_lock. */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *seen;
static uint32_t nseen, seen_cap;

/* Remember id; true if it is new. */
static bool seen_add(uint64_t id)
{
	bool added = false;

	pthread_mutex_lock(&seen_lock);
	for (uint32_t i = 0; i < nseen; i++)
		if (seen[i] == id)
			goto out_unlock;
	if (nseen == seen_cap) {
		uint32_t cap = seen_cap ? 2 * seen_cap : 16;
		uint64_t *n = realloc(seen, cap * sizeof *n);
		if (!n)
			goto out_unlock;
		seen = n;
		seen_cap = cap;
	}
	seen[nseen++] = id;
	added = true;
out_unlock:
	pthread_mutex_unlock(&seen_lock);
	return added;
}

static bool seen_has(uint64_t id)
{
	bool found = false;

	pthread_mutex_lock(&seen_lock);
	for (uint32_t i = 0; i < nseen && !found; i++)
		found = seen[i] == id;
	pthread_mutex_unlock(&seen_lock);
	return found;
}

/* Pass the news on: to the live members at distances 2^k of our index. */
static void forward(const struct ft_comm *core)
{
	uint32_t n = core->local_size + core->remote_size, self = UINT32_MAX;
	struct ft_msg m = { .type = FT_MSG_APP };

	for (uint32_t i = 0; i < n && self == UINT32_MAX; i++)
		if (core->members[i] == ftp.world_rank)
			self = i;
	if (self == UINT32_MAX)
		return;
	m.app.key = core->id;
	m.app.kind = FTP_APP_REVOKE;
	for (uint32_t step = 1; step < n; step <<= 1) {
		int32_t w = core->members[(self + step) % n];
		if (w != ftp.world_rank && !ft_proc_is_failed(&ftp.procs, (uint32_t)w))
			ftp_detect_post((uint32_t)w, &m);
	}
}

/* Revoke core here: the flag, the events counter, the news. */
static void revoke_here(struct ft_comm *core, void *arg)
{
	const uint32_t *by = arg; /* the rank it came from; NULL: this one */

	if (ft_comm_revoke(core)) {
		atomic_fetch_add_explicit(&ftp.events, 1, memory_order_release);
		ft_debug("communicator %016llx revoked", (unsigned long long)core->id);
		ft_events_add(ftp_wall_now(), "revoke", ",\"comm\":\"%016llx\",\"by\":%u",
			      (unsigned long long)core->id, by ? *by : (uint32_t)ftp.world_rank);
		forward(core);
	}
}

void ftp_revoke_on_msg(const struct ft_msg *m)
{
	if (!seen_add(m->app.key))
		return;
	uint32_t from = m->from;
	ft_comm_registry_with(&ftp.comms, m->app.key, revoke_here, &from);
}

void ftp_revoke_on_create(struct ft_comm *core)
{
	if (seen_has(core->id))
		revoke_here(core, NULL);
}

FT_EXPORT int MPIX_Comm_revoke(MPI_Comm comm)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPIX_Comm_revoke);
	int rc = MPI_SUCCESS;

	ftp_resolve(&c, comm);
	if (!c.comm)
		rc = MPI_ERR_COMM;
	else if (seen_add(c.comm->core->id))
		ft_comm_registry_with(&ftp.comms, c.comm->core->id, revoke_here, NULL);
	return ftp_post_plain(&c, rc);
}

FT_EXPORT int MPIX_Comm_is_revoked(MPI_Comm comm, int *flag)
{
	struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPIX_Comm_is_revoked);
	int rc = MPI_SUCCESS;

	ftp_resolve(&c, comm);
	if (!c.comm)
		rc = MPI_ERR_COMM;
	else
		*flag = ft_comm_is_revoked(c.comm->core);
	return ftp_post_plain(&c, rc);
}
