/* ckpt.c: in-memory checkpoints (pmpi/ckpt.h). ftshim_checkpoint copies
 * every region the rank protected into a local blob (the program waits
 * for that memcpy only) and hands it to the checkpoint link's thread,
 * which sends it to the rank's buddy (src/ckpt_store.h: the next rank on
 * another host), which keeps its latest two. Each call first waits for
 * the previous copy to be kept, then agrees with every rank (ftshim's
 * agreement over MPI_COMM_WORLD) that all are there with the same
 * version and no request pending: so when a checkpoint is taken the one
 * before it is whole everywhere, and a rank's own latest two always hold
 * the checkpoint every rank completed. After a repair the ranks report
 * what they have to rank 0's process, which chooses the latest
 * checkpoint whose every rank's copy survives (ft_ckpt_choose) and where
 * each comes from; a rank whose process is new fetches its copy from the
 * buddy that kept it. A failure meanwhile makes the caller repair again,
 * which restores again: nothing here is kept half done.
 *
 * Sharing: the application thread owns everything but the copies kept
 * for others (held, under its lock, added by the link's thread) and the
 * link's own state. */
#include "ftshim_config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The definitions below are not weak, as the header declares them for
 * programs. */
#define FTSHIM_BUILDING 1
#include "ftshim.h"
#include "pmpi/ckpt.h"
#include "pmpi/agree.h"
#include "pmpi/ckpt_watch.h"
#include "pmpi/detect.h"
#include "pmpi/errors.h"
#include "pmpi/hostmail.h"
#include "pmpi/inject.h"
#include "pmpi/mode/mode.h"
#include "pmpi/mpi_lib.h"
#include "pmpi/requests.h"
#include "pmpi/seam.h"
#include "pmpi/state.h"
#include "src/ckpt_disk.h"
#include "src/ckpt_store.h"
#include "src/clock.h"
#include "src/events.h"
#include "src/log.h"
#include "src/proc_table.h"

/* A checkpoint this rank took (or restored): its tag and blob. */
struct local_copy {
	struct ft_ckpt_tag tag;
	struct ft_ckpt_blob *blob; /* NULL: none */
};

static struct {
	bool on;                      /* started: a mode restores from checkpoints */
	struct ft_ckpt_link *link;
	struct ft_ckpt_held held;     /* copies kept for other ranks (link's thread adds) */
	struct ft_ckpt_disk *disk;    /* FTSHIM_CKPT_DIR's files, or NULL */
	struct ft_ckpt_regions regions;
	struct local_copy cur, prev;  /* this rank's latest two */
	int store_op;                 /* the link's operation sending cur to the buddy, or -1 */
	int32_t store_to;             /* its job rank */
	unsigned store_tries;
	uint64_t calls;               /* ftshim_checkpoint calls in this run */
	uint32_t epoch;               /* the repair the world was made by */
	int32_t *holder;              /* program rank -> job rank */
	uint32_t n;
	int32_t self;                 /* this process's program rank, or -1 */
	/* The checkpoint restored in this run, until the next one is taken:
	 * ftshim_protect copies a region in from it once. */
	struct ft_ckpt_blob *restored;
	long restored_version;
	bool restored_from_file;      /* the restored copy came from this rank's file */
	int32_t copied_in[FT_CKPT_REGIONS_MAX];
	uint32_t ncopied_in;
} ck = { .store_op = -1, .self = -1, .restored_version = -1 };

/* The agreement's flag at a checkpoint and at MPI_Finalize: the kind of
 * call (a checkpoint and a finish met: someone did not checkpoint), the
 * calls' consent, and the version's low 14 bits with their complement
 * (differing versions clear a bit of one or the other). */
#define FLAG_CKPT (1u << 31)
#define FLAG_FINISH (1u << 30)
#define FLAG_OK (1u << 29)
#define VERSION_MASK 0x3fffu

static uint32_t version_bits(long v)
{
	uint32_t lo = (uint32_t)v & VERSION_MASK;

	return lo | ((~lo & VERSION_MASK) << 14);
}

/* --- the link's thread ---------------------------------------------------- */

