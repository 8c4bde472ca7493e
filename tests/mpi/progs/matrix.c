/* matrix.c: the behaviour matrix of ftshim's never-hang guarantee. Every
 * operation of a list (point-to-point in every mode, probes, nonblocking
 * forms with each completion call, persistent requests, every collective
 * and its nonblocking form, communicator creation) is run by survivors
 * against a failed process in a given role, and the result class is
 * printed per cell:
 *
 *   matrix --mode before --role peer|member|root|uninvolved
 *       the victim (the last rank) dies first; once every survivor knows,
 *       each operation runs with the victim as the peer, a non-root
 *       member, the root, or not in the communicator at all (then live
 *       partners do the matching half and every cell must succeed)
 *   matrix --mode during --first K --count N
 *       operations K..K+N-1, one victim each: ranks 0 and 1 start the
 *       operation with victim V on a communicator {0, 1, V} made at the
 *       start; V, told to go, waits 300 ms and dies while they are blocked
 *
 * Survivor rank 0 prints one line per cell:
 *   cell op=MPI_Recv mode=during role=peer result=MPI_ERR_PROC_FAILED ms=301.2
 * and "matrix: N cells" at the end. Before each operation each survivor
 * writes "start OP" to stderr, so a hang shows where. */
#include <math.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#define COUNT 4
#define BSEND_BYTES (1 << 16)

enum kind { SEND, RECV, COLL, ROOTED };

struct ctx {
	MPI_Comm comm;  /* where the operation runs */
	int peer;       /* the other side of point-to-point, a rank in comm */
	int root;       /* for rooted collectives */
	int initiator;  /* 1: this rank runs the operation under test; 0: the partner */
	int size;
	int sbuf[64 * COUNT], rbuf[64 * COUNT];
	int counts[64], displs[64];
	MPI_Datatype types[64];
};

typedef int (*op_fn)(struct ctx *x);

