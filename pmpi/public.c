/* public.c: the ftshim_* functions of include/ftshim.h that need MPI. */
#include "ftshim_config.h"

#include "ftshim.h"
#include "pmpi/call.h"

FT_EXPORT int ftshim_active(void)
{
	return ftp_active();
}

FT_EXPORT int ftshim_comm_id(MPI_Comm comm, uint64_t *id)
{
	struct ftp_comm *e = ftp_seam_comm(comm);

	if (!e)
		return -1;
	*id = e->core->id;
	return 0;
}
