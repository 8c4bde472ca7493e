/* create.h: the creation collectives, fenced before and agreed on after
 * (pmpi/create.c). */
#ifndef FTSHIM_PMPI_CREATE_H
#define FTSHIM_PMPI_CREATE_H

#include "pmpi/call_base.h"

/* MPI_Comm_dup and its _with_info form: a collective, fenced as below; on
 * a communicator a recovery mode covers, a creation (pmpi/mode/mode.h). */
int ftp_pre_dup(struct ftp_call *c, MPI_Comm comm);

/* A creation collective over the parent with no nonblocking twin (split,
 * create, ...): fence first, so that a member that has already failed
 * makes it fail instead of hang. */
int ftp_pre_create(struct ftp_call *c, MPI_Comm comm);

/* MPI_Intercomm_create: fenced on the local communicator; watched over
 * its members and the remote leader (a job rank, through peer_comm). */
int ftp_pre_create_inter(struct ftp_call *c, MPI_Comm local_comm, MPI_Comm peer_comm, int remote_leader);

/* MPI_Comm_create_group is collective over the group only: a failed
 * member of the parent outside the group does not matter. */
int ftp_pre_create_group(struct ftp_call *c, MPI_Comm comm, MPI_Group group);

/* MPI_Comm_split, _create (and the like), MPI_Comm_dup and MPI_Comm_idup:
 * the members agree the creation succeeded everywhere, then the new
 * communicator is registered under its job-wide id. */
int ftp_post_create(struct ftp_call *c, int rc, MPI_Comm *newcomm);
int ftp_post_dup(struct ftp_call *c, int rc, MPI_Comm *newcomm);
int ftp_post_idup(struct ftp_call *c, int rc, MPI_Comm *newcomm, MPI_Request *request);

#endif
