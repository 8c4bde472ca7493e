/* pingpong_parts.c: where the shim's small-message cost goes, measured in
 * one process (so that the machine's fast and slow spells hit every
 * variant alike). Run under the shim with 2 ranks; the 8-byte ping-pong
 * runs in three ways, interleaved round by round:
 *
 *   pmpi    the MPI library's own PMPI_Send / PMPI_Recv: the MPI alone,
 *           as without the shim
 *   twin    its PMPI_Isend / PMPI_Irecv completed by polling, as the shim's
 *           wrappers do (a send the MPI completed at once needs no
 *           completion call), but without them: what the design itself
 *           costs
 *   shim    MPI_Send / MPI_Recv through the shim's wrappers
 *
 * and rank 0 prints the median half round trip of each and the median of
 * its rounds' ratios to pmpi. (The detector thread runs throughout, so
 * its cost is in all three; bench/overhead.py compares runs with and
 * without the shim.) The shim defines the PMPI_ names too, so the MPI's
 * own are looked up in the MPI library itself. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { PMPI, TWIN, SHIM, NWAYS };
static const char *const names[NWAYS] = { "pmpi", "twin", "shim" };

/* The MPI library's own entry points (see find_mpi). */
static __typeof__(PMPI_Send) *mpi_send;
static __typeof__(PMPI_Recv) *mpi_recv;
static __typeof__(PMPI_Isend) *mpi_isend;
static __typeof__(PMPI_Irecv) *mpi_irecv;
static __typeof__(PMPI_Test) *mpi_test;
static __typeof__(PMPI_Wait) *mpi_wait;
static __typeof__(PMPI_Request_get_status) *mpi_request_get_status;
static __typeof__(PMPI_Barrier) *mpi_barrier;

/* Find them in the object that defines PMPI_Get_version, which the shim
 * does not wrap: the MPI library. */
static int find_mpi(void)
{
	Dl_info info;
	void *lib;

	if (!dladdr((void *)PMPI_Get_version, &info) || !(lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)))
		return -1;
	mpi_send = (__typeof__(mpi_send))dlsym(lib, "PMPI_Send");
	mpi_recv = (__typeof__(mpi_recv))dlsym(lib, "PMPI_Recv");
	mpi_isend = (__typeof__(mpi_isend))dlsym(lib, "PMPI_Isend");
	mpi_irecv = (__typeof__(mpi_irecv))dlsym(lib, "PMPI_Irecv");
	mpi_test = (__typeof__(mpi_test))dlsym(lib, "PMPI_Test");
	mpi_wait = (__typeof__(mpi_wait))dlsym(lib, "PMPI_Wait");
	mpi_request_get_status = (__typeof__(mpi_request_get_status))dlsym(lib, "PMPI_Request_get_status");
	mpi_barrier = (__typeof__(mpi_barrier))dlsym(lib, "PMPI_Barrier");
	return mpi_send && mpi_recv && mpi_isend && mpi_irecv && mpi_test && mpi_wait && mpi_request_get_status &&
			       mpi_barrier ? 0 : -1;
}

/* Open MPI's request for an operation done at once (see done_at_once). */
static MPI_Request empty_request __attribute__((unused)) = MPI_REQUEST_NULL;

/* Whether r is the request the MPI hands back for an operation it
 * completed at once: the shim's wrappers skip its completion call (MPICH
 * 4's built-in requests; Open MPI's ompi_request_empty). */
static int done_at_once(MPI_Request r)
{
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 40000000
	return ((unsigned)r >> 30) == 1u;
#else
	return r != MPI_REQUEST_NULL && r == empty_request;
#endif
}

/* Complete r as the shim does: MPICH's MPI_Test always runs its progress
 * engine, so a request already complete is looked at first. */
static void complete(MPI_Request *r)
{
	int flag = 0;

	if (done_at_once(*r))
		return;
#ifdef MPICH_VERSION
	mpi_request_get_status(*r, &flag, MPI_STATUS_IGNORE);
	if (flag) {
		mpi_wait(r, MPI_STATUS_IGNORE);
		return;
	}
#endif
	while (!flag)
		mpi_test(r, &flag, MPI_STATUS_IGNORE);
}

static void send_way(int way, char *buf, int peer)
{
	MPI_Request r;

	if (way == SHIM)
		MPI_Send(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
	else if (way == PMPI)
		mpi_send(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
	else {
		mpi_isend(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &r);
		complete(&r);
	}
}

static void recv_way(int way, char *buf, int peer)
{
	MPI_Request r;

	if (way == SHIM)
		MPI_Recv(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	else if (way == PMPI)
		mpi_recv(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	else {
		mpi_irecv(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &r);
		complete(&r);
	}
}

static double run(int way, int rank, int iters)
{
	char buf[8] = { 0 };

	mpi_barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int i = 0; i < iters; i++) {
		if (rank == 0) {
			send_way(way, buf, 1);
			recv_way(way, buf, 1);
		} else {
			recv_way(way, buf, 0);
			send_way(way, buf, 0);
		}
	}
	return (MPI_Wtime() - t0) / iters / 2 * 1e6;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	enum { ROUNDS = 61, ITERS = 5000 };
	static double t[NWAYS][ROUNDS], ratio[NWAYS][ROUNDS];
	int rank, size;

	MPI_Init(&argc, &argv);
#ifdef OPEN_MPI
	empty_request = (MPI_Request)dlsym(RTLD_DEFAULT, "ompi_request_empty");
	if (!empty_request)
		empty_request = MPI_REQUEST_NULL;
#endif
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || find_mpi() != 0) {
		if (rank == 0)
			fprintf(stderr, "pingpong_parts: %s\n", size != 2 ? "run with 2 ranks"
									 : "cannot find the MPI library's own PMPI_ functions");
		MPI_Finalize();
		return 2;
	}
	for (int way = 0; way < NWAYS; way++)
		run(way, rank, ITERS); /* warm-up */
	for (int k = 0; k < ROUNDS; k++)
		for (int j = 0; j < NWAYS; j++) {
			int way = (j + k) % NWAYS; /* rotate who goes first */
			t[way][k] = run(way, rank, ITERS);
		}
	/* The ratio is the median of each round's: a round is short enough
	 * that the three ways in it share the machine's spell. */
	for (int k = 0; k < ROUNDS; k++)
		for (int way = 0; way < NWAYS; way++)
			ratio[way][k] = t[way][k] / t[PMPI][k];
	for (int way = 0; way < NWAYS; way++) {
		qsort(t[way], ROUNDS, sizeof t[way][0], by_value);
		qsort(ratio[way], ROUNDS, sizeof ratio[way][0], by_value);
	}
	if (rank == 0)
		for (int way = 0; way < NWAYS; way++)
			printf("%s %.4f us %.3f\n", names[way], t[way][ROUNDS / 2], ratio[way][ROUNDS / 2]);
	MPI_Finalize();
	return 0;
}
