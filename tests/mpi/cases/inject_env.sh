# FTSHIM_INJECT inside the ranks: each trigger kind kills exactly the
# intended ranks, the intended way, at the intended point; each injection
# is logged and recorded in the run directory, and the survivors detect
# it; seeded random choices repeat run after run.
prog=$(build injected)
export_rundir="FTSHIM_RUNDIR=$MPITEST_WORKDIR/run"

# records FIELD...: the injection records of the last job, one per line.
records() {
	cat "$MPITEST_WORKDIR"/run/*/injections 2>/dev/null || true
}

fresh() { rm -rf "$MPITEST_WORKDIR/run"; }

# After the 5th MPI_Allreduce, by SIGKILL.
fresh
run_job shim 5 "$export_rundir" "FTSHIM_INJECT=rank=3 at=call:MPI_Allreduce:5" -- "$prog" --expect 3
expect_all_checks
expect_detected 3 "$(survivors 5 3)"
expect_err_match 'ftshim\[3\] .* info: injecting SIGKILL now \(after call 5 of MPI_Allreduce; '
[ "$(records | wc -l)" = 1 ] || { records >&2; fail "expected one injection record"; }
records | grep -q 'rank=3 .*how=SIGKILL by=FTSHIM_INJECT trigger="after call 5 of MPI_Allreduce"' ||
	{ records >&2; fail "the record does not say rank 3, SIGKILL, call 5"; }

# After the 4th blocking MPI_Send and the 6th MPI_Recv: calls that take
# the wrappers' fast path in ranks that count no calls.
fresh
run_job shim 5 "$export_rundir" "FTSHIM_INJECT=rank=1 at=call:MPI_Send:4; rank=4 at=call:MPI_Recv:6" -- \
	"$prog" --expect 1,4
expect_all_checks
expect_err_match 'ftshim\[1\] .* info: injecting SIGKILL now \(after call 4 of MPI_Send; '
expect_err_match 'ftshim\[4\] .* info: injecting SIGKILL now \(after call 6 of MPI_Recv; '
records | grep -q 'rank=1 .*trigger="after call 4 of MPI_Send"' || { records >&2; fail "no record of rank 1's MPI_Send"; }
records | grep -q 'rank=4 .*trigger="after call 6 of MPI_Recv"' || { records >&2; fail "no record of rank 4's MPI_Recv"; }

# A range, at a point of the program, by exit without finalize.
fresh
run_job shim 6 "$export_rundir" "FTSHIM_INJECT=rank=1-2 at=point:iteration:7 how=exit:4" -- "$prog" --expect 1,2
expect_all_checks
for r in 1 2; do
	expect_detected $r "$(survivors 6 1,2)"
	records | grep -q "rank=$r .*how=exit:4 by=FTSHIM_INJECT trigger=\"at point iteration 7\"" ||
		{ records >&2; fail "no record of rank $r's exit at iteration 7"; }
done

# At a time after MPI_Init, by another signal; two clauses at once.
fresh
run_job shim 6 "$export_rundir" "FTSHIM_INJECT=rank=4 at=time:1s how=sigterm; rank=0 at=time:1.3s how=abort" -- \
	"$prog" --expect 0,4 --iterations 100
expect_all_checks
records | grep -q "rank=4 .*how=SIGTERM .*trigger=\"1.000 s after every rank's MPI_Init\"" || { records >&2; fail "no SIGTERM record for rank 4"; }
records | grep -q 'rank=0 .*how=abort ' || { records >&2; fail "no abort record for rank 0"; }

# Time counts from the moment every rank is through MPI_Init, ftshim's
# own start included (issue 39, item 4): rank 3 starts 1.5 s late, and
# rank 1 dies 300 ms after the job is up, not in the others' MPI_Init;
# the log's times count from there too. (Counted from each rank's own
# MPI_Init, rank 1 died inside the MPI's MPI_Init and the job failed.)
fresh
run_job shim 4 "$export_rundir" "FTSHIM_INJECT=rank=1 at=time:300ms" -- \
	"$prog" --expect 1 --iterations 5 --late-rank 3 --late-ms 1500
expect_all_checks "late start"
expect_detected 1 0,2,3
since=$(records | sed -n 's/.* since_start=\([0-9.]*\) rank=1 .*trigger="0.300 s after every rank.s MPI_Init".*/\1/p')
[ -n "$since" ] || { records >&2; fail "no record of rank 1's death 0.300 s after the start"; }
awk -v s="$since" 'BEGIN { exit !(s >= 0.3 && s < 1.0) }' || fail "rank 1 died $since s after the start, not 0.3"
expect_err_match '^ftshim\[1\] \+0\.(3|4|5|6|7|8|9)[0-9]* info: injecting SIGKILL now'

# A pause longer than the timeout: declared failed, then excluded.
fresh
run_job shim 5 "$export_rundir" FTSHIM_HB_PERIOD=50ms FTSHIM_HB_TIMEOUT=500ms \
	"FTSHIM_INJECT=rank=2 at=call:MPI_Allreduce:3 how=pause:2s" -- "$prog" --expect 2 --linger-ms 3000
expect_all_checks
expect_detected 2 "$(survivors 5 2)"
expect_err_match 'ftshim\[2\] .* error: this rank was declared failed by the others .*\(status 75\)$'

# Random ranks at random (Weibull) times, seeded: the same twice.
chosen=
for run in 1 2; do
	fresh
	run_job shim 8 "$export_rundir" "FTSHIM_INJECT=rank=random:2 at=weibull:1s:1.5 seed=7" -- \
		"$prog" --expect-count 2 --iterations 5
	plan=$(sed -n 's/.*info: FTSHIM_INJECT "rank=random:2 at=weibull:1s:1.5 seed=7": SIGKILL for ranks \([0-9,]*\)$/\1/p' "$ERR")
	[ -n "$plan" ] || { tail "$ERR" >&2; fail "rank 0 did not log the plan"; }
	died=$(records | sed -n 's/.* rank=\([0-9]*\) .*/\1/p' | sort -n | paste -sd, -)
	[ "$died" = "$(echo "$plan" | tr , '\n' | sort -n | paste -sd, -)" ] || fail "the plan said $plan, the records say $died"
	# Every survivor knows exactly those two.
	n=$(grep -c "knows failed: $(echo "$plan" | tr , '\n' | sort -n | paste -sd, -)\$" "$OUT" || true)
	[ "$n" = 6 ] || { cat "$OUT" >&2; fail "$n of 6 survivors know exactly ranks $plan failed"; }
	[ -z "$chosen" ] || [ "$chosen" = "$plan" ] || fail "seed 7 chose $chosen, then $plan"
	chosen=$plan
done
note "seed 7 chose ranks $chosen both times"

# Every rank of a host: here one host holds them all, so check the plan
# only (a job cannot survive losing every rank).
run_job shim 3 "$export_rundir" "FTSHIM_INJECT=rank=host:0 at=time:60s" -- "$prog" --expect-count 0 --iterations 1
expect_rc 0
expect_err_match 'info: FTSHIM_INJECT "rank=host:0 at=time:60s": SIGKILL for ranks 0,1,2$'

# Bad specifications: one line each (from the job's first rank), exit 78,
# nothing runs.
for spec in "rank=3" "at=time:1s" "rank=x at=time:1s" "rank=1 at=soon" "rank=1 at=time:1s how=sigfoo" \
	"rank=1 at=call:MPI_Allreduse:3" "rank=9 at=time:1s" "rank=1 at=time:1s color=red"; do
	run_job shim 3 "$export_rundir" "FTSHIM_INJECT=$spec" -- "$prog" --expect-count 0
	expect_rc "$(launcher_rc 78)"
	[ "$(grep -c "^ftshim: FTSHIM_INJECT: clause 1 \"$spec\": " "$ERR")" = 1 ] ||
		{ cat "$ERR" >&2; fail "spec '$spec': expected one error line for the job"; }
	grep -q 'knows failed' "$OUT" && fail "spec '$spec': the program ran"
done
expect_no_leftovers injected
