/* self_attrs.h: MPI_COMM_SELF's attributes deleted first at MPI_Finalize
 * (pmpi/self_attrs.c). */
#ifndef FTSHIM_PMPI_SELF_ATTRS_H
#define FTSHIM_PMPI_SELF_ATTRS_H

#include "pmpi/state.h"

/* MPI_Finalize, first: delete MPI_COMM_SELF's attributes. */
void ftp_self_attrs_delete(void);

#endif
