/* ranks.h: the rank spaces of ftshim and every translation between them;
 * no other file reads a communicator's member array or adds world_base.
 * The spaces, named here once and so everywhere else:
 *
 *   job rank      a process's index in ftshim's process table (ftp.procs),
 *                 unique over the whole job, spawned processes included;
 *                 what the detector, the control plane, the report and a
 *                 communicator's member array (struct ft_comm) hold.
 *   world rank    a process's rank in its own MPI_COMM_WORLD (ftp.world):
 *                 its job rank less ftp.world_base, which is 0 for the
 *                 job's first processes and the job rank of rank 0 of a
 *                 spawned world.
 *   member index  a position in a communicator's member array: the local
 *                 group, then an intercommunicator's remote group.
 *   real rank     a rank in the communicator the MPI holds behind an
 *                 entry (struct ftp_comm.real).
 *   program rank  a rank as the program sees it in its communicator:
 *                 the real rank unless a recovery mode covers the
 *                 communicator, whose entry's map (src/rank_map.h, the
 *                 one program-to-real map of a communicator) translates;
 *                 in MPI_COMM_WORLD the recovery mode says which program
 *                 rank a job rank serves (ftp_program_of_job).
 *   copy          one of the processes that serve one program rank under
 *                 a recovery mode (replication: its primary or its
 *                 replica); the mode names them (pmpi/mode/mode.h).
 *
 * Everything here is a read of tables set at MPI_Init or by the thread
 * that owns them; any thread may call it. */
#ifndef FTSHIM_PMPI_RANKS_H
#define FTSHIM_PMPI_RANKS_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "pmpi/comm_lookup.h"
#include "pmpi/state.h"
#include "pmpi/mode/mode.h"
#include "src/comm_table.h"

/* --- job and world ranks ------------------------------------------------- */

/* The job rank of world rank w of this process's world. */
static inline int32_t ftp_job_of_world(int w)
{
	return (int32_t)(ftp.world_base + w);
}

/* Job ranks below upto exist (ftp.nprocs = max(ftp.nprocs, upto)), from
 * any thread (pmpi/ranks.c). */
void ftp_nprocs_raise(uint32_t upto);

/* The world rank of job rank j, or -1 when j is not in this process's
 * world. */
static inline int ftp_world_of_job(int32_t j)
{
	return j >= ftp.world_base && j < ftp.world_base + ftp.world_size ? j - ftp.world_base : -1;
}

/* This process's world is a spawned one (not the job's first processes). */
static inline bool ftp_world_spawned(void)
{
	return ftp.world_base != 0;
}

/* Job ranks a and b share a host: the same network stack at MPI_Init
 * (src/overlay.h's host id), as the detector, the host mailbox and the
 * report count hosts. */
static inline bool ftp_same_host(uint32_t a, uint32_t b)
{
	return ftp.peers[a].ep.host_id == ftp.peers[b].ep.host_id;
}

/* --- members of a communicator --------------------------------------------- */

/* How many members core has (both groups of an intercommunicator). */
static inline uint32_t ftp_members(const struct ft_comm *core)
{
	return core->local_size + core->remote_size;
}

/* The job ranks of every member, by member index (the local group's
 * first). */
static inline const int32_t *ftp_member_jobs(const struct ft_comm *core)
{
	return core->members;
}

/* The job rank of member index i. */
static inline int32_t ftp_member_job(const struct ft_comm *core, uint32_t i)
{
	return core->members[i];
}

/* The member index of job rank j in core, or -1. */
static inline int ftp_member_index(const struct ft_comm *core, int32_t j)
{
	for (uint32_t i = 0; i < ftp_members(core); i++)
		if (core->members[i] == j)
			return (int)i;
	return -1;
}

/* The job rank of real rank r of the group a point-to-point call on e
 * addresses (the remote group of an intercommunicator, else the local
 * one), or -1. */
static inline int32_t ftp_job_at(const struct ftp_comm *e, int r)
{
	const struct ft_comm *core = e->core;

	if (r < 0)
		return -1;
	if (e->real_is_world)
		return r < ftp.world_size ? ftp_job_of_world(r) : -1;
	if (core->remote_size)
		return (uint32_t)r < core->remote_size ? core->members[core->local_size + r] : -1;
	return (uint32_t)r < core->local_size ? core->members[r] : -1;
}

/* --- MPI processes -------------------------------------------------------- */

/* The job ranks of a group's members, in group order (malloc'ed); NULL
 * if this process cannot name one (see ftp.job_group) or memory ran out.
 * The one translation from MPI processes to job ranks; ftp_group_of_jobs
 * is the one back (pmpi/ranks.c). */
int32_t *ftp_group_jobs(MPI_Group group, uint32_t *n);
/* The group of the processes of job ranks jobs[0..n), in that order. */
int ftp_group_of_jobs(const int32_t *jobs, int n, MPI_Group *group);
/* The processes of group more, of job ranks jobs (in group order), can be
 * named from now on (spawned processes). */
int ftp_job_group_add(MPI_Group more, const int32_t *jobs);
/* At MPI_Init (pmpi/comms.c): this process's world is the job group; 0 or
 * -1. Before PMPI_Finalize: free it while MPI is up; communicators made
 * after (by attribute callbacks run inside PMPI_Finalize) stay
 * untracked. */
int ftp_job_group_init(void);
void ftp_job_group_release(void);

/* --- program ranks ------------------------------------------------------------ */

/* The program rank in MPI_COMM_WORLD that job rank j serves. */
static inline int32_t ftp_program_of_job(int32_t j)
{
	return ftp_mode_program_rank(j);
}

#endif
