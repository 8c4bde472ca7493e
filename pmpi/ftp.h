/* ftp.h: the state of the MPI side of ftshim (one per process), shared by
 * the hand-written wrappers and the policy functions. Everything here may
 * include mpi.h; nothing in src/ may.
 *
 * Sharing: ftp.mode is written by the application thread in MPI_Init and
 * MPI_Finalize and read by every wrapper (relaxed: a thread that calls MPI
 * concurrently with MPI_Init or MPI_Finalize is erroneous anyway). The
 * other fields are set in MPI_Init before mode becomes FTP_MODE_ON and are
 * read-only while it is. */
#ifndef FTSHIM_PMPI_FTP_H
#define FTSHIM_PMPI_FTP_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "src/comm_table.h"
#include "src/config.h"
#include "src/proc_table.h"

enum ftp_mode {
	FTP_MODE_OFF = 0, /* MPI_Init not called (yet): every wrapper passes through */
	FTP_MODE_PASS,    /* FTSHIM_DISABLE=1: every wrapper passes through */
	FTP_MODE_ON,      /* between MPI_Init and the end of MPI_Finalize */
	FTP_MODE_DONE,    /* after MPI_Finalize */
};

struct ftp_state {
	_Atomic int mode;          /* enum ftp_mode */
	int world_rank, world_size;
	uint64_t init_ns;          /* ft_clock_now() on entry to MPI_Init */
	MPI_Group world_group;     /* to translate groups to world ranks */
	struct ft_config cfg;
	struct ft_proc_table procs;
	struct ft_comm_registry comms;
};

extern struct ftp_state ftp;

static inline bool ftp_active(void)
{
	return atomic_load_explicit(&ftp.mode, memory_order_relaxed) == FTP_MODE_ON;
}

/* Register the predefined communicators (MPI_Init); free what needs MPI
 * (before PMPI_Finalize); unregister everything (after it). */
int ftp_comms_init(void);
void ftp_comms_release_mpi(void);
void ftp_comms_fini(void);

/* Failure detection (pmpi/detect.c): start the detector thread at
 * MPI_Init (collective over MPI_COMM_WORLD: one PMPI_Allgather), leave the
 * overlay at MPI_Finalize once every rank has departed or failed, or stop
 * at once (MPI_Abort). usable: false if this rank has no tables (it still
 * takes part in the collective, and detection is then off for the job). */
int ftp_detect_start(bool usable);
void ftp_detect_finish(void);
void ftp_detect_kill(void);

#endif
