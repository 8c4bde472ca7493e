/* listen.h: who hears what (pmpi/listen.c). A module that must learn of
 * events found by a module below it (a failure the detector learned, a
 * control-plane message, a communicator made or freed) registers a
 * listener instead of being called by name, so that calls run only
 * downwards: pmpi/detect.c and pmpi/comms.c tell listen.c, which tells
 * the listeners. */
#ifndef FTSHIM_PMPI_LISTEN_H
#define FTSHIM_PMPI_LISTEN_H

#include <stdbool.h>
#include <stdint.h>

#include "pmpi/state.h"

/* What a module hears, each optional: a failure newly learned
 * (on_failure, before the log line and the program's callbacks); a
 * control-plane message of one of its kinds (on_msg; kinds: a bit
 * 1u << FTP_APP_x for each); the host's doorbell (on_bell); while this
 * process waits for the others to leave, a step of its own (leave_step,
 * with whether every other rank has left; true while it still needs the
 * control plane); a communicator tracked (on_comm_create) or about to be
 * forgotten (on_comm_release). Each is called from whichever thread
 * learned or did it: the detector thread, or an application thread (one
 * draining the host's mailbox, one making or freeing a communicator). */
struct ftp_listener {
	void (*on_failure)(uint32_t rank);
	void (*on_msg)(const struct ft_msg *m);
	uint32_t kinds;
	void (*on_bell)(void);
	bool (*leave_step)(bool everyone_left);
	void (*on_comm_create)(struct ft_comm *core);
	void (*on_comm_release)(const struct ft_comm *core);
};

/* Add a listener: application thread, at MPI_Init before ftshim tracks a
 * communicator or starts its detector thread. They are called in the
 * order added; adding one twice adds it once. */
void ftp_listen(const struct ftp_listener *l);

/* Tell the listeners. ftp_listen_msg delivers a control-plane message of
 * the MPI side to the listener of its kind (from whichever thread took
 * it); ftp_listen_leave_step is true while one of them needs the
 * control plane. */
void ftp_listen_failure(uint32_t rank);
void ftp_listen_msg(const struct ft_msg *m);
void ftp_listen_bell(void);
bool ftp_listen_leave_step(bool everyone_left);
void ftp_listen_comm_create(struct ft_comm *core);
void ftp_listen_comm_release(const struct ft_comm *core);

#endif
