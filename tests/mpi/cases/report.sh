# The failure report: rank 3 of 4 killed by an injection while rank 2
# waits for it in MPI_Recv (in wait_for_neighbour). Every survivor logs
# one line for the failure (host, pid, delay); rank 2 logs the error it
# got with the call and its call site; the survivors revoke, agree and
# shrink; at the end rank 0 prints the summary line and report.json holds
# the failure, the injection, each survivor's detection or notification,
# the error, revoke, agreements, shrink and finalizes; ftshim-timeline
# renders it; an old job directory is pruned; FTSHIM_STATUS_FILE says
# "completed" and the summary, and the launcher exits 0 (Hydra: rank 3's
# supervisor waits for the others and sees them finish). Then the same
# job with MPI_ERRORS_ARE_FATAL: rank 2's line names the call and its call
# site, the job ends, and the status file says "ended".
prog=$(build report)
rundir=$MPITEST_WORKDIR/run
inject="rank=3 at=point:phase:1"
# Earlier jobs' directories: one of 8 days ago whose ranks are gone is
# removed at the end of the job; one of yesterday stays.
mkdir -p "$rundir/00000000dead" "$rundir/00000000beef"
echo "0 $(hostname) 99999999 5" >"$rundir/00000000dead/ranks"
echo "0 $(hostname) 99999999 5" >"$rundir/00000000beef/ranks"
touch -d '8 days ago' "$rundir/00000000dead"
touch -d '1 day ago' "$rundir/00000000beef"
status=$MPITEST_WORKDIR/status
echo "an earlier job's" >"$status"
run_job shim 4 "FTSHIM_RUNDIR=$rundir" "FTSHIM_INJECT=$inject" "FTSHIM_STATUS_FILE=$status" -- "$prog"
expect_killed_rc
expect_all_checks
[ "$(head -n 1 "$status")" = completed ] || { cat "$status" >&2; fail "FTSHIM_STATUS_FILE does not say completed"; }
sed -n 2p "$status" | grep -qE '^ftshim: 1 failure \(rank 3 SIGKILL at [0-9.]+ s\);.* 3 of 4 ranks finished' ||
	{ cat "$status" >&2; fail "FTSHIM_STATUS_FILE's second line is not the summary"; }
[ ! -e "$rundir/00000000dead" ] || fail "an 8-day-old job directory was not removed"
[ -e "$rundir/00000000beef" ] || fail "a day-old job directory was removed"
host=$(hostname)
for s in 0 1 2; do
	# The rank that saw the crash says no delay; the others say theirs.
	n=$(grep -cE "ftshim\[$s\] \+[0-9.]+ info: rank 3 failed: crash \(.*\), (seen by this rank; it ran on $host, pid [0-9]+|seen by rank [0-9].*; it ran on $host, pid [0-9]+; known here [0-9.]+ m?s after it failed)$" "$ERR" || true)
	[ "$n" = 1 ] || { grep "rank 3 failed" "$ERR" >&2; fail "rank $s logged the failure $n times with host and delay, expected once"; }
done
line=$(sed -n 's/^recv line \([0-9]*\)$/\1/p' "$OUT")
[ -n "$line" ] || { cat "$OUT" >&2; fail "rank 2 did not say where its receive is"; }
expect_err_match "ftshim\[2\] \+[0-9.]+ info: MPI_Recv returned MPI_ERR_PROC_FAILED to wait_for_neighbour \(report.c:$line\): its peer, rank 3, failed"
summary=$(grep '^ftshim: ' "$ERR" || true)
[ "$(echo "$summary" | grep -c .)" = 1 ] || { echo "$summary" >&2; fail "not one summary line"; }
echo "$summary" | grep -qE '^ftshim: 1 failure \(rank 3 SIGKILL at [0-9.]+ s\); detected in [0-9.]+ m?s; 3 of 4 ranks finished; report: .*/report\.json$' ||
	fail "the summary line is not as documented: $summary"
report=$(echo "$summary" | sed 's/.*; report: //')
[ -f "$report" ] || fail "no report at $report"
python3 - "$report" "$line" <<'PY' || fail "report.json is not as expected (see above)"
import json, sys
r = json.load(open(sys.argv[1]))
line = sys.argv[2]
def need(cond, what):
    if not cond:
        print("report.json: " + what, file=sys.stderr)
        sys.exit(1)
