# Several hosts for real (issue 8, phase 1): 4 network namespaces on this
# machine, each a host with its own address and host name, joined by a
# bridge; the flavour's own launcher starts 3 ranks on each through an
# rsh agent (netns.sh, netns-agent). (a) A job runs with each rank's
# control plane on its own host's address; (b) every rank of one host is
# killed at once: each survivor on the other hosts logs each of the 3
# failures once, naming the right host, they all agree on the failed set
# and finish; (c) nothing is left afterwards: no process, namespace,
# interface or address. Skipped (exit 77) where namespaces cannot be made.
# Each host has a run directory of its own (netns-agent's NETNS_PRIVATE),
# as cluster hosts have their own /tmp: (b) and (d) check that the job
# report, written on rank 0's host, still tells what happened on the
# others (the other hosts send their files over ftshim's control plane).
. "$MPITEST_SRCDIR/netns.sh"
hosts=4 per=3
MPITEST_TIMEOUT=25
np=$((hosts * per))
netns_setup $hosts
rundir=$MPITEST_WORKDIR/run
export NETNS_PRIVATE=$rundir

# report_of LABEL: the report the summary line names, on host h1, as a
# path here; checks that the line names h1 and that no other host wrote
# one.
report_of() {
	local summary path
	summary=$(grep '^ftshim: ' "$ERR" || true)
	[ "$(echo "$summary" | grep -c .)" = 1 ] || { echo "$summary" >&2; fail "$1: not one summary line"; }
	path=$(echo "$summary" | sed -n "s|.*; report: h1:$rundir/\([0-9a-f]*/report\.json\)\$|\1|p")
	[ -n "$path" ] || fail "$1: the summary does not name the report on h1: $summary"
	[ -f "$rundir.hosts/h1/$path" ] || fail "$1: no report at h1:$rundir/$path"
	for k in $(seq 2 $hosts); do
		[ ! -e "$rundir.hosts/h$k/$path" ] || fail "$1: host h$k wrote a report too"
	done
	echo "$rundir.hosts/h1/$path"
}

# exit_after_finalize REPORT: ms from the last MPI_Finalize in REPORT to
# LAUNCHER_EXIT_AT.
exit_after_finalize() {
	timeout -k 5 30 python3 - "$1" "$LAUNCHER_EXIT_AT" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
last = max(e["t"] for e in r["events"] if e["kind"] == "finalize")
print("%.0f ms" % ((float(sys.argv[2]) - r["start_unix"] - last) * 1e3))
PY
}

# (a) Where everything runs: ranks 0-2 on h1, 3-5 on h2, ... (the host
# loss below relies on it), and each rank's control plane is on its own
# host's address.
prog=$(build hosts)
t0=$(date +%s%N)
run_multihost_job shim $per FTSHIM_LOG=debug "FTSHIM_RUNDIR=$rundir" -- "$prog"
LAUNCHER_EXIT_AT=$(date +%s.%N)
expect_rc 0
# Anywhere on a line: Hydra once joined another host's rank line to it.
grep -q 'ALL CHECKS PASSED' "$OUT" || { cat "$OUT" >&2; fail "the job's checks did not pass"; }
for r in $(seq 0 $((np - 1))); do
	k=$((r / per + 1))
	addr=${NETNS_HOSTS[k - 1]//./\\.}
	grep -qx "rank $r of $np on h$k" "$OUT" || { cat "$OUT" >&2; fail "rank $r did not run on h$k"; }
	expect_err_match "ftshim\[$r\] \+[0-9.]+ debug: detector on: control plane at $addr:[0-9]+( |$)"
done
expect_err_match 'ftshim\[0\] \+[0-9.]+ debug: ftshim: no failures; 12 of 12 ranks finished; '
note "a: $np ranks on $hosts hosts, each control plane on its host's address, in $((($(date +%s%N) - t0) / 1000000)) ms"
# The report on h1 has every rank's events, the other hosts' sent over.
report=$(sed -n "s|.*ftshim\[0\] +[0-9.]* debug: ftshim: no failures; .*; report: h1:$rundir/\([0-9a-f]*\)/report\.json\$|$rundir.hosts/h1/\1/report.json|p" "$ERR")
[ -f "$report" ] || fail "a: rank 0 did not name its report on h1"
timeout -k 5 30 python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); f = sorted(e["rank"] for e in r["events"] if e["kind"] == "finalize"); sys.exit(f != list(range(12)) or r["missing_ranks"] != [])' "$report" ||
	fail "a: the report lacks some rank's events"
