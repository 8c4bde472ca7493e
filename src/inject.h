/* inject.h: failure injection from the environment (FTSHIM_INJECT): the
 * parser of its one-line language and the plan it yields for one rank.
 * Pure: no MPI, no clock, no I/O; pmpi/inject.c carries the plan out.
 *
 * The language, one or more clauses separated by ';', each clause a few
 * fields separated by spaces:
 *
 *   rank=RANKS   which ranks: 3 | 1,5,7 | 2-4 | 1,4-6 | random:K | host:N |
 *                spawned:LIST | spare:LIST (random:K: K distinct ranks
 *                drawn with the seed; host:N: every rank on the host of
 *                rank N; spawned:0,2: the first and third processes the
 *                job spawns, whatever their job ranks will be; spare:1:
 *                the second spare process, FTSHIM_SPARES)
 *   at=WHEN      when: call:MPI_Allreduce:10 (right after the 10th call of
 *                that function returns) | time:2.5s (after every rank's
 *                MPI_Init) |
 *                point:NAME:N (when the program calls
 *                ftshim_inject_point("NAME", N)) | exp:MEAN |
 *                weibull:SCALE:SHAPE (random times: the chosen ranks die
 *                one after another, the gaps drawn from that distribution)
 *   how=HOW      sigkill (default) | sigsegv | sigterm | sigabrt |
 *                signal:NAME|NUMBER | exit | exit:CODE (without
 *                MPI_Finalize or atexit handlers) | abort | pause:DURATION
 *                (SIGSTOP, then SIGCONT after DURATION)
 *   seed=N       for random ranks and random times (default 1): the same
 *                seed picks the same ranks and times on every run
 *   copy=COPY    in a replicated job (FTSHIM_REPLICAS), where rank= names
 *                the program's ranks: primary (default) | replica | both
 *                (which copies of each die, at the same moment)
 *
 * rank= and at= are required. Every rank parses the same text and draws
 * the same random choices, so the ranks agree without a message. */
#ifndef FTSHIM_INJECT_H
#define FTSHIM_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FT_INJECT_NAME_MAX 64

enum ft_inject_ranks { FT_RANKS_LIST, FT_RANKS_RANDOM, FT_RANKS_HOST };
enum ft_inject_when { FT_AT_CALL, FT_AT_TIME, FT_AT_POINT, FT_AT_EXP, FT_AT_WEIBULL };
enum ft_inject_how { FT_DO_SIGNAL, FT_DO_EXIT, FT_DO_ABORT, FT_DO_PAUSE };
enum ft_inject_copy { FT_COPY_PRIMARY = 0, FT_COPY_REPLICA, FT_COPY_BOTH };

struct ft_inject_clause {
	char text[256];             /* the clause as written, trimmed */
	enum ft_inject_ranks ranks_kind;
	uint32_t *ranks, nranks;    /* FT_RANKS_LIST: the ranks, in order */
	bool spawned;               /* FT_RANKS_LIST: ranks counts processes spawned
				       (0: the first), not job ranks */
	bool spare;                 /* FT_RANKS_LIST: ranks counts the spares (0: the
				       first), not job ranks */
	uint32_t count;             /* FT_RANKS_RANDOM: how many */
	uint32_t host_of;           /* FT_RANKS_HOST: a rank on that host */
	enum ft_inject_when when;
	char name[FT_INJECT_NAME_MAX]; /* FT_AT_CALL: the function; FT_AT_POINT: the point */
	int64_t nth;                /* FT_AT_CALL: the call number (>= 1); FT_AT_POINT: the value */
	uint64_t at_ns;             /* FT_AT_TIME */
	uint64_t scale_ns;          /* FT_AT_EXP: the mean; FT_AT_WEIBULL: the scale */
	double shape;               /* FT_AT_WEIBULL */
	enum ft_inject_how how;
	int sig;                    /* FT_DO_SIGNAL */
	int exit_code;              /* FT_DO_EXIT */
	uint64_t pause_ns;          /* FT_DO_PAUSE */
	uint64_t seed;
	enum ft_inject_copy copy;   /* FT_COPY_PRIMARY unless copy= says */
	bool copy_given;            /* copy= was written */
};

