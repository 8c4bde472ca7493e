# Under replication each rank's files are what the unreplicated job
# writes (issue 43): the replica writes its own copies beside them and
# reads back its own, and a promoted replica's copies replace its dead
# primary's. tests/mpi/progs/replicas.c's files workload (2 program ranks)
# keeps a log it reopens and appends to every round, a checkpoint it
# writes beside and renames over then reads back, and a scratch file it
# makes, finds and deletes: before, the two copies of a rank appended
# every line twice to one log and one copy's delete failed. Run without
# replicas, replicated with no failure, and with each primary killed at a
# random time: the same files, byte for byte, and no copy left behind.
prog=$(build replicas)
run=$MPITEST_WORKDIR/run
ROUNDS=3
PACE=15000

# files_run DIR NP [ENV...]: the workload in DIR (made empty first).
files_run() {
	local dir=$1 np=$2
	shift 2
	rm -rf "$dir" "$run"
	mkdir -p "$dir"
	cd "$dir"
	run_job shim "$np" "FTSHIM_RUNDIR=$run" "$@" -- "$prog" files "$ROUNDS" "$PACE"
	cd "$MPITEST_WORKDIR"
}

# same_files DIR WHAT: DIR holds exactly the reference's files, equal.
same_files() {
	local got
	got=$(cd "$1" && ls -A | sort | tr '\n' ' ')
	[ "$got" = "$want_list" ] || fail "$2: the directory holds $got, not $want_list"
	for f in $want_list; do
		cmp -s "$MPITEST_WORKDIR/ref/$f" "$1/$f" || {
			diff "$MPITEST_WORKDIR/ref/$f" "$1/$f" | head -n 10 >&2
			fail "$2: $f is not what the job without replicas wrote"
		}
	done
}

files_run "$MPITEST_WORKDIR/ref" 2
expect_rc 0
want_list=$(cd "$MPITEST_WORKDIR/ref" && ls -A | sort | tr '\n' ' ')
[ "$want_list" = "ckpt-0 ckpt-1 log-0.txt log-1.txt " ] || fail "without replicas the workload left $want_list"
sort "$OUT" >want.txt
rounds=$(($(wc -l <"$MPITEST_WORKDIR/ref/log-0.txt") - 1))
note "without replicas: $want_list($rounds rounds each)"

files_run "$MPITEST_WORKDIR/rep" 4 FTSHIM_REPLICAS=100%
expect_rc 0
sort "$OUT" | diff -u want.txt - >&2 || fail "replicated, no failure: not the answer without replicas"
expect_err_no_match 'ftshim\[[0-9]+\] \+[0-9.]+ (error|warn): |failed: '
same_files "$MPITEST_WORKDIR/rep" "replicated, no failure"
note "replicated with no failure: the same files, no copy left"

seed=${REPLICAS_FILES_SEED:-$RANDOM}
note "kill times drawn with seed $seed (REPLICAS_FILES_SEED=$seed replays them)"
RANDOM=$seed
for victim in 0 1 0 1; do
	at="time:$((100 + RANDOM % 700))ms"
	files_run "$MPITEST_WORKDIR/kill" 4 FTSHIM_REPLICAS=100% "FTSHIM_INJECT=rank=$victim copy=primary at=$at"
	expect_killed_rc
	grep -q "ftshim\[$victim\] .* info: injecting SIGKILL now" "$ERR" ||
		{ tail -n 20 "$ERR" >&2; fail "the primary of rank $victim was not killed at $at (the run is too short?)"; }
	p=$(sed -n "s/^\([0-9]*\) .* replica-of=$victim\$/\1/p" "$run"/*/ranks)
	expect_err_match "ftshim\[$p\] \+[0-9.]+ info: rank $victim: primary \(process $victim\) lost, replica \(process $p\) promoted"
	sort "$OUT" | diff -u want.txt - >&2 || fail "rank $victim's primary killed at $at: not the answer without replicas"
	expect_err_no_match 'ftshim\[[0-9]+\] \+[0-9.]+ (error|warn): '
	same_files "$MPITEST_WORKDIR/kill" "rank $victim's primary killed at $at"
	note "rank $victim's primary killed at $at: the same files, no copy left"
done
expect_no_leftovers replicas
