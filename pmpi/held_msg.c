/* held_msg.c: matched messages that ftshim has already received on the
 * program's behalf. A cover that cannot leave a matched message in the
 * MPI runs MPI_Mprobe and MPI_Improbe as a probe and a receive of the
 * whole message, packed (any message may be received as MPI_PACKED), and
 * holds it here under a message handle of the MPI's own: a zero-byte
 * message this process sends itself on a private duplicate of
 * MPI_COMM_SELF, matched by MPI_Mprobe, so that the handle converts to
 * Fortran and back like any other. Replication does so because its
 * receives follow whichever copy of the sender lives; the views because
 * their point-to-point is the MPI's on another communicator, whose ranks
 * the MPI's matched receive would report untranslated (their forms are
 * here). MPI_Mrecv and MPI_Imrecv and their large-count forms, written
 * here, unpack a held message into the program's buffer; any other
 * message goes to the MPI. Application threads: the list is under a lock,
 * and a relaxed count keeps an MPI_Mrecv of the MPI's own messages from
 * taking it while nothing is held. */
#include "ftshim_config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi/held_msg.h"
#include "pmpi/call.h"
#include "pmpi/p2p.h"
#include "pmpi/requests.h"

struct held {
	struct held *next;
	MPI_Message handle; /* the placeholder the program holds */
	MPI_Request send;   /* its send, which completes once it is received
			     * (MPICH's send to itself does not before) */
	MPI_Comm comm;	    /* the program's communicator of the probe */
	void *data;	    /* the message, packed */
	int bytes;
	MPI_Status status; /* the probe's, the program's ranks */
};

static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static struct held *held_list;
static _Atomic uint32_t held_count;

/* The private channel of the placeholders (made once, on first use), and
 * the communicator of every unpacking (the program's may be freed before
 * its MPI_Mrecv; the data representation is one). */
static MPI_Comm self = MPI_COMM_NULL;
static pthread_once_t self_once = PTHREAD_ONCE_INIT;

static void self_make(void)
{
	if (ftp_mpi.PMPI_Comm_dup(MPI_COMM_SELF, &self) != MPI_SUCCESS)
		self = MPI_COMM_NULL;
}

/* A new placeholder: the zero-byte message to itself, matched. */
static int placeholder(MPI_Message *handle, MPI_Request *send)
{
	pthread_once(&self_once, self_make);
	if (self == MPI_COMM_NULL)
		return MPI_ERR_INTERN;
	int rc = ftp_mpi.PMPI_Isend(NULL, 0, MPI_BYTE, 0, 0, self, send);
	if (rc == MPI_SUCCESS &&
	    (rc = ftp_mpi.PMPI_Mprobe(0, 0, self, handle, MPI_STATUS_IGNORE)) != MPI_SUCCESS) {
		ftp_mpi.PMPI_Cancel(send);
		ftp_mpi.PMPI_Wait(send, MPI_STATUS_IGNORE);
	}
	return rc;
}

/* The placeholder received, and its send complete. */
static void placeholder_drop(struct held *h)
{
	ftp_mpi.PMPI_Mrecv(NULL, 0, MPI_BYTE, &h->handle, MPI_STATUS_IGNORE);
	ftp_mpi.PMPI_Wait(&h->send, MPI_STATUS_IGNORE);
}

/* Hold data (bytes packed, owned from here, also on failure), the
 * message a probe of c found (status), under a new handle *message. */
static int held_put(struct ftp_call *c, void *data, int bytes, const MPI_Status *status,
		    MPI_Message *message)
{
	struct held *h = calloc(1, sizeof *h);
	int rc = h ? placeholder(&h->handle, &h->send) : MPI_ERR_NO_MEM;

	if (rc != MPI_SUCCESS) {
		free(h);
		free(data);
		return rc;
	}
	h->comm = c->comm->handle;
	h->data = data;
	h->bytes = bytes;
	h->status = *status;
	pthread_mutex_lock(&held_lock);
	h->next = held_list;
	held_list = h;
	atomic_fetch_add_explicit(&held_count, 1, memory_order_relaxed);
	pthread_mutex_unlock(&held_lock);
	*message = h->handle;
	return MPI_SUCCESS;
}

