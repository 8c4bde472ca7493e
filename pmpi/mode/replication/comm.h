/* comm.h: a communicator's replication and the creations on one
 * (comm.c). */
#ifndef FTSHIM_PMPI_MODE_REPLICATION_COMM_H
#define FTSHIM_PMPI_MODE_REPLICATION_COMM_H

#include "pmpi/mode/replication/state.h"

/* An error of the program's call on replicated c->comm: the
 * communicator's error handler, and the code. */
int ftp_repl_program_error(struct ftp_call *c, int code);
/* MPI_Comm_split of c's program ranks, the new communicator with
 * topology cart (NULL: none; taken over either way). */
int ftp_repl_split_as(struct ftp_call *c, int color, int key, struct ftp_repl_topo *topo,
		      MPI_Comm *newcomm);
/* Copy `dead` leaves every replicated communicator's view. */
void ftp_repl_view_forget(int32_t dead);

/* A communicator e was just made from the replicated parent (NULL for
 * MPI_COMM_WORLD; collective over e's members): give it its map and team
 * (pmpi/comms.c). */
void ftp_repl_derive(struct ftp_comm *e, const struct ftp_comm *parent);
/* Free what ftp_repl_derive gave e (with the entry). */
void ftp_repl_release(struct ftp_comm *e);

/* Before a creation on replicated c->comm (MPI_Comm_split, MPI_Comm_dup):
 * its live copies agree on which of them live (a copy whose death is not
 * known everywhere yet would never join the MPI's creation), and c->real
 * becomes the communicator of those, which the MPI makes the new one from
 * by the blocking call (c->direct), under the hang watch. A dead copy
 * that was not a dropped replica is the call's MPIX_ERR_PROC_FAILED. */
int ftp_repl_creation(struct ftp_call *c);
/* MPI_Comm_split on a replicated communicator: as on any, once
 * ftp_repl_creation has run; the key orders the program ranks of a new
 * communicator where a replica stands alone for its rank. */
int ftp_repl_MPI_Comm_split(struct ftp_call *c, int color, int key, MPI_Comm *newcomm);
/* MPI_Comm_create on a replicated communicator: a split in which the
 * members of group take their order in it, the others MPI_COMM_NULL. */
int ftp_repl_MPI_Comm_create(struct ftp_call *c, MPI_Group group, MPI_Comm *newcomm);
/* MPI_Comm_create_group on a replicated communicator: the MPI's creation
 * over the live copies of the group's program ranks, in its order. */
int ftp_repl_MPI_Comm_create_group(struct ftp_call *c, MPI_Group group, int tag, MPI_Comm *newcomm);
/* MPI_Comm_split_type on a replicated communicator: grouped as the
 * leading copies (primaries, singles) are by the MPI, a replica taking
 * its primary's group. */
int ftp_repl_MPI_Comm_split_type(struct ftp_call *c, int split_type, int key, MPI_Info info,
				 MPI_Comm *newcomm);

#endif
