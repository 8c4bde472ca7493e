# Transparent partial replication survives the death of replicas: an
# unmodified program (tests/mpi/progs/replicas.c) run on N + R processes
# under FTSHIM_REPLICAS loses one or more replicas, at a fixed call or at
# a random time, and prints exactly what it prints on N processes with
# no replica and no failure (wherever that does not depend on timing): no
# error reaches it.
# The surviving replicas still print what their primaries print, and the
# log says which logical rank goes on alone.
prog=$(build replicas)
run="$MPITEST_WORKDIR/run"
ROUNDS=8
PACE=0

# reference_lines WORKLOAD NP: the lines of a run of NP ranks without
# replicas or failures, sorted. (Under ftshim, whose answer replicas.sh
# checks against the MPI alone: oversubscribed MPICH ranks spin without
# it, and the long workloads would take minutes.)
reference_lines() {
	run_job shim "$2" "FTSHIM_RUNDIR=$run" -- "$prog" "$1" "$ROUNDS"
	expect_rc 0
	sort "$OUT" >"$MPITEST_WORKDIR/ref-$1-$2-$ROUNDS"
}

# replica_dies WORKLOAD NP REPLICAS VICTIMS AT [TIMING]: run on NP
# processes with FTSHIM_REPLICAS=REPLICAS and kill the replicas of the
# program's ranks VICTIMS (comma-separated: FTSHIM_INJECT's rank= with
# copy=replica) at AT (its at=, which may go on with more clauses); the answer
# must be the reference run's, every survivor's replica file its primary's,
# and each victim must be dropped by its primary. The workload runs
# ROUNDS rounds, each step pausing PACE microseconds (which does not
# change the answer).
replica_dies() {
	local what=$1 np=$2 replicas=$3 victims=$4 at=$5 timing=${6:-'^$'}
	rm -rf "$run"
	run_job shim "$np" "FTSHIM_RUNDIR=$run" "FTSHIM_REPLICAS=$replicas" \
		"FTSHIM_INJECT=rank=$victims copy=replica at=$at" -- "$prog" "$what" "$ROUNDS" "$PACE"
	local n
	n=$(sed -n 's/.* info: replication: \([0-9]*\) logical ranks, \([0-9]*\) of them.*/\1 \2/p' "$ERR")
	[ -n "$n" ] || { tail -n 20 "$ERR" >&2; fail "$what: no replication line"; }
	local logical=${n% *} nrep=${n#* } v p
	[ -f "$MPITEST_WORKDIR/ref-$what-$logical-$ROUNDS" ] || {
		local out=$OUT err=$ERR rc=$RC
		reference_lines "$what" "$logical"
		OUT=$out ERR=$err RC=$rc
	}
	local killed=0
	for v in ${victims//,/ }; do
		# The replica's job rank, from the run directory's list of ranks.
		p=$(sed -n "s/^\([0-9]*\) .* replica-of=$v\$/\1/p" "$run"/*/ranks | head -n 1)
		[ -n "$p" ] || fail "$what: the run directory names no replica of rank $v"
		if grep -q "ftshim\[$p\] .* info: injecting SIGKILL now" "$ERR"; then
			killed=$((killed + 1))
			grep -qE "info: the replica of rank $v \(process $p\) is gone: rank $v goes on alone" "$ERR" ||
				{ tail -n 30 "$ERR" >&2; fail "$what: rank $v did not say that its replica (process $p) is gone"; }
			grep -qE "^ftshim: .*rank $v's replica \(process $p\) [^ ]+ at [0-9.]+ s" "$ERR" ||
				fail "$what: the summary line does not name rank $v's replica (process $p)"
		fi
	done
	[ "$killed" -gt 0 ] || { tail -n 30 "$ERR" >&2; fail "$what: $at killed no replica (the job is too short?)"; }
	# The launcher still reports the process that died.
	expect_killed_rc
	# The program's lines only: after a death Hydra may print its
	# "TERMINATED WITH THE EXIT STRING: Hangup" banner on stdout.
	sort "$OUT" | grep -E '^[a-z]+ rank [0-9]+: ' | grep -Ev "$timing" >got.txt || true
	grep -Ev "$timing" "$MPITEST_WORKDIR/ref-$what-$logical-$ROUNDS" >want.txt || true
	diff -u want.txt got.txt >&2 || { tail -n 30 "$ERR" >&2; fail "$what, replicas $victims killed at $at: not the answer of $logical ranks without replicas or failures"; }
	local f r dead
	for f in "$run"/*/replica-*.out; do
		r=${f##*/replica-}
		r=${r%.out}
		dead=$(sed -n "s/.* info: the replica of rank $r (process \([0-9]*\)) is gone.*/\1/p" "$ERR" | head -n 1)
		[ -n "$dead" ] && continue
		grep " rank $r: " "$OUT" >primary.txt || true
		diff -u primary.txt "$f" >&2 || fail "$what: the surviving replica of rank $r printed other lines than its primary"
	done
	expect_err_no_match 'ftshim\[[0-9]+\] \+[0-9.]+ (error|warn): '
	expect_err_no_match 'MPI_ERR|PROC_FAILED'
	note "$what, FTSHIM_REPLICAS=$replicas on $np, the replica of rank(s) $victims killed at $at: $killed died, same answer"
}

# A random time after start-up (0.3 to 0.5 s here) and well before the
# end of the paced jobs below (2 s of pauses at least), from the case's
# own seed (printed, so that a failure can be replayed).
seed=${REPLICAS_FAIL_SEED:-$RANDOM}
note "random kill times drawn with seed $seed (REPLICAS_FAIL_SEED=$seed replays them)"
RANDOM=$seed
random_ms() {
	echo "time:$((600 + RANDOM % 800))ms"
}

# At fixed points: in the middle of the halo exchange, of the
# collectives, of the manager/worker traffic.
replica_dies stencil 6 2 1 call:MPI_Waitall:300
replica_dies colls 6 2 0 call:MPI_Allgather:30
replica_dies mw 6 2 1 call:MPI_Send:40 '^mw rank [1-9]|polls'
# The replica of the manager (rank 0's, which follows its primary's
# MPI_ANY_SOURCE decisions).
replica_dies mw 6 2 0 call:MPI_Recv:30 '^mw rank [1-9]|polls'
# A replica that lags (paused), then dies once every primary is in
# MPI_Finalize: its primary waits there for it, and serves the others.
replica_dies mw 6 2 1 "call:MPI_Send:30 how=pause:600ms; rank=1 copy=replica at=call:MPI_Send:36" '^mw rank [1-9]|polls'
# A replicated worker's replica while the manager's lives too (three
# replicas). Early (its 20th receive): the tasks go to whichever worker
# asks first, and a loaded machine once gave this one fewer than 100.
replica_dies mw 7 3 2 call:MPI_Recv:20 '^mw rank [1-9]|polls'
# Both replicas at once, and every replica of a fully replicated job.
replica_dies stencil 6 2 0,1 call:MPI_Sendrecv:50
replica_dies colls 8 100% 0,1,2,3 call:MPI_Bcast:25
# At random times, in jobs paced to last a few seconds.
ROUNDS=50
PACE=200
replica_dies stencil 6 2 0 "$(random_ms)"
PACE=1000
replica_dies mw 6 2 1 "$(random_ms)" '^mw rank [1-9]|polls'
PACE=1500
replica_dies colls 6 2 1 "$(random_ms)"

# ftshim_rank_copies says which copies of each rank live, before and
# after rank 1's replica dies.
copies_prog=$(build replica_copies)
run_job shim 6 "FTSHIM_RUNDIR=$run" "FTSHIM_REPLICAS=2" "FTSHIM_INJECT=rank=1 copy=replica at=time:800ms" -- "$copies_prog" 2
expect_killed_rc
expect_all_checks "ftshim_rank_copies"
grep -qx 'copies before 3311 after 3111' "$OUT" || { cat "$OUT" >&2; fail "ftshim_rank_copies: not the copies expected"; }

# A replica named by its job rank is refused at MPI_Init, saying how to
# name it; nothing runs.
ROUNDS=8 PACE=0
run_job shim 6 "FTSHIM_RUNDIR=$run" "FTSHIM_REPLICAS=2" "FTSHIM_INJECT=rank=5 at=time:1s" -- "$prog" stencil
expect_rc "$(launcher_rc 78)"
expect_err_match "rank 5 is not one of the program's ranks: with FTSHIM_REPLICAS it sees 0 to 3, and copy=replica or both names their replicas"
[ ! -s "$OUT" ] || fail "the program ran although FTSHIM_INJECT named a replica by its job rank"

expect_no_leftovers replicas