int ftp_held_probed(struct ftp_call *c, const MPI_Status *st, ftp_held_recv_fn recv,
		    MPI_Message *message)
{
	int bytes = 0;

	if (st->MPI_SOURCE == MPI_PROC_NULL) {
		*message = MPI_MESSAGE_NO_PROC;
		return MPI_SUCCESS;
	}
	int rc = ftp_mpi.PMPI_Get_count(st, MPI_BYTE, &bytes);
	void *data = rc == MPI_SUCCESS && bytes >= 0 ? malloc((size_t)bytes + 1) : NULL;
	if (!data)
		return rc != MPI_SUCCESS ? rc : bytes < 0 ? MPI_ERR_COUNT : MPI_ERR_NO_MEM;
	c->watch = ftp_watch_on(c->comm, FTP_WATCH_PEER, st->MPI_SOURCE, true);
	rc = recv(c, data, bytes, st->MPI_SOURCE, st->MPI_TAG);
	if (rc != MPI_SUCCESS) {
		free(data);
		return rc;
	}
	return held_put(c, data, bytes, st, message);
}

/* --- the matched probes of a cover whose point-to-point is the MPI's ----- */

/* The whole message, packed, watched on its source. */
static int recv_whole(struct ftp_call *c, void *buf, int bytes, int source, int tag)
{
	return ftp_block(c,
			 ftp_mpi.PMPI_Irecv(buf, bytes, MPI_PACKED, ftp_rank_in(c->comm, source),
					    tag, c->real, &c->req),
			 MPI_STATUS_IGNORE);
}

int ftp_held_mprobe(struct ftp_call *c, int source, int tag, ftp_held_probe_fn probe,
		    ftp_held_recv_fn recv, MPI_Message *message, MPI_Status *status)
{
	MPI_Status st;
	int rc = probe(c, source, tag, &st);

	if (rc == MPI_SUCCESS)
		rc = ftp_held_probed(c, &st, recv, message);
	if (rc == MPI_SUCCESS && status != MPI_STATUS_IGNORE)
		*status = st;
	return rc;
}

int ftp_held_improbe(struct ftp_call *c, int source, int tag, ftp_held_iprobe_fn iprobe,
		     ftp_held_recv_fn recv, int *flag, MPI_Message *message, MPI_Status *status)
{
	MPI_Status st;
	int rc = iprobe(c, source, tag, flag, &st);

	if (rc == MPI_SUCCESS && *flag)
		rc = ftp_held_probed(c, &st, recv, message);
	if (rc == MPI_SUCCESS && *flag && status != MPI_STATUS_IGNORE)
		*status = st;
	return rc;
}

/* The MPI's probe, ranks translated. */
static int iprobe_on(struct ftp_call *c, int source, int tag, int *flag, MPI_Status *status)
{
	int rc = ftp_mpi.PMPI_Iprobe(ftp_rank_in(c->comm, source), tag, c->real, flag, status);

	if (rc == MPI_SUCCESS && *flag)
		ftp_status_out(c->comm, status);
	return rc;
}

int ftp_held_MPI_Mprobe(struct ftp_call *c, int source, int tag, MPI_Message *message,
			MPI_Status *status)
{
	return ftp_held_mprobe(c, source, tag, ftp_probe_on, recv_whole, message, status);
}

int ftp_held_MPI_Improbe(struct ftp_call *c, int source, int tag, int *flag, MPI_Message *message,
			 MPI_Status *status)
{
	return ftp_post_iprobe(
	    c, ftp_held_improbe(c, source, tag, iprobe_on, recv_whole, flag, message, status));
}

/* The held message of handle, out of the list; NULL if it is the MPI's. */
static struct held *held_take(MPI_Message handle)
{
	struct held *h = NULL;

	if (atomic_load_explicit(&held_count, memory_order_relaxed) == 0 ||
	    handle == MPI_MESSAGE_NULL || handle == MPI_MESSAGE_NO_PROC)
		return NULL;
	pthread_mutex_lock(&held_lock);
	for (struct held **p = &held_list; *p; p = &(*p)->next)
		if ((*p)->handle == handle) {
			h = *p;
			*p = h->next;
			atomic_fetch_sub_explicit(&held_count, 1, memory_order_relaxed);
			break;
		}
	pthread_mutex_unlock(&held_lock);
	return h;
}

/* Receive h into count elements of type at buf, as MPI_Mrecv would have:
 * the status of the probe, its count that of what was unpacked, and
 * MPI_ERR_TRUNCATE if the message is longer than the buffer. The call c
 * is made on h's communicator (its errors are raised there); h and its
 * placeholder are gone after. */
