/* report.h: the job report. At the end of a job the lowest surviving rank
 * merges what every rank recorded (events.RANK.jsonl, see events.h) and
 * every injection (the "injections" file) found in the job's run
 * directory with what it knows itself (who failed, how, when), writes
 * report.json there, and makes the one summary line it prints when a
 * rank failed:
 *
 *   ftshim: 2 failures (rank 3 SIGKILL at 1.20 s, rank 9 heartbeat timeout at 4.51 s); detected in 2 ms / 310 ms; 14 of 16 ranks finished
 *
 * Under FTSHIM_REPLICAS a replica is named by its rank ("rank 1's
 * replica (process 5) SIGKILL at 0.71 s") and a primary's failure says
 * when its replica carried on ("rank 1 SIGKILL at 0.71 s (replica
 * process 5 promoted)").
 *
 * A rank's failure time and how are its injection's when one is recorded,
 * else its supervisor's record of its death by signal (file "deaths",
 * Hydra only), else its detector's estimate (a crash: when it was seen; a heartbeat timeout:
 * when the rank was last heard). "Detected in" is the time from the
 * failure until every rank whose events are here knew it. Ranks on other
 * hosts keep their events in their own host's run directory; at the end
 * of the job one rank of each host sends them (pmpi/report_merge.c),
 * and they are kept below the job directory (ft_report_store). A rank
 * whose events are nowhere is listed in missing_ranks; a host whose files
 * did not come in missing_hosts, with why; a host whose ranks all failed
 * in lost_hosts (and as one item of the summary: "host h2 lost (ranks 3,
 * 4, 5 SIGKILL at 1.20 s)"). Pure file work: no MPI. */
#ifndef FTSHIM_REPORT_H
#define FTSHIM_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ft_report_rank {
	const char *host;
	bool failed;
	bool readmitted;            /* failed, then taken back (FTSHIM_READMIT) */
	const char *detection;      /* failed: how it was learned ("crash", ...) */
	uint32_t detector;          /* failed: the rank that saw it */
	uint64_t failed_unix_ns;    /* failed: the detector's estimate, 0 if unknown */
	uint64_t learned_unix_ns;   /* failed: when the reporting rank learned it */
	/* Under FTSHIM_REPLICAS: a replica, and the program rank it copies;
	 * whether its rank's other copy (job rank copy) outlived it. */
	bool replica;
	uint32_t replica_of;
	bool copy_lived;
	uint32_t copy;
	/* Under FTSHIM_SPARES: a spare process, its index among the spares. */
	bool spare;
	uint32_t spare_index;
};

/* A host whose ranks' files did not reach the reporting rank, and why. */
struct ft_report_host {
	const char *name;
	const char *why;
};

struct ft_report_input {
	const char *jobdir;         /* the job's run directory */
	const char *job_id;
	const char *program;
	uint32_t nprocs;
	uint32_t self;              /* the reporting rank */
	uint64_t origin_unix_ns;    /* the job's start */
	uint64_t end_unix_ns;       /* now */
	const struct ft_report_rank *ranks; /* nprocs entries */
	const struct ft_report_host *missing_hosts;
	uint32_t nmissing_hosts;
};

/* Write jobdir/report.json and put the summary line (without newline) in
 * summary. 0, or a negative errno (summary is still filled from what was
 * known). */
int ft_report_write(const struct ft_report_input *in, char *summary, size_t summary_len);

/* Keep a file that host sent (its ranks' events.RANK.jsonl, its
 * injections or deaths) as jobdir/hosts/HOST/name, where
 * ft_report_write reads it. name is a plain file name. 0, or a negative
 * errno (-EINVAL for a name with a slash or a leading dot). */
int ft_report_store(const char *jobdir, const char *host, const char *name, const char *data, size_t len);

/* The events file text[0..len) of rank, cut to at most cap bytes at line
 * ends: its first lines that fit, its last line (the finalize), and a
 * "dropped" line counting what was left out (with what the record had
 * dropped itself). out has room for cap bytes (len when len <= cap).
 * Returns the length written; 0 if cap cannot hold the last line. */
size_t ft_report_cap_events(const char *text, size_t len, size_t cap, uint32_t rank, char *out);

/* Write path through a temporary file beside it and a rename, so that a
 * reader never sees half of it. 0, or a negative errno. */
int ft_write_file_atomically(const char *path, const char *text, size_t len);

/* A duration for people: "0.4 ms", "12 ms", "1.31 s". */
void ft_format_duration(double seconds, char *out, size_t len);

#endif
