/* report_merge.c: one job report for every host, without a shared file
 * system. At MPI_Finalize each rank writes its events into its own host's
 * run directory and leaves (pmpi/rundir.c). Once every rank of a host has
 * left (departed or failed), the lowest of them still alive, the host's
 * speaker, sends the host's files over the control plane to the
 * reporting rank (the lowest rank still alive): each rank's events, cut
 * to a bound per rank, and the host's injections and deaths records. The
 * reporting rank keeps them below its job directory (ft_report_store),
 * where ft_report_write reads them, and stays on the control plane until
 * every other host that still has a live rank has sent (or said why it
 * has nothing: no run directory), or until a deadline after every rank
 * left; a host whose files did not come is listed as missing, with why.
 * The reporting rank acknowledges each host's complete set; a speaker
 * stays on the control plane until it has that acknowledgement, sending
 * the set again every RESEND_NS, for at most the reporting rank's
 * deadline (a set lost on the way, with a connection that broke, is sent
 * again on a new one). Ranks on the reporting rank's host send nothing:
 * their files are there already. A job on one host sends nothing. Then
 * the reporting rank writes the job report, still on the control plane,
 * and tells its backup: the lowest other live rank of its host, which
 * stays until it is told, and writes the report itself if the reporting
 * rank's process ends before it says so (it died in MPI_Finalize, where
 * a departed rank's end is no failure to the detector).
 *
 * Threads: the detector thread puts what arrives in the inbox
 * (on_msg, under inbox_lock); the application thread, in
 * leave_step while it leaves the control plane, sends, stores and
 * decides; everything else here is the application thread's. */
#include "ftshim_config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmpi/report_merge.h"
#include "pmpi/detect.h"
#include "pmpi/inject.h"
#include "pmpi/mode/mode.h"
#include "pmpi/rundir.h"
#include "pmpi/outcome.h"
#include "pmpi/ranks.h"
#include "src/log.h"
#include "src/prune.h"
#include "src/report.h"

/* What a file message carries, in its value: a rank's events, or one of
 * the host's records. */
#define WHAT_INJECTIONS UINT32_C(0xffffffff)
#define WHAT_DEATHS UINT32_C(0xfffffffe)

/* The bound on what a host sends: each rank's events at most
 * RANK_CAP bytes, and the host's at most HOST_CAP in all (a host with
 * many ranks sends less of each, never under RANK_MIN). One message
 * carries one file, so RANK_CAP stays under FT_APP_MAX_DATA. */
#define RANK_CAP (32u * 1024)
#define RANK_MIN (2u * 1024)
#define HOST_CAP (2u * 1024 * 1024)
_Static_assert(RANK_CAP <= FT_APP_MAX_DATA, "one file per message");

/* How long a speaker waits for the acknowledgement before it sends its
 * host's files again. */
#define RESEND_NS (300 * FT_NSEC_PER_MSEC)

/* How long a backup waits, once the reporting rank's process has ended,
 * for its word that the report is written: the word left before the
 * process ended, and the detector thread reads it within a few
 * milliseconds. */
#define WRITTEN_GRACE_NS (500 * FT_NSEC_PER_MSEC)

/* A message taken by the detector thread. */
struct arrival {
	struct arrival *next;
	uint32_t from;
	uint16_t kind;
	uint32_t value;
	uint32_t len;
	char data[];
};

static pthread_mutex_t inbox_lock = PTHREAD_MUTEX_INITIALIZER;
static struct arrival *inbox, **inbox_tail = &inbox;