static int held_recv(struct ftp_call *c, struct held *h, void *buf, MPI_Count count,
		     MPI_Datatype type, MPI_Status *status)
{
	int size = 0, pos = 0, rc = ftp_mpi.PMPI_Type_size(type, &size);
	int64_t room = rc == MPI_SUCCESS ? (int64_t)size * count : 0;
	int whole = size > 0 ? h->bytes / size : 0;

	ftp_resolve(c, h->comm);
	if (rc == MPI_SUCCESS && room < h->bytes)
		rc = MPI_ERR_TRUNCATE;
	if (rc == MPI_SUCCESS && h->bytes > 0)
		rc = ftp_mpi.PMPI_Unpack(h->data, h->bytes, &pos, buf, whole, type, self);
	if (status != MPI_STATUS_IGNORE) {
		*status = h->status;
		ftp_mpi.PMPI_Status_set_elements(status, MPI_BYTE,
						 rc == MPI_SUCCESS ? h->bytes : 0);
		status->MPI_ERROR = rc;
	}
	placeholder_drop(h);
	free(h->data);
	free(h);
	return rc;
}

/* An MPI_Imrecv of a held message: an operation done when made. */
static bool held_op_progress(struct ftp_op *op)
{
	(void)op;
	return true;
}

static void held_op_destroy(struct ftp_op *op)
{
	free(op);
}

static int held_irecv(struct ftp_call *c, struct held *h, void *buf, MPI_Count count,
		      MPI_Datatype type, MPI_Request *request)
{
	struct ftp_op *op = calloc(1, sizeof *op);

	if (!op) {
		/* The message is lost to the program either way: say so. */
		held_recv(c, h, NULL, 0, MPI_BYTE, MPI_STATUS_IGNORE);
		return ftp_post_plain(c, MPI_ERR_NO_MEM);
	}
	op->rc = held_recv(c, h, buf, count, type, &op->status);
	op->has_status = true;
	op->progress = held_op_progress;
	op->destroy = held_op_destroy;
	return ftp_post_plain(c, ftp_op_start(c, op, request));
}

/* MPI_Mrecv and MPI_Imrecv, and their large-count forms (COUNT_T their
 * count's type): a held message is unpacked here, any other is the
 * MPI's. */
#define MRECV_FORMS(SUFFIX, COUNT_T)                                                               \
	FT_EXPORT int MPI_Mrecv##SUFFIX(void *buf, COUNT_T count, MPI_Datatype datatype,           \
					MPI_Message *message, MPI_Status *status)                  \
	{                                                                                          \
		struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Mrecv##SUFFIX);                       \
		struct held *h = held_take(*message);                                              \
                                                                                                   \
		status = FTP_STATUS(status);                                                       \
		if (h) {                                                                           \
			*message = MPI_MESSAGE_NULL;                                               \
			return ftp_post_msg(&c, held_recv(&c, h, buf, count, datatype, status));   \
		}                                                                                  \
		int rc = ftp_pre_msg(&c);                                                          \
		if (rc == MPI_SUCCESS)                                                             \
			rc = ftp_mpi.PMPI_Mrecv##SUFFIX(buf, count, datatype, message, status);    \
		return ftp_post_msg(&c, rc);                                                       \
	}                                                                                          \
	FTP_ALSO_PMPI(MPI_Mrecv##SUFFIX);                                                          \
                                                                                                   \
	FT_EXPORT int MPI_Imrecv##SUFFIX(void *buf, COUNT_T count, MPI_Datatype datatype,          \
					 MPI_Message *message, MPI_Request *request)               \
	{                                                                                          \
		struct ftp_call c = FTP_CALL_INIT(FTP_FN_MPI_Imrecv##SUFFIX);                      \
		struct held *h = held_take(*message);                                              \
                                                                                                   \
		if (h) {                                                                           \
			*message = MPI_MESSAGE_NULL;                                               \
			return held_irecv(&c, h, buf, count, datatype, request);                   \
		}                                                                                  \
		int rc = ftp_pre_msg(&c);                                                          \
		if (rc == MPI_SUCCESS)                                                             \
			rc = ftp_mpi.PMPI_Imrecv##SUFFIX(buf, count, datatype, message, request);  \
		return ftp_post_msg(&c, rc);                                                       \
	}                                                                                          \
	FTP_ALSO_PMPI(MPI_Imrecv##SUFFIX);

MRECV_FORMS(, int)
#if MPI_VERSION >= 4
MRECV_FORMS(_c, MPI_Count)
#endif