static bool stored(void *arg, uint32_t from, uint32_t owner, struct ft_ckpt_tag tag, struct ft_ckpt_blob *blob)
{
	const char *why = NULL;
	(void)arg;
	if (ft_ckpt_snapshot_check(blob, &why) != 0 || ft_ckpt_snapshot_owner(blob) != owner) {
		ft_warn("checkpoints: process %u sent rank %u's copy malformed (%s); not kept", from, owner,
			why ? why : "another rank's copy");
		ft_ckpt_blob_unref(blob);
		return false;
	}
	return ft_ckpt_held_put(&ck.held, owner, tag, blob);
}

static struct ft_ckpt_blob *lookup(void *arg, uint32_t owner, struct ft_ckpt_tag tag)
{
	(void)arg;
	return ft_ckpt_held_get(&ck.held, owner, tag);
}

int ftp_ckpt_start(void)
{
	char err[256] = "";
	struct ft_endpoint ep = { 0 };
	uint32_t total = (uint32_t)ftp.world_size;
	struct ft_endpoint *eps = calloc(total, sizeof *eps);
	int fd = eps ? ft_overlay_listen(ftp.cfg.iface, &ep, err, sizeof err) : -ENOMEM;

	/* Every process takes part in the exchange, even one that could not
	 * listen (its port 0 says so). */
	if (eps)
		ftp_mpi.PMPI_Allgather(&ep, sizeof ep, MPI_BYTE, eps, sizeof ep, MPI_BYTE, ftp.world);
	if (fd < 0) {
		ft_error("checkpoints: cannot open the checkpoint link (%s); ftshim_checkpoint keeps nothing",
			 eps ? err : "out of memory");
		free(eps);
		return fd;
	}
	struct ft_ckpt_link_config cfg = {
		.self = (uint32_t)ftp.rank, .nprocs = total, .endpoints = eps, .listen_fd = fd,
		.max_len = UINT64_C(1) << 42, .stored = stored, .lookup = lookup,
	};
	memcpy(cfg.secret, ftp.secret, sizeof cfg.secret);
	ft_ckpt_held_init(&ck.held);
	int rc = ft_ckpt_link_start(&ck.link, &cfg, err, sizeof err);
	free(eps);
	if (rc != 0) {
		ft_error("checkpoints: cannot start the checkpoint link (%s); ftshim_checkpoint keeps nothing", err);
		return rc;
	}
	ftp_ckpt_watch_start(total);
	ck.on = true;
	if (ftp.cfg.ckpt_dir[0] && ft_ckpt_disk_open(&ck.disk, ftp.cfg.ckpt_dir, ftp.job_id, err, sizeof err) != 0)
		ft_error("checkpoints: %s; checkpoints are kept in memory only", err);
	return 0;
}

void ftp_ckpt_world(const int32_t *holder, uint32_t n, uint32_t epoch)
{
	int32_t *h = realloc(ck.holder, (size_t)n * sizeof *h);

	if (!h)
		return;
	memcpy(h, holder, (size_t)n * sizeof *h);
	ck.holder = h;
	ck.n = n;
	ck.epoch = epoch;
	ftp_ckpt_watch_world(epoch);
	ck.self = -1;
	for (uint32_t r = 0; r < n; r++)
		if (holder[r] == ftp.rank)
			ck.self = (int32_t)r;
}

/* The job rank that keeps program rank r's copies in this world. */
static int32_t buddy_of(uint32_t r)
{
	uint64_t *hosts = malloc((size_t)ck.n * sizeof *hosts);
	int32_t b = -1;

	if (!hosts)
		return -1;
	for (uint32_t i = 0; i < ck.n; i++)
		hosts[i] = ftp.peers[ck.holder[i]].ep.host_id;
	b = ft_ckpt_buddy(hosts, ck.n, r);
	free(hosts);
	return b < 0 ? -1 : ck.holder[b];
}

/* --- waiting ------------------------------------------------------------------ */

/* One step of a wait of this file's: a failure is applied (the mode may
 * restart this process from here), the host's mail and the MPI's
 * progress are served, and the thread sleeps a little. */
static void wait_step(void)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 200 * 1000 };

	ftp_mode_failures();
	ftp_hostmail_poll();
	ftp_mpi_progress();
	nanosleep(&ts, NULL);
}

static void local_drop(struct local_copy *c)
{
	ft_ckpt_blob_unref(c->blob);
	*c = (struct local_copy){ 0 };
}