/* The application thread's state while it leaves. */
static struct {
	bool started;
	uint32_t n;            /* job ranks, fixed at the first step */
	int32_t sent_to;       /* as a speaker: the reporting rank it sent to; -1 */
	int32_t acked_by;      /* as a speaker: the rank that acknowledged them; -1 */
	uint64_t first_sent;   /* as a speaker: when it first sent to sent_to */
	uint64_t last_sent;    /* ... and last */
	uint64_t all_left_at;  /* as the reporting rank: when every rank had left; 0 */
	uint32_t *first;       /* per rank: the lowest rank of its host */
	uint32_t *files_from;  /* per rank: files stored from it since its last DONE */
	bool *host_done;       /* per rank, at its host's lowest rank: the host's files came */
	uint32_t *host_partial; /* per rank, likewise: files of an incomplete DONE, + 1 */
	char (*host_note)[128]; /* per rank, likewise: why its speaker sent nothing */
	bool have_dir;         /* this rank has a run directory */
	bool waited;           /* as the reporting rank: done waiting */
	bool reported;         /* the report was written (or found impossible) here */
	bool heard_written;    /* as a backup: the reporting rank said it wrote it */
	int32_t watched;       /* as a backup: the reporting rank watched; -1 */
	int watch_fd;          /* its pidfd; -1: none (its process had ended, or cannot be watched) */
	bool watched_gone;     /* its process has ended */
	bool unwatchable;      /* no pidfd could name it: this rank is no backup */
	uint64_t gone_at;      /* when this rank saw it ended */
	int32_t took_over;     /* as a backup: the reporting rank whose report it writes; -1 */
	struct ft_report_host *missing;
	char (*why)[160];
	uint32_t nmissing;
} merge = { .sent_to = -1, .acked_by = -1, .watched = -1, .watch_fd = -1, .took_over = -1 };

static void on_msg(const struct ft_msg *m)
{
	struct arrival *a = malloc(sizeof *a + m->app.len);

	if (!a)
		return;
	a->next = NULL;
	a->from = m->from;
	a->kind = m->app.kind;
	a->value = m->app.value;
	a->len = m->app.len;
	memcpy(a->data, m->app.data, m->app.len);
	pthread_mutex_lock(&inbox_lock);
	*inbox_tail = a;
	inbox_tail = &a->next;
	pthread_mutex_unlock(&inbox_lock);
}

/* The lowest rank of r's host: where per-host state is kept (found once,
 * in merge_start: the step runs every millisecond). */
static uint32_t host_first(uint32_t r)
{
	return merge.first[r];
}

/* Whether the job spans several hosts. */
static bool several_hosts(void)
{
	uint32_t n = atomic_load(&ftp.nprocs);

	for (uint32_t r = 1; r < n; r++)
		if (!ftp_same_host(r, 0))
			return true;
	return false;
}

static bool failed(uint32_t r)
{
	return ft_proc_is_failed(&ftp.procs, r);
}

/* The rank that writes the job report: the lowest live rank (UINT32_MAX:
 * none). */
static uint32_t reporting_rank(void)
{
	uint32_t n = atomic_load(&ftp.nprocs);

	for (uint32_t r = 0; r < n; r++)
		if (!failed(r))
			return r;
	return UINT32_MAX;
}

/* The lowest live rank of r's host (UINT32_MAX: none). */
static uint32_t host_speaker(uint32_t r)
{
	for (uint32_t q = 0; q < merge.n; q++)
		if (ftp_same_host(q, r) && !failed(q))
			return q;
	return UINT32_MAX;
}

/* The reporting rank's backup: the lowest live rank of its host but it
 * (UINT32_MAX: none). On its host, it has the run directory where the
 * other hosts' files are kept. */
static uint32_t backup_of(uint32_t reporter)
{
	for (uint32_t q = 0; q < merge.n; q++)
		if (q != reporter && ftp_same_host(q, reporter) && !failed(q))
			return q;
	return UINT32_MAX;
}

/* Whether rank r's process has ended, as a pidfd on it tells (it is on
 * this host); the first call opens it. If it cannot be watched (no
 * pidfd_open, no pid), merge.unwatchable says so. */
