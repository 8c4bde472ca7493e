/* config_vars.h: THE table of ftshim's environment variables. Everything
 * about a variable is said once, here: its name, its type, its default,
 * its range, and what it does. The parser (config.c), the README's table
 * and man 7 ftshim are all made from it (tools/config-doc prints the
 * tables; a test checks that the README matches).
 *
 * X(GROUP, NAME, field, TYPE, default, min, max, keywords, help)
 *   GROUP    what the variable is for: the heading it is listed under
 *            (the variables of one group stand together)
 *   NAME     the variable without its FTSHIM_ prefix
 *   field    the member of struct ft_config that holds the parsed value
 *   TYPE     BOOL, UINT, DURATION (stored in ns), ENUM (index of the
 *            keyword), STRING
 *   min,max  range for UINT and DURATION (DURATION in ns)
 *   keywords "a|b|c" for ENUM, else NULL
 */
#ifndef FTSHIM_CONFIG_VARS_H
#define FTSHIM_CONFIG_VARS_H

#include "src/common.h"

#define FT_CONFIG_VARS(X) \
	X("General", DISABLE, disable, BOOL, "0", 0, 1, NULL, \
	  "1 makes ftshim a pure pass-through: no other variable is read, nothing is " \
	  "detected, checked or logged") \
	X("General", LOG, log_level, ENUM, "info", 0, 0, "error|warn|info|debug|trace", \
	  "How much ftshim logs; each line starts with ftshim[RANK] and the seconds since the job was up (every rank through MPI_Init)") \
	X("General", LOG_FILE, log_file, STRING, "", 0, 0, NULL, \
	  "Log to this file (appending) instead of stderr; %r becomes the job rank, %h the " \
	  "host name, %p the pid, %% a percent sign") \
	X("General", RUNDIR, rundir, STRING, "", 0, 0, NULL, \
	  "Where each job records its ranks (host, pid) and the injections made, for " \
	  "ftshim-inject and the reports; unset: $XDG_RUNTIME_DIR/ftshim, else /tmp/ftshim-UID") \
	X("General", STATUS_FILE, status_file, STRING, "", 0, 0, NULL, \
	  "A file that tells scripts the job's outcome: its first line is completed (the program " \
	  "finished on every rank that did not fail; the summary follows) or ended (a rank ended the " \
	  "job: MPI_Abort, a fatal error; its status follows); no file: the job never got that far. " \
	  "Written on the host of the lowest surviving rank; unset: none") \
	X("Failure detection", HB_PERIOD, hb_period, DURATION, "100ms", FT_NSEC_PER_MSEC, 10 * FT_NSEC_PER_SEC, NULL, \
	  "How often each rank sends a heartbeat to its successor on the ring") \
	X("Failure detection", HB_TIMEOUT, hb_timeout, DURATION, "1s", 10 * FT_NSEC_PER_MSEC, 600 * FT_NSEC_PER_SEC, NULL, \
	  "Silence after which a rank's observer declares it failed (hangs, stopped processes, " \
	  "lost hosts; crashes are seen at once); at least twice FTSHIM_HB_PERIOD") \
	X("Failure detection", HB_GRACE, hb_grace, DURATION, "2s", 0, 600 * FT_NSEC_PER_SEC, NULL, \
	  "Extra silence allowed before the first heartbeat after MPI_Init") \
	X("Failure detection", RING_SHUFFLE, ring_shuffle, BOOL, "1", 0, 1, NULL, \
	  "1 places ranks on the heartbeat ring in a job-wide random order, so that the ranks of " \
	  "one host do not watch each other; 0 uses rank order") \
	X("Failure detection", BCAST, bcast, ENUM, "chord", 0, 0, "chord|bmg|hypercube", \
	  "How news of a failure (over the ring) or of a revocation (over the communicator's " \
	  "live members) is flooded: to distances +2^k (chord), +-2^k (bmg), or index XOR 2^k " \
	  "(hypercube)") \
	X("Failure detection", PARTITION, partition, ENUM, "majority", 0, 0, "majority|off", \
	  "majority: a rank silent for FTSHIM_HB_TIMEOUT is declared failed only if its observer " \
	  "still reaches a strict majority of the job's live ranks (or half of them, holding the " \
	  "lowest rank); a rank that cannot exits with status 74, so a network partition never " \
	  "leaves two jobs; off: declare at once, and every side of a partition goes on alone") \
	X("Failure detection", READMIT, readmit, BOOL, "0", 0, 1, NULL, \
	  "1 re-admits, once, a rank declared failed by heartbeat timeout that is heard again " \
	  "(OCFTL's false positives): it is alive again for point-to-point and ftshim_rank_state, " \
	  "but every communicator that had it stays failed, so this breaks ULFM's fail-stop " \
	  "consistency; 0: it is told it failed and exits with status 75") \
	X("Failure detection", IFACE, iface, STRING, "", 0, 0, NULL, \
	  "The network interface (eth0) or IPv4 address the control plane binds to; unset: all " \
	  "interfaces, with the first non-loopback address published to other hosts") \
	X("Processes", SUPERVISE, supervise, ENUM, "auto", 0, 0, "auto|on|off", \
	  "Run each rank under a small parent process that records a death by signal for the report " \
	  "and, under Hydra, turns it into an exit, so that Hydra does not kill the whole job " \
	  "(elsewhere it dies of the same signal), and under srun --mpi=pmix keeps a rank's death " \
	  "from ending the job step; auto: under Hydra, Open MPI and srun --mpi=pmix") \
	X("Processes", SPAWN_MAX, spawn_max, UINT, "1024", 0, 1048576, NULL, \
	  "How many processes the job may spawn in all (MPI_Comm_spawn) and still have ftshim " \
	  "detect and recover them; each takes the next job rank after the job's first ranks. " \
	  "Beyond it, spawned processes run outside ftshim's job") \
	X("Recovery", RECOVERY_CONTEXTS, recovery_contexts, UINT, "2", 0, 16, NULL, \
	  "How many communicators MPIX_Comm_shrink may make without entering the MPI's own " \
	  "communicator creation, where a member's death would end the survivors (status 76): " \
	  "each takes one of this many duplicates of MPI_COMM_WORLD made at MPI_Init. Beyond " \
	  "them, under a recovery mode, and with 0, shrink uses MPI_Comm_create_group") \
	X("Injecting failures", INJECT, inject, STRING, "", 0, 0, NULL, \
	  "Failures to inject, e.g. \"rank=3 at=call:MPI_Allreduce:10; rank=random:2 " \
	  "at=time:5s how=exit\"; the language is in 'man 7 ftshim' (INJECTING FAILURES)") \
	X("Replication", REPLICAS, replicas, STRING, "", 0, 0, NULL, \
	  "Run some logical ranks twice, as a primary and a replica (transparent partial " \
	  "replication): a count (4) or a percentage of the logical ranks (50%); the job is " \
	  "launched with N + R processes and the program sees N, and the death of either copy of a " \
	  "rank goes unnoticed. Unset or 0: no replicas") \
	X("Replication", REPLICA_LOG_MIB, replica_log_mib, UINT, "256", 1, 1048576, NULL, \
	  "Under FTSHIM_REPLICAS, the MiB of its latest sends each copy keeps, to hand the others " \
	  "what its dead copy would have sent them, and again of the inputs of its latest " \
	  "collectives, to run one again for a rebuilt team; a death that needs an older one ends " \
	  "the job, saying so") \
	X("Spare processes", SPARES, spares, STRING, "", 0, 0, NULL, \
	  "Launch spare processes beside the program's: a count (2) or a percentage of the " \
	  "program's ranks (10%); the job is launched with N + K processes, the program sees N, and " \
	  "the last K wait inside MPI_Init without using the CPU. When a rank fails, a spare takes " \
	  "its place and every rank runs main again inside the same job (restart in place: the " \
	  "program resumes from its own restart files); with no spare left a failure is the " \
	  "program's. Unset or 0: no spares") \
	X("Spare processes", CKPT_EVERY, ckpt_every, UINT, "1", 1, 1000000, NULL, \
	  "Under FTSHIM_SPARES, take every Nth ftshim_checkpoint call of the program's and return " \
	  "at once from the others (the same calls on every rank, so no rank needs to ask the " \
	  "others); 1: every call") \
	X("Spare processes", CKPT_DIR, ckpt_dir, STRING, "", 0, 0, NULL, \
	  "Under FTSHIM_SPARES, also write checkpoints to files in this directory (made if missing; " \
	  "best on a filesystem every host sees), in the background, each rank its latest two, " \
	  "removed when the program ends: a rank lost together with the buddy that kept its copy " \
	  "is restored from its file (a job that does not reach MPI_Finalize leaves its files). Unset: " \
	  "memory only") \
	X("Spare processes", CKPT_DISK_EVERY, ckpt_disk_every, UINT, "1", 1, 1000000, NULL, \
	  "Under FTSHIM_CKPT_DIR, write every Nth checkpoint taken to disk (a checkpoint that goes " \
	  "to disk first waits for the previous file to be written); 1: every one")

#endif
