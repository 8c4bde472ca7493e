/* calls.c: replication's side of the calls on a covered communicator
 * (pmpi/mode/mode.h): ftp_repl_calls, the replicated forms the generated
 * wrappers hand a call to (this folder's other files), and
 * ftp_repl_runs_as_is, which of the others run as on any communicator.
 * The mode's struct ftp_mode (hooks.c) points at both; nothing else may. */
#include "ftshim_config.h"

#include "pmpi/coll_forms.h"
#include "pmpi/persist.h"
#include "pmpi/mode/mode.h"
#include "pmpi/mode_calls.h"
#include "pmpi/mode/replication/calls.h"
#include "pmpi/mode/replication/cart.h"
#include "pmpi/mode/replication/comm.h"
#include "pmpi/mode/replication/graph.h"
#include "pmpi/mode/replication/p2p.h"

/* The forms of MPI_Probe, MPI_Mprobe and MPI_Sendrecv return the call's
 * result without posting it: their hand-written wrappers (pmpi/p2p.c)
 * post. */
const struct ftp_mode_calls ftp_repl_calls = {
	FTP_COVER_COLL_FORMS,
	FTP_COVER_ICOLL_FORMS,
#if MPI_VERSION >= 4
	FTP_COVER_PCOLL_FORMS,
#endif
#ifdef FTP_HAVE_MPIX_PCOLL
	FTP_COVER_MPIX_PCOLL_FORMS,
#endif
	FTP_COVER_PERSIST_P2P_FORMS,
	.MPI_Cart_coords = ftp_repl_MPI_Cart_coords,
	.MPI_Cart_create = ftp_repl_MPI_Cart_create,
	.MPI_Cart_get = ftp_repl_MPI_Cart_get,
	.MPI_Cart_map = ftp_repl_MPI_Cart_map,
	.MPI_Cart_rank = ftp_repl_MPI_Cart_rank,
	.MPI_Cart_shift = ftp_repl_MPI_Cart_shift,
	.MPI_Cart_sub = ftp_repl_MPI_Cart_sub,
	.MPI_Cartdim_get = ftp_repl_MPI_Cartdim_get,
	.MPI_Comm_create = ftp_repl_MPI_Comm_create,
	.MPI_Comm_create_group = ftp_repl_MPI_Comm_create_group,
	.MPI_Comm_split = ftp_repl_MPI_Comm_split,
	.MPI_Comm_split_type = ftp_repl_MPI_Comm_split_type,
	.MPI_Dist_graph_create_adjacent = ftp_repl_MPI_Dist_graph_create_adjacent,
	.MPI_Dist_graph_neighbors = ftp_repl_MPI_Dist_graph_neighbors,
	.MPI_Dist_graph_neighbors_count = ftp_repl_MPI_Dist_graph_neighbors_count,
	.MPI_Graph_create = ftp_repl_MPI_Graph_create,
	.MPI_Graph_get = ftp_repl_MPI_Graph_get,
	.MPI_Graph_map = ftp_repl_MPI_Graph_map,
	.MPI_Graph_neighbors = ftp_repl_MPI_Graph_neighbors,
	.MPI_Graph_neighbors_count = ftp_repl_MPI_Graph_neighbors_count,
	.MPI_Graphdims_get = ftp_repl_MPI_Graphdims_get,
	.MPI_Improbe = ftp_repl_MPI_Improbe,
	.MPI_Iprobe = ftp_repl_MPI_Iprobe,
	.MPI_Irecv = ftp_repl_MPI_Irecv,
	.MPI_Irsend = ftp_repl_MPI_Irsend,
	.MPI_Isend = ftp_repl_MPI_Isend,
	.MPI_Issend = ftp_repl_MPI_Issend,
	.MPI_Mprobe = ftp_repl_MPI_Mprobe,
	.MPI_Probe = ftp_repl_MPI_Probe,
	.MPI_Recv = ftp_repl_MPI_Recv,
	.MPI_Rsend = ftp_repl_MPI_Rsend,
	.MPI_Send = ftp_repl_MPI_Send,
	.MPI_Sendrecv = ftp_repl_MPI_Sendrecv,
	.MPI_Ssend = ftp_repl_MPI_Ssend,
	.MPI_Topo_test = ftp_repl_MPI_Topo_test,
};

/* Without a form: a local query (the seam's rank map answers for the
 * program), and the creations and releases whose new communicator's
 * replication (ftp_repl_derive) is all they need. */
bool ftp_repl_runs_as_is(int fn, enum ftp_mode_role role)
{
	return role == FTP_ROLE_QUERY || fn == FTP_FN_MPI_Comm_free ||
	       fn == FTP_FN_MPI_Comm_disconnect || fn == FTP_FN_MPI_Comm_dup ||
	       fn == FTP_FN_MPI_Comm_dup_with_info;
}
