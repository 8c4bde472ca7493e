/* mode.h: the recovery-mode contract, the one way between ftshim's core
 * (the files of pmpi/: the seam, the watch, the detector's fan-out, MPI_Init and
 * MPI_Finalize) and a recovery mode (a folder of its own under pmpi/mode/,
 * replication the first). A mode is a const struct ftp_mode; at MPI_Init
 * the registry (pmpi/mode/registry.c) asks every mode it lists whether its
 * variables request it, and at most one is active for the job. The core
 * calls the active mode only through the inline ftp_mode_* functions
 * below, each of which does nothing (or answers as a job without a mode
 * would) when no mode is active or the mode leaves the hook NULL.
 *
 * What a mode may hook, in the order a job meets it:
 *   - plan: at MPI_Init, which processes serve which program rank (a
 *     replica, a spare that waits inside MPI_Init), before any MPI call;
 *   - start: at the end of MPI_Init, collectively, the mode's own set-up
 *     (its private communicators, MPI_COMM_WORLD as the program sees it,
 *     where a copy's output goes);
 *   - admit: once the whole job is up, MPI_COMM_WORLD as the program
 *     sees it, and a process the mode keeps from the program (a spare)
 *     waits, until it is to run the program or the program has ended;
 *   - ranks: the program rank a job rank serves, and whether a job rank's
 *     death is covered (another process carries its program rank on);
 *   - communicators: derivation (what a new entry covers);
 *   - calls on a covered communicator: the kind of the covers it gives
 *     (pmpi/cover.h): its own forms of the calls it takes over (struct
 *     ftp_mode_calls, generated from pmpi/ftshim-api.tsv: one slot per
 *     wrapped call), for every other call whether its role class (the
 *     table's @mode= column) runs as on any communicator or is refused
 *     with one line, its runner of the blocking collectives, a
 *     creation's base (before the MPI makes a communicator from a
 *     covered parent) and the cover's release;
 *   - outcomes: the completion calls of a process whose outcomes the mode
 *     records or replays (which sender matched, test results), and
 *     MPI_Wtime;
 *   - failures: a failure learned (applied to the mode's views), and a
 *     call's peer that died while another process carries its rank on;
 *   - restart and checkpoints: a mode that restarts ranks in place
 *     unwinds them itself (pmpi/restart.h) and uses the core's
 *     in-memory checkpoints (pmpi/ckpt.h); no hook here;
 *   - names: how ftshim-inject and FTSHIM_INJECT name a copy, and what the
 *     report and the timeline say of each job rank;
 *   - finish: at MPI_Finalize, before ftshim's own end.
 *
 * Sharing: ftp_mode_active is written once at MPI_Init, before ftshim is
 * on, and only read after; a mode's hooks run on the application thread
 * unless their comment says otherwise. */
#ifndef FTSHIM_PMPI_MODE_MODE_H
#define FTSHIM_PMPI_MODE_MODE_H

#include <limits.h>
#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ftp_call;
struct ftp_comm;
struct ft_inject_copies;
struct ftp_mode_calls; /* generated: pmpi/mode_calls.h */
struct ftp_cover_kind; /* pmpi/cover.h */

/* What a row of pmpi/ftshim-api.tsv is to a recovery mode (its @mode=
 * token): every mode interprets each class, and a mode that takes a call
 * over gives its own form in struct ftp_mode_calls. */
enum ftp_mode_role {
	FTP_ROLE_NONE = 0, /* touches no other process's state (datatypes, info) */
	FTP_ROLE_QUERY,    /* local query of a communicator: the seam translates */
	FTP_ROLE_P2P,      /* point-to-point traffic, probes included */
	FTP_ROLE_COLL,     /* collective traffic */
	FTP_ROLE_CREATE,   /* communicator creation, duplication and release */
	FTP_ROLE_COMPLETE, /* completion calls: outcomes that depend on timing */
	FTP_ROLE_CLOCK,    /* MPI_Wtime and MPI_Wtick */
	FTP_ROLE_ONESIDED, /* windows and RMA */
	FTP_ROLE_IO,       /* files */
	FTP_ROLE_PROCESS,  /* start, end, spawn, connect, abort, sessions */
	FTP_ROLE_ULFM,     /* the fault-tolerance calls themselves */
	FTP_ROLE_COUNT
};

/* What the report says of one job rank under the active mode. */
struct ftp_mode_rank {
	bool serves_other; /* it runs the program of another job rank (a replica) */
	int32_t program;   /* the program rank it serves */
	int32_t other;     /* job rank of another process planned for that program rank, or -1 */
	int32_t spare;     /* its index among the spares while it is one, else -1 */
};

/* What a process does at the end of MPI_Init (the mode's admit hook). */
enum ftp_admit {
	FTP_ADMIT_RUN = 0, /* run the program: MPI_Init returns */
	FTP_ADMIT_END,	   /* the program has ended without it: leave the job, status 0 */
};