came=$(sed -n "s/.*ftshim\[0\] +[0-9.]* debug: job report: every other host answered, the last \(.*\) after every rank left\$/\1/p" "$ERR")
[ -n "$came" ] || fail "a: rank 0 did not say that the other hosts' files came"
note "a: report $(stat -c %s "$report") bytes on h1, the other 3 hosts' files came $came after every rank left;" \
	"$MPITEST_MPIEXEC exited $(exit_after_finalize "$report") after the last MPI_Finalize"

# (b) Host loss: rank 4's host (h2: ranks 3, 4, 5) is killed whole when
# its ranks reach iteration 5 (within milliseconds of each other), while
# the others wait for it. Not at=time: Open MPI's first connections
# between hosts (in injected's MPI_Comm_split) can take over a second, and
# a death inside that split is the documented hang-watch window (exit 76),
# not what this case tests.
prog=$(build injected)
inject="rank=host:4 at=point:iteration:5"
victims=3,4,5
rest=$(survivors $np $victims)
t0=$(date +%s%N)
start_multihost_job shim $per "FTSHIM_RUNDIR=$rundir" "FTSHIM_INJECT=$inject" -- \
	"$prog" --expect $victims --iterations 10
wait_job_or_ranks "$prog" 20 || { tail -n 20 "$ERR" >&2; fail "the job did not end in 20 s"; }
end_multihost_job b
# Hydra passes on the bitwise or of the ranks' raw wait statuses
# (-print-all-exitcodes lists them): 137 (raw 35072), the killed ranks'
# (through their supervisors, which keep it: no rank of their host
# finished). It used to report 141 once in about 20
# runs: mpiexec died of SIGPIPE, writing SIGUSR1 failure notices to the
# proxy of a host whose ranks had all ended, because survivors that skip
# the MPI's own MPI_Finalize looked like crashes to Hydra. They now say
# PMI finalize themselves (src/pmi.h). Every survivor must show 0. A
# victim shows 35072, or, as Hydra's proxy races with the deaths of all
# its ranks at once, 0 (its status while it cleans up) or 1 (its
# provisional status for a rank whose PMI socket closed without a
# finalize): once in some 50 runs under load the job then ends with
# status 1, "Hangup (signal 1)".
if [ "$MPITEST_FLAVOUR" = mpich ]; then
	codes=$(hydra_exit_codes | paste -sd ' ')
	r=0
	for code in $codes; do
		case ",$victims,:$code" in
		*",$r,"*:35072 | *",$r,"*:0 | *",$r,"*:1) ;;
		*",$r,"*) fail "victim rank $r has raw exit status $code in Hydra's list ($codes)" ;;
		*:0) ;;
		*) fail "survivor rank $r has raw exit status $code in Hydra's list ($codes), not 0" ;;
		esac
		r=$((r + 1))
	done
	[ "$r" = "$np" ] || { cat "$OUT" >&2; fail "Hydra listed $r exit statuses, not $np"; }
	case " $codes " in
	*" 1 "*) expect_rc 1 ;;
	*" 35072 "*) expect_rc "$(lost_rc sigkill)" ;;
	*) fail "no victim's death reached Hydra's exit statuses ($codes)" ;;
	esac
