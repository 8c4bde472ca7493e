# The reporting rank (rank 0) killed in MPI_Finalize right before it
# writes the job report (ftshim's own injection point ftshim.report),
# once every other rank has left: its backup, rank 1 (the lowest other
# rank of its host), which stays until the report is written, sees rank
# 0's process end without that word and writes the report itself, with
# rank 0 failed by SIGKILL, and says the summary line; the job still
# completes (status 0). Before, the report and the summary were lost.
# Then a job that loses nobody: rank 0 writes the report and nobody
# takes it over.
prog=$(build hello)
rundir=$MPITEST_WORKDIR/run
run_job shim 4 "FTSHIM_RUNDIR=$rundir" "FTSHIM_INJECT=rank=0 at=point:ftshim.report:1" -- "$prog"
expect_rc 0
grep -q '^hello from 4 ranks' "$OUT" || fail "the program did not run"
expect_err_match "ftshim\[1\] \+[0-9.]+ warn: job report: rank 0, which writes it, ended in MPI_Finalize before it had; this rank writes it"
summary=$(grep '^ftshim: ' "$ERR" || true)
[ "$(echo "$summary" | grep -c .)" = 1 ] || { tail -n 20 "$ERR" >&2; fail "not one summary line"; }
echo "$summary" | grep -qE '^ftshim: 1 failure \(rank 0 SIGKILL at [0-9.]+ s\); detected in [0-9.]+ m?s; 3 of 4 ranks finished; report: .*/report\.json$' ||
	fail "the summary line is not as expected: $summary"
report=$(echo "$summary" | sed 's/.*; report: //')
python3 - "$report" <<'PY' || fail "report.json is not as expected (see above)"
import json, sys
r = json.load(open(sys.argv[1]))
ok = (r["failed"] == [0] and r["finished"] == [1, 2, 3] and len(r["failures"]) == 1
      and r["failures"][0]["rank"] == 0 and r["failures"][0]["how"] == "SIGKILL"
      and r["failures"][0]["injected"])
if not ok:
    print("report.json: failed %s, finished %s, failures %s" % (r["failed"], r["finished"], r["failures"]),
          file=sys.stderr)
    sys.exit(1)
PY
note "rank 0 killed before writing the report: rank 1 wrote it"

rm -rf "$rundir"
run_job shim 4 "FTSHIM_RUNDIR=$rundir" -- "$prog"
expect_rc 0
expect_err_no_match "job report: rank 0, which writes it"
n=$(find "$rundir" -name report.json | wc -l)
[ "$n" = 1 ] || fail "$n job reports after a job that lost nobody, expected 1"
python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); sys.exit(r["failed"] != [] or r["finished"] != [0, 1, 2, 3])' \
	"$(find "$rundir" -name report.json)" || fail "the report of a job that lost nobody is not as expected"
note "a job that lost nobody: rank 0 wrote the report"
expect_no_leftovers hello