/* The completion calls of a process whose outcomes the mode decides or
 * follows (replication: a primary tells its replica, which does the
 * same). Each is the call's whole work, statuses in the program's ranks. */
struct ftp_mode_completion {
	int (*wait)(MPI_Request *request, MPI_Status *status);
	int (*test)(MPI_Request *request, int *flag, MPI_Status *status);
	int (*waitall)(int count, MPI_Request requests[], MPI_Status statuses[]);
	int (*testall)(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]);
	int (*waitany)(int count, MPI_Request requests[], int *index, MPI_Status *status);
	int (*testany)(int count, MPI_Request requests[], int *index, int *flag,
		       MPI_Status *status);
	int (*waitsome)(int incount, MPI_Request requests[], int *outcount, int indices[],
			MPI_Status statuses[]);
	int (*testsome)(int incount, MPI_Request requests[], int *outcount, int indices[],
			MPI_Status statuses[]);
};

struct ftp_mode {
	const char *name;	 /* as the log and the report name it */
	const char *variable;	 /* the FTSHIM_ variable that asks for it */
	const char *const *setting; /* that variable's value (in ftp.cfg) */
	const char *man_section; /* where ftshim(7) says what the mode covers */

	/* --- MPI_Init ------------------------------------------------------ */
	/* Before PMPI_Init: parse the mode's variables. 1: the mode is
	 * requested; 0: not; -EINVAL with one line in err (the same on every
	 * rank). */
	int (*parse)(char *err, size_t errlen);
	/* Once the world's size is known: 0, or -EINVAL with one line. */
	int (*check)(char *err, size_t errlen);
	/* Once the job's hosts are known, with no MPI call: who serves which
	 * program rank (the injection plan and the report read it). */
	int (*plan)(void);
	/* At the end of MPI_Init, collective over the world: 0, or an error
	 * after which the job runs without the mode. */
	int (*start)(void);
	/* How many spare contexts (pmpi/spare_view.c) the mode takes at
	 * MPI_Init for its own views, in place of FTSHIM_RECOVERY_CONTEXTS
	 * (NULL: none). Before start. */
	uint32_t (*contexts)(void);
	/* Once the whole job is up (every process through start and the
	 * agreement that ends MPI_Init), on every process: the mode gives the
	 * program its MPI_COMM_WORLD if it is not the MPI's, and a process it
	 * keeps from the program waits here, answering the control plane at
	 * no cost of CPU, and says what it does next; every other process
	 * returns FTP_ADMIT_RUN at once. */
	enum ftp_admit (*admit)(void);
	/* Whether the host mailbox may carry the control plane under this
	 * mode (pmpi/hostmail.c). */
	bool hostmail;

	/* --- ranks -------------------------------------------------------- */
	/* The rank in MPI_COMM_WORLD the program knows job rank j by. */
	int32_t (*program_rank)(int32_t j);
	/* Job rank j's death is not the program's failure: another process
	 * carries j's program rank on. Any thread. */
	bool (*covered)(int32_t j);

	/* --- failures ----------------------------------------------------- */
	/* Apply the failures learned since the last call (ftp_check, and
	 * before a covered call picks its peers); a no-op while one runs. */
	void (*failures)(void);
	/* Job rank j, a covered call's peer, is known failed: return once the
	 * mode has moved j's program rank to the process that carries it on,
	 * so that the call can look its peer up again. */
	void (*await_peer)(int32_t j);
	/* A call is about to raise code, an error of a failure or a
	 * revocation (pmpi/errors.c): the mode may repair instead (then it
	 * never returns), or return and let the error be raised. */
	void (*error)(int code);

	/* --- communicators ------------------------------------------------- */
	/* e was just made from covered parent (NULL: e is MPI_COMM_WORLD);
	 * collective over e's members: give e its map and cover. */
	void (*derive)(struct ftp_comm *e, const struct ftp_comm *parent);

	/* --- calls on a covered communicator --------------------------------- */
	/* The kind of every cover derive gives (pmpi/cover.h: the mode's
	 * forms of the calls, which others run as on any communicator, its
	 * collectives, what a creation is made from, and freeing the cover);
	 * ftp_cover_derive sets it on the cover. */
	const struct ftp_cover_kind *cover_kind;

	/* --- outcomes ------------------------------------------------------ */
	/* The mode's completion forms while this process's completion
	 * outcomes go through it, else NULL. */
	const struct ftp_mode_completion *(*completion)(void);
	/* MPI_Wtime of a process whose clock the mode decides or follows (a
	 * replica reads its primary's), else NULL. */
	double (*wtime)(void);

	/* --- names ---------------------------------------------------------- */
	/* How ftshim-inject and FTSHIM_INJECT name the processes that serve a
	 * program rank (copy=, spare:), or NULL with nothing to name. */
	const struct ft_inject_copies *(*inject_names)(struct ft_inject_copies *room);
	/* What the report says of job rank j (false: nothing). */
	bool (*report_rank)(int32_t j, struct ftp_mode_rank *out);