struct op {
	const char *name;
	enum kind kind;
	op_fn run;     /* the operation under test */
	op_fn partner; /* what a live partner does (point-to-point, uninvolved) */
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void sleep_ms(double ms)
{
	for (double end = now_ms() + ms, left; (left = end - now_ms()) > 0;) {
		struct timespec ts = { (time_t)(left / 1e3), (long)(fmod(left, 1e3) * 1e6) };
		nanosleep(&ts, NULL);
	}
}

/* --- partners: the matching half, for a live peer ------------------------- */

static int p_recv(struct ctx *x)
{
	return MPI_Recv(x->rbuf, COUNT, MPI_INT, x->peer, 7, x->comm, MPI_STATUS_IGNORE);
}

static int p_send(struct ctx *x)
{
	return MPI_Send(x->sbuf, COUNT, MPI_INT, x->peer, 7, x->comm);
}

static int p_sendrecv(struct ctx *x)
{
	return MPI_Sendrecv(x->sbuf, COUNT, MPI_INT, x->peer, 7, x->rbuf, COUNT, MPI_INT, x->peer, 7,
			    x->comm, MPI_STATUS_IGNORE);
}

/* Ready send needs the receive posted first: the partner posts it, then
 * says so. */
static int p_rsend_target(struct ctx *x)
{
	MPI_Request r;
	int one = 1;
	int rc = MPI_Irecv(x->rbuf, COUNT, MPI_INT, x->peer, 7, x->comm, &r);
	if (rc == MPI_SUCCESS)
		rc = MPI_Send(&one, 1, MPI_INT, x->peer, 8, x->comm);
	if (rc == MPI_SUCCESS)
		rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
	return rc;
}

/* --- point-to-point under test ---------------------------------------------- */

static int t_send(struct ctx *x)
{
	return MPI_Send(x->sbuf, COUNT, MPI_INT, x->peer, 7, x->comm);
}

static int t_ssend(struct ctx *x)
{
	return MPI_Ssend(x->sbuf, COUNT, MPI_INT, x->peer, 7, x->comm);
}

static int t_bsend(struct ctx *x)
{
	return MPI_Bsend(x->sbuf, COUNT, MPI_INT, x->peer, 7, x->comm);
}

static int t_rsend(struct ctx *x)
{
	int one;
	/* Wait for the partner's go (a live partner sends it; a dead one
	 * never does, and this receive is what must not hang). */
	int rc = MPI_Recv(&one, 1, MPI_INT, x->peer, 8, x->comm, MPI_STATUS_IGNORE);
	if (rc == MPI_SUCCESS)
		rc = MPI_Rsend(x->sbuf, COUNT, MPI_INT, x->peer, 7, x->comm);
	return rc;
}

static int t_recv(struct ctx *x)
{
	return MPI_Recv(x->rbuf, COUNT, MPI_INT, x->peer, 7, x->comm, MPI_STATUS_IGNORE);
}

static int t_recv_any(struct ctx *x)
{
	return MPI_Recv(x->rbuf, COUNT, MPI_INT, MPI_ANY_SOURCE, 7, x->comm, MPI_STATUS_IGNORE);
}

static int t_sendrecv(struct ctx *x)
{
	return MPI_Sendrecv(x->sbuf, COUNT, MPI_INT, x->peer, 7, x->rbuf, COUNT, MPI_INT, x->peer, 7,
			    x->comm, MPI_STATUS_IGNORE);
}

static int t_sendrecv_replace(struct ctx *x)
{
	return MPI_Sendrecv_replace(x->rbuf, COUNT, MPI_INT, x->peer, 7, x->peer, 7, x->comm,
				    MPI_STATUS_IGNORE);
}

static int t_probe(struct ctx *x)
{
	int rc = MPI_Probe(x->peer, 7, x->comm, MPI_STATUS_IGNORE);
	return rc == MPI_SUCCESS ? t_recv(x) : rc;
}

static int t_probe_any(struct ctx *x)
{
	int rc = MPI_Probe(MPI_ANY_SOURCE, 7, x->comm, MPI_STATUS_IGNORE);
	return rc == MPI_SUCCESS ? t_recv(x) : rc;
}

static int t_iprobe(struct ctx *x)
{
	int flag = 0, rc;
	do
		rc = MPI_Iprobe(x->peer, 7, x->comm, &flag, MPI_STATUS_IGNORE);
	while (rc == MPI_SUCCESS && !flag);
	return rc == MPI_SUCCESS ? t_recv(x) : rc;
}

static int t_mprobe(struct ctx *x)
{
	MPI_Message m;
	int rc = MPI_Mprobe(x->peer, 7, x->comm, &m, MPI_STATUS_IGNORE);
	return rc == MPI_SUCCESS ? MPI_Mrecv(x->rbuf, COUNT, MPI_INT, &m, MPI_STATUS_IGNORE) : rc;
}

static int t_improbe(struct ctx *x)
{
	MPI_Message m;
	int flag = 0, rc;
	do
		rc = MPI_Improbe(x->peer, 7, x->comm, &flag, &m, MPI_STATUS_IGNORE);
	while (rc == MPI_SUCCESS && !flag);
	return rc == MPI_SUCCESS ? MPI_Mrecv(x->rbuf, COUNT, MPI_INT, &m, MPI_STATUS_IGNORE) : rc;
}

/* Nonblocking forms, with each way of completing them. */
enum completion { WAIT, TEST, WAITALL, WAITANY, WAITSOME, TESTALL, TESTANY, TESTSOME };

static int complete(MPI_Request *r, enum completion how)
{
	int flag = 0, index, outcount, rc;
	MPI_Status st[1];

	switch (how) {
	case WAIT:
		return MPI_Wait(r, MPI_STATUS_IGNORE);
	case TEST:
		do
			rc = MPI_Test(r, &flag, MPI_STATUS_IGNORE);
		while (rc == MPI_SUCCESS && !flag);
		return rc;
	case WAITALL:
		rc = MPI_Waitall(1, r, st);
		return rc == MPI_ERR_IN_STATUS ? st[0].MPI_ERROR : rc;
	case WAITANY:
		return MPI_Waitany(1, r, &index, MPI_STATUS_IGNORE);
	case WAITSOME:
		rc = MPI_Waitsome(1, r, &outcount, &index, st);
		return rc == MPI_ERR_IN_STATUS ? st[0].MPI_ERROR : rc;
	case TESTALL:
		do
			rc = MPI_Testall(1, r, &flag, st);
		while (rc == MPI_SUCCESS && !flag);
		return rc == MPI_ERR_IN_STATUS ? st[0].MPI_ERROR : rc;
	case TESTANY:
		do
			rc = MPI_Testany(1, r, &index, &flag, MPI_STATUS_IGNORE);
		while (rc == MPI_SUCCESS && !flag);
		return rc;
	case TESTSOME:
		do
			rc = MPI_Testsome(1, r, &outcount, &index, st);
		while (rc == MPI_SUCCESS && outcount == 0);
		return rc == MPI_ERR_IN_STATUS ? st[0].MPI_ERROR : rc;
	}
	return MPI_ERR_OTHER;
}

static int irecv_then(struct ctx *x, int source, enum completion how)
{
	MPI_Request r;
	int rc = MPI_Irecv(x->rbuf, COUNT, MPI_INT, source, 7, x->comm, &r);
	return rc == MPI_SUCCESS ? complete(&r, how) : rc;
}

static int t_irecv_wait(struct ctx *x) { return irecv_then(x, x->peer, WAIT); }
static int t_irecv_test(struct ctx *x) { return irecv_then(x, x->peer, TEST); }
static int t_irecv_waitall(struct ctx *x) { return irecv_then(x, x->peer, WAITALL); }
static int t_irecv_waitany(struct ctx *x) { return irecv_then(x, x->peer, WAITANY); }
static int t_irecv_waitsome(struct ctx *x) { return irecv_then(x, x->peer, WAITSOME); }
static int t_irecv_testall(struct ctx *x) { return irecv_then(x, x->peer, TESTALL); }
static int t_irecv_testany(struct ctx *x) { return irecv_then(x, x->peer, TESTANY); }
static int t_irecv_testsome(struct ctx *x) { return irecv_then(x, x->peer, TESTSOME); }
static int t_irecv_any_wait(struct ctx *x) { return irecv_then(x, MPI_ANY_SOURCE, WAIT); }

static int t_isend_wait(struct ctx *x)
{
	MPI_Request r;
	int rc = MPI_Isend(x->sbuf, COUNT, MPI_INT, x->peer, 7, x->comm, &r);
	return rc == MPI_SUCCESS ? complete(&r, WAIT) : rc;
}

static int t_issend_wait(struct ctx *x)
{
	MPI_Request r;
	int rc = MPI_Issend(x->sbuf, COUNT, MPI_INT, x->peer, 7, x->comm, &r);
	return rc == MPI_SUCCESS ? complete(&r, WAIT) : rc;
}

static int t_ibsend_wait(struct ctx *x)
{
	MPI_Request r;
	int rc = MPI_Ibsend(x->sbuf, COUNT, MPI_INT, x->peer, 7, x->comm, &r);
	return rc == MPI_SUCCESS ? complete(&r, WAIT) : rc;
}

static int persistent(MPI_Request *r, int single)
{
	int rc = single ? MPI_Start(r) : MPI_Startall(1, r);
	if (rc == MPI_SUCCESS)
		rc = MPI_Wait(r, MPI_STATUS_IGNORE);
	MPI_Request_free(r);
	return rc;
}

static int t_send_init(struct ctx *x)
{
	MPI_Request r;
	int rc = MPI_Send_init(x->sbuf, COUNT, MPI_INT, x->peer, 7, x->comm, &r);
	return rc == MPI_SUCCESS ? persistent(&r, 1) : rc;
}

static int t_ssend_init(struct ctx *x)
{
	MPI_Request r;
	int rc = MPI_Ssend_init(x->sbuf, COUNT, MPI_INT, x->peer, 7, x->comm, &r);
	return rc == MPI_SUCCESS ? persistent(&r, 0) : rc;
}

static int t_recv_init(struct ctx *x)
{
	MPI_Request r;
	int rc = MPI_Recv_init(x->rbuf, COUNT, MPI_INT, x->peer, 7, x->comm, &r);
	return rc == MPI_SUCCESS ? persistent(&r, 1) : rc;
}

static int t_recv_init_startall(struct ctx *x)
{
	MPI_Request r;
	int rc = MPI_Recv_init(x->rbuf, COUNT, MPI_INT, x->peer, 7, x->comm, &r);
	return rc == MPI_SUCCESS ? persistent(&r, 0) : rc;
}

/* --- collectives -------------------------------------------------------------- */

static int c_barrier(struct ctx *x) { return MPI_Barrier(x->comm); }
static int c_bcast(struct ctx *x) { return MPI_Bcast(x->rbuf, COUNT, MPI_INT, x->root, x->comm); }
static int c_reduce(struct ctx *x) { return MPI_Reduce(x->sbuf, x->rbuf, COUNT, MPI_INT, MPI_SUM, x->root, x->comm); }
static int c_allreduce(struct ctx *x) { return MPI_Allreduce(x->sbuf, x->rbuf, COUNT, MPI_INT, MPI_SUM, x->comm); }
static int c_gather(struct ctx *x) { return MPI_Gather(x->sbuf, 1, MPI_INT, x->rbuf, 1, MPI_INT, x->root, x->comm); }
static int c_gatherv(struct ctx *x) { return MPI_Gatherv(x->sbuf, 1, MPI_INT, x->rbuf, x->counts, x->displs, MPI_INT, x->root, x->comm); }
static int c_scatter(struct ctx *x) { return MPI_Scatter(x->sbuf, 1, MPI_INT, x->rbuf, 1, MPI_INT, x->root, x->comm); }
static int c_scatterv(struct ctx *x) { return MPI_Scatterv(x->sbuf, x->counts, x->displs, MPI_INT, x->rbuf, 1, MPI_INT, x->root, x->comm); }
static int c_allgather(struct ctx *x) { return MPI_Allgather(x->sbuf, 1, MPI_INT, x->rbuf, 1, MPI_INT, x->comm); }
static int c_allgatherv(struct ctx *x) { return MPI_Allgatherv(x->sbuf, 1, MPI_INT, x->rbuf, x->counts, x->displs, MPI_INT, x->comm); }
static int c_alltoall(struct ctx *x) { return MPI_Alltoall(x->sbuf, 1, MPI_INT, x->rbuf, 1, MPI_INT, x->comm); }
static int c_alltoallv(struct ctx *x) { return MPI_Alltoallv(x->sbuf, x->counts, x->displs, MPI_INT, x->rbuf, x->counts, x->displs, MPI_INT, x->comm); }
static int c_alltoallw(struct ctx *x)
{
	int bdispls[64];
	for (int i = 0; i < x->size; i++)
		bdispls[i] = x->displs[i] * (int)sizeof(int);
	return MPI_Alltoallw(x->sbuf, x->counts, bdispls, x->types, x->rbuf, x->counts, bdispls, x->types, x->comm);
}
static int c_reduce_scatter(struct ctx *x) { return MPI_Reduce_scatter(x->sbuf, x->rbuf, x->counts, MPI_INT, MPI_SUM, x->comm); }
static int c_reduce_scatter_block(struct ctx *x) { return MPI_Reduce_scatter_block(x->sbuf, x->rbuf, 1, MPI_INT, MPI_SUM, x->comm); }
static int c_scan(struct ctx *x) { return MPI_Scan(x->sbuf, x->rbuf, COUNT, MPI_INT, MPI_SUM, x->comm); }
static int c_exscan(struct ctx *x) { return MPI_Exscan(x->sbuf, x->rbuf, COUNT, MPI_INT, MPI_SUM, x->comm); }

#define NB(fn, call) \
	static int fn(struct ctx *x) \
	{ \
		MPI_Request r; \
		int rc = call; \
		return rc == MPI_SUCCESS ? MPI_Wait(&r, MPI_STATUS_IGNORE) : rc; \
	}

NB(c_ibarrier, MPI_Ibarrier(x->comm, &r))
NB(c_ibcast, MPI_Ibcast(x->rbuf, COUNT, MPI_INT, x->root, x->comm, &r))
NB(c_ireduce, MPI_Ireduce(x->sbuf, x->rbuf, COUNT, MPI_INT, MPI_SUM, x->root, x->comm, &r))
NB(c_iallreduce, MPI_Iallreduce(x->sbuf, x->rbuf, COUNT, MPI_INT, MPI_SUM, x->comm, &r))
NB(c_igather, MPI_Igather(x->sbuf, 1, MPI_INT, x->rbuf, 1, MPI_INT, x->root, x->comm, &r))
NB(c_igatherv, MPI_Igatherv(x->sbuf, 1, MPI_INT, x->rbuf, x->counts, x->displs, MPI_INT, x->root, x->comm, &r))
NB(c_iscatter, MPI_Iscatter(x->sbuf, 1, MPI_INT, x->rbuf, 1, MPI_INT, x->root, x->comm, &r))
NB(c_iscatterv, MPI_Iscatterv(x->sbuf, x->counts, x->displs, MPI_INT, x->rbuf, 1, MPI_INT, x->root, x->comm, &r))
NB(c_iallgather, MPI_Iallgather(x->sbuf, 1, MPI_INT, x->rbuf, 1, MPI_INT, x->comm, &r))
NB(c_iallgatherv, MPI_Iallgatherv(x->sbuf, 1, MPI_INT, x->rbuf, x->counts, x->displs, MPI_INT, x->comm, &r))
NB(c_ialltoall, MPI_Ialltoall(x->sbuf, 1, MPI_INT, x->rbuf, 1, MPI_INT, x->comm, &r))
NB(c_ialltoallv, MPI_Ialltoallv(x->sbuf, x->counts, x->displs, MPI_INT, x->rbuf, x->counts, x->displs, MPI_INT, x->comm, &r))
NB(c_ireduce_scatter, MPI_Ireduce_scatter(x->sbuf, x->rbuf, x->counts, MPI_INT, MPI_SUM, x->comm, &r))
NB(c_ireduce_scatter_block, MPI_Ireduce_scatter_block(x->sbuf, x->rbuf, 1, MPI_INT, MPI_SUM, x->comm, &r))
NB(c_iscan, MPI_Iscan(x->sbuf, x->rbuf, COUNT, MPI_INT, MPI_SUM, x->comm, &r))
NB(c_iexscan, MPI_Iexscan(x->sbuf, x->rbuf, COUNT, MPI_INT, MPI_SUM, x->comm, &r))

static int c_comm_dup(struct ctx *x)
{
	MPI_Comm n;
	int rc = MPI_Comm_dup(x->comm, &n);
	if (rc == MPI_SUCCESS)
		MPI_Comm_free(&n);
	return rc;
}

static int c_comm_idup(struct ctx *x)
{
	MPI_Comm n;
	MPI_Request r;
	int rc = MPI_Comm_idup(x->comm, &n, &r);
	if (rc == MPI_SUCCESS)
		rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
	if (rc == MPI_SUCCESS)
		MPI_Comm_free(&n);
	return rc;
}

static int c_comm_split(struct ctx *x)
{
	MPI_Comm n;
	int rc = MPI_Comm_split(x->comm, 0, 0, &n);
	if (rc == MPI_SUCCESS)
		MPI_Comm_free(&n);
	return rc;
}

static int c_comm_create(struct ctx *x)
{
	MPI_Comm n;
	MPI_Group g;
	MPI_Comm_group(x->comm, &g);
	int rc = MPI_Comm_create(x->comm, g, &n);
	if (rc == MPI_SUCCESS && n != MPI_COMM_NULL)
		MPI_Comm_free(&n);
	MPI_Group_free(&g);
	return rc;
}

static int c_comm_create_group(struct ctx *x)
{
	MPI_Comm n;
	MPI_Group g;
	MPI_Comm_group(x->comm, &g);
	int rc = MPI_Comm_create_group(x->comm, g, 5, &n);
	if (rc == MPI_SUCCESS)
		MPI_Comm_free(&n);
	MPI_Group_free(&g);
	return rc;
}

#define P2P(name, kind, run, partner) { name, kind, run, partner }
#define COLL_OP(name, kind, run) { name, kind, run, NULL }

static const struct op ops[] = {
	P2P("MPI_Send", SEND, t_send, p_recv),
	P2P("MPI_Ssend", SEND, t_ssend, p_recv),
	P2P("MPI_Bsend", SEND, t_bsend, p_recv),
	P2P("MPI_Rsend", SEND, t_rsend, p_rsend_target),
	P2P("MPI_Recv", RECV, t_recv, p_send),
	P2P("MPI_Recv(ANY_SOURCE)", RECV, t_recv_any, p_send),
	P2P("MPI_Sendrecv", RECV, t_sendrecv, p_sendrecv),
	P2P("MPI_Sendrecv_replace", RECV, t_sendrecv_replace, p_sendrecv),
	P2P("MPI_Probe+Recv", RECV, t_probe, p_send),
	P2P("MPI_Probe(ANY_SOURCE)+Recv", RECV, t_probe_any, p_send),
	P2P("MPI_Iprobe+Recv", RECV, t_iprobe, p_send),
	P2P("MPI_Mprobe+Mrecv", RECV, t_mprobe, p_send),
	P2P("MPI_Improbe+Mrecv", RECV, t_improbe, p_send),
	P2P("MPI_Isend+Wait", SEND, t_isend_wait, p_recv),
	P2P("MPI_Issend+Wait", SEND, t_issend_wait, p_recv),
	P2P("MPI_Ibsend+Wait", SEND, t_ibsend_wait, p_recv),
	P2P("MPI_Irecv+Wait", RECV, t_irecv_wait, p_send),
	P2P("MPI_Irecv+Test", RECV, t_irecv_test, p_send),
	P2P("MPI_Irecv+Waitall", RECV, t_irecv_waitall, p_send),
	P2P("MPI_Irecv+Waitany", RECV, t_irecv_waitany, p_send),
	P2P("MPI_Irecv+Waitsome", RECV, t_irecv_waitsome, p_send),
	P2P("MPI_Irecv+Testall", RECV, t_irecv_testall, p_send),
	P2P("MPI_Irecv+Testany", RECV, t_irecv_testany, p_send),
	P2P("MPI_Irecv+Testsome", RECV, t_irecv_testsome, p_send),
	P2P("MPI_Irecv(ANY_SOURCE)+Wait", RECV, t_irecv_any_wait, p_send),
	P2P("MPI_Send_init+Start", SEND, t_send_init, p_recv),
	P2P("MPI_Ssend_init+Startall", SEND, t_ssend_init, p_recv),
	P2P("MPI_Recv_init+Start", RECV, t_recv_init, p_send),
	P2P("MPI_Recv_init+Startall", RECV, t_recv_init_startall, p_send),
	COLL_OP("MPI_Barrier", COLL, c_barrier),
	COLL_OP("MPI_Bcast", ROOTED, c_bcast),
	COLL_OP("MPI_Reduce", ROOTED, c_reduce),
	COLL_OP("MPI_Allreduce", COLL, c_allreduce),
	COLL_OP("MPI_Gather", ROOTED, c_gather),
	COLL_OP("MPI_Gatherv", ROOTED, c_gatherv),
	COLL_OP("MPI_Scatter", ROOTED, c_scatter),
	COLL_OP("MPI_Scatterv", ROOTED, c_scatterv),
	COLL_OP("MPI_Allgather", COLL, c_allgather),
	COLL_OP("MPI_Allgatherv", COLL, c_allgatherv),
	COLL_OP("MPI_Alltoall", COLL, c_alltoall),
	COLL_OP("MPI_Alltoallv", COLL, c_alltoallv),
	COLL_OP("MPI_Alltoallw", COLL, c_alltoallw),
	COLL_OP("MPI_Reduce_scatter", COLL, c_reduce_scatter),
	COLL_OP("MPI_Reduce_scatter_block", COLL, c_reduce_scatter_block),
	COLL_OP("MPI_Scan", COLL, c_scan),
	COLL_OP("MPI_Exscan", COLL, c_exscan),
	COLL_OP("MPI_Ibarrier+Wait", COLL, c_ibarrier),
	COLL_OP("MPI_Ibcast+Wait", ROOTED, c_ibcast),
	COLL_OP("MPI_Ireduce+Wait", ROOTED, c_ireduce),
	COLL_OP("MPI_Iallreduce+Wait", COLL, c_iallreduce),
	COLL_OP("MPI_Igather+Wait", ROOTED, c_igather),
	COLL_OP("MPI_Igatherv+Wait", ROOTED, c_igatherv),
	COLL_OP("MPI_Iscatter+Wait", ROOTED, c_iscatter),
	COLL_OP("MPI_Iscatterv+Wait", ROOTED, c_iscatterv),
	COLL_OP("MPI_Iallgather+Wait", COLL, c_iallgather),
	COLL_OP("MPI_Iallgatherv+Wait", COLL, c_iallgatherv),
	COLL_OP("MPI_Ialltoall+Wait", COLL, c_ialltoall),
	COLL_OP("MPI_Ialltoallv+Wait", COLL, c_ialltoallv),
	COLL_OP("MPI_Ireduce_scatter+Wait", COLL, c_ireduce_scatter),
	COLL_OP("MPI_Ireduce_scatter_block+Wait", COLL, c_ireduce_scatter_block),
	COLL_OP("MPI_Iscan+Wait", COLL, c_iscan),
	COLL_OP("MPI_Iexscan+Wait", COLL, c_iexscan),
	COLL_OP("MPI_Comm_dup", COLL, c_comm_dup),
	COLL_OP("MPI_Comm_idup+Wait", COLL, c_comm_idup),
	COLL_OP("MPI_Comm_split", COLL, c_comm_split),
	COLL_OP("MPI_Comm_create", COLL, c_comm_create),
	COLL_OP("MPI_Comm_create_group", COLL, c_comm_create_group),
};

#define NOPS ((int)(sizeof ops / sizeof ops[0]))

static const char *class_name(int rc)
{
	static char buf[64];
	int cls = rc;

	if (rc == MPI_SUCCESS)
		return "MPI_SUCCESS";
	MPI_Error_class(rc, &cls);
#ifdef MPIX_ERR_PROC_FAILED
	if (cls == MPIX_ERR_PROC_FAILED)
		return "MPI_ERR_PROC_FAILED";
	if (cls == MPIX_ERR_PROC_FAILED_PENDING)
		return "MPI_ERR_PROC_FAILED_PENDING";
	if (cls == MPIX_ERR_REVOKED)
		return "MPI_ERR_REVOKED";
#else
	if (cls == 75)
		return "MPI_ERR_PROC_FAILED";
	if (cls == 76)
		return "MPI_ERR_PROC_FAILED_PENDING";
	if (cls == 77)
		return "MPI_ERR_REVOKED";
#endif
	snprintf(buf, sizeof buf, "other(%d)", cls);
	return buf;
}

static void fill(struct ctx *x, MPI_Comm comm)
{
	x->comm = comm;
	MPI_Comm_size(comm, &x->size);
	for (int i = 0; i < 64 * COUNT; i++)
		x->sbuf[i] = i;
	for (int i = 0; i < 64; i++) {
		x->counts[i] = 1;
		x->displs[i] = i;
		x->types[i] = MPI_INT;
	}
}

/* Run op i as a survivor and report the cell (survivor rank 0 of live). */
static void run_cell(int i, struct ctx *x, const char *mode, const char *role, MPI_Comm live)
{
	int wrank, lrank;
	char line[256];

	MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
	MPI_Comm_rank(live, &lrank);
	fprintf(stderr, "rank %d start %s\n", wrank, ops[i].name);
	double t0 = now_ms();
	int rc = x->initiator || !ops[i].partner ? ops[i].run(x) : ops[i].partner(x);
	double ms = now_ms() - t0;
	snprintf(line, sizeof line, "cell op=%s mode=%s role=%s result=%s ms=%.1f", ops[i].name, mode,
		 role, class_name(rc), ms);
	if (lrank == 0) {
		printf("%s\n", line);
		fflush(stdout);
	}
	/* Every survivor must get the documented class; say so if not. */
	fprintf(stderr, "rank %d %s\n", wrank, line);
}

int main(int argc, char **argv)
{
	int rank, size;
	const char *mode = "before", *role = "peer";
	int first = 0, count = NOPS;

	for (int i = 1; i + 1 < argc; i++) {
		if (!strcmp(argv[i], "--mode"))
			mode = argv[i + 1];
		else if (!strcmp(argv[i], "--role"))
			role = argv[i + 1];
		else if (!strcmp(argv[i], "--first"))
			first = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--count"))
			count = atoi(argv[i + 1]);
	}
	if (first + count > NOPS)
		count = NOPS - first;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	static char bsend_buf[BSEND_BYTES];
	MPI_Buffer_attach(bsend_buf, BSEND_BYTES);
	struct ctx x;

	if (!strcmp(mode, "list")) {
		if (rank == 0)
			for (int i = 0; i < NOPS; i++)
				printf("op %d %s %s\n", i, ops[i].name,
				       ops[i].kind == SEND || ops[i].kind == RECV ? "p2p"
				       : ops[i].kind == ROOTED                    ? "rooted"
										  : "coll");
		MPI_Finalize();
		return 0;
	}

	if (!strcmp(mode, "before")) {
		/* The victim is the last rank; live: everyone else. */
		int victim = size - 1;
		MPI_Comm all, live;
		MPI_Comm_dup(MPI_COMM_WORLD, &all);
		MPI_Comm_split(MPI_COMM_WORLD, rank == victim ? MPI_UNDEFINED : 0, rank, &live);
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == victim)
			raise(SIGKILL);
		int (*state)(int) = (int (*)(int))(uintptr_t)dlsym(RTLD_DEFAULT, "ftshim_rank_state");
		while (state && state(victim) != 1)
			sleep_ms(1);
		int uninvolved = !strcmp(role, "uninvolved");
		int lrank, lsize;
		MPI_Comm_rank(live, &lrank);
		MPI_Comm_size(live, &lsize);
		fill(&x, uninvolved ? live : all);
		for (int i = first; i < first + count; i++) {
			if (uninvolved) {
				/* Pairs of live ranks: even runs the operation, odd the
				 * other half. An odd one out runs collectives only. */
				x.peer = lrank ^ 1;
				x.initiator = lrank % 2 == 0;
				x.root = 0;
				if ((ops[i].kind == SEND || ops[i].kind == RECV) && x.peer >= lsize) {
					/* no partner: report nothing for this rank */
				}
			} else {
				x.peer = victim;
				x.initiator = 1;
				x.root = !strcmp(role, "root") ? victim : 0;
				if ((!strcmp(role, "peer") && ops[i].kind != SEND && ops[i].kind != RECV) ||
				    (strcmp(role, "peer") && (ops[i].kind == SEND || ops[i].kind == RECV)) ||
				    (!strcmp(role, "root") && ops[i].kind != ROOTED))
					continue; /* not a cell of this role */
			}
			run_cell(i, &x, mode, role, live);
			MPI_Barrier(live);
		}
		if (lrank == 0)
			printf("matrix: done\n");
		MPI_Comm_free(&live);
		MPI_Finalize();
		return 0;
	}

