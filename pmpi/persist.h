/* persist.h: persistent requests that ftshim starts itself (persist.c).
 * On a covered communicator whose kind has a nonblocking form of a call
 * (a replicated MPI_Isend, MPI_Iallreduce), the persistent form
 * (MPI_Send_init, MPI_Allreduce_init) runs that nonblocking form at
 * every MPI_Start; MPI-4's persistent collectives run so on every
 * communicator ftshim tracks (on one it does not cover, as the MPI's
 * nonblocking collective). The program holds a shell: an inactive persistent
 * request of the MPI's own, never started, valid from the _init call to
 * MPI_Request_free; the completion calls complete the running
 * operation's request in the shell's place and leave the shell, inactive,
 * the program's.
 *
 * Sharing: the application thread that uses a persistent request owns
 * it (MPI forbids two threads to complete one request at once); the
 * request table (pmpi/requests.h) maps shells to them under its lock. */
#ifndef FTSHIM_PMPI_PERSIST_H
#define FTSHIM_PMPI_PERSIST_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "pmpi/coll_call.h"

struct ftp_call;

struct ftp_persist {
	/* Run the operation once more as its nonblocking call would, its
	 * errors raised as that call raises them; *active its request. */
	int (*start)(struct ftp_persist *p, MPI_Request *active);
	void (*destroy)(struct ftp_persist *p);
	MPI_Comm comm;	    /* the program's communicator, as given */
	MPI_Request active; /* while started and not completed; else MPI_REQUEST_NULL */
};

/* How many shells exist (one relaxed load keeps the completion calls'
 * path unchanged while there are none). */
extern _Atomic uint32_t ftp_persist_live;

static inline bool ftp_persist_any(void)
{
	return __builtin_expect(atomic_load_explicit(&ftp_persist_live, memory_order_relaxed) != 0,
				0);
}

/* The persistent request p (filled in by the caller, comm and start
 * set) for the call c: its shell to *request. Returns through c's post;
 * on failure p is destroyed. */
int ftp_persist_make(struct ftp_call *c, struct ftp_persist *p, MPI_Request *request);

/* The persistent request whose shell request is, or NULL. */
struct ftp_persist *ftp_persist_of(MPI_Request request);

/* A completion call's requests with each shell replaced by its running
 * operation's request (MPI_REQUEST_NULL while inactive, which every
 * completion call treats as it treats an inactive request). */
#define FTP_PERSIST_STACK 16
struct ftp_persist_swap {
	MPI_Request *work;
	struct ftp_persist **shell; /* per request: its persistent request, or NULL */
	MPI_Request work_stack[FTP_PERSIST_STACK];
	struct ftp_persist *shell_stack[FTP_PERSIST_STACK];
};

/* 1: requests[0..count) hold a shell, and s->work is what the call works
 * on; 0: none (s is unused); -1: out of memory. */
int ftp_persist_swap_in(struct ftp_persist_swap *s, int count, const MPI_Request requests[]);
/* After the call: the requests it completed in requests[] (a shell stays,
 * inactive once its operation completed). */
void ftp_persist_swap_out(struct ftp_persist_swap *s, int count, MPI_Request requests[]);

/* MPI_Start of p; MPI_Cancel of its shell; MPI_Request_free of its
 * shell, once the caller has freed its running operation's request (an
 * active one completes on its own, as MPI allows). */
int ftp_persist_start(struct ftp_persist *p);
int ftp_persist_cancel(struct ftp_persist *p);
void ftp_persist_free(MPI_Request *request, struct ftp_persist *p);

/* The persistent point-to-point forms on a covered communicator whose
 * kind has the nonblocking ones: MPI_Send_init and MPI_Rsend_init start
 * the kind's MPI_Isend (a standard send is a correct ready send),
 * MPI_Ssend_init its MPI_Issend, MPI_Recv_init its MPI_Irecv. */
int ftp_cover_MPI_Send_init(struct ftp_call *c, const void *buf, int count, MPI_Datatype datatype,
			    int dest, int tag, MPI_Request *request);
int ftp_cover_MPI_Ssend_init(struct ftp_call *c, const void *buf, int count, MPI_Datatype datatype,
			     int dest, int tag, MPI_Request *request);
int ftp_cover_MPI_Rsend_init(struct ftp_call *c, const void *buf, int count, MPI_Datatype datatype,
			     int dest, int tag, MPI_Request *request);
int ftp_cover_MPI_Recv_init(struct ftp_call *c, void *buf, int count, MPI_Datatype datatype,
			    int source, int tag, MPI_Request *request);

/* A persistent collective: each start runs the cover kind's nonblocking
 * runner with a (its arrays and datatypes kept by the request). */
int ftp_persist_coll(struct ftp_call *c, const struct coll_args *a, MPI_Request *request);

#define FTP_COVER_PERSIST_P2P_FORMS                                                                \
	.MPI_Send_init = ftp_cover_MPI_Send_init, .MPI_Ssend_init = ftp_cover_MPI_Ssend_init,      \
	.MPI_Rsend_init = ftp_cover_MPI_Rsend_init, .MPI_Recv_init = ftp_cover_MPI_Recv_init

#endif
