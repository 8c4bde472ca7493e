/* state.c: the process's shared state (pmpi/state.h says who writes and
 * who reads each field) and the count of communicators with a rank map
 * (pmpi/seam.h). Defined here, below every module that reads them. */
#include "ftshim_config.h"

#include "pmpi/state.h"

struct ftp_state ftp;

_Atomic uint32_t ftp_seam_maps;
