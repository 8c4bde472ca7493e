/* tool.c: a profiling tool, as tools are written: it wraps MPI_Recv and
 * MPI_Allreduce, counts them, and calls the PMPI_ names. Built as a
 * shared object and preloaded before the shim (LD_PRELOAD="tool.so
 * libftshim.so"), so that its MPI_ names come first and ftshim is reached
 * only through PMPI_. tool_calls() tells the program what it counted. */
#include <mpi.h>
#include <stdatomic.h>

static _Atomic long calls;

long tool_calls(void)
{
	return atomic_load(&calls);
}

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
	     MPI_Status *status)
{
	atomic_fetch_add(&calls, 1);
	return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
		  MPI_Comm comm)
{
	atomic_fetch_add(&calls, 1);
	return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}