static bool process_ended(uint32_t r)
{
	if (merge.watched != (int32_t)r) {
		if (merge.watch_fd >= 0)
			close(merge.watch_fd);
		merge.watched = (int32_t)r;
		int fd = ft_process_pidfd((pid_t)ftp.peers[r].pid, ftp.peers[r].start_ticks);
		merge.watch_fd = fd >= 0 ? fd : -1;
		merge.watched_gone = fd == -ESRCH;
		merge.unwatchable = fd < 0 && fd != -ESRCH;
	}
	if (!merge.watched_gone && merge.watch_fd >= 0) {
		struct pollfd p = { .fd = merge.watch_fd, .events = POLLIN };
		merge.watched_gone = poll(&p, 1, 0) > 0;
	}
	return merge.watched_gone;
}

/* Whether every rank of r's host has left: entered MPI_Finalize or
 * failed. This rank has. */
static bool host_left(uint32_t r)
{
	for (uint32_t q = 0; q < merge.n; q++) {
		if (q == (uint32_t)ftp.rank || !ftp_same_host(q, r))
			continue;
		if (!failed(q) && !ftp_departed(q))
			return false;
	}
	return true;
}

/* The whole of a file of the run directory (NULL if there is none). */
static char *read_whole(const char *name, size_t *len)
{
	char path[PATH_MAX];

	if (ftp_rundir_path(name, path, sizeof path) != 0)
		return NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	char *text = NULL;
	if (fstat(fd, &st) == 0 && st.st_size >= 0 && (text = malloc((size_t)st.st_size + 1)) != NULL) {
		ssize_t got = read(fd, text, (size_t)st.st_size);
		*len = got > 0 ? (size_t)got : 0;
	}
	close(fd);
	return text;
}

static void post(uint32_t to, uint16_t kind, uint32_t value, const char *data, uint32_t len)
{
	struct ft_msg m = { .type = FT_MSG_APP };

	m.app.kind = kind;
	m.app.value = value;
	m.app.len = len;
	m.app.data = (const uint8_t *)data;
	ftp_detect_post(to, &m);
}

/* As this host's speaker: every file of the host to the reporting rank,
 * then how many there were; with no run directory, why there are none. */
static void send_host_files(uint32_t to)
{
	uint32_t here = 0, nfiles = 0;
	size_t total = 0;

	if (!merge.have_dir) {
		static const char why[] = "this host's run directory could not be made (see its warning)";
		post(to, FTP_APP_REPORT_DONE, 0, why, sizeof why - 1);
		return;
	}

	for (uint32_t q = 0; q < merge.n; q++)
		here += ftp_same_host(q, (uint32_t)ftp.rank);
	size_t cap = HOST_CAP / (here ? here : 1);
	cap = cap > RANK_CAP ? RANK_CAP : cap < RANK_MIN ? RANK_MIN : cap;
	char *out = malloc(RANK_CAP);
	if (!out)
		return;
	for (uint32_t q = 0; q < merge.n + 2; q++) {
		char name[32];
		uint32_t what = q < merge.n ? q : q == merge.n ? WHAT_INJECTIONS : WHAT_DEATHS;
		if (q < merge.n && !ftp_same_host(q, (uint32_t)ftp.rank))
			continue;
		if (q < merge.n)
			snprintf(name, sizeof name, "events.%u.jsonl", q);
		else
			snprintf(name, sizeof name, "%s", what == WHAT_INJECTIONS ? "injections" : "deaths");
		size_t len = 0, sent;
		char *text = read_whole(name, &len);
		if (!text)
			continue;
		if (q < merge.n) {
			sent = ft_report_cap_events(text, len, cap, q, out);
		} else {
			/* Records: the first lines that fit. */
			sent = len <= RANK_CAP ? len : RANK_CAP;
			while (sent < len && sent > 0 && text[sent - 1] != '\n')
				sent--;
			memcpy(out, text, sent);
			if (sent < len)
				ft_warn("job report: this host's %s record is longer than %u bytes; its first %zu go to rank %u",
					name, RANK_CAP, sent, to);
		}
		free(text);
		post(to, FTP_APP_REPORT_FILE, what, out, (uint32_t)sent);
		nfiles++;
		total += sent;
	}
	free(out);
	post(to, FTP_APP_REPORT_DONE, nfiles, NULL, 0);
	ft_debug("job report: sent this host's %u file(s), %zu bytes, to rank %u on %s", nfiles, total, to,
		 ftp.peers[to].host);
}

