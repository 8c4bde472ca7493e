/* agree.h: the agreement's MPI side (pmpi/agree.c). */
#ifndef FTSHIM_PMPI_AGREE_H
#define FTSHIM_PMPI_AGREE_H

#include <stdbool.h>
#include <stdint.h>

#include "pmpi/listen.h"
#include "pmpi/state.h"

struct ftp_call;
struct ftp_comm;

/* Its messages and failures (on the detector thread), and communicators
 * made (messages kept for one are taken then). */
extern const struct ftp_listener ftp_agree_listener;

/* Agree, as MPIX_Comm_shrink does, on which members of c's
 * intracommunicator live; their job ranks, in rank order, go to alive
 * (room for its size), *n of them. Returns an MPI error code. */
int ftp_agree_alive(struct ftp_call *c, int32_t *alive, uint32_t *n);
/* An agreement of ftshim's own on e (the bitwise AND of every live
 * member's *value into *value), not in the job report: MPI_SUCCESS, or
 * an error if a member failed. */
int ftp_agree_quiet(struct ftp_comm *e, uint32_t *value);
/* The same, for the failed members it names: into failed (room for
 * ft_agree_bytes of the members), a bitmap in agreement order
 * (ft_agree_index). Its code says whether failures were acknowledged;
 * MPI_ERR_COMM if e is not known. */
int ftp_agree_failures(struct ftp_comm *e, uint8_t *failed);
/* The same in steps, for a caller that cannot block: begin contributes
 * value (NULL: e not known, or out of memory); poll takes the host's
 * mail, then the decision once it is taken (true: *value, *rc and, when
 * failed is not NULL, the failed members), after which a is gone. */
struct ft_agreement;
struct ft_agreement *ftp_agree_begin(struct ftp_comm *e, uint32_t value);
bool ftp_agree_poll(struct ft_agreement *a, uint32_t *value, uint8_t *failed, int *rc);

/* MPIX_Comm_ishrink for the Fortran bindings (pmpi/fortran.c): the new
 * communicator's Fortran handle is written to *newcomm at completion. */
int ftp_ishrink_fortran(MPI_Comm comm, MPI_Fint *newcomm, MPI_Request *request);

#endif
