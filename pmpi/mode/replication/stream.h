/* stream.h: the stream, primary to replica (stream.c). */
#ifndef FTSHIM_PMPI_MODE_REPLICATION_STREAM_H
#define FTSHIM_PMPI_MODE_REPLICATION_STREAM_H

#include "pmpi/mode/replication/state.h"

/* One message to or from world rank peer on the stream; with the partner. */
int ftp_repl_stream_with(int peer, bool send, void *buf, int count, MPI_Datatype type, int tag,
			 MPI_Status *status);
int ftp_repl_stream_io(bool send, void *buf, int count, MPI_Datatype type, int tag,
		       MPI_Status *status);
/* The receive this process waits in on the stream, from world rank
 * `from` with tag: none, still pending (matched or not: the MPI does not
 * say), done with its message (the wait that posted it takes it, even
 * once `from` is known dead), or cut short (completed in error, no
 * message; the wait returns that error). */
enum { STREAM_RECV_NONE, STREAM_RECV_PENDING, STREAM_RECV_DONE, STREAM_RECV_CUT };
int ftp_repl_stream_recv_state(int32_t from, int tag);
/* The primary: its replica could not be told (it died). */
void ftp_repl_drop_replica(void);
/* The primary tells a record; the replica hears it (its length in *n). */
void ftp_repl_tell(const int *rec, int n);
int ftp_repl_hear(int *rec, int max, int *n);
/* At MPI_Finalize the copies meet, the stream's last record: the primary
 * tells its replica that it got there (its output flushed); the replica
 * hears it, or finds its primary dead short of it and carries the rank
 * on. */
void ftp_repl_meet_at_end(void);
/* rc of a read from the stream of primary `from`, or STREAM_ENDED. */
int ftp_repl_stream_end(int rc, int32_t from);
/* Whether the dead primary `from` told this process something unread. */
bool ftp_repl_records_left(int32_t from);
/* The path of a replica's stdout (which 0) or stderr (1) in the run
 * directory, as ftp_rundir_path. */
int ftp_repl_output_path(int which, char *path, size_t len);
/* A promoted replica has read all its dead primary told it. */
void ftp_repl_carry_on(void);
/* MPI_Wtime of a replicated process: a follower reads its primary's. */
double ftp_repl_wtime(void);

#endif