/* Send cur to its keeper. */
static void store_cur(void)
{
	ck.store_op = -1;
	ck.store_to = ck.self >= 0 ? buddy_of((uint32_t)ck.self) : -1;
	if (ck.store_to < 0 || !ck.cur.blob)
		return;
	int op = ft_ckpt_link_store(ck.link, (uint32_t)ck.store_to, (uint32_t)ck.self, ck.cur.tag, ck.cur.blob);
	ck.store_op = op >= 0 ? op : -1;
}

/* Wait until cur is kept by its buddy: true, or false if it cannot be
 * (a connection the buddy refused, three times). A buddy's death is
 * applied by the mode meanwhile, which restarts this process. */
static bool cur_kept(void)
{
	while (ck.store_op >= 0) {
		int st = ft_ckpt_link_op(ck.link, ck.store_op, NULL);
		if (st == FT_CKPT_OP_PENDING) {
			wait_step();
			continue;
		}
		ck.store_op = -1;
		if (st == FT_CKPT_OP_DONE) {
			ck.store_tries = 0;
			return true;
		}
		if (ft_proc_is_failed(&ftp.procs, (uint32_t)ck.store_to)) {
			/* The mode repairs from here and restarts this process,
			 * unless no spare is left. */
			wait_step();
			ft_error("checkpoints: rank %d's buddy (process %d) failed before it kept checkpoint %llu",
				 ck.self, ck.store_to, (unsigned long long)ck.cur.tag.count);
			return false;
		}
		if (++ck.store_tries >= 3) {
			ft_error("checkpoints: rank %d's copy of checkpoint %llu could not be sent to process %d "
				 "(%s) three times", ck.self, (unsigned long long)ck.cur.tag.count, ck.store_to,
				 ftp.peers[ck.store_to].host);
			return false;
		}
		store_cur();
	}
	return true;
}

/* Wait until the file in flight is written (a death meanwhile is applied
 * by the mode, which may restart this process), and tell its outcome. */
static void disk_idle(void)
{
	struct ft_ckpt_disk_result res;
	bool fresh = false;

	if (!ck.disk)
		return;
	while (!ft_ckpt_disk_done(ck.disk, &res, &fresh))
		wait_step();
	if (!fresh)
		return;
	char path[4200];
	ft_ckpt_disk_path(ck.disk, res.owner, res.tag, path, sizeof path);
	if (res.err != 0 && res.err != -ECANCELED)
		ft_warn("checkpoints: rank %u's checkpoint %llu could not be written to %s (%s); its copies in "
			"memory stand", res.owner, (unsigned long long)res.tag.count, path, strerror(-res.err));
	if (res.err == 0)
		ft_events_add(ftp_wall_now(), "checkpoint_file",
			      ",\"number\":%llu,\"bytes\":%llu,\"write_ms\":%.3f",
			      (unsigned long long)res.tag.count, (unsigned long long)res.bytes, res.write_ms);
}

/* --- the public calls ------------------------------------------------------- */

FT_EXPORT int ftshim_protect(int id, void *base, size_t bytes)
{
	char err[256];

	if (ft_ckpt_protect(&ck.regions, id, base, bytes, err, sizeof err) != 0) {
		ft_error("%s", err);
		return -1;
	}
	if (!ck.restored || !base || bytes == 0)
		return 0;
	for (uint32_t i = 0; i < ck.ncopied_in; i++)
		if (ck.copied_in[i] == id)
			return 0;
	uint64_t had = 0;
	const void *saved = ft_ckpt_snapshot_region(ck.restored, id, &had);
	if (!saved)
		return 0;
	if (ck.ncopied_in < FT_CKPT_REGIONS_MAX)
		ck.copied_in[ck.ncopied_in++] = id;
	if (had != bytes) {
		ft_error("ftshim_protect(%d, %p, %zu): the checkpoint restored (version %ld) holds %llu bytes "
			 "for region %d; accepted: the size it had, so that its contents can be copied in",
			 id, base, bytes, ck.restored_version, (unsigned long long)had, id);
		return -1;
	}
	ft_ckpt_advise_huge(base, bytes);
	memcpy(base, saved, bytes);
	return 0;
}

FT_EXPORT long ftshim_restart_version(void)
{
	return ck.restored_version;
}

/* The checkpoint's agreement over MPI_COMM_WORLD failed because a rank
 * did: the mode repairs (and restarts this process) from here, or the
 * failure is the program's. */
