# ftshim-inject against running jobs: it finds them in the run directory
# (here one of this case's own, through FTSHIM_RUNDIR), kills the ranks it
# is told to (by number, two at once with SIGTERM, or K at random with a
# seed, which chooses the same ranks every time), stops one long enough
# for the others to declare it failed, records each injection, and
# refuses what it cannot do without touching the job. The survivors of
# each job must agree on exactly the ranks it killed.
prog=$(build victim)
inject=$MPITEST_SRCDIR/../../scripts/ftshim-inject
[ -x "$inject" ] || fail "$inject is missing or not executable"
rd=$MPITEST_WORKDIR/rundir
export FTSHIM_RUNDIR=$rd
host=$(hostname 2>/dev/null || uname -n)

# inj ARGS...: the command, bounded; $IRC, $IOUT, $IERR (files).
inj() {
	local n=$((${INJ_COUNT:-0} + 1))
	INJ_COUNT=$n
	IOUT=$MPITEST_WORKDIR/inject$n.out
	IERR=$MPITEST_WORKDIR/inject$n.err
	echo "\$ ftshim-inject $*" >>"$MPITEST_WORKDIR/commands"
	set +e
	timeout -k 5 30 "$inject" "$@" >"$IOUT" 2>"$IERR"
	IRC=$?
	set -e
	cat "$IOUT" "$IERR"
}

inj_ok() {
	inj "$@"
	[ "$IRC" = 0 ] || fail "ftshim-inject $*: exit $IRC"
	[ ! -s "$IERR" ] || fail "ftshim-inject $*: something on stderr"
}

# start NP ARGS...: a job of victim with the shim, in the run directory;
# returns once every rank has written its ready file, and sets JOB (its
# id, from ftshim-inject list).
start() {
	local np=$1 r
	shift
	rm -f ready.*
	start_job shim "$np" "FTSHIM_RUNDIR=$rd" "$@" -- "$prog" "${VICTIM_ARGS[@]}"
	for r in $(seq 0 $((np - 1))); do
		wait_for_file "ready.$r" 30
	done
	inj_ok list
	JOB=$(awk '$0 !~ /^ / && / running / {print $1}' "$IOUT")
	[ "$(echo "$JOB" | wc -w)" = 1 ] || fail "list shows not exactly one running job: $JOB"
	grep -q "^$JOB  size $np .* running  program $prog$" "$IOUT" || fail "list: the job's line"
	for r in $(seq 0 $((np - 1))); do
		grep -qE "^    rank $r  pid [0-9]+  running$" "$IOUT" || fail "list: rank $r is not shown running"
	done
}

# The pid the run directory gives RANK of $JOB.
pid_of() {
	awk -v r="$1" '$1 == r {print $3}' "$rd/$JOB/ranks"
}

# expect_injection RANK HOW TRIGGER: one line in $JOB's injections says so.
expect_injection() {
	local n
	n=$(grep -cF "rank=$1 host=$host pid=$(pid_of "$1") how=$2 by=ftshim-inject trigger=\"$3\"" \
		"$rd/$JOB/injections" || true)
	[ "$n" = 1 ] || { cat "$rd/$JOB/injections" >&2; fail "$n injection lines for rank $1 ($2, $3), expected 1"; }
}

# (a) one rank by number, while errors leave the job alone.
VICTIM_ARGS=(--expect 2)
start 6
inj kill --host no-such-host.invalid
[ "$IRC" = 2 ] || fail "kill --host no-such-host.invalid: exit $IRC, expected 2"
grep -q "^ftshim-inject: --host no-such-host.invalid: job $JOB has no rank on host no-such-host.invalid; its ranks' hosts: $host$" "$IERR" ||
	fail "kill --host: not the expected message"
inj kill 6
[ "$IRC" = 2 ] || fail "kill 6: exit $IRC, expected 2"
grep -q "rank 6 is not a rank of job $JOB (size 6); accepted: 0 to 5" "$IERR" || fail "kill 6: not the expected message"
inj kill --signal NOPE 2
[ "$IRC" = 2 ] || fail "kill --signal NOPE: exit $IRC, expected 2"
[ ! -e "$rd/$JOB/injections" ] || fail "a failing command recorded an injection"
pid2=$(pid_of 2)
inj_ok kill 2
[ "$(cat "$IOUT")" = "killed rank 2 (pid $pid2) with SIGKILL" ] || fail "kill 2: stdout"
wait_job
expect_killed_rc
expect_all_checks
expect_detected 2 "$(survivors 6 2)"
expect_injection 2 SIGKILL "kill 2"
[ "$(wc -l <"$rd/$JOB/injections")" = 1 ] || fail "more than one injection recorded"
note "kill 2: $(head -n 1 "$OUT")"