	/* during: ranks 0 and 1 survive; ranks 2.. are the victims, one per
	 * operation, each in a communicator {0, 1, victim} made now. */
	int nv = size - 2;
	if (count > nv)
		count = nv;
	MPI_Comm *per = calloc(count, sizeof *per), live;
	for (int k = 0; k < count; k++)
		MPI_Comm_split(MPI_COMM_WORLD, rank < 2 || rank == 2 + k ? 0 : MPI_UNDEFINED, rank, &per[k]);
	MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &live);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank >= 2) {
		int k = rank - 2, go;
		if (k >= count) {
			MPI_Finalize();
			return 0;
		}
		/* Wait for the go, let the survivors block, then die. */
		MPI_Recv(&go, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		sleep_ms(300);
		raise(SIGKILL);
	}
	for (int k = 0; k < count; k++) {
		int i = first + k, go = 1;
		if (!strcmp(ops[i].name, "MPI_Comm_create_group")) {
			/* Collective over the group only, with no nonblocking form and
			 * no communicator to fence on: a member dying inside it can
			 * still hang it. Not run (see README, Never hang). */
			if (rank == 0) {
				printf("cell op=%s mode=during role=member result=NOT_RUN ms=0\n", ops[i].name);
				MPI_Send(&go, 1, MPI_INT, 2 + k, 99, MPI_COMM_WORLD);
			}
			MPI_Barrier(live);
			continue;
		}
		fill(&x, per[k]);
		x.peer = 2; /* the victim is rank 2 of {0, 1, victim} */
		x.initiator = 1;
		x.root = ops[i].kind == ROOTED ? 2 : 0;
		if (rank == 0)
			MPI_Send(&go, 1, MPI_INT, 2 + k, 99, MPI_COMM_WORLD);
		run_cell(i, &x, mode, ops[i].kind == SEND || ops[i].kind == RECV ? "peer"
				  : ops[i].kind == ROOTED ? "root" : "member",
			 live);
		MPI_Barrier(live);
	}
	if (rank == 0)
		printf("matrix: done\n");
	MPI_Comm_free(&live);
	MPI_Finalize();
	return 0;
}