static int ckpt_failed(long version)
{
	ftp_mode_error(FTP_ERR_PROC_FAILED);
	ft_error("ftshim_checkpoint(%ld): a rank failed during the checkpoint and it could not be repaired; "
		 "no checkpoint taken", version);
	return -1;
}

/* Two kinds of call met in one agreement: some rank went on to
 * MPI_Finalize while others checkpointed. The job ends. */
static _Noreturn void unmatched(bool in_checkpoint)
{
	if (ck.self == 0)
		ft_error("ftshim_checkpoint: not every rank called it (some entered MPI_Finalize while others "
			 "waited in ftshim_checkpoint); it is collective over MPI_COMM_WORLD: ending the job");
	else
		ft_debug("ftshim_checkpoint unmatched (this rank %s)", in_checkpoint ? "checkpointed" : "finished");
	ftp_detect_abort(1);
	ftp_mpi.PMPI_Abort(ftp.world, 1);
	abort();
}

FT_EXPORT int ftshim_checkpoint(long version)
{
	struct ftp_comm *world = ck.on ? ftp_seam_comm(ftp.world) : NULL;

	if (!world || ck.self < 0 || !ftp_active())
		return 0;
	ck.calls++;
	if (ftp.cfg.ckpt_every > 1 && ck.calls % ftp.cfg.ckpt_every != 0)
		return 0;
	uint64_t t0 = ft_clock_now();
	bool ok = true;
	ftp_ckpt_watch_enter(ck.holder, ck.n);
	unsigned pending = ftp_req_pending_now();
	if (pending > 0) {
		ft_error("ftshim_checkpoint(%ld): %u request(s) of the program's still pending on rank %d; "
			 "accepted: a call with every request completed (MPI_Wait) or freed", version,
			 pending, ck.self);
		ok = false;
	}
	ok = cur_kept() && ok;
	disk_idle();
	uint64_t t_kept = ft_clock_now();
	uint32_t mine = FLAG_CKPT | (ok ? FLAG_OK : 0) | version_bits(version);
	uint32_t value = mine;
	if (ftp_agree_quiet(world, &value) != MPI_SUCCESS)
		return ckpt_failed(version);
	uint64_t t_agreed = ft_clock_now();
	if (!(value & (FLAG_CKPT | FLAG_FINISH)))
		unmatched(true);
	if (!(value & FLAG_OK)) {
		if (ok && ck.self == 0)
			ft_error("ftshim_checkpoint(%ld): refused, as another rank said; no checkpoint taken", version);
		return -1;
	}
	if ((value & 0x0fffffffu) != (mine & 0x0fffffffu)) {
		if (ck.self == 0)
			ft_error("ftshim_checkpoint(%ld): the ranks gave different versions; accepted: the same "
				 "version on every rank; no checkpoint taken", version);
		return -1;
	}
	/* Every rank's cur is kept: older copies are of no use now. */
	ft_ckpt_held_drop_older(&ck.held, ck.cur.tag.count);
	/* Write over the older local copy's memory when nothing else reads
	 * it (fresh pages cost more to fill than the copy itself). */
	uint64_t len = ft_ckpt_snapshot_len(&ck.regions);
	struct ft_ckpt_blob *b = ck.prev.blob;
	ck.prev.blob = NULL;
	if (!b || b->len != len || atomic_load_explicit(&b->refs, memory_order_acquire) != 1) {
		ft_ckpt_blob_unref(b);
		b = ft_ckpt_blob_new(len);
	}
	if (!b) {
		ft_error("ftshim_checkpoint(%ld): out of memory for a copy of %llu bytes; no checkpoint taken",
			 version, (unsigned long long)len);
		return -1;
	}
	uint64_t t_copy = ft_clock_now();
	ft_ckpt_snapshot_fill(b, &ck.regions, version, (uint32_t)ck.self, ftp_wall_now());
	uint64_t t_copied = ft_clock_now();
	ck.prev = ck.cur;
	ck.cur = (struct local_copy){ .tag = { .count = ck.prev.tag.count + 1, .epoch = ck.epoch }, .blob = b };
	/* The restored one served its run. */
	ft_ckpt_blob_unref(ck.restored);
	ck.restored = NULL;
	/* For tests: a death after the local copy, before the buddy has it
	 * (FTSHIM_INJECT "at=point:ftshim.checkpoint:N", N its number). */
	ftp_inject_point("ftshim.checkpoint", (long)ck.cur.tag.count);
	store_cur();
	if (ck.disk && ck.cur.tag.count % ftp.cfg.ckpt_disk_every == 0)
		(void)ft_ckpt_disk_write(ck.disk, (uint32_t)ck.self, ck.cur.tag, ck.cur.blob);
	ft_events_add(ftp_wall_now(), "checkpoint",
		      ",\"version\":%ld,\"number\":%llu,\"bytes\":%llu,\"buddy\":%d,\"wait_ms\":%.3f,"
		      "\"agree_ms\":%.3f,\"copy_ms\":%.3f",
		      version, (unsigned long long)ck.cur.tag.count, (unsigned long long)len, ck.store_to,
		      (double)(t_kept - t0) / 1e6, (double)(t_agreed - t_kept) / 1e6,
		      (double)(t_copied - t_copy) / 1e6);
	return 0;
}

