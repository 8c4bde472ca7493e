# Restart in place with spare processes (FTSHIM_SPARES): a program that
# resumes from its own restart file (progs/restart_files.c, which knows
# nothing of ftshim) loses a rank; a spare takes its place, every rank
# runs main again from the top inside the same job, reads the restart
# file and finishes with the failure-free result, MPI_COMM_WORLD at its
# first size throughout. Also: a rank killed during the repair (ftshim's
# own point ftshim.repair, between the agreement and the restart) is
# replaced by the second spare; two ranks killed at random times;
# and with the spares used up, a failure is the program's again, said in
# one line.
prog=$(build restart_files)
ckdir=$MPITEST_WORKDIR/ck
rundir=$MPITEST_WORKDIR/run
mkdir -p "$ckdir"


rm -f "$ckdir"/*
run_job shim 6 FTSHIM_SPARES=2 "FTSHIM_RUNDIR=$rundir" "FTSHIM_INJECT=rank=2 at=call:MPI_Allreduce:35" -- "$prog" "$ckdir" 100 --nap-ms 2
expect_rc "$(death_rc sigkill)"
expect_main_runs 2
grep -q '^in main: rank [0-3] of 4 from step 30$' "$OUT" || fail "the second run did not resume from the restart file's step 30"
expect_err_match "ftshim\[0\] \+[0-9.]+ info: spares: rank 2's process 2 \([^)]*\) lost; spare 0 \(process 4, [^)]*\) takes rank 2, and every rank runs main again \(repair 1, [0-9.]+ ms after it began here\)$"
summary=$(grep '^ftshim: ' "$ERR" || true)
echo "$summary" | grep -qE '^ftshim: 1 failure \(rank 2 SIGKILL at [0-9.]+ s\)' || fail "the summary line is not as expected: $summary"
python3 - "$(echo "$summary" | sed 's/.*; report: //')" <<'PY' || fail "report.json lacks the substitution (see above)"
import json, sys
r = json.load(open(sys.argv[1]))
subs = [e for e in r["events"] if e["kind"] == "substitution"]
if not (r["failed"] == [2] and len(subs) == 1 and subs[0]["program_rank"] == 2 and subs[0]["lost"] == 2
        and subs[0]["by"] == 4 and subs[0]["spare"] == 0):
    print("report.json: failed %s, substitutions %s" % (r["failed"], subs), file=sys.stderr)
    sys.exit(1)
PY
expect_no_leftovers restart_files
note "rank 2 killed: spare 0 took its place, main ran again from step 30, the result is right"

rm -f "$ckdir"/*
run_job shim 6 FTSHIM_SPARES=2 "FTSHIM_INJECT=rank=2 at=call:MPI_Allreduce:35; rank=1 at=point:ftshim.repair:1" -- "$prog" "$ckdir" 100 --nap-ms 2
expect_rc "$(death_rc sigkill)"
[ "$(grep -c 'takes rank' "$ERR")" = 2 ] || fail "expected two substitutions"
expect_err_match "info: spares: rank 1's process 1 \([^)]*\) lost; spare 1 \(process 5, [^)]*\) takes rank 1, and every rank runs main again \(repair 2,"
[ "$(grep -c '^result: ' "$OUT")" = 1 ] && grep -qE '^result: ([0-9]+) \(expected \1\)$' "$OUT" ||
	{ cat "$OUT" >&2; fail "a rank killed during the repair: the result is not the failure-free one"; }
expect_err_no_match 'CHECK FAILED|error:'
expect_no_leftovers restart_files
note "rank 1 killed during the repair: spare 1 took its place too"

rm -f "$ckdir"/*
# Random times are what this run is about; they count from the moment
# the whole job is up, and 400 steps of at least 2 ms leave both kills
# (at 0.05 and 0.14 s with this seed) well inside the program.
run_job shim 6 FTSHIM_SPARES=2 "FTSHIM_INJECT=rank=random:2 at=exp:150ms seed=3" -- "$prog" "$ckdir" 400 --nap-ms 2
expect_rc "$(death_rc sigkill)"
expect_main_runs 3
expect_no_leftovers restart_files
note "two ranks killed at random times: two spares took their places"

# One spare, two ranks lost: the second failure is the program's (the
# ULFM error, fatal here), and the ranks say why.
rm -f "$ckdir"/*
run_job shim 5 FTSHIM_SPARES=1 "FTSHIM_INJECT=rank=2 at=call:MPI_Allreduce:35; rank=0 at=call:MPI_Allreduce:80" -- "$prog" "$ckdir" 100 --nap-ms 2
expect_err_match "error: spares: rank 0 \(process 0\) failed and no spare is left \(FTSHIM_SPARES=1, 1 rank\(s\) replaced so far\): the failure is the program's$"
expect_err_match 'MPI_[A-Za-z_]+ failed in .*MPI_ERRORS_ARE_FATAL'
grep -q '^result: ' "$OUT" && fail "the program finished without rank 0"
expect_no_leftovers restart_files
note "the spares used up: the next failure was the program's"