/* As the reporting rank: keep what arrived. */
static void take_inbox(void)
{
	pthread_mutex_lock(&inbox_lock);
	struct arrival *a = inbox;
	inbox = NULL;
	inbox_tail = &inbox;
	pthread_mutex_unlock(&inbox_lock);
	while (a) {
		struct arrival *next = a->next;
		uint32_t from = a->from;
		if (a->kind == FTP_APP_REPORT_WRITTEN) {
			merge.heard_written = true;
		} else if (from >= merge.n || ftp_same_host(from, (uint32_t)ftp.rank)) {
			/* Nothing to keep from this host: its files are here. */
		} else if (a->kind == FTP_APP_REPORT_ACK) {
			merge.acked_by = (int32_t)from;
		} else if (a->kind == FTP_APP_REPORT_FILE && merge.have_dir) {
			char name[32];
			int rc = -EINVAL;
			if (a->value == WHAT_INJECTIONS || a->value == WHAT_DEATHS)
				snprintf(name, sizeof name, "%s", a->value == WHAT_INJECTIONS ? "injections" : "deaths");
			else if (a->value < merge.n && ftp_same_host(a->value, from))
				snprintf(name, sizeof name, "events.%u.jsonl", a->value);
			else
				name[0] = '\0';
			if (name[0])
				rc = ft_report_store(ftp_rundir_dir(), ftp.peers[from].host, name, a->data, a->len);
			if (rc == 0)
				merge.files_from[from]++;
			else
				ft_warn("job report: cannot keep file %s that rank %u sent: %s", name[0] ? name : "(unnamed)",
					from, strerror(-rc));
		} else if (a->kind == FTP_APP_REPORT_DONE) {
			uint32_t h = host_first(from);
			if (a->len > 0) {
				merge.host_done[h] = true;
				snprintf(merge.host_note[h], sizeof merge.host_note[0], "rank %u: %.*s", from,
					 (int)(a->len < sizeof merge.host_note[0] ? a->len : sizeof merge.host_note[0]),
					 a->data);
			} else if (merge.files_from[from] == a->value) {
				merge.host_done[h] = true;
			} else {
				merge.host_partial[h] = merge.files_from[from] + 1;
			}
			merge.files_from[from] = 0;
			/* An incomplete set is not acknowledged: it comes again. */
			if (merge.host_done[h])
				post(from, FTP_APP_REPORT_ACK, 0, NULL, 0);
		}
		free(a);
		a = next;
	}
}

/* How long the reporting rank waits for the other hosts' files once
 * every rank has left. */
static uint64_t merge_deadline_ns(void)
{
	uint64_t t = 2 * ftp.cfg.hb_timeout;
	return t < 2 * FT_NSEC_PER_SEC ? 2 * FT_NSEC_PER_SEC : t;
}

/* Whether each other host with a live rank has answered (its files, or
 * why it has none); with list, as the reporting rank stops waiting,
 * which hosts' files are missing and why. */
