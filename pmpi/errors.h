/* errors.h: the ULFM error classes ftshim returns, and the one place that
 * raises them on a communicator. The values compare equal to what a ULFM
 * program expects: the MPI's own where its mpi.h defines them (MPICH:
 * MPIX_ERR_PROC_FAILED 101, ..._PENDING 102, MPIX_ERR_REVOKED 103), Open
 * MPI 5's otherwise (75, 76, 77: unused classes in Open MPI 4.1). */
#ifndef FTSHIM_PMPI_ERRORS_H
#define FTSHIM_PMPI_ERRORS_H

#include <mpi.h>
#include <stdbool.h>

#include "pmpi/fn_table.h"

#ifdef MPIX_ERR_PROC_FAILED
#define FTP_ERR_PROC_FAILED MPIX_ERR_PROC_FAILED
#define FTP_ERR_PROC_FAILED_PENDING MPIX_ERR_PROC_FAILED_PENDING
#define FTP_ERR_REVOKED MPIX_ERR_REVOKED
#else
#define FTP_ERR_PROC_FAILED 75
#define FTP_ERR_PROC_FAILED_PENDING 76
#define FTP_ERR_REVOKED 77
#endif

static inline bool ftp_is_ft_error(int code)
{
	return code == FTP_ERR_PROC_FAILED || code == FTP_ERR_PROC_FAILED_PENDING ||
	       code == FTP_ERR_REVOKED;
}

/* "MPI_SUCCESS" or the name of one of ftshim's codes (for lines and the
 * report); NULL for any other code. */
const char *ftp_code_name(int code);

struct ftp_call;

/* A wrapped function's name ("MPI_Send"). */
const char *ftp_fn_name(enum ftp_fn fn);

/* Raise code (one of ours) on the call's communicator: its error handler
 * runs; with MPI_ERRORS_ARE_FATAL (or MPI_ERRORS_ABORT) the job ends with
 * one line that says what failed and what to do. Returns code. */
int ftp_raise(struct ftp_call *c, int code);

/* A call with no form of its cover's on a covered communicator:
 * one line, then the communicator's error handler with
 * MPI_ERR_UNSUPPORTED_OPERATION, which it returns.
 * ftp_mode_refuse_because says why instead of " yet" (why starts with a
 * space, as in " when a count exceeds INT_MAX"). */
int ftp_mode_refuse(struct ftp_call *c);
int ftp_mode_refuse_because(struct ftp_call *c, const char *why);

/* A call the program may not make as it did: one line (the call's name,
 * then what, as in "of a persistent request that is active"), then the
 * communicator's error handler with code, which it returns. */
int ftp_refuse_call(struct ftp_call *c, int code, const char *what);

#endif