# (b) two ranks at once, with SIGTERM, 1.5 s later (a bare --at is
# milliseconds, as in FTSHIM_INJECT's at=time:).
VICTIM_ARGS=(--expect "1,4")
start 6
t0=$(date +%s%N)
inj_ok kill --signal TERM --at 1500 1 4
took=$((($(date +%s%N) - t0) / 1000000))
[ "$took" -ge 1500 ] || fail "kill --at 1500: done after $took ms, expected 1.5 s"
[ "$(grep -c '^killed rank [14] (pid [0-9]*) with SIGTERM$' "$IOUT")" = 2 ] || fail "kill --signal TERM --at 1500 1 4: stdout"
wait_job
# The program completed without them: Hydra's status is 0 too.
expect_rc 0
expect_all_checks
expect_detected 1 "$(survivors 6 1,4)"
expect_detected 4 "$(survivors 6 1,4)"
expect_injection 1 SIGTERM "kill --signal TERM --at 1500 1 4"
expect_injection 4 SIGTERM "kill --signal TERM --at 1500 1 4"
note "kill --signal TERM --at 1500 1 4 (done after $took ms): $(head -n 1 "$OUT")"

# (c) two ranks at random, twice with the same seed: the same two.
VICTIM_ARGS=(--expect any:2)
chosen=()
for i in 1 2; do
	start 6
	inj_ok kill --random 2 --seed 5
	[ "$(grep -c '^killed rank [0-9] (pid [0-9]*) with SIGKILL$' "$IOUT")" = 2 ] || fail "kill --random 2: stdout"
	victims=$(sed -n 's/^killed rank \([0-9]*\) .*/\1/p' "$IOUT" | paste -sd, -)
	chosen+=("$victims")
	wait_job
	expect_killed_rc
	expect_all_checks
	for v in ${victims//,/ }; do
		expect_detected "$v" "$(survivors 6 "$victims")"
		expect_injection "$v" SIGKILL "kill --random 2 --seed 5"
	done
	surv=$(survivors 6 "$victims")
	for s in ${surv//,/ }; do
		grep -qx "rank $s holds failed: $victims" "$OUT" || fail "survivor $s does not hold exactly $victims failed"
	done
	note "kill --random 2 --seed 5 (job $i): ranks $victims"
done
[ "${chosen[0]}" = "${chosen[1]}" ] || fail "--seed 5 chose ${chosen[0]}, then ${chosen[1]}"

# (d) pause one rank past the heartbeat timeout: the others declare it
# failed; resumed, it learns it and exits (status 75).
VICTIM_ARGS=(--expect 3)
start 6 FTSHIM_HB_PERIOD=50ms FTSHIM_HB_TIMEOUT=500ms
pid3=$(pid_of 3)
inj_ok pause --for 3s 3
printf 'paused rank 3 (pid %s) for 3s\nresumed rank 3 (pid %s)\n' "$pid3" "$pid3" | cmp -s - "$IOUT" ||
	fail "pause --for 3s 3: stdout"
wait_job
# Hydra passes on 75 from a rank that exits late by itself, but gives 0
# here, for a rank that was stopped and resumed (as in detect_stop): the
# message below is what shows rank 3's exit.
case $MPITEST_FLAVOUR:$RC in
mpich:75 | *:0) ;;
*) expect_rc "$(launcher_rc 75)" ;;
esac
expect_all_checks
expect_detected 3 "$(survivors 6 3)"
expect_err_match 'ftshim\[3\] \+[0-9.]+ error: this rank was declared failed by the others \(rank [0-9]+, heartbeat timeout\) .* exits now \(status 75\)$'
expect_err_no_match 'was not killed'
expect_injection 3 "pause:3s" "pause --for 3s 3"
note "pause --for 3s 3: $(head -n 1 "$OUT")"

# Nothing runs now: list says so, clean removes every job directory.
inj_ok list
grep -q "^no job has a running rank on this host in $rd" "$IOUT" || fail "list after the jobs"
inj_ok clean
[ "$(find "$rd" -mindepth 1 | wc -l)" = 0 ] || fail "clean left $(ls "$rd")"
expect_no_leftovers victim
