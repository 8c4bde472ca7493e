/* comms.h: communicator tracking (pmpi/comms.c): the registry's start and
 * end, registering what a creation made and forgetting what is freed. */
#ifndef FTSHIM_PMPI_COMMS_H
#define FTSHIM_PMPI_COMMS_H

#include "pmpi/call_base.h"
#include "pmpi/state.h"

/* Register the predefined communicators (MPI_Init); unregister
 * everything, windows and files by release_obj (after PMPI_Finalize). */
struct ftp_obj;
int ftp_comms_init(void);
/* At MPI_Init, under a mode that keeps some processes from the program
 * (spares): the program's MPI_COMM_WORLD becomes the MPI's communicator
 * real, of the n job ranks jobs (in real's rank order), under the same
 * handle and id; attributes stay on the MPI's MPI_COMM_WORLD
 * (pmpi/self_attrs.c). 0, or -1 (out of memory: it is not tracked). */
int ftp_comm_world_narrow(MPI_Comm real, const int32_t *jobs, uint32_t n);
/* Once narrowed: ftshim's entry of every process the job started with
 * (for its own agreements over them; behind no handle), or NULL. */
struct ftp_comm *ftp_comm_job(void);
/* After a restart in place: the program's MPI_COMM_WORLD becomes a view
 * (pmpi/spare_view.c) on real, of the n job ranks jobs in program rank
 * order, under id; map and cover are the entry's from then on. 0, or -1
 * (out of memory: it is not tracked, and map and cover are freed). */
struct ft_rank_map;
struct ftp_cover;
int ftp_comm_world_view(MPI_Comm real, uint64_t id, const int32_t *jobs, uint32_t n, struct ft_rank_map *map,
			struct ftp_cover *cover);
void ftp_comms_fini(void (*release_obj)(struct ftp_obj *o));

/* Register *newcomm, made by a creation collective over c's communicator
 * (split, create), or by its duplication (pmpi/create.c calls them once
 * the members agree the creation succeeded). */
void ftp_comm_register_create(struct ftp_call *c, int rc, MPI_Comm *newcomm);
void ftp_comm_register_dup(struct ftp_call *c, int rc, MPI_Comm *newcomm);

/* Track handle under id with these members (job ranks); 0, or -1 if it
 * stays untracked. */
int ftp_track(MPI_Comm handle, uint64_t id, const int32_t *local, uint32_t nlocal, const int32_t *remote,
	      uint32_t nremote);

/* MPI_Comm_free's (and MPI_Comm_disconnect's) call of the MPI: the
 * application's handle goes, the rest when the communicator's last
 * pending request is done (ftp_comm_put). */
int ftp_comm_free_real(struct ftp_call *c);

/* The creations whose ids come from groups and tags (MPI_Comm_create_group,
 * MPI_Intercomm_create) and MPI_Comm_free: register the new communicator
 * under its job-wide id, or forget the freed one. */
int ftp_post_create_group(struct ftp_call *c, int rc, MPI_Group group, int tag, MPI_Comm *newcomm);
int ftp_post_create_inter(struct ftp_call *c, int rc, int tag, MPI_Comm *newintercomm);
int ftp_post_free(struct ftp_call *c, int rc, MPI_Comm *comm);
/* Register *newcomm, made by MPI_Comm_create_group(c's communicator,
 * group, tag) (MPIX_Comm_shrink makes one so). */
void ftp_register_group_child(struct ftp_call *c, MPI_Group group, int tag, MPI_Comm *newcomm);
/* Track handle, a view on a spare context (pmpi/spare_view.c), as
 * MPIX_Comm_shrink's child of c's communicator with tag, of the n
 * processes jobs (job ranks, in rank order), translated by map and
 * covered by cover, which the entry owns from now on: 0, or -1 if it
 * stays untracked (map and cover are freed then). */
struct ft_rank_map;
struct ftp_cover;
int ftp_track_view(struct ftp_call *c, MPI_Comm handle, const int32_t *jobs, uint32_t n, int tag,
		   struct ft_rank_map *map, struct ftp_cover *cover);
/* Register *newintercomm, made by MPI_Intercomm_create(..., tag, ...)
 * from survivors of c's intercommunicator (MPIX_Comm_shrink of one). */
void ftp_register_inter_child(struct ftp_call *c, int tag, MPI_Comm *newintercomm);

/* Give e its rank map (the one setter): before e is
 * inserted, or, for a communicator made before ftshim knew it needed one
 * (MPI_COMM_WORLD at MPI_Init), before the program's first call on it. */
void ftp_comm_give_map(struct ftp_comm *e, struct ft_rank_map *map);

/* Take one more reference on e. */
void ftp_comm_hold(struct ftp_comm *e);
/* Drop one; the last frees the MPI's communicator (retired if a failure
 * touched it, pmpi/retire.c) and the entry. Returns what freeing the
 * MPI's communicator returned, or MPI_SUCCESS. */
int ftp_comm_put(struct ftp_comm *e);

#endif