uint32_t ftp_ckpt_finish_flag(void)
{
	return FLAG_FINISH | FLAG_OK | 0x0fffffffu;
}

void ftp_ckpt_finish_check(uint32_t agreed)
{
	if (!(agreed & (FLAG_CKPT | FLAG_FINISH)))
		unmatched(false);
	/* Every rank is done: its files serve no restore. */
	if (ck.disk && ck.self >= 0) {
		ft_ckpt_disk_drop_abandoned(ck.disk, (uint32_t)ck.self, (struct ft_ckpt_tag){ 0 });
		ft_ckpt_disk_close(ck.disk);
		ck.disk = NULL;
	}
}

/* --- the restore -------------------------------------------------------------- */

/* The decision rank 0's process sends: whether a checkpoint is whole, its
 * tag, and per program rank where its copy is and whether its buddy in
 * the new world lacks it (the rank sends it again). */
struct decision_head {
	uint32_t found, n;
	uint32_t any; /* some rank had a checkpoint at all */
	uint32_t reserved;
	struct ft_ckpt_tag tag;
};

/* Wait for a note of round; NULL if dead() said a process failed. */
static struct ft_ckpt_blob *await_note(uint32_t round, bool (*dead)(void), uint32_t *from)
{
	struct ft_ckpt_blob *note = NULL;

	while (ft_ckpt_link_take_note(ck.link, round, from, &note) == 0) {
		if (dead())
			return NULL;
		wait_step();
	}
	return note;
}

/* Rank 0's part: every report in, the choice out to all. */
static struct ft_ckpt_blob *decide(uint32_t round, const struct ft_ckpt_report *own, bool (*dead)(void))
{
	struct ft_ckpt_report *reps = calloc(ck.n, sizeof *reps);
	size_t len = sizeof(struct decision_head) + (size_t)ck.n * (sizeof(int32_t) + 1);
	struct ft_ckpt_blob *d = ft_ckpt_blob_new(len);
	uint32_t got = 1;

	if (!reps || !d) {
		ft_error("checkpoints: out of memory for the restore's reports of %u ranks; ending the job", ck.n);
		ftp_detect_abort(1);
		abort();
	}
	reps[0] = *own;
	while (got < ck.n) {
		uint32_t from = 0;
		struct ft_ckpt_blob *note = await_note(round, dead, &from);
		if (!note) {
			free(reps);
			ft_ckpt_blob_unref(d);
			return NULL;
		}
		if (note->len == sizeof reps[0])
			memcpy(&reps[got++], note->data, sizeof reps[0]);
		ft_ckpt_blob_unref(note);
	}
	struct decision_head *h = (struct decision_head *)d->data;
	int32_t *src = (int32_t *)(h + 1);
	uint8_t *resend = (uint8_t *)(src + ck.n);
	*h = (struct decision_head){ .n = ck.n };
	h->found = ft_ckpt_choose(reps, ck.n, ck.holder, ck.n, &h->tag, src);
	for (uint32_t r = 0; r < ck.n; r++)
		h->any |= reps[r].nhave > 0;
	for (uint32_t r = 0; r < ck.n; r++) {
		int32_t b = buddy_of(r);
		resend[r] = h->found && b >= 0 && !ft_ckpt_reported(reps, ck.n, b, r, h->tag);
		if (!h->found)
			src[r] = -1;
	}
	for (uint32_t r = 1; r < ck.n; r++)
		ft_ckpt_link_note(ck.link, (uint32_t)ck.holder[r], round, d->data, (uint32_t)d->len);
	free(reps);
	return d;
}