/* A job under a recovery mode that launches more processes than the
 * program sees (FTSHIM_REPLICAS, FTSHIM_SPARES, the mode's variable):
 * rank=, random: and the host: rank name the program's n ranks (job
 * ranks 0..n-1, the primaries and the ranks with one copy); the replica
 * of rank l is job rank replica_of[l], or -1 (replica_of NULL: the job
 * has no replicas); spare:J is job rank n + J, J < nspares. NULL where a
 * function takes one: no such mode. */
struct ft_inject_copies {
	uint32_t n;
	const int32_t *replica_of;
	uint32_t nspares;
	const char *variable;
};

struct ft_inject_spec {
	struct ft_inject_clause *clauses;
	uint32_t n;
};

/* What one rank must do: one entry per clause that picks it. */
struct ft_inject_action {
	const struct ft_inject_clause *clause;
	enum ft_inject_when when;   /* FT_AT_CALL, FT_AT_TIME or FT_AT_POINT: random
				       times are resolved to FT_AT_TIME */
	uint64_t at_ns;             /* FT_AT_TIME: after every rank's MPI_Init */
};

/* Parse text. known_calls lists the function names at=call: accepts (the
 * functions ftshim wraps). Returns 0, or -EINVAL with one line in err
 * naming the clause, the field and what is accepted. */
int ft_inject_parse(const char *text, const char *const *known_calls, size_t nknown,
		    struct ft_inject_spec *spec, char *err, size_t errlen);
void ft_inject_free(struct ft_inject_spec *spec);

/* Check the ranks named in spec against the job's size: nprocs ranks,
 * and nspawnable processes it may spawn (spawned:LIST), and its copies
 * (copy=, see struct ft_inject_copies). 0, or -EINVAL with one line in
 * err. */
int ft_inject_check_ranks(const struct ft_inject_spec *spec, uint32_t nprocs, uint32_t nspawnable,
			  const struct ft_inject_copies *copies, char *err, size_t errlen);

/* The victims of clause c in a job of nprocs ranks (host_ids: one per
 * rank, equal for ranks on one host), in the order they die: writes up to
 * max ranks to out, returns how many. The same on every rank. In a
 * replicated job (copies), host:N takes the hosts of the copies of rank N
 * that copy= names. */
uint32_t ft_inject_victims(const struct ft_inject_clause *c, uint32_t nprocs,
			   const uint64_t *host_ids, const struct ft_inject_copies *copies, uint32_t *out,
			   uint32_t max);

/* Whether job rank self dies as victim v of clause c (ft_inject_victims
 * over the program's ranks in a replicated job: then the copies c names). */
bool ft_inject_victim_is(const struct ft_inject_clause *c, const struct ft_inject_copies *copies,
			 uint32_t v, uint32_t self);

/* The ranks ft_inject_victims draws from for clause c: the program's in a
 * replicated job (but for host:, which takes every process there). */
uint32_t ft_inject_pool(const struct ft_inject_clause *c, uint32_t nprocs,
			const struct ft_inject_copies *copies);

/* The actions for job rank self: up to max written to out, returns how
 * many. */
uint32_t ft_inject_plan(const struct ft_inject_spec *spec, uint32_t nprocs, uint32_t self,
			const uint64_t *host_ids, const struct ft_inject_copies *copies,
			struct ft_inject_action *out, uint32_t max);

/* A signal's number from "SIGKILL", "KILL", "kill" or "9"; -1 if unknown. */
int ft_inject_signal_number(const char *name);
/* "SIGKILL" for 9, or NULL. */
const char *ft_inject_signal_name(int sig);

/* How the action kills, in the form how= takes: "SIGKILL", "exit:3", "pause:2s", ... */
void ft_inject_describe_how(const struct ft_inject_clause *c, char *out, size_t outlen);

#endif