need(r["ftshim_report"] == 1 and r["ranks"] == 4, "header")
need(r["failed"] == [3] and r["finished"] == [0, 1, 2], "failed/finished: %s %s" % (r["failed"], r["finished"]))
need(r["missing_ranks"] == [], "missing ranks %s" % r["missing_ranks"])
f = r["failures"]
need(len(f) == 1 and f[0]["rank"] == 3 and f[0]["how"] == "SIGKILL" and f[0]["injected"], "failures %s" % f)
need(f[0]["failed_s"] <= f[0]["detected_s"] <= f[0]["all_knew_s"] <= r["end_s"], "failure times out of order %s" % f[0])
need(f[0]["all_knew_s"] - f[0]["failed_s"] < 5, "detection took %.3f s" % (f[0]["all_knew_s"] - f[0]["failed_s"]))
ev = r["events"]
kinds = lambda k: [e for e in ev if e["kind"] == k]
need(len(kinds("injection")) == 1 and kinds("injection")[0]["rank"] == 3, "injection events")
told = sorted(e["rank"] for e in kinds("detection") + kinds("notification") if e["failed"] == 3)
need(told == [0, 1, 2], "ranks that learned of rank 3: %s" % told)
err = [e for e in kinds("error") if e["rank"] == 2 and e["call"] == "MPI_Recv"]
need(err and err[0]["error"] == "MPI_ERR_PROC_FAILED" and err[0]["site"] == "wait_for_neighbour (report.c:%s)" % line,
     "rank 2's error: %s" % err)
need(sorted(e["rank"] for e in kinds("revoke")) == [0, 1, 2], "revoke events")
need(len(kinds("agree")) == 6 and all(e["result"] == "MPI_SUCCESS" and e["flag"] == 1 for e in kinds("agree")), "agree events %s" % kinds("agree"))
need([(e["rank"], e["call"]) for e in kinds("error")] == [(2, "MPI_Recv")], "error events %s" % kinds("error"))
sh = kinds("shrink")
need(len(sh) == 3 and all(e["size"] == 3 and e["result"] == "MPI_SUCCESS" for e in sh), "shrink events %s" % sh)
need(sorted(e["rank"] for e in kinds("finalize")) == [0, 1, 2], "finalize events")
need(all(0 <= e["t"] <= r["end_s"] + 1 for e in ev), "event times out of range")
PY
note "$summary"
svg=$MPITEST_WORKDIR/timeline.svg
timeout -k 5 30 "$MPITEST_SRCDIR/../../scripts/ftshim-timeline" "$report" -o "$svg" >/dev/null ||
	fail "ftshim-timeline could not render the report"
python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$svg" || fail "the timeline is not valid SVG"

# A rank that dies by a signal ftshim did not send: its supervisor
# records the signal (under Hydra and Open MPI alike), and the summary
# names it.
run_job shim 4 "FTSHIM_RUNDIR=$rundir" -- "$prog" --die
expect_all_checks
how=SIGKILL
grep -qE "^ftshim: 1 failure \(rank 3 $how at [0-9.]+ s\); detected in " "$ERR" ||
	{ grep '^ftshim:' "$ERR" >&2; fail "the summary of a rank that killed itself does not say $how"; }

# MPI_ERRORS_ARE_FATAL: one line that names the call, its site and the
# failed rank, and the job ends.
run_job shim 4 "FTSHIM_RUNDIR=$rundir" "FTSHIM_INJECT=$inject" "FTSHIM_STATUS_FILE=$status" -- "$prog" --fatal
[ "$RC" != 0 ] || [ "$MPITEST_FLAVOUR" = openmpi ] || fail "the fatal job exited 0"
[ "$(head -n 1 "$status")" = ended ] && sed -n 2p "$status" | grep -qE '^status [1-9][0-9]*$' ||
	{ cat "$status" >&2; fail "FTSHIM_STATUS_FILE does not say the fatal job ended, with its status"; }
line=$(sed -n 's/^recv line \([0-9]*\)$/\1/p' "$OUT")
expect_err_match "ftshim\[2\] \+[0-9.]+ error: MPI_Recv failed in wait_for_neighbour \(report.c:$line\): MPI_ERR_PROC_FAILED: .*its peer, rank 3, failed .*MPI_ERRORS_ARE_FATAL, so the job ends; set MPI_ERRORS_RETURN"
expect_no_leftovers report