static bool hosts_in(bool list)
{
	bool all = true;

	for (uint32_t r = 0; r < merge.n; r++) {
		if (host_first(r) != r || ftp_same_host(r, (uint32_t)ftp.rank))
			continue;
		uint32_t speaker = host_speaker(r);
		if (speaker == UINT32_MAX)
			continue; /* every rank there failed: the report says so */
		all &= merge.host_done[r];
		if (!list || (merge.host_done[r] && !merge.host_note[r][0]))
			continue;
		char waited[32];
		ft_format_duration((double)merge_deadline_ns() / 1e9, waited, sizeof waited);
		struct ft_report_host *h = &merge.missing[merge.nmissing];
		char *why = merge.why[merge.nmissing];
		h->name = ftp.peers[r].host[0] ? ftp.peers[r].host : "?";
		if (merge.host_note[r][0])
			snprintf(why, sizeof merge.why[0], "%s", merge.host_note[r]);
		else if (merge.host_partial[r])
			snprintf(why, sizeof merge.why[0], "only %u of its files came from rank %u",
				 merge.host_partial[r] - 1, speaker);
		else
			snprintf(why, sizeof merge.why[0],
				 "nothing came from rank %u, which sends its files, within %s after every rank left",
				 speaker, waited);
		h->why = why;
		merge.nmissing++;
	}
	return all;
}

static bool merge_start(void)
{
	merge.started = true;
	merge.n = atomic_load(&ftp.nprocs);
	merge.have_dir = ftp_rundir_dir() != NULL;
	merge.first = calloc(merge.n, sizeof *merge.first);
	merge.files_from = calloc(merge.n, sizeof *merge.files_from);
	merge.host_done = calloc(merge.n, sizeof *merge.host_done);
	merge.host_partial = calloc(merge.n, sizeof *merge.host_partial);
	merge.host_note = calloc(merge.n, sizeof *merge.host_note);
	merge.missing = calloc(merge.n, sizeof *merge.missing);
	merge.why = calloc(merge.n, sizeof *merge.why);
	if (!merge.first || !merge.files_from || !merge.host_done || !merge.host_partial || !merge.host_note ||
	    !merge.missing || !merge.why)
		return false;
	/* Each rank's host by its first rank, comparing with the hosts met
	 * so far only. */
	uint32_t nfirsts = 0, *firsts = malloc(merge.n * sizeof *firsts);
	if (!firsts)
		return false;
	for (uint32_t r = 0; r < merge.n; r++) {
		uint32_t i = 0;
		while (i < nfirsts && !ftp_same_host(firsts[i], r))
			i++;
		if (i == nfirsts)
			firsts[nfirsts++] = r;
		merge.first[r] = firsts[i];
	}
	free(firsts);
	return true;
}

static void report_write(int32_t dead_reporter);

static bool report_on_disk(void)
{
	const char *jobdir = ftp_rundir_dir();
	char path[PATH_MAX];

	if (!jobdir || snprintf(path, sizeof path, "%s/report.json", jobdir) >= (int)sizeof path)
		return false;
	return access(path, F_OK) == 0;
}

/* As the reporting rank's backup: whether to stay, until it says the
 * report is written; if its process ends without a word and without a
 * report on disk, take the report over (ftp_job_report writes it once
 * this rank has left). */
static bool backup_step(uint32_t reporter)
{
	if (merge.heard_written || merge.took_over >= 0)
		return false;
	/* Unwatched, it would wait for a word that may never come. */
	if (!process_ended(reporter))
		return !merge.unwatchable;
	/* The report itself, in this host's run directory (written whole, by
	 * a rename, before the word leaves): the word may have been lost
	 * with the process, or not read yet. */
	if (report_on_disk()) {
		merge.heard_written = true;
		return false;
	}
	uint64_t now = ft_clock_now();
	if (!merge.gone_at)
		merge.gone_at = now;
	if (now - merge.gone_at < WRITTEN_GRACE_NS)
		return true;
	merge.took_over = (int32_t)reporter;
	ft_warn("job report: rank %u, which writes it, ended in MPI_Finalize before it had; this rank writes it",
		reporter);
	return false;
}

