/* stream.c: the stream, primary to replica, on a private duplicate of
 * MPI_COMM_WORLD (setup.c says what a record holds): a primary tells its
 * replica a record at each call whose outcome depends on timing
 * (ftp_repl_tell), and the replica hears it at the same call
 * (ftp_repl_hear), in program order; a read that finds the primary dead
 * with nothing left to read ends the stream (STREAM_ENDED), and a
 * promoted replica carries on from there: it decides for itself and
 * writes to the terminal (ftp_repl_carry_on), beginning with what it
 * wrote since it last heard its primary. Called from the other
 * files of this folder; ftp_repl_wtime, whose time a replica takes from
 * its primary, from MPI_Wtime (pmpi/wtime.c). Application thread. */
#include "ftshim_config.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <string.h>
#include <unistd.h>

#include "pmpi/mode/replication/stream.h"
#include "pmpi/rundir.h"
#include "src/clock.h"
#include "src/events.h"
#include "src/fdio.h"
#include "src/log.h"

/* A replica's output, against its primary's. The copies print the same
 * bytes in the same order, the primary to the terminal and the replica
 * to its files (setup.c). A primary flushes its stdout and stderr before
 * it tells a record; a replica flushes its own after it hears one, and
 * notes the sizes of its files (output_heard): up to there, the primary
 * had delivered the same. What the replica wrote after, its primary may
 * have printed or not before it died (stdio's buffer dies with it): a
 * promoted replica writes it to the terminal (output_catch_up), so that
 * nothing is lost, and a line may appear twice. Reading a size costs a
 * system call, so a replica reads it at once only where a stream of its
 * held something, or at the copies' last meeting (output_exact), and
 * otherwise at most every OUTPUT_SIZE_NS (a size read late only writes
 * more again). Application thread. */
static off_t output_heard_at[2];
static uint64_t output_read_ns;
static bool output_exact;
#define OUTPUT_SIZE_NS (1000 * 1000)

int ftp_repl_output_path(int which, char *path, size_t len)
{
	static const char *const ext[2] = {"out", "err"};
	char name[64];

	snprintf(name, sizeof name, "replica-%d.%s", ftp_repl.plan.logical_of[ftp.rank],
		 ext[which]);
	return ftp_rundir_path(name, path, len);
}

static void output_flush(void)
{
	fflush(stdout);
	fflush(stderr);
}

/* Flush f; whether it held anything. */
static bool flushed(FILE *f)
{
	bool held = __fpending(f) > 0;

	fflush(f);
	return held;
}

static void output_heard(void)
{
	bool held[2] = {flushed(stdout), flushed(stderr)};
	uint64_t now = ft_clock_now();
	bool due = output_exact || now - output_read_ns >= OUTPUT_SIZE_NS;

	for (int i = 0; i < 2; i++) {
		off_t at = ftp_repl_terminal_fd[i] >= 0 && (held[i] || due)
				   ? lseek(i + 1, 0, SEEK_END)
				   : -1;
		if (at >= 0)
			output_heard_at[i] = at;
	}
	if (due)
		output_read_ns = now;
}

static void output_catch_up(void)
{
	char buf[16384];

	output_flush();
	for (int i = 0; i < 2; i++) {
		char path[PATH_MAX];
		int fd = ftp_repl_terminal_fd[i] >= 0 &&
				 ftp_repl_output_path(i, path, sizeof path) == 0
			     ? open(path, O_RDONLY | O_CLOEXEC)
			     : -1;
		ssize_t got;
		for (off_t at = output_heard_at[i];
		     fd >= 0 && (got = pread(fd, buf, sizeof buf, at)) > 0; at += got)
			if (ft_write_all(ftp_repl_terminal_fd[i], buf, (size_t)got) != 0)
				break;
		if (fd >= 0)
			close(fd);
	}
}

/* The receive on the stream this process waits in (a follower's of a
 * forwarded result, whose status it ignores), so that a promotion while
 * it waits can tell whether the message had arrived
 * (ftp_repl_stream_recv_state). Application thread. */
static struct stream_recv {
	MPI_Request *req;
	int32_t from;
	int tag;
	/* Tested there: it completed, or completed in error (the waiting
	 * call's outcome either way, whatever its wait then says). */
	bool done;
	int err;
} stream_recv;

