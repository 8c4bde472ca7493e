/* fortran_entry.c: the other candidate entry for Fortran programs,
 * measured against ftshim's own (docs/DESIGN.md, "One way in"): Fortran
 * bindings of ftshim's, as MPI tools generate theirs, that convert the
 * handles and call the C functions (ftshim's wrappers) in place of the
 * MPI's bindings. Only what bench/micro_f.F90's ping-pong calls, for
 * gfortran's names: preloaded before a libftshim.so that defines only the
 * MPI_ names, it makes that library's whole path reachable from Fortran.
 * A benchmark's prototype, not part of ftshim. */
#include <mpi.h>
#include <stddef.h>

void mpi_init_(MPI_Fint *ierr)
{
	*ierr = MPI_Init(NULL, NULL);
}

void mpi_finalize_(MPI_Fint *ierr)
{
	*ierr = MPI_Finalize();
}

void mpi_send_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag, MPI_Fint *comm,
	       MPI_Fint *ierr)
{
	*ierr = MPI_Send(buf, *count, MPI_Type_f2c(*type), *dest, *tag, MPI_Comm_f2c(*comm));
}

void mpi_recv_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm,
	       MPI_Fint *status, MPI_Fint *ierr)
{
	MPI_Status c_status;
	int ignore = status == MPI_F_STATUS_IGNORE;

	*ierr = MPI_Recv(buf, *count, MPI_Type_f2c(*type), *source, *tag, MPI_Comm_f2c(*comm),
			 ignore ? MPI_STATUS_IGNORE : &c_status);
	if (!ignore && *ierr == MPI_SUCCESS)
		MPI_Status_c2f(&c_status, status);
}