static bool leave_step(bool everyone_left)
{
	if (!merge.started && !merge_start())
		merge.n = 0; /* out of memory: no part in the merge */
	if (merge.n == 0)
		return false;
	uint32_t me = (uint32_t)ftp.rank, reporter = reporting_rank();
	bool hold = false;

	take_inbox();
	if (reporter == UINT32_MAX)
		return false;
	/* This host's speaker: once the host's ranks have all left (their
	 * files are written), send them, and again if the reporting rank it
	 * sent to failed, or did not acknowledge them in RESEND_NS; hold on
	 * until it does, for at most merge_deadline_ns. */
	if (!ftp_same_host(reporter, me) && host_speaker(me) == me && merge.acked_by != (int32_t)reporter) {
		uint64_t now = ft_clock_now();
		if (merge.sent_to != (int32_t)reporter) {
			if (everyone_left || host_left(me)) {
				send_host_files(reporter);
				merge.sent_to = (int32_t)reporter;
				merge.first_sent = merge.last_sent = now;
			}
			hold = true;
		} else if (now - merge.first_sent < merge_deadline_ns()) {
			if (now - merge.last_sent >= RESEND_NS) {
				ft_debug("job report: no acknowledgement from rank %u: sending again", reporter);
				send_host_files(reporter);
				merge.last_sent = now;
			}
			hold = true;
		}
	}
	if (backup_of(reporter) == me && backup_step(reporter))
		hold = true;
	/* The reporting rank holds on from the start: the engine may see
	 * the last rank leave before this thread does. Without a run
	 * directory it writes no report, and waits for nothing. */
	if (reporter == me && merge.have_dir && !merge.waited) {
		hold = true;
		if (everyone_left) {
			uint64_t now = ft_clock_now();
			if (!merge.all_left_at)
				merge.all_left_at = now;
			bool all = hosts_in(false);
			if (all && several_hosts()) {
				char took[32];
				ft_format_duration((double)(now - merge.all_left_at) / 1e9, took, sizeof took);
				ft_debug("job report: every other host answered, the last %s after every rank left", took);
			}
			if (all || now >= merge.all_left_at + merge_deadline_ns()) {
				hosts_in(true);
				merge.waited = true;
				hold = false;
			}
		}
	}
	/* Done waiting: the report, then the word to the backup, which
	 * stays until it has it. */
	if (reporter == me && !merge.reported && (merge.waited || !merge.have_dir)) {
		ftp_inject_point("ftshim.report", 1);
		report_write(-1);
		uint32_t backup = backup_of(me);
		if (backup != UINT32_MAX)
			post(backup, FTP_APP_REPORT_WRITTEN, 0, NULL, 0);
	}
	return hold;
}

const struct ftp_listener ftp_merge_listener = {
	.on_msg = on_msg,
	.kinds = 1u << FTP_APP_REPORT_FILE | 1u << FTP_APP_REPORT_DONE | 1u << FTP_APP_REPORT_ACK |
		 1u << FTP_APP_REPORT_WRITTEN,
	.leave_step = leave_step,
};

/* The hosts whose files did not come (valid until merge_end). */
static const struct ft_report_host *merge_missing(uint32_t *n)
{
	*n = merge.nmissing;
	return merge.missing;
}

static void merge_end(void)
{
	take_inbox();
	free(merge.first);
	free(merge.files_from);
	free(merge.host_done);
	free(merge.host_partial);
	free(merge.host_note);
	free(merge.missing);
	free(merge.why);
	if (merge.watch_fd >= 0)
		close(merge.watch_fd);
	merge = (__typeof__(merge)){ .sent_to = -1, .acked_by = -1, .watched = -1, .watch_fd = -1, .took_over = -1 };
}

void ftp_job_report(void)
{
	/* Written while on the control plane (leave_step), or here: without
	 * a detector, or by a backup that took it over. */
	if (!merge.reported && (merge.took_over >= 0 || reporting_rank() == (uint32_t)ftp.rank))
		report_write(merge.took_over);
	merge_end();
}

/* Write the job report; dead_reporter (or -1) is the reporting rank
 * whose report a backup writes, which died after it left. */
