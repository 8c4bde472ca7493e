/* registry.h: the recovery modes ftshim is built with (registry.c). */
#ifndef FTSHIM_PMPI_MODE_REGISTRY_H
#define FTSHIM_PMPI_MODE_REGISTRY_H

#include <stddef.h>

/* At MPI_Init, before PMPI_Init: ask every mode the registry lists; at
 * most one may be requested. 0, or -EINVAL with one line in err. */
int ftp_mode_select(char *err, size_t errlen);

#endif
