/* complete.h: the completion calls of a paired process (complete.c). */
#ifndef FTSHIM_PMPI_MODE_REPLICATION_COMPLETE_H
#define FTSHIM_PMPI_MODE_REPLICATION_COMPLETE_H

#include "pmpi/mode/replication/state.h"

/* Add to r the completion of request index (st: its message, or NULL). */
void ftp_repl_rec_add(struct rec *r, int index, const MPI_Status *st);
/* Completion calls of a paired process (pmpi/complete.c calls these, and
 * they call the plain forms there). */
int ftp_repl_wait(MPI_Request *request, MPI_Status *status);
int ftp_repl_test(MPI_Request *request, int *flag, MPI_Status *status);
int ftp_repl_waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
int ftp_repl_testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]);
int ftp_repl_waitany(int count, MPI_Request requests[], int *index, MPI_Status *status);
int ftp_repl_testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status);
int ftp_repl_waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
		      MPI_Status statuses[]);
int ftp_repl_testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
		      MPI_Status statuses[]);

#endif