/* This rank's copy of tag from its file, or NULL after one line. */
static struct ft_ckpt_blob *copy_from_file(struct ft_ckpt_tag tag)
{
	char err[4400] = "";
	const char *why = NULL;
	struct ft_ckpt_blob *b = ck.disk ? ft_ckpt_disk_read(ck.disk, (uint32_t)ck.self, tag, err, sizeof err) : NULL;

	if (b && (ft_ckpt_snapshot_check(b, &why) != 0 || ft_ckpt_snapshot_owner(b) != (uint32_t)ck.self)) {
		snprintf(err, sizeof err, "malformed: %s", why ? why : "another rank's copy");
		ft_ckpt_blob_unref(b);
		b = NULL;
	}
	if (!b && ck.disk)
		ft_error("checkpoints: rank %d's file of checkpoint %llu cannot be read: %s", ck.self,
			 (unsigned long long)tag.count, err);
	ck.restored_from_file = b != NULL;
	return b;
}

/* This rank's copy of tag from job rank src: from its own memory or
 * file, or fetched. A new reference, or NULL (dead() said a process failed, or
 * src did not have it). */
static struct ft_ckpt_blob *copy_from(int32_t src, struct ft_ckpt_tag tag, bool (*dead)(void))
{
	if (src == ftp.rank) {
		if (ck.cur.blob && ft_ckpt_tag_eq(ck.cur.tag, tag))
			return ft_ckpt_blob_ref(ck.cur.blob);
		if (ck.prev.blob && ft_ckpt_tag_eq(ck.prev.tag, tag))
			return ft_ckpt_blob_ref(ck.prev.blob);
		struct ft_ckpt_blob *b = ft_ckpt_held_get(&ck.held, (uint32_t)ck.self, tag);
		return b ? b : copy_from_file(tag);
	}
	int op = ft_ckpt_link_fetch(ck.link, (uint32_t)src, (uint32_t)ck.self, tag);
	struct ft_ckpt_blob *b = NULL;
	for (int st = FT_CKPT_OP_PENDING; op >= 0 && st == FT_CKPT_OP_PENDING;) {
		st = ft_ckpt_link_op(ck.link, op, &b);
		if (st == FT_CKPT_OP_PENDING) {
			if (dead())
				return NULL;
			wait_step();
		}
	}
	const char *why = NULL;
	if (b && (ft_ckpt_snapshot_check(b, &why) != 0 || ft_ckpt_snapshot_owner(b) != (uint32_t)ck.self)) {
		ft_error("checkpoints: the copy of rank %d fetched from process %d is malformed (%s)", ck.self, src,
			 why ? why : "another rank's copy");
		ft_ckpt_blob_unref(b);
		b = NULL;
	}
	return b;
}