static void report_write(int32_t dead_reporter)
{
	const char *jobdir = ftp_rundir_dir();
	uint32_t nprocs = atomic_load(&ftp.nprocs);
	struct ft_report_rank *ranks = NULL;

	merge.reported = true;
	if (!jobdir || !(ranks = calloc(nprocs, sizeof *ranks))) {
		ftp_outcome_completed("ftshim: the job report could not be written");
		return;
	}
	for (uint32_t r = 0; r < nprocs; r++) {
		const struct ft_proc *p = &ftp.procs.procs[r];
		ranks[r].host = ftp.peers[r].host;
		ranks[r].failed = ft_proc_is_failed(&ftp.procs, r);
		ranks[r].readmitted = !ranks[r].failed && ft_proc_ever_failed(&ftp.procs, r);
		if (dead_reporter == (int32_t)r && !ranks[r].failed) {
			/* Its end was no failure to the detector (it had left);
			 * its supervisor's record says how it died. */
			ranks[r].failed = true;
			ranks[r].detection = ftp_detection_word(FT_HOW_EXITED);
			ranks[r].detector = (uint32_t)ftp.rank;
			ranks[r].failed_unix_ns = ranks[r].learned_unix_ns = merge.gone_at
				? merge.gone_at + (uint64_t)ftp.wall_offset_ns : ftp_wall_now();
			continue;
		}
		if (!ranks[r].failed)
			continue;
		ranks[r].detection = ftp_detection_word(p->how);
		ranks[r].detector = p->detector >= 0 ? (uint32_t)p->detector : 0;
		ranks[r].failed_unix_ns = ftp_failed_at(r);
		ranks[r].learned_unix_ns = p->learned_ns + (uint64_t)ftp.wall_offset_ns;
		struct ftp_mode_rank m;
		if (ftp_mode_report_rank((int32_t)r, &m)) {
			ranks[r].replica = m.serves_other;
			ranks[r].replica_of = (uint32_t)m.program;
			ranks[r].copy_lived = m.other >= 0 && !ft_proc_is_failed(&ftp.procs, (uint32_t)m.other);
			ranks[r].copy = m.other >= 0 ? (uint32_t)m.other : 0;
			ranks[r].spare = m.spare >= 0;
			ranks[r].spare_index = m.spare >= 0 ? (uint32_t)m.spare : 0;
		}
	}
	char program[PATH_MAX] = "";
	ssize_t n = readlink("/proc/self/exe", program, sizeof program - 1);
	program[n > 0 ? n : 0] = '\0';
	uint32_t nmissing;
	const struct ft_report_host *missing = merge_missing(&nmissing);
	struct ft_report_input in = {
		.missing_hosts = missing,
		.nmissing_hosts = nmissing,
		.jobdir = jobdir,
		.job_id = ftp.job_id,
		.program = program,
		.nprocs = nprocs,
		.self = (uint32_t)ftp.rank,
		.origin_unix_ns = ftp.job_start_unix_ns,
		.end_unix_ns = ftp_wall_now(),
		.ranks = ranks,
	};
	char summary[1024] = "ftshim: the job report could not be written";
	int rc = ft_report_write(&in, summary, sizeof summary);
	free(ranks);
	if (rc != 0)
		ft_warn("cannot write the job report in %s: %s", jobdir, strerror(-rc));
	ftp_outcome_completed(summary);
	/* Several hosts: the summary says on which the report is. */
	char where[80] = "";
	if (several_hosts())
		snprintf(where, sizeof where, "%s:", ftp.peers[ftp.rank].host);
	/* A job that lost nobody stays as quiet as without ftshim. */
	if (ft_proc_nfailed(&ftp.procs) > 0 || nmissing || dead_reporter >= 0)
		ft_summary("%s; report: %s%s/report.json", summary, where, jobdir);
	else
		ft_debug("%s; report: %s%s/report.json", summary, where, jobdir);
}