	/* --- MPI_Finalize ------------------------------------------------------ */
	void (*finish)(void);
};

/* The active mode, or NULL (pmpi/mode/mode.c). */
extern const struct ftp_mode *ftp_mode_active;

static inline bool ftp_mode_on(void)
{
	return __builtin_expect(ftp_mode_active != NULL, 0);
}

/* --- calls on a covered communicator (the generated wrappers) ---------- */

/* Why a large-count call whose base call has a form of the mode's is
 * refused (ftp_mode_refuse_because, pmpi/errors.h): a count that does
 * not fit the base's int, or counts the wrapper does not convert (arrays
 * of another length than the communicator's, a count returned). */
#define FTP_MODE_COUNT_TOO_BIG " when a count or displacement does not fit in an int"
#define FTP_MODE_COUNT_NOT_CONVERTED " in its large-count form (its counts are not converted)"

/* A large-count call goes through its base call's form while every
 * count and displacement fits the base call's int. */
static inline bool ftp_mode_count_fits(MPI_Count v)
{
	return v >= INT_MIN && v <= INT_MAX;
}

/* in[0..n) into out, each as an int: false if one does not fit. */
static inline bool ftp_mode_counts_fit(int n, const MPI_Count in[], int out[])
{
	for (int i = 0; i < n; i++) {
		if (!ftp_mode_count_fits(in[i]))
			return false;
		out[i] = (int)in[i];
	}
	return true;
}

static inline bool ftp_mode_disps_fit(int n, const MPI_Aint in[], int out[])
{
	for (int i = 0; i < n; i++) {
		if (in[i] < INT_MIN || in[i] > INT_MAX)
			return false;
		out[i] = (int)in[i];
	}
	return true;
}

static inline int ftp_mode_check(char *err, size_t errlen)
{
	return ftp_mode_on() && ftp_mode_active->check ? ftp_mode_active->check(err, errlen) : 0;
}

static inline int ftp_mode_plan(void)
{
	return ftp_mode_on() && ftp_mode_active->plan ? ftp_mode_active->plan() : 0;
}

static inline int ftp_mode_start(void)
{
	return ftp_mode_on() && ftp_mode_active->start ? ftp_mode_active->start() : 0;
}

static inline uint32_t ftp_mode_contexts(void)
{
	return ftp_mode_on() && ftp_mode_active->contexts ? ftp_mode_active->contexts() : 0;
}

static inline enum ftp_admit ftp_mode_admit(void)
{
	return ftp_mode_on() && ftp_mode_active->admit ? ftp_mode_active->admit() : FTP_ADMIT_RUN;
}

static inline void ftp_mode_finish(void)
{
	if (ftp_mode_on() && ftp_mode_active->finish)
		ftp_mode_active->finish();
}

static inline bool ftp_mode_hostmail(void)
{
	return !ftp_mode_on() || ftp_mode_active->hostmail;
}

static inline int32_t ftp_mode_program_rank(int32_t j)
{
	return ftp_mode_on() && ftp_mode_active->program_rank ? ftp_mode_active->program_rank(j)
							      : j;
}

static inline bool ftp_mode_covered(int32_t j)
{
	return ftp_mode_on() && ftp_mode_active->covered && ftp_mode_active->covered(j);
}

static inline void ftp_mode_failures(void)
{
	if (ftp_mode_on() && ftp_mode_active->failures)
		ftp_mode_active->failures();
}

static inline void ftp_mode_error(int code)
{
	if (ftp_mode_on() && ftp_mode_active->error)
		ftp_mode_active->error(code);
}

static inline void ftp_mode_await_peer(int32_t j)
{
	if (ftp_mode_on() && ftp_mode_active->await_peer)
		ftp_mode_active->await_peer(j);
}

/* The active mode's completion forms while this process's outcomes go
 * through it, else NULL (without a mode: one load and a test). */
static inline const struct ftp_mode_completion *ftp_mode_completion(void)
{
	return ftp_mode_on() && ftp_mode_active->completion ? ftp_mode_active->completion() : NULL;
}

static inline const struct ft_inject_copies *ftp_mode_inject_names(struct ft_inject_copies *room)
{
	return ftp_mode_on() && ftp_mode_active->inject_names ? ftp_mode_active->inject_names(room)
							      : NULL;
}

static inline bool ftp_mode_report_rank(int32_t j, struct ftp_mode_rank *out)
{
	return ftp_mode_on() && ftp_mode_active->report_rank && ftp_mode_active->report_rank(j, out);
}

/* Job rank j was launched as a spare (until a repair gives it a rank, it
 * waits and uses no CPU; the report names it as a spare either way). */
static inline bool ftp_mode_spare(int32_t j)
{
	struct ftp_mode_rank m;

	return ftp_mode_report_rank(j, &m) && m.spare >= 0;
}

#endif
