/* complete.h: the completion calls as ftshim makes them on any
 * communicator (pmpi/complete.c), without a recovery mode's say: a mode
 * whose completion forms (pmpi/mode/mode.h) decide or follow outcomes
 * calls these for the work itself. */
#ifndef FTSHIM_PMPI_COMPLETE_H
#define FTSHIM_PMPI_COMPLETE_H

#include <mpi.h>

int ftp_wait_plain(MPI_Request *request, MPI_Status *status);
int ftp_test_plain(MPI_Request *request, int *flag, MPI_Status *status);
int ftp_waitall_plain(int count, MPI_Request requests[], MPI_Status statuses[]);
int ftp_testall_plain(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]);
int ftp_waitany_plain(int count, MPI_Request requests[], int *index, MPI_Status *status);
int ftp_testany_plain(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status);
int ftp_waitsome_plain(int incount, MPI_Request requests[], int *outcount, int indices[],
		       MPI_Status statuses[]);
int ftp_testsome_plain(int incount, MPI_Request requests[], int *outcount, int indices[],
		       MPI_Status statuses[]);

#endif