fi
expect_all_checks
expect_err_match "info: FTSHIM_INJECT \"$inject\": SIGKILL for ranks 3,4,5\$"
for v in ${victims//,/ }; do
	expect_detected $v "$rest"
	# Each survivor's line names the host the rank ran on.
	for s in ${rest//,/ }; do
		grep -qE "ftshim\[$s\] \+[0-9.]+ info: rank $v failed: .*; it ran on h2, pid [0-9]+(;|$)" "$ERR" ||
			{ grep "rank $v failed" "$ERR" >&2; fail "rank $s's line for rank $v does not say it ran on h2"; }
	done
done
# How long after the deaths every survivor knew: the largest "known
# here" delay (the ranks that saw a crash themselves log none).
worst=$(sed -n 's/.* info: rank [345] failed: .*; known here \([0-9.]*\) \(m\?s\) after it failed$/\1 \2/p' "$ERR" |
	awk '{ ms = $2 == "s" ? $1 * 1000 : $1; if (ms > w) w = ms } END { printf "%.1f", w }')
seen=$(grep -cE 'ftshim\[[0-9]+\] \+[0-9.]+ info: rank [345] failed: .*, seen by this rank;' "$ERR" || true)
note "b: host h2 lost (ranks $victims, SIGKILL): $((np - 3)) survivors each logged the 3 failures once;" \
	"$seen first-hand detections, the last survivor knew ${worst} ms after the failure; job $((($(date +%s%N) - t0) / 1000000)) ms"
# The report says the host was lost, as the survivors saw it (h2's own
# records died with it), and has every survivor's events, h3's and h4's
# sent over.
expect_err_match "^ftshim: 3 failures \(host h2 lost \(ranks 3, 4, 5( crash)? at [0-9.]+ s\)\); detected in [0-9.]+ m?s; 9 of 12 ranks finished; report: h1:"
report=$(report_of b)
timeout -k 5 30 python3 - "$report" <<'PY' || fail "b: report.json is not as expected (see above)"
import json, sys
r = json.load(open(sys.argv[1]))
def need(cond, what):
    if not cond:
        print("report.json: " + what, file=sys.stderr)
        sys.exit(1)
need(r["failed"] == [3, 4, 5], "failed %s" % r["failed"])
need(r["lost_hosts"] == [{"host": "h2", "ranks": [3, 4, 5]}], "lost_hosts %s" % r["lost_hosts"])
need(r["missing_ranks"] == [] and r["missing_hosts"] == [], "missing %s %s" % (r["missing_ranks"], r["missing_hosts"]))
need(all(f["host"] == "h2" for f in r["failures"]), "failures' hosts %s" % r["failures"])
fin = sorted(e["rank"] for e in r["events"] if e["kind"] == "finalize")
need(fin == [0, 1, 2, 6, 7, 8, 9, 10, 11], "finalize events of ranks %s" % fin)
knew = sorted({e["rank"] for e in r["events"] if e["kind"] in ("detection", "notification") and e["failed"] == 4})
need(knew == fin, "ranks that learned rank 4's failure: %s" % knew)
PY

# (d) One rank on another host than rank 0's dies by a signal ftshim did
# not send: the last, rank 11 on h4, while rank 10 waits for it; the
# survivors revoke, agree and shrink. The report on h1 names its host,
# and the signal its supervisor saw, from h4's files; the timeline shows
# it.
prog=$(build report)
t0=$(date +%s%N)
start_multihost_job shim $per "FTSHIM_RUNDIR=$rundir" -- "$prog" --die
wait_job_or_ranks "$prog" 20 || { tail -n 20 "$ERR" >&2; fail "d: the job did not end in 20 s"; }
end_multihost_job d
expect_all_checks
how=SIGKILL
expect_err_match "^ftshim: 1 failure \(rank 11 $how at [0-9.]+ s\); detected in [0-9.]+ m?s; 11 of 12 ranks finished; report: h1:"
report=$(report_of d)
timeout -k 5 30 python3 - "$report" "$how" <<'PY' || fail "d: report.json is not as expected (see above)"
import json, sys
r = json.load(open(sys.argv[1]))
def need(cond, what):
    if not cond:
        print("report.json: " + what, file=sys.stderr)
        sys.exit(1)
f = r["failures"]
need(len(f) == 1 and f[0]["rank"] == 11 and f[0]["host"] == "h4" and f[0]["how"] == sys.argv[2], "failures %s" % f)
need(r["missing_ranks"] == [] and r["missing_hosts"] == [] and r["lost_hosts"] == [], "missing/lost %s %s %s" % (r["missing_ranks"], r["missing_hosts"], r["lost_hosts"]))
ev = r["events"]
kinds = lambda k: sorted(e["rank"] for e in ev if e["kind"] == k)
need(kinds("finalize") == list(range(11)), "finalize events of ranks %s" % kinds("finalize"))
need(kinds("shrink") == list(range(11)), "shrink events of ranks %s" % kinds("shrink"))
need([e["rank"] for e in ev if e["kind"] == "error"] == [10], "error events %s" % [e for e in ev if e["kind"] == "error"])
need([e["rank"] for e in ev if e["kind"] == "death"] == [11], "no death event for rank 11 (h4's deaths record)")
PY
svg=$MPITEST_WORKDIR/timeline-d.svg
timeout -k 5 30 "$MPITEST_SRCDIR/../../scripts/ftshim-timeline" "$report" -o "$svg" >/dev/null ||
	fail "d: ftshim-timeline could not render the report"
grep -q "<title>rank 11 on h4: failed at " "$svg" || fail "d: the timeline does not show rank 11 failed on h4"
note "d: rank 11 on h4 ($how) in the report on h1 with every survivor's events; job $((($(date +%s%N) - t0) / 1000000)) ms;" \
	"report $(stat -c %s "$report") bytes; $MPITEST_MPIEXEC exited $(exit_after_finalize "$report") after the last MPI_Finalize"

# (e) A host whose run directory cannot be written (h3's is read-only):
# its ranks warn, its first rank tells the reporting rank why it has no
# files, and the report on h1 says which host's events are missing and
# why, in the summary line too, though nobody failed.
export NETNS_PRIVATE_RO=h3
prog=$(build hosts)
run_multihost_job shim $per "FTSHIM_RUNDIR=$rundir" -- "$prog"
unset NETNS_PRIVATE_RO
expect_rc 0
grep -q 'ALL CHECKS PASSED' "$OUT" || { cat "$OUT" >&2; fail "e: the job's checks did not pass"; }
for r in 6 7 8; do
	expect_err_match "ftshim\[$r\] \+[0-9.]+ warn: run directory $rundir/[0-9a-f]+: Read-only file system; .* the job report will lack this host.s events"
done
expect_err_match "^ftshim: no failures; 12 of 12 ranks finished; events missing from host h3 \(rank 6: this host's run directory could not be made \(see its warning\)\); report: h1:"
report=$(report_of e)
timeout -k 5 30 python3 - "$report" <<'PY' || fail "e: report.json is not as expected (see above)"
import json, sys
r = json.load(open(sys.argv[1]))
need = lambda c, w: c or sys.exit("report.json: " + w)
need(r["missing_ranks"] == [6, 7, 8], "missing_ranks %s" % r["missing_ranks"])
need(r["missing_hosts"] == [{"host": "h3", "why": "rank 6: this host's run directory could not be made (see its warning)"}],
     "missing_hosts %s" % r["missing_hosts"])
need(r["failed"] == [], "failed %s" % r["failed"])
PY
note "e: h3's run directory read-only: the report on h1 names h3's events missing, and why"

# (c) Nothing is left: the launchers' daemons and every rank ended by
# themselves; then the hosts are removed, and nothing of them remains.
netns_expect_no_processes
expect_no_leftovers hosts
expect_no_leftovers injected
expect_no_leftovers report
netns_teardown
netns_expect_clean
