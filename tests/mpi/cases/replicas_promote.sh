# Transparent partial replication survives the death of primaries: an
# unmodified program (tests/mpi/progs/replicas.c) run on N + R processes
# under FTSHIM_REPLICAS loses the primaries of replicated ranks (one,
# several at once, one after another; at a fixed call, in a collective,
# in MPI_Finalize, or at a random time), and prints exactly what it
# prints on N processes with no replica and no failure (wherever that
# does not depend on timing): their replicas carry on, and no error
# reaches the program. Losing both copies of a rank is the program's
# failure, with the ULFM error, as without replicas.
prog=$(build replicas)
run="$MPITEST_WORKDIR/run"
ROUNDS=8
PACE=0

# reference_lines WORKLOAD NP: the lines of a run of NP ranks without
# replicas or failures, sorted (under ftshim: oversubscribed MPICH ranks
# spin without it).
reference_lines() {
	run_job shim "$2" "FTSHIM_RUNDIR=$run" -- "$prog" "$1" "$ROUNDS"
	expect_rc 0
	sort "$OUT" >"$MPITEST_WORKDIR/ref-$1-$2-$ROUNDS"
}

# primary_dies WORKLOAD NP REPLICAS VICTIMS AT [TIMING]: run on NP
# processes with FTSHIM_REPLICAS=REPLICAS and kill the primaries of the
# program's ranks VICTIMS (comma-separated) at AT (FTSHIM_INJECT's at=,
# which may go on with more clauses). The answer must be the reference
# run's, and each victim that died must be carried on by its replica,
# which says so.
primary_dies() {
	primary_run "$@"
	primary_check "$@"
}

primary_run() {
	local what=$1 np=$2 replicas=$3 victims=$4 at=$5
	rm -rf "$run"
	run_job shim "$np" "FTSHIM_RUNDIR=$run" "FTSHIM_REPLICAS=$replicas" \
		"FTSHIM_INJECT=rank=$victims copy=primary at=$at" -- "$prog" "$what" "$ROUNDS" "$PACE"
}

