/* listen.c: the listeners (listen.h) and the telling of them. Sharing:
 * the application thread adds every listener in MPI_Init, before it
 * tracks a communicator or starts the detector thread (whose creation
 * orders these writes before that thread's reads); after that the list
 * is only read, by any thread. */
#include "ftshim_config.h"

#include "pmpi/listen.h"
#include "src/log.h"

#define MAX_LISTENERS 8
static const struct ftp_listener *listeners[MAX_LISTENERS];
static int nlisteners;

void ftp_listen(const struct ftp_listener *l)
{
	for (int i = 0; i < nlisteners; i++)
		if (listeners[i] == l)
			return; /* a second start of ftshim in this process */
	if (nlisteners < MAX_LISTENERS)
		listeners[nlisteners++] = l;
	else
		ft_error("internal: more than %d listeners", MAX_LISTENERS);
}

void ftp_listen_failure(uint32_t rank)
{
	for (int i = 0; i < nlisteners; i++)
		if (listeners[i]->on_failure)
			listeners[i]->on_failure(rank);
}

void ftp_listen_msg(const struct ft_msg *m)
{
	uint32_t bit = m->app.kind < 32 ? 1u << m->app.kind : 0;

	for (int i = 0; i < nlisteners; i++)
		if (listeners[i]->kinds & bit) {
			listeners[i]->on_msg(m);
			return;
		}
	ft_debug("control message of unknown kind %u from rank %u dropped", m->app.kind, m->from);
}

void ftp_listen_bell(void)
{
	for (int i = 0; i < nlisteners; i++)
		if (listeners[i]->on_bell)
			listeners[i]->on_bell();
}

bool ftp_listen_leave_step(bool everyone_left)
{
	bool keep = false;

	for (int i = 0; i < nlisteners; i++)
		if (listeners[i]->leave_step && listeners[i]->leave_step(everyone_left))
			keep = true;
	return keep;
}

void ftp_listen_comm_create(struct ft_comm *core)
{
	for (int i = 0; i < nlisteners; i++)
		if (listeners[i]->on_comm_create)
			listeners[i]->on_comm_create(core);
}

void ftp_listen_comm_release(const struct ft_comm *core)
{
	for (int i = 0; i < nlisteners; i++)
		if (listeners[i]->on_comm_release)
			listeners[i]->on_comm_release(core);
}
