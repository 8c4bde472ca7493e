# Spare processes (FTSHIM_SPARES), the first step: launched with N + K
# processes, the program runs on N (MPI_COMM_WORLD of N ranks, checked in
# every way the program sees it: size, group, MPI_TAG_UB, a duplicate, a
# split, collectives) and the K spares never get past MPI_Init; they
# leave with status 0 once the program has ended. A spare killed while
# the program runs is no failure of the program's: the job completes,
# the log, the summary and the report name it as the spare it was. With
# its only spare dead, a ULFM program shrinks its world to the survivors
# of its own N (a spare taking a rank's place: spares_restart.sh). A
# launch that leaves no program rank, a spare named that does not exist,
# spares with replicas, and a program that asks for MPI_THREAD_MULTIPLE
# are refused with one line (the other bad values: the unit tests
# check_replica_plan and check_inject).
prog=$(build spares)
rundir=$MPITEST_WORKDIR/run

mains() {
	grep -c '^in main: rank [0-9]* of 4$' "$OUT" || true
}
# The program's checks of its world (a job that completes prints no
# summary of them).
no_failed_checks() {
	expect_err_no_match 'CHECK FAILED'
}

run_job shim 6 FTSHIM_SPARES=2 -- "$prog"
expect_rc 0
no_failed_checks
[ "$(mains)" = 4 ] || { cat "$OUT" >&2; fail "expected 4 ranks in main, each of 4; got $(mains)"; }
grep -q '^in main: rank [0-9]* of 6$' "$OUT" && fail "a rank saw the spares in MPI_COMM_WORLD"
expect_err_match 'ftshim\[0\] \+[0-9.]+ info: spares: the program runs on ranks 0 to 3; 2 spare processes \(job ranks 4 to 5\) wait in MPI_Init$'
expect_no_leftovers spares
note "4 ranks ran the program, 2 spares waited and left"

# 25% of the program's ranks: 4 + 1.
run_job shim 5 FTSHIM_SPARES=25% -- "$prog"
expect_rc 0
[ "$(mains)" = 4 ] || fail "FTSHIM_SPARES=25% on 5: expected 4 ranks in main, got $(mains)"
expect_no_leftovers spares

# A spare makes no MPI call to count: it dies by time, which counts from
# the whole job being up (the spare is waiting by then), while the
# program runs for 1.5 s after that.
run_job shim 6 FTSHIM_SPARES=2 "FTSHIM_RUNDIR=$rundir" "FTSHIM_INJECT=rank=spare:1 at=time:0.2s" -- "$prog" --run-ms 1500
expect_rc "$(death_rc sigkill)"
no_failed_checks
[ "$(mains)" = 4 ] || fail "a spare killed: expected 4 ranks in main, got $(mains)"
expect_err_match 'ftshim\[0\] \+[0-9.]+ info: FTSHIM_INJECT "rank=spare:1 at=time:0.2s": SIGKILL for rank spare 1 \(process 5\)$'
expect_err_match 'ftshim\[0\] \+[0-9.]+ info: spare 1 \(process 5\) failed: crash'
summary=$(grep '^ftshim: ' "$ERR" || true)
echo "$summary" | grep -qE '^ftshim: 1 failure \(spare 1 \(process 5\) SIGKILL at [0-9.]+ s\); detected in [0-9.]+ m?s; 5 of 6 ranks finished; report: .*/report\.json$' ||
	fail "the summary line is not as expected: $summary"
python3 - "$(echo "$summary" | sed 's/.*; report: //')" <<'PY' || fail "report.json is not as expected (see above)"
import json, sys
r = json.load(open(sys.argv[1]))
f = r["failures"]
if not (r["failed"] == [5] and r["finished"] == [0, 1, 2, 3, 4] and len(f) == 1 and f[0].get("spare") == 1):
    print("report.json: failed %s, finished %s, failures %s" % (r["failed"], r["finished"], f), file=sys.stderr)
    sys.exit(1)
PY
grep -q ' spare=1$' "$(find "$rundir" -name ranks | head -n 1)" || fail "the run directory's ranks file does not name spare 1"
expect_no_leftovers spares
note "spare 1 killed while the program ran: the job completed, the spare named as one"

# The spare dies 50 ms after the job is up; rank 1 at least 300 ms later
# (its 300th allreduce comes after the 300 ms loop).
run_job shim 5 FTSHIM_SPARES=1 "FTSHIM_INJECT=rank=spare:0 at=time:50ms; rank=1 at=call:MPI_Allreduce:300" -- "$prog" --run-ms 300 --ulfm
expect_all_checks ulfm
[ "$(mains)" = 4 ] || fail "ulfm: expected 4 ranks in main, got $(mains)"
expect_err_match 'error: spares: rank 1 \(process 1\) failed and no spare is left \(FTSHIM_SPARES=1, 0 rank\(s\) replaced so far\): the failure is the program.s$'
expect_no_leftovers spares
note "the only spare dead: a ULFM program shrank its world of 4 to 3"

run_job shim 4 FTSHIM_SPARES=4 -- "$prog"
expect_rc "$(launcher_rc 78)"
expect_err_line "ftshim: FTSHIM_SPARES=4 with 4 processes launched leaves no program rank, so launch 5 processes or more, or ask for at most 3"
[ "$(grep -c '^ftshim: ' "$ERR")" = 1 ] || fail "expected the line once for the job"
run_job shim 4 FTSHIM_SPARES=1 FTSHIM_REPLICAS=1 -- "$prog"
expect_rc "$(launcher_rc 78)"
expect_err_line "ftshim: FTSHIM_REPLICAS=1 and FTSHIM_SPARES=1 ask for two recovery modes; accepted: one of them"
run_job shim 4 FTSHIM_SPARES=1 "FTSHIM_INJECT=rank=spare:1 at=time:1s" -- "$prog"
expect_rc "$(launcher_rc 78)"
expect_err_line "ftshim: FTSHIM_INJECT: clause 1 \"rank=spare:1 at=time:1s\": spare:1: the job has 1 spare (FTSHIM_SPARES), spare:0 to spare:0"
run_job shim 3 FTSHIM_SPARES=1 -- "$prog" --multiple
expect_rc "$(launcher_rc 78)"
expect_err_line "ftshim: FTSHIM_SPARES=1: the program runs with MPI_THREAD_MULTIPLE, and another thread may be inside MPI when a rank goes back to the start of main; accepted: MPI_Init, or MPI_Init_thread up to MPI_THREAD_SERIALIZED"
expect_no_leftovers spares
note "bad values refused with one line"