# The verdict on the run primary_run made, with the same arguments.
primary_check() {
	local what=$1 np=$2 replicas=$3 victims=$4 at=$5 timing=${6:-'^$'}
	local n
	n=$(sed -n 's/.* info: replication: \([0-9]*\) logical ranks, .*/\1/p' "$ERR")
	[ -n "$n" ] || { tail -n 20 "$ERR" >&2; fail "$what: no replication line"; }
	[ -f "$MPITEST_WORKDIR/ref-$what-$n-$ROUNDS" ] || {
		local out=$OUT err=$ERR rc=$RC
		reference_lines "$what" "$n"
		OUT=$out ERR=$err RC=$rc
	}
	local killed=0 v p
	for v in ${victims//,/ }; do
		grep -q "ftshim\[$v\] .* info: injecting SIGKILL now" "$ERR" || continue
		killed=$((killed + 1))
		p=$(sed -n "s/^\([0-9]*\) .* replica-of=$v\$/\1/p" "$run"/*/ranks | head -n 1)
		[ -n "$p" ] || fail "$what: the run directory names no replica of rank $v"
		grep -qE "ftshim\[$p\] .* info: rank $v: primary \(process $v\) lost, replica \(process $p\) promoted, [0-9.]+ ms" "$ERR" ||
			{ tail -n 30 "$ERR" >&2; fail "$what: rank $v's replica (process $p) did not say it carries on"; }
		# The job report and its summary say so too.
		grep -qE "\"rank\":$p,\"kind\":\"promotion\",\"program_rank\":$v,\"primary\":$v," "$run"/*/report.json ||
			fail "$what: the job report has no promotion event for rank $v"
		grep -qE "^ftshim: .*rank $v SIGKILL at [0-9.]+ s \(replica process $p promoted\)" "$ERR" ||
			fail "$what: the summary line does not say that rank $v's replica was promoted"
	done
	[ "$killed" -gt 0 ] || { tail -n 30 "$ERR" >&2; fail "$what: $at killed no primary (the job is too short?)"; }
	expect_killed_rc
	# The program's lines only: after a death Hydra may print its
	# "TERMINATED WITH THE EXIT STRING: Hangup" banner on stdout.
	sort "$OUT" | grep -E '^[a-z]+ rank [0-9]+: ' | grep -Ev "$timing" >got.txt || true
	grep -Ev "$timing" "$MPITEST_WORKDIR/ref-$what-$n-$ROUNDS" >want.txt || true
	diff -u want.txt got.txt >&2 || { tail -n 30 "$ERR" >&2; fail "$what, primaries $victims killed at $at: not the answer of $n ranks without replicas or failures"; }
	# No warning but the repair of an on-host queue that a killed sender
	# froze (MPICH, issue 39's item 2), which a kill may cause anywhere.
	if grep -E 'ftshim\[[0-9]+\] \+[0-9.]+ (error|warn): ' "$ERR" | grep -v 'ftshim filled the slot'; then
		fail "$what: stderr has an error or a warning"
	fi
	expect_err_no_match 'MPI_ERR|PROC_FAILED'
	note "$what, FTSHIM_REPLICAS=$replicas on $np, the primary of rank(s) $victims killed at $at: $killed died, same answer"
}

# At fixed points: in the halo exchange, in each kind of collective (the
# team is rebuilt; a member that completed one the others lack runs it
# again), in the manager/worker traffic (the manager's own decisions on
# MPI_ANY_SOURCE), and in MPI_Finalize.
primary_dies stencil 6 2 1 call:MPI_Waitall:300
primary_dies colls 6 2 0 call:MPI_Allgather:30
primary_dies colls 6 2 1 call:MPI_Bcast:50
primary_dies colls 6 2 1 call:MPI_Alltoallv:20
# MPI_Alltoallw of mixed types (its odd call of a round in place).
primary_dies colls 6 2 1 call:MPI_Alltoallw:21
primary_dies colls 6 2 0 call:MPI_Alltoallw:30
# Right after its MPI_Comm_create returned, while the others may still be
# in theirs; and on the communicator it made (its 260th MPI_Reduce_scatter:
# 160 on MPI_COMM_WORLD and 80 on the split come first).
primary_dies colls 6 2 0 call:MPI_Comm_create:1
# Right after its MPI_Comm_create_group returned (the even ranks' only),
# and in a collective on the communicator it made (its 600th
# MPI_Allreduce: two per round, 280 rounds on the communicators before).
primary_dies colls 6 2 0 call:MPI_Comm_create_group:1
primary_dies colls 6 2 0 call:MPI_Allreduce:600
primary_dies colls 6 2 0 call:MPI_Reduce_scatter:260
primary_dies mw 6 2 0 call:MPI_Recv:30 '^mw rank [1-9]|polls'
# On a Cartesian communicator (its topology is ftshim's, kept for the
# promoted replica).
primary_dies cart 6 2 1 call:MPI_Sendrecv:25
# In MPI-4's large-count send-receive (MPICH only: Open MPI 4.1 has none).
[ "$MPITEST_FLAVOUR" != mpich ] || primary_dies bigcount 6 2 1 call:MPI_Sendrecv_c:30
primary_dies mw 6 2 1 call:MPI_Send:40 '^mw rank [1-9]|polls'
# In MPI_Finalize: the primary has finished and waits there for its
# replica, which lags (paused); it dies there, and the replica carries on.
primary_dies mw 6 2 0 "time:400ms; rank=0 copy=replica at=call:MPI_Recv:20 how=pause:700ms" '^mw rank [1-9]|polls'
# Short of MPI_Finalize, with its replica waiting there: the primary is
# paused after its third MPI_Comm_free of the cart workload and killed
# after its fourth, before it prints; its replica, which has printed
# that line to its file meanwhile, writes it to the terminal as it
# carries on (the copies meet at MPI_Finalize).
primary_dies cart 6 2 0 "call:MPI_Comm_free:4; rank=0 copy=primary at=call:MPI_Comm_free:3 how=pause:700ms"
# Several at once, and one while another's replica is taking over; the
# colls workload then splits and duplicates MPI_COMM_WORLD, made with a
# replica standing alone for its rank.
primary_dies stencil 6 2 0,1 call:MPI_Sendrecv:50
primary_dies colls 8 100% 0,1,2 call:MPI_Allreduce:40
# One more dies while the teams are rebuilt for two others, so that the
# rebuild's agreement or its collective loses a member, a replica's
# receive of a forwarded result is under way, or the others have moved
# on: rank 2's primary at a time drawn 2 to 8 ms after ranks 0 and 1's
# died (their time on the job clock read from a run that kills only
# them). Seen before: another rank's wrong answer, a hang, a rebuild
# that lacked a logged collective, and every process left (exit 76)
# when rank 2 died inside the MPI_Comm_create_group that made a team
# (teams are rebuilt as views on the stream now). Runs differ in speed
# (MPICH's 8 spinning processes on 2 cores reached that point after 11
# ms in one run, 106 ms in another): the time is the least of two
# runs, and each iteration pauses 0.5 ms, so that a kill drawn late
# still lands while the job runs (not at its end, where the reporting
# rank's death lost the job report). Rank 2 dying inside the program's
# own MPI_Comm_split is the window docs/status.md names (exit 76):
# counted, not failed.
seed=${REPLICAS_PROMOTE_SEED:-$RANDOM}
note "random kill times drawn with seed $seed (REPLICAS_PROMOTE_SEED=$seed replays them)"
RANDOM=$seed
PACE=500
t0=
for i in 1 2; do
	primary_dies colls 8 100% 0,1 call:MPI_Allreduce:40
	t=$(sed -n 's/^ftshim\[[01]\] +\([0-9]*\)\.\([0-9]*\) info: injecting SIGKILL now.*/\1\2/p' "$ERR" |
		sed 's/^0*//' | sort -n | tail -n 1)
	[ -n "$t" ] || fail "no time of injection for ranks 0 and 1 in the run that killed them"
	[ -n "$t0" ] && [ "$t0" -le "$t" ] || t0=$t
done
in_creation=0
for i in $(seq 1 24); do
	at="call:MPI_Allreduce:40; rank=2 copy=primary at=time:$((t0 + 2000 + RANDOM % 6000))us"
	primary_run colls 8 100% 0,1 "$at"
	if grep -qE "stuck in the MPI library's MPI_Comm_(split|dup|create) for" "$ERR"; then
		in_creation=$((in_creation + 1))
		continue
	fi
	primary_check colls 8 100% 0,1 "$at"
done
note "rank 2 killed 2 to 8 ms after ranks 0 and 1 (at $t0 us): $((24 - in_creation)) of 24 runs gave the answer, $in_creation killed it inside the program's own communicator creation"
PACE=0
primary_dies colls 6 2 0 "call:MPI_Bcast:30; rank=1 copy=primary at=call:MPI_Alltoall:60"
# Two at once in an all-to-all collective: the team rebuilt for the first
# runs a collective again for the members that lack it, and the second
# dies meanwhile; that run is given up while the MPI may still write its
# buffers (a glibc heap corruption when they were freed under it).
for at in call:MPI_Alltoallv:9 call:MPI_Alltoall:9 call:MPI_Allreduce:21 call:MPI_Reduce_scatter:9; do
	primary_dies colls 6 2 0,1 $at
done
# A primary, then a replica whose partner was promoted: that rank's
# replica carries on alone; the other's primary does.
primary_dies stencil 6 2 0 "call:MPI_Sendrecv:30; rank=1 copy=replica at=call:MPI_Sendrecv:90"
# At random times, in jobs paced to last a few seconds.
random_ms() {
	echo "time:$((600 + RANDOM % 800))ms"
}
ROUNDS=50
PACE=200
primary_dies stencil 6 2 1 "$(random_ms)"
PACE=1000
primary_dies mw 6 2 1 "$(random_ms)" '^mw rank [1-9]|polls'
PACE=1500
primary_dies colls 6 2 1 "$(random_ms)"

# Nonblocking collectives (the nbc workload): killed with several under
# way (MPI_Iscan: the MPI's own completed some of them out of order on
# the old team, and every member runs the rest on the rebuilt one), in
# MPI_Testall polling them, in an MPI_Ibarrier, two at once, and at a
# random time. Before, every one was refused. (Not the nbx workload: a
# synchronous send to a primary that dies completes before the promoted
# replica matched the message, which NBX's barrier relies on; see
# docs/status.md.)
ROUNDS=8 PACE=0
primary_dies nbc 6 2 1 call:MPI_Iscan:5
primary_dies nbc 6 2 1 call:MPI_Testall:50
primary_dies nbc 6 2 0 call:MPI_Ibarrier:5
primary_dies nbc 8 100% 0,1 call:MPI_Iallreduce:15
primary_dies nbc 6 2 0 call:MPI_Ialltoallw:4
ROUNDS=30 PACE=2000
primary_dies nbc 6 2 1 "$(random_ms)"

# Persistent requests (the persist workload, with MPI-4's persistent
# collectives on MPICH): killed in MPI_Startall, in MPI_Testall polling,
# two in MPI_Waitall, and at a random time. Before, MPI_Send_init on a
# replicated communicator was refused.
ROUNDS=4 PACE=0
primary_dies persist 6 2 1 call:MPI_Startall:15
primary_dies persist 6 2 0 call:MPI_Testall:20
primary_dies persist 8 100% 0,1 call:MPI_Waitall:10
ROUNDS=30 PACE=2000
primary_dies persist 6 2 1 "$(random_ms)"

# Graph topologies: killed right after its MPI_Dist_graph_create_adjacent
# and during the exchanges along a graph's edges.
ROUNDS=2 PACE=0
primary_dies graph 6 2 1 call:MPI_Dist_graph_create_adjacent:1
primary_dies graph 6 2 0 call:MPI_Sendrecv:30

# Matched probes (the mprobe workload): killed right after an
# MPI_Mprobe, an MPI_Improbe that found its message, an MPI_Imrecv, and
# at a random time.
ROUNDS=4 PACE=0
primary_dies mprobe 6 2 1 call:MPI_Mprobe:30
primary_dies mprobe 6 2 0 call:MPI_Imrecv:40
primary_dies mprobe 8 100% 0,1 call:MPI_Mrecv:25
ROUNDS=30 PACE=2000
primary_dies mprobe 6 2 1 "$(random_ms)"

# Results and messages larger than the MPIs' eager limits (the large
# workload, 48 KiB blocks; Open MPI reads them from the sender's memory,
# which fails once it is dead), a primary killed at a random time.
ROUNDS=80 PACE=0
primary_dies large 4 100% 1 "$(random_ms)"

# Both copies of a rank: the program's failure, as without replicas
# (the error handler is fatal: the job ends with the ULFM error, naming
# the program's rank).
ROUNDS=8 PACE=0
rm -rf "$run"
run_job shim 6 "FTSHIM_RUNDIR=$run" "FTSHIM_REPLICAS=2" \
	"FTSHIM_INJECT=rank=1 copy=both at=call:MPI_Waitall:300" -- "$prog" stencil "$ROUNDS"
expect_err_match 'MPI_ERR_PROC_FAILED: a process involved in the operation has failed; (its peer, rank 1, failed|failed rank: 1)'
expect_err_no_match 'rank [45], failed|failed ranks?: [0-9 ]*[45]'

expect_no_leftovers replicas
