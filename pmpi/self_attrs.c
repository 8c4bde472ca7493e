/* self_attrs.c: the wrappers of the attribute calls on communicators:
 * the program's MPI_COMM_WORLD's attributes on the MPI's (attrs_comm),
 * and the attributes a program caches on MPI_COMM_SELF, and their
 * deletion at MPI_Finalize. The standard has MPI_Finalize delete
 * them first, while MPI still works, and libraries hang their own
 * finalization on that (parallel HDF5 closes its open files there). Once
 * a rank has failed ftshim does not call the MPI's own MPI_Finalize, so
 * it deletes them itself, first, on every path: in the reverse order of
 * setting, with the shim still on, so that the MPI calls the delete
 * callbacks make are watched like any other. Fortran's attribute calls
 * reach the MPI's store without coming here (ftshim-api.tsv); their
 * attributes on MPI_COMM_SELF are then deleted by the MPI alone, when
 * it finalizes.
 *
 * Sharing: the list is guarded by its mutex; any application thread may
 * set or delete an attribute. */
#include "ftshim_config.h"

#include <pthread.h>
#include <stdlib.h>

#include "pmpi/self_attrs.h"
#include "pmpi/call.h"
#include "src/log.h"

static pthread_mutex_t self_lock = PTHREAD_MUTEX_INITIALIZER;
static int *self_keyvals; /* in the order they were set; a keyval once */
static size_t self_n, self_cap;

static void self_forget_locked(int keyval)
{
	for (size_t i = 0; i < self_n; i++)
		if (self_keyvals[i] == keyval) {
			for (size_t j = i + 1; j < self_n; j++)
				self_keyvals[j - 1] = self_keyvals[j];
			self_n--;
			return;
		}
}

/* Setting an attribute again moves its keyval to the end: the standard
 * orders the deletions by when each attribute was set. */
static void self_note_set(int keyval)
{
	pthread_mutex_lock(&self_lock);
	self_forget_locked(keyval);
	if (self_n == self_cap) {
		size_t cap = self_cap ? 2 * self_cap : 8;
		int *k = realloc(self_keyvals, cap * sizeof *k);

		if (!k) {
			pthread_mutex_unlock(&self_lock);
			ft_warn("out of memory: an attribute on MPI_COMM_SELF will be deleted only if the MPI's own MPI_Finalize runs");
			return;
		}
		self_keyvals = k;
		self_cap = cap;
	}
	self_keyvals[self_n++] = keyval;
	pthread_mutex_unlock(&self_lock);
}

static void self_note_delete(int keyval)
{
	pthread_mutex_lock(&self_lock);
	self_forget_locked(keyval);
	pthread_mutex_unlock(&self_lock);
}

void ftp_self_attrs_delete(void)
{
	for (;;) {
		pthread_mutex_lock(&self_lock);
		if (self_n == 0) {
			free(self_keyvals);
			self_keyvals = NULL;
			self_cap = 0;
			pthread_mutex_unlock(&self_lock);
			return;
		}
		int keyval = self_keyvals[--self_n];
		pthread_mutex_unlock(&self_lock);
		/* Unlocked: the callback may set or delete attributes itself. */
		int rc = ftp_mpi.PMPI_Comm_delete_attr(MPI_COMM_SELF, keyval);
		if (rc != MPI_SUCCESS)
			ft_debug("MPI_Finalize: deleting attribute %d of MPI_COMM_SELF returned %d", keyval, rc);
	}
}

/* Where a call's attribute lives: the program's MPI_COMM_WORLD keeps its
 * attributes on the MPI's, also when a mode has narrowed it to another
 * communicator (ftp_comm_world_narrow): Open MPI answers the predefined
 * ones (MPI_TAG_UB, MPI_UNIVERSE_SIZE, ...) there only, and Fortran's
 * attribute calls reach the MPI's store with the MPI's handle. */
static MPI_Comm attrs_comm(const struct ftp_call *c)
{
	return c->comm && c->comm->handle == ftp.world ? ftp.world : c->real;
}

/* One body for both names of each call (MPI_Attr_put is the MPI-1 name
 * of MPI_Comm_set_attr, MPI_Attr_delete of MPI_Comm_delete_attr,
 * MPI_Attr_get of MPI_Comm_get_attr). */
static int attr_get(enum ftp_fn fn, int (*mpi_get)(MPI_Comm, int, void *, int *), MPI_Comm comm,
		    int keyval, void *value, int *flag)
{
	struct ftp_call c = FTP_CALL_INIT(fn);
	int rc = ftp_pre_local(&c, comm);

	if (rc == MPI_SUCCESS && ftp_seam_covered(c.comm))
		rc = ftp_cover_as_is(&c, fn, FTP_ROLE_QUERY);
	if (rc == MPI_SUCCESS)
		rc = mpi_get(attrs_comm(&c), keyval, value, flag);
	return ftp_post_local(&c, rc);
}

static int attr_set(enum ftp_fn fn, int (*mpi_set)(MPI_Comm, int, void *), MPI_Comm comm, int keyval,
		    void *value)
{
	struct ftp_call c = FTP_CALL_INIT(fn);
	int rc = ftp_pre_local(&c, comm);

	if (rc == MPI_SUCCESS)
		rc = mpi_set(attrs_comm(&c), keyval, value);
	if (rc == MPI_SUCCESS && c.real == MPI_COMM_SELF && ftp_active())
		self_note_set(keyval);
	return ftp_post_local(&c, rc);
}

static int attr_delete(enum ftp_fn fn, int (*mpi_delete)(MPI_Comm, int), MPI_Comm comm, int keyval)
{
	struct ftp_call c = FTP_CALL_INIT(fn);
	int rc = ftp_pre_local(&c, comm);

	if (rc == MPI_SUCCESS)
		rc = mpi_delete(attrs_comm(&c), keyval);
	if (rc == MPI_SUCCESS && c.real == MPI_COMM_SELF)
		self_note_delete(keyval);
	return ftp_post_local(&c, rc);
}

FT_EXPORT int MPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
	return attr_set(FTP_FN_MPI_Comm_set_attr, ftp_mpi.PMPI_Comm_set_attr, comm, comm_keyval, attribute_val);
}
FTP_ALSO_PMPI(MPI_Comm_set_attr);

FT_EXPORT int MPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
	return attr_set(FTP_FN_MPI_Attr_put, ftp_mpi.PMPI_Attr_put, comm, keyval, attribute_val);
}
FTP_ALSO_PMPI(MPI_Attr_put);

FT_EXPORT int MPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag)
{
	return attr_get(FTP_FN_MPI_Comm_get_attr, ftp_mpi.PMPI_Comm_get_attr, comm, comm_keyval,
			attribute_val, flag);
}
FTP_ALSO_PMPI(MPI_Comm_get_attr);

FT_EXPORT int MPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
	return attr_get(FTP_FN_MPI_Attr_get, ftp_mpi.PMPI_Attr_get, comm, keyval, attribute_val, flag);
}
FTP_ALSO_PMPI(MPI_Attr_get);

FT_EXPORT int MPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
	return attr_delete(FTP_FN_MPI_Comm_delete_attr, ftp_mpi.PMPI_Comm_delete_attr, comm, comm_keyval);
}
FTP_ALSO_PMPI(MPI_Comm_delete_attr);

FT_EXPORT int MPI_Attr_delete(MPI_Comm comm, int keyval)
{
	return attr_delete(FTP_FN_MPI_Attr_delete, ftp_mpi.PMPI_Attr_delete, comm, keyval);
}
FTP_ALSO_PMPI(MPI_Attr_delete);
