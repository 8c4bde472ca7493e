/* revoke.c: MPIX_Comm_revoke and MPIX_Comm_is_revoked. Revoking marks the
 * communicator locally (every pending and later non-local operation on it
 * then fails with MPI_ERR_REVOKED, pmpi/block.c) and floods the news
 * through the control plane, never MPI: each member that learns it first
 * passes it on to its broadcast targets among the members it does not
 * know failed (src/spread.h), and again to new targets whenever it learns
 * of a member's failure while it still has the communicator; so it
 * reaches every live member in a logarithmic number of steps whatever
 * set of members is dead, also when the revoker or a forwarder dies on
 * the way.
 *
 * A revoke may arrive before this process has made the communicator
 * (MPI does not order creation across processes): the ids seen are kept,
 * and a communicator made later with one of them is revoked at birth
 * (and passes the news on then). */
#include "ftshim_config.h"

#include <pthread.h>
#include <stdlib.h>

#include "pmpi/revoke.h"
#include "pmpi/call.h"
#include "pmpi/ulfm.h"
#include "pmpi/detect.h"
#include "pmpi/hostmail.h"
#include "src/log.h"
#include "src/spread.h"

/* A revoked id this process has seen and, while it has that
 * communicator and has passed the news on, the state of its flood. */
struct revoked {
	uint64_t id;
	const struct ft_comm *core; /* NULL: not made here, or released */
	struct ft_spread *spread;   /* NULL unless core is set */
};

/* The revoked ids seen: any thread, under seen_lock. Lock order: the
 * registry's lock (ft_comm_registry_with) before seen_lock. */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static struct revoked *seen;
static uint32_t nseen, seen_cap;

/* The entry of id, or NULL. Under seen_lock. */
static struct revoked *seen_find(uint64_t id)
{
	for (uint32_t i = 0; i < nseen; i++)
		if (seen[i].id == id)
			return &seen[i];
	return NULL;
}

/* Remember id; true if it is new. */
static bool seen_add(uint64_t id)
{
	bool added = false;

	pthread_mutex_lock(&seen_lock);
	if (seen_find(id))
		goto out_unlock;
	if (nseen == seen_cap) {
		uint32_t cap = seen_cap ? 2 * seen_cap : 16;
		struct revoked *n = realloc(seen, cap * sizeof *n);
		if (!n)
			goto out_unlock;
		seen = n;
		seen_cap = cap;
	}
	seen[nseen++] = (struct revoked){ .id = id };
	added = true;
out_unlock:
	pthread_mutex_unlock(&seen_lock);
	return added;
}

static bool seen_has(uint64_t id)
{
	pthread_mutex_lock(&seen_lock);
	bool found = seen_find(id) != NULL;
	pthread_mutex_unlock(&seen_lock);
	return found;
}

/* Send the news of r to the members its flood has due now. Under
 * seen_lock (the targets are marked sent under it, so that two threads
 * never send the same one). */
static void send_due(struct revoked *r)
{
	struct ft_msg m = { .type = FT_MSG_APP };
	uint32_t targets[64];
	uint32_t n = ft_spread_due(r->spread, targets, sizeof targets / sizeof targets[0]);

	m.app.key = r->id;
	m.app.kind = FTP_APP_REVOKE;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t to = (uint32_t)ftp_member_job(r->core, targets[k]);
		if (!ftp_hostmail_post(to, &m))
			ftp_detect_post(to, &m);
	}
}

/* Start passing on the revocation of core: its flood over the members,
 * with every member this process knows failed left out. */
static void spread_start(const struct ft_comm *core)
{
	uint32_t n = ftp_members(core);
	int self = ftp_member_index(core, ftp.rank);

	if (self < 0)
		return;
	pthread_mutex_lock(&seen_lock);
	struct revoked *r = seen_find(core->id);
	if (!r || r->spread)
		goto out_unlock;
	r->spread = malloc(sizeof *r->spread);
	if (!r->spread || ft_spread_init(r->spread, n, (uint32_t)self, (enum ft_bcast_kind)ftp.cfg.bcast) != 0) {
		free(r->spread);
		r->spread = NULL;
		ft_warn("out of memory: the revocation of communicator %016llx is not passed on",
			(unsigned long long)core->id);
		goto out_unlock;
	}
	r->core = core;
	/* A failure the detector thread records after this loop reaches
	 * on_failure, which waits for seen_lock. */
	for (uint32_t i = 0; i < n; i++)
		if (ft_proc_is_failed(&ftp.procs, (uint32_t)ftp_member_job(core, i)))
			ft_spread_failed(r->spread, i);
	send_due(r);
out_unlock:
	pthread_mutex_unlock(&seen_lock);
}

static void on_failure(uint32_t rank)
{
	pthread_mutex_lock(&seen_lock);
	for (uint32_t k = 0; k < nseen; k++) {
		struct revoked *r = &seen[k];
		if (!r->spread)
			continue;
		int i = ftp_member_index(r->core, (int32_t)rank);
		if (i >= 0 && ft_spread_failed(r->spread, (uint32_t)i))
			send_due(r);
	}
	pthread_mutex_unlock(&seen_lock);
}

static void on_comm_release(const struct ft_comm *core)
{
	pthread_mutex_lock(&seen_lock);
	struct revoked *r = seen_find(core->id);
	if (r && r->core == core) {
		ft_spread_destroy(r->spread);
		free(r->spread);
		r->spread = NULL;
		r->core = NULL;
	}
	pthread_mutex_unlock(&seen_lock);
}

/* Revoke core here: the flag, the events counter, the news. */
static void revoke_here(struct ft_comm *core, void *arg)
{
	const uint32_t *by = arg; /* the rank it came from; NULL: this one */

	if (ft_comm_revoke(core)) {
		atomic_fetch_add_explicit(&ftp.events, 1, memory_order_release);
		ft_debug("communicator %016llx revoked", (unsigned long long)core->id);
		ft_events_add(ftp_wall_now(), "revoke", ",\"comm\":\"%016llx\",\"by\":%u",
			      (unsigned long long)core->id, by ? *by : (uint32_t)ftp.rank);
		spread_start(core);
	}
}

static void on_msg(const struct ft_msg *m)
{
	if (!seen_add(m->app.key))
		return;
	uint32_t from = m->from;
	ft_comm_registry_with(&ftp.comms, m->app.key, revoke_here, &from);
}

static void on_comm_create(struct ft_comm *core)
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
FTP_ALSO_PMPI(MPIX_Comm_revoke);

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
FTP_ALSO_PMPI(MPIX_Comm_is_revoked);

const struct ftp_listener ftp_revoke_listener = {
	.on_failure = on_failure,
	.on_msg = on_msg,
	.kinds = 1u << FTP_APP_REVOKE,
	.on_comm_create = on_comm_create,
	.on_comm_release = on_comm_release,
};