/* One message to or from world rank peer on the stream, watched on it. */
int ftp_repl_stream_with(int peer, bool send, void *buf, int count, MPI_Datatype type, int tag,
			 MPI_Status *status)
{
	struct ftp_call c = FTP_CALL_INIT(send ? FTP_FN_MPI_Send : FTP_FN_MPI_Recv);
	struct ftp_comm *world = ftp_seam_comm(ftp.world);

	if (!world || peer < 0)
		return FTP_ERR_PROC_FAILED;
	ftp_call_on(&c, world,
		    (struct ftp_watch){.kind = FTP_WATCH_PEER, .rank = peer, .recv = !send});
	c.real = ftp_repl.stream;
	int rc = send ? ftp_mpi.PMPI_Isend(buf, count, type, peer, tag, c.real, &c.req)
		      : ftp_mpi.PMPI_Irecv(buf, count, type, peer, tag, c.real, &c.req);
	bool shown = !send && status == MPI_STATUS_IGNORE && !stream_recv.req;
	if (shown)
		stream_recv = (struct stream_recv){.req = &c.req, .from = peer, .tag = tag};
	rc = ftp_block(&c, rc, status);
	if (shown) {
		stream_recv.req = NULL;
		if (stream_recv.err != MPI_SUCCESS)
			rc = stream_recv.err;
		else if (stream_recv.done)
			rc = MPI_SUCCESS;
	}
	return rc;
}

int ftp_repl_stream_recv_state(int32_t from, int tag)
{
	int flag = 0;

	if (!stream_recv.req || stream_recv.from != from || stream_recv.tag != tag)
		return STREAM_RECV_NONE;
	if (stream_recv.done)
		return STREAM_RECV_DONE;
	if (stream_recv.err != MPI_SUCCESS)
		return STREAM_RECV_CUT;
	/* Tested, not looked at: a receive completed in error is not
	 * received (Open MPI completes one whose single copy from its dead
	 * sender failed with MPI_ERR_TRUNCATE and no data), and only
	 * MPI_Test says so (MPI_Request_get_status leaves MPI_ERROR out).
	 * The waiting call returns that error. */
	int rc = ftp_mpi.PMPI_Test(stream_recv.req, &flag, MPI_STATUS_IGNORE);
	if (rc != MPI_SUCCESS) {
		stream_recv.err = rc;
		return STREAM_RECV_CUT;
	}
	stream_recv.done = flag;
	return flag ? STREAM_RECV_DONE : STREAM_RECV_PENDING;
}

/* The same with the partner. */
int ftp_repl_stream_io(bool send, void *buf, int count, MPI_Datatype type, int tag,
		       MPI_Status *status)
{
	return ftp_repl_stream_with(ftp_repl.partner, send, buf, count, type, tag, status);
}

/* The primary: its replica could not be told (it died): it is told
 * nothing more, once the failure is applied (views.c, through the
 * contract). */
void ftp_repl_drop_replica(void)
{
	ftp_mode_failures();
	if (ftp_repl_paired() && ft_proc_is_failed(&ftp.procs, (uint32_t)ftp_repl.partner))
		ftp_repl.partner = -1;
}

/* The primary: tell the replica (a replica that died is not told). */
void ftp_repl_tell(const int *rec, int n)
{
	if (ftp_repl.copy != FTP_COPY_PRIMARY || !ftp_repl_paired())
		return;
	output_flush();
	if (ftp_repl_stream_io(true, (void *)rec, n, MPI_INT, TAG_DECIDE, MPI_STATUS_IGNORE) !=
	    MPI_SUCCESS)
		ftp_repl_drop_replica();
}

/* rc of a read from the stream of primary `from`: STREAM_ENDED if it
 * failed because the primary died (the view may have been applied while
 * the read waited). An MPI error of its own can come before the death is
 * known (Open MPI ends a receive whose single copy from a dead sender
 * failed in MPI_ERR_TRUNCATE): the detector then has one heartbeat
 * timeout to confirm it. */
int ftp_repl_stream_end(int rc, int32_t from)
{
	uint64_t start = ft_clock_now(), polls = 0;

	if (rc == MPI_SUCCESS || from < 0)
		return rc;
	while (!ft_proc_is_failed(&ftp.procs, (uint32_t)from) && ft_clock_now() - start < ftp.cfg.hb_timeout)
		ftp_poll_pause(&polls);
	if (!ft_proc_is_failed(&ftp.procs, (uint32_t)from))
		return rc;
	if (ftp_repl_following())
		ftp_repl_carry_on();
	return STREAM_ENDED;
}

