/* cover.h: what covers a communicator, when something other than the MPI
 * decides how the program's calls on it run: a recovery mode's own
 * version of it (replication's communicator of every copy), or a view
 * that recovery made (pmpi/spare_view.c: MPIX_Comm_shrink's communicator
 * of the survivors). An entry's cover (struct ftp_comm.cover) starts
 * with struct ftp_cover, whose kind gives the forms of the calls that
 * take over on it and says which calls without a form run as on any
 * communicator; every other call is refused with one line
 * (ftp_mode_refuse, pmpi/errors.h). The kind also runs the blocking
 * collectives (pmpi/coll_forms.h), says what a creation from the
 * communicator is made from, and frees what the cover holds. The
 * wrappers, generated and written by hand, ask only through the
 * ftp_cover_* functions here, so the kinds can differ from one
 * communicator to the next. A cover is set with the entry's map, before
 * the entry is inserted, and its kind never changes. */
#ifndef FTSHIM_PMPI_COVER_H
#define FTSHIM_PMPI_COVER_H

#include <stdbool.h>
#include <stddef.h>

#include "pmpi/call_record.h"
#include "pmpi/comm_lookup.h"
#include "pmpi/mode/mode.h"

struct coll_args;

struct ftp_cover_kind {
	/* What a refusal calls a communicator of this kind ("replicated"). */
	const char *covered_as;
	/* The mode whose kind it is (a refusal names its variable and its
	 * section of ftshim(7)), or NULL. */
	const struct ftp_mode *mode;
	/* Its own forms of the calls it takes over; a NULL slot: the call's
	 * role decides. */
	const struct ftp_mode_calls *calls;
	/* Whether a call with no form, of role role, runs as on any
	 * communicator (the seam's translations are all it needs). */
	bool (*runs_as_is)(int fn, enum ftp_mode_role role);
	/* Run a blocking collective (every form of pmpi/coll_forms.h comes
	 * here), returning through the call's post. */
	int (*coll)(struct ftp_call *c, const struct coll_args *a);
	/* Start a nonblocking collective into *request (the kinds whose
	 * calls table lists the nonblocking forms), returning through the
	 * call's post. */
	int (*icoll)(struct ftp_call *c, const struct coll_args *a, MPI_Request *request);
	/* Before the MPI makes a communicator from c->comm (split, dup,
	 * create): set c->real to what it is made from. */
	int (*creation)(struct ftp_call *c);
	/* Its creations are fenced first by an agreement of ftshim's over
	 * its members (pmpi/create.c): a member known dead fails the
	 * creation at every member before any enters the MPI's constructor,
	 * which cannot be left. */
	bool fenced;
	/* Free what the cover holds, with the entry (after the map's last
	 * use, before the map is freed). */
	void (*release)(struct ftp_comm *e);
};

struct ftp_cover {
	const struct ftp_cover_kind *kind;
};

/* A call of role role needs no more than the seam's translations on a
 * communicator whose point-to-point runs on its real communicator (a
 * view, a validated one): local queries, point-to-point, completion, the
 * clock, the fault-tolerance calls. Their kinds' runs_as_is start here. */
static inline bool ftp_cover_role_translated(enum ftp_mode_role role)
{
	return role == FTP_ROLE_NONE || role == FTP_ROLE_QUERY || role == FTP_ROLE_P2P ||
	       role == FTP_ROLE_COMPLETE || role == FTP_ROLE_CLOCK || role == FTP_ROLE_ULFM;
}

/* e was just made from parent (NULL: e is MPI_COMM_WORLD, at the mode's
 * start): if the active mode covers parent, the mode's derive gives e
 * its map and cover, and the cover gets the mode's kind. A communicator
 * made from a view of recovery's is the MPI's own. */
static inline void ftp_cover_derive(struct ftp_comm *e, const struct ftp_comm *parent)
{
	if (!ftp_mode_on() || !ftp_mode_active->derive ||
	    (parent && parent->cover->kind != ftp_mode_active->cover_kind))
		return;
	ftp_mode_active->derive(e, parent);
	if (e->cover)
		e->cover->kind = ftp_mode_active->cover_kind;
}

/* The forms on e, a covered communicator's entry, or NULL. */
static inline const struct ftp_mode_calls *ftp_cover_calls(const struct ftp_comm *e)
{
	return e->cover->kind ? e->cover->kind->calls : NULL;
}

/* A call with no form on covered e, of role role, runs as on any (else
 * the wrapper refuses it). */
static inline bool ftp_cover_runs_as_is(const struct ftp_comm *e, int fn, enum ftp_mode_role role)
{
	const struct ftp_cover_kind *k = e->cover->kind;

	return k && k->runs_as_is && k->runs_as_is(fn, role);
}

/* Covered c->comm's creation base (see struct ftp_cover_kind.creation). */
static inline int ftp_cover_creation(struct ftp_call *c)
{
	const struct ftp_cover_kind *k = c->comm->cover->kind;

	return k && k->creation ? k->creation(c) : MPI_SUCCESS;
}

/* Free what covered e's cover holds. */
static inline void ftp_cover_release(struct ftp_comm *e)
{
	const struct ftp_cover_kind *k = e->cover->kind;

	if (k && k->release)
		k->release(e);
}

#endif
