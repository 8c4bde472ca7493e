/* comm_lookup.h: the table behind the communicator seam (pmpi/seam.h):
 * what ftshim knows of each communicator the application holds, found by
 * the application's handle. Nothing but the seam looks handles up here;
 * wrappers go through ftp_seam_comm and hand PMPI the entry's real handle.
 *
 * Sharing: lookups are lock-free and safe from any thread; insert and
 * erase take a mutex. An entry lives as long as the MPI's communicator
 * does: it is counted (refs) by the application's handle, until
 * MPI_Comm_free erases it here, and by every request and operation still
 * pending on it (MPI lets a program free a communicator with operations
 * pending); the last reference frees the MPI's communicator and the entry
 * (pmpi/comms.c). So an entry found here stays valid at least until the
 * application frees that communicator (using a communicator while another
 * thread frees it is erroneous in MPI), and one a request holds until the
 * request is done; nothing finds it by its handle once freed. */
#ifndef FTSHIM_PMPI_COMM_LOOKUP_H
#define FTSHIM_PMPI_COMM_LOOKUP_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "src/comm_table.h"

struct ft_rank_map;
struct ftp_cover;
struct ftp_rts;

struct ftp_comm {
	MPI_Comm handle;       /* the application's handle; immutable */
	MPI_Comm real;         /* the handle PMPI calls get; immutable for now */
	/* How the program's ranks become real's (pmpi/seam.h); NULL: they
	 * are real's. Set before the entry is inserted, freed with it;
	 * immutable in between. */
	struct ft_rank_map *map;
	/* What covers it (pmpi/cover.h: a recovery mode's own type, which
	 * starts with struct ftp_cover), set with map; NULL: the program's
	 * calls on it run as the MPI runs them, translated by map. The one
	 * exception: run-through stabilization's cover (pmpi/rts.c) is set on
	 * an entry without map or cover by the first MPI_Comm_validate_all
	 * that finds a failure, hence atomic. */
	struct ftp_cover *_Atomic cover;
	struct ft_comm *core;  /* members, id, revoked flag; owned by this entry */
	bool in_world;         /* every member is in ftp.world; immutable */
	/* real is a duplicate of ftp.world (a view on a spare context,
	 * pmpi/spare_view.c): its real rank r is world rank r, and core's
	 * members are the view's only. Else core's local members are in
	 * real's rank order. Immutable. */
	bool real_is_world;
	/* Whether a member has failed, as of ftp.events == checked. Any
	 * thread that uses the communicator may recompute both (the answer
	 * only moves from false to true); failed_member is stored first,
	 * checked after it with release order. */
	_Atomic uint64_t checked;
	_Atomic bool failed_member;
	/* Failures acknowledged on this communicator (MPIX_Comm_failure_ack):
	 * the first `acked` entries of ftp.procs.order. Written by the
	 * application thread that acknowledges; read by any. */
	_Atomic uint32_t acked;
	/* The number of the next agreement (or shrink) on it: every member
	 * calls them in the same order. Application threads. */
	_Atomic uint32_t agree_seq;
	/* Run-through stabilization's state (pmpi/rts.c): NULL until the
	 * first MPI_Comm_validate* call on it, which sets it once; freed
	 * with the entry. */
	struct ftp_rts *_Atomic rts;
	/* References: the handle until MPI_Comm_free, and each request-table
	 * entry and operation of ftshim's that names the entry. Application
	 * threads (ftp_comm_hold, ftp_comm_put). */
	_Atomic uint32_t refs;
	/* The MPI's communicator is gone already (MPI_Comm_disconnect): the
	 * last reference frees only the entry. Written before the handle's
	 * reference is dropped; read by whoever drops the last one. */
	bool mpi_freed;
};

struct ftp_comm *ftp_comm_lookup_table(MPI_Comm handle);

/* Bumped (release) by every erase: a thread's cached entry is still valid
 * while this has not moved since it was cached. */
extern _Atomic uint64_t ftp_comm_erasures;

/* The last lookup of this thread, so that a program that keeps using one
 * communicator does not hash its handle at every call; never an entry
 * with a rank map. */
struct ftp_comm_cache {
	MPI_Comm handle;
	struct ftp_comm *entry;
	uint64_t erasures;
};
/* initial-exec: the library is preloaded (or linked), so its TLS is in
 * the static block and an access is one %fs-relative load instead of a
 * call of __tls_get_addr at every wrapped call. */
extern _Thread_local struct ftp_comm_cache ftp_comm_cache
	__attribute__((tls_model("initial-exec")));

static inline struct ftp_comm *ftp_comm_lookup(MPI_Comm handle)
{
	struct ftp_comm_cache *k = &ftp_comm_cache;
	uint64_t erasures = atomic_load_explicit(&ftp_comm_erasures, memory_order_acquire);

	if (k->entry && k->handle == handle && k->erasures == erasures)
		return k->entry;
	struct ftp_comm *e = ftp_comm_lookup_table(handle);
	/* An entry with a rank map is never cached: so the fast path
	 * (pmpi/seam.h, ftp_seam_cached), which reads only the cache, never
	 * sees one, at no cost to the others. */
	if (e && !e->map) {
		k->handle = handle;
		k->entry = e;
		k->erasures = erasures;
	}
	return e;
}
/* -EEXIST if the handle is already there, -ENOMEM. */
int ftp_comm_insert(struct ftp_comm *c);
void ftp_comm_erase(struct ftp_comm *c);
/* Windows and files (pmpi/objects.h) are behind the same seam, keyed by
 * kind and the bits of their handle. */
enum ftp_obj_kind {
	FTP_OBJ_COMM = 0, /* the key of communicators: their handle's bits */
	FTP_OBJ_WIN = 1,
	FTP_OBJ_FILE = 2,
};
struct ftp_obj;
struct ftp_obj *ftp_obj_lookup(enum ftp_obj_kind kind, uint64_t bits);
/* -EEXIST, -ENOMEM, -EINVAL (bits that no handle has). */
int ftp_obj_insert(enum ftp_obj_kind kind, uint64_t bits, struct ftp_obj *o);
void ftp_obj_erase(enum ftp_obj_kind kind, uint64_t bits, struct ftp_obj *o);

/* A window's or file's key: its handle's bits, and back. */
static inline uint64_t ftp_win_bits(MPI_Win win)
{
	uint64_t bits = 0;

	_Static_assert(sizeof win <= sizeof bits, "MPI_Win wider than 64 bits");
	memcpy(&bits, &win, sizeof win);
	return bits;
}

static inline uint64_t ftp_file_bits(MPI_File file)
{
	uint64_t bits = 0;

	_Static_assert(sizeof file <= sizeof bits, "MPI_File wider than 64 bits");
	memcpy(&bits, &file, sizeof file);
	return bits;
}

static inline MPI_Win ftp_win_of(uint64_t bits)
{
	MPI_Win win;

	memcpy(&win, &bits, sizeof win);
	return win;
}

static inline MPI_File ftp_file_of(uint64_t bits)
{
	MPI_File file;

	memcpy(&file, &bits, sizeof file);
	return file;
}

/* "communicator", "window" or "file", for messages. */
static inline const char *ftp_obj_noun(enum ftp_obj_kind kind)
{
	return kind == FTP_OBJ_WIN ? "window" : kind == FTP_OBJ_FILE ? "file" : "communicator";
}

/* Hand every communicator entry still there to release and every
 * window's or file's to release_obj (neither may call back into this
 * module), then free the tables. At MPI_Finalize. */
void ftp_comm_lookup_fini(void (*release)(struct ftp_comm *c), void (*release_obj)(struct ftp_obj *o));

#endif