/* The replica: hear the next record (at most max ints); its length. */
int ftp_repl_hear(int *rec, int max, int *n)
{
	MPI_Status st;
	int32_t from = ftp_repl.partner;
	int rc = ftp_repl_stream_end(ftp_repl_stream_io(false, rec, max, MPI_INT, TAG_DECIDE, &st),
				     from);

	if (rc == MPI_SUCCESS) {
		ftp_mpi.PMPI_Get_count(&st, MPI_INT, n);
		output_heard();
	}
	/* The last thing a dead primary told: carry on from here. */
	if (rc == MPI_SUCCESS && ftp_repl.copy == FTP_COPY_PROMOTED && !ftp_repl_records_left(from))
		ftp_repl_carry_on();
	if (rc == MPI_SUCCESS && *n < REC_HEAD) {
		ft_error("replica: a record of %d ints from the primary; expected at least %d", *n,
			 REC_HEAD);
		rc = MPI_ERR_INTERN;
	}
	return rc;
}

void ftp_repl_meet_at_end(void)
{
	int rec[REC_HEAD] = {MPI_SUCCESS, 0}, n = 0;

	if (!ftp_repl_following()) {
		ftp_repl_tell(rec, REC_HEAD);
		return;
	}
	output_exact = true;
	(void)ftp_repl_hear(rec, REC_HEAD, &n);
	output_exact = false;
}

/* MPI_Wtime under replication (the mode's clock, pmpi/mode/mode.h): a
 * replica gets its primary's time, as a program may decide by it
 * (NetPIPE's repetition counts, a loop that runs for a second); everyone
 * else reads its own clock, as does a replica once it carries its rank
 * on. The time travels as its 64 bits in two ints. */
double ftp_repl_wtime(void)
{
	if (!ftp_repl.r || !ftp_repl_paired())
		return ftp_mpi.PMPI_Wtime();
	int v[REC_HEAD + 2] = {MPI_SUCCESS, 0};
	double t;
	if (ftp_repl_following()) {
		int n = 0;
		if (ftp_repl_hear(v, REC_HEAD + 2, &n) == MPI_SUCCESS && n == REC_HEAD + 2) {
			memcpy(&t, &v[REC_HEAD], sizeof t);
			return t;
		}
		return ftp_mpi.PMPI_Wtime();
	}
	t = ftp_mpi.PMPI_Wtime();
	memcpy(&v[REC_HEAD], &t, sizeof t);
	ftp_repl_tell(v, REC_HEAD + 2);
	return t;
}

/* Whether the dead primary `from` told this process something it has
 * not read yet (it is all here: ftp_dead_peer_pass). */
bool ftp_repl_records_left(int32_t from)
{
	uint64_t start = ft_clock_now();
	int flag = 0;

	for (uint32_t pass = 0; !flag && ftp_dead_peer_pass(pass, start); pass++)
		ftp_mpi.PMPI_Iprobe(from, TAG_DECIDE, ftp_repl.stream, &flag, MPI_STATUS_IGNORE);
	return flag;
}

/* A promoted replica has read all its dead primary told it: it decides
 * for itself from now on, and its output reaches the terminal. */
void ftp_repl_carry_on(void)
{
	int32_t dead = ftp_repl.partner;

	if (dead < 0)
		return; /* carried on already */
	ftp_mode_await_peer(dead);
	ftp_repl.partner = -1;
	output_catch_up();
	for (int i = 0; i < 2; i++)
		if (ftp_repl_terminal_fd[i] >= 0) {
			dup2(ftp_repl_terminal_fd[i], i + 1);
			/* The saved stderr is the log's (setup.c), which the
			 * detector thread may be writing to now: it stays the
			 * log's, the same terminal as stderr from here on, and
			 * the logger closes it at the end. */
			if (i == 0 || ftp.cfg.log_file[0])
				close(ftp_repl_terminal_fd[i]);
			ftp_repl_terminal_fd[i] = -1;
		}
	int l = ftp_repl.plan.logical_of[ftp.rank];
	double after_ms = (double)(ft_clock_now() - ftp.procs.procs[dead].learned_ns) / 1e6;
	ft_info("rank %d: primary (process %d) lost, replica (process %d) promoted, %.1f ms after "
		"the loss was known here",
		l, dead, ftp.rank, after_ms);
	ft_events_add(ftp_wall_now(), "promotion",
		      ",\"program_rank\":%d,\"primary\":%d,\"after_ms\":%.3f", l, dead, after_ms);
}