int ftp_ckpt_restore(bool (*dead)(void))
{
	if (!ck.on)
		return 0;
	uint64_t t0 = ft_clock_now();
	uint32_t round = ck.epoch;
	/* The abandoned run's sends go; copies to the dead go nowhere. */
	ft_ckpt_link_cancel_all(ck.link);
	ck.store_op = -1;
	for (uint32_t j = 0; j < (uint32_t)ftp.world_size; j++)
		if (ft_proc_is_failed(&ftp.procs, j))
			ft_ckpt_link_forget(ck.link, j);
	/* The regions named the abandoned run's memory. */
	ck.regions.n = 0;
	ck.calls = 0;
	ft_ckpt_blob_unref(ck.restored);
	ck.restored = NULL;
	ck.restored_version = -1;
	ck.restored_from_file = false;
	ck.ncopied_in = 0;
	if (ck.self < 0)
		return 0;
	struct ft_ckpt_tag mine[2];
	uint32_t nmine = 0;
	if (ck.cur.blob)
		mine[nmine++] = ck.cur.tag;
	if (ck.prev.blob)
		mine[nmine++] = ck.prev.tag;
	/* And this rank's files (a spare's too: it now runs the rank whose
	 * files they are). */
	struct ft_ckpt_tag files[2];
	uint32_t nfiles = ck.disk ? ft_ckpt_disk_list(ck.disk, (uint32_t)ck.self, files, 2) : 0;
	struct ft_ckpt_report rep;
	ft_ckpt_report_fill(&rep, ftp.rank, (uint32_t)ck.self, mine, nmine, files, nfiles, &ck.held);
	struct ft_ckpt_blob *d;
	if (ck.self != 0)
		ft_ckpt_link_note(ck.link, (uint32_t)ck.holder[0], round, &rep, sizeof rep);
	/* For tests: a death once this rank has reported
	 * ("at=point:ftshim.restore:N", N the repair's number). */
	ftp_inject_point("ftshim.restore", (long)round);
	if (ck.self == 0) {
		d = decide(round, &rep, dead);
	} else {
		uint32_t from = 0;
		d = await_note(round, dead, &from);
	}
	if (!d)
		return -EAGAIN;
	struct decision_head h;
	memcpy(&h, d->data, sizeof h);
	const int32_t *src = (const int32_t *)(d->data + sizeof h);
	const uint8_t *resend = (const uint8_t *)(src + ck.n);
	int32_t from = h.found ? src[ck.self] : -1;
	bool again = resend[ck.self];
	ft_ckpt_blob_unref(d);
	struct ft_ckpt_blob *b = NULL;
	uint64_t t_copy = ft_clock_now();
	if (h.found) {
		b = copy_from(from, h.tag, dead);
		if (!b && dead())
			return -EAGAIN;
	}
	if (h.found && !b) {
		/* Its keeper had it when it reported: only a death takes it away. */
		ft_error("checkpoints: rank %d's copy of checkpoint %llu could not be had from process %d, "
			 "although it reported it; ending the job", ck.self, (unsigned long long)h.tag.count, from);
		ftp_detect_abort(1);
		abort();
	}
	ft_ckpt_held_drop_abandoned(&ck.held, h.found ? h.tag : (struct ft_ckpt_tag){ 0 });
	if (ck.disk)
		ft_ckpt_disk_drop_abandoned(ck.disk, (uint32_t)ck.self, h.found ? h.tag : (struct ft_ckpt_tag){ 0 });
	local_drop(&ck.prev);
	local_drop(&ck.cur);
	if (b) {
		ck.cur = (struct local_copy){ .tag = h.tag, .blob = ft_ckpt_blob_ref(b) };
		ck.restored = b;
		ck.restored_version = ft_ckpt_snapshot_version(b);
		if (again)
			store_cur();
	}
	uint64_t t_end = ft_clock_now(), now = ftp_wall_now();
	/* The work done since the checkpoint was taken is done again. */
	uint64_t taken = b ? ft_ckpt_snapshot_taken(b) : 0;
	double redo_s = taken && taken < now ? (double)(now - taken) / 1e9 : 0.0;
	ft_events_add(now, "restore",
		      ",\"version\":%ld,\"number\":%llu,\"from\":%d,\"bytes\":%llu,\"agree_ms\":%.3f,"
		      "\"copy_ms\":%.3f,\"taken_s_ago\":%.3f,\"file\":%s",
		      ck.restored_version, (unsigned long long)(h.found ? h.tag.count : 0), from,
		      (unsigned long long)(b ? b->len : 0), (double)(t_copy - t0) / 1e6,
		      (double)(t_end - t_copy) / 1e6, redo_s, ck.restored_from_file ? "true" : "false");
	if (ck.self == 0 && h.found)
		ft_info("checkpoints: every rank goes back to version %ld (checkpoint %llu, taken %.2f s ago: the "
			"work since is done again)", ck.restored_version, (unsigned long long)h.tag.count, redo_s);
	else if (ck.self == 0 && h.any)
		ft_info("checkpoints: no checkpoint has every rank's copy; every rank starts from the beginning");
	if (from >= 0 && from != ftp.rank)
		ft_info("checkpoints: rank %d's copy of version %ld (%.1f MiB) came from process %d (%s) in %.1f ms",
			ck.self, ck.restored_version, (double)(b ? b->len : 0) / (1 << 20), from,
			ftp.peers[from].host, (double)(t_end - t_copy) / 1e6);
	if (ck.restored_from_file) {
		char path[4200];
		ft_ckpt_disk_path(ck.disk, (uint32_t)ck.self, h.tag, path, sizeof path);
		ft_info("checkpoints: rank %d's copy of version %ld (%.1f MiB) came from its file %s in %.1f ms",
			ck.self, ck.restored_version, (double)b->len / (1 << 20), path,
			(double)(t_end - t_copy) / 1e6);
	}
	return 0;
}
