#!/usr/bin/env bash
# inject_cmd_errors.sh: ftshim-inject against a fake run directory, no MPI.
# Its jobs' ranks are sleep processes started here (with their real pids
# and start times), a pid that cannot exist, a rank on another host, and a
# live process whose start time does not match (a reused pid). Every
# mistake must exit 2 with one line on stderr that names it, print nothing
# on stdout, and leave every process running; then kill, pause, list and
# clean must do their work and record it in the injections file.
set -euo pipefail

srcdir=${FT_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
inject=$srcdir/scripts/ftshim-inject
[ -x "$inject" ] || { echo "inject_cmd_errors.sh: $inject is missing or not executable" >&2; exit 1; }
if [ ! -r /proc/self/stat ]; then
	echo "inject_cmd_errors.sh: no /proc here; skipped"
	exit 77
fi

tmp=$(mktemp -d)
rd=$tmp/rd
mkdir -p "$rd"
timeouts=() sleepers=()
cleanup() {
	local p
	for p in ${sleepers[@]+"${sleepers[@]}"} ${timeouts[@]+"${timeouts[@]}"}; do
		kill -CONT "$p" 2>/dev/null || true
		kill -9 "$p" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

host=$(hostname 2>/dev/null || uname -n)
pid_max=$(cat /proc/sys/kernel/pid_max 2>/dev/null || echo 4194304)
no_pid=$((pid_max + 1)) # never a process

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# The /proc/PID/stat field N (3 = state, 22 = start time), counted after
# the command in parentheses; empty if there is no such process.
stat_field() {
	local line
	local -a f
	{ read -r line <"/proc/$1/stat"; } 2>/dev/null || return 0
	read -r -a f <<<"${line##*)}"
	printf '%s' "${f[$2 - 3]:-}"
}

# start_sleeper: a sleep under timeout; sets SPID (the sleep's pid) and
# STICKS (its start time). It must outlive the test, however slowly a
# loaded machine runs it (a sleep of 60 s once ended first, and a job
# whose rank it was counted as finished); the cleanup kills it.
start_sleeper() {
	local t p comm
	timeout -k 2 900 sleep 900 </dev/null &
	t=$!
	disown "$t" # killed at the end: no "Killed" notice
	timeouts+=("$t")
	SPID=
	for _ in $(seq 1 200); do
		for p in /proc/[0-9]*; do
			p=${p#/proc/}
			[ "$(stat_field "$p" 4)" = "$t" ] || continue
			comm=$(cat "/proc/$p/comm" 2>/dev/null || true)
			[ "$comm" = sleep ] && SPID=$p
		done
		[ -n "$SPID" ] && break
		sleep 0.02
	done
	[ -n "$SPID" ] || fail "the sleep under timeout (pid $t) did not start"
	sleepers+=("$SPID")
	STICKS=$(stat_field "$SPID" 22)
}

# The state letter of PID, or "gone".
state_of() {
	local s
	s=$(stat_field "$1" 3)
	printf '%s' "${s:-gone}"
}

# expect_gone PID WHAT: PID ends within 5 s.
expect_gone() {
	for _ in $(seq 1 100); do
		[ "$(state_of "$1")" = gone ] && return 0
		sleep 0.05
	done
	fail "$2: pid $1 still there"
}

# make_job ID [RANK HOST PID TICKS]...: a job directory as the shim writes it.
make_job() {
	local id=$1
	shift
	mkdir -p "$rd/$id"
	printf 'job=%s\nsize=%d\nstarted=%s\nlauncher=hydra\nprogram=/usr/bin/fake-mpi-app\n' \
		"$id" $(($# / 4)) "$(date +%s)" >"$rd/$id/job"
	: >"$rd/$id/ranks"
	while [ $# -gt 0 ]; do
		printf '%s %s %s %s\n' "$1" "$2" "$3" "$4" >>"$rd/$id/ranks"
		shift 4
	done
}

# run ARGS...: the command, bounded; $RC, $OUT, $ERR (files).
OUT=$tmp/out ERR=$tmp/err
run() {
	set +e
	timeout -k 2 20 "$inject" "$@" >"$OUT" 2>"$ERR"
	RC=$?
	set -e
}

# How many injections the run directory holds.
injections() {
	{ cat "$rd"/*/injections 2>/dev/null || true; } | wc -l
}

# The processes no failing command may touch.
watched=()
check_watched() {
	local p s
	for p in "${watched[@]}"; do
		s=$(state_of "$p")
		case $s in
		gone | Z | T | t) fail "$1: process $p (a rank) is $s after a failing command" ;;
		esac
	done
}

# expect_error WHAT PATTERN ARGS...: exit 2, nothing on stdout, one line on
# stderr that matches PATTERN (grep -E), and every watched process alive.
expect_error() {
	local what=$1 pattern=$2 before
	shift 2
	before=$(injections)
	run "$@"
	[ "$RC" = 2 ] || { cat "$OUT" "$ERR" >&2; fail "$what: exit $RC, expected 2 ($*)"; }
	[ ! -s "$OUT" ] || { cat "$OUT" >&2; fail "$what: something on stdout"; }
	[ "$(wc -l <"$ERR")" = 1 ] || { cat "$ERR" >&2; fail "$what: not one line on stderr"; }
	grep -qE -- "$pattern" "$ERR" || { cat "$ERR" >&2; fail "$what: stderr does not match: $pattern"; }
	check_watched "$what"
	[ "$(injections)" = "$before" ] || fail "$what: a failing command recorded an injection"
	echo "ok: $what: $(cat "$ERR")"
}

expect_ok() {
	local what=$1
	shift
	run "$@"
	[ "$RC" = 0 ] || { cat "$OUT" "$ERR" >&2; fail "$what: exit $RC, expected 0 ($*)"; }
	[ ! -s "$ERR" ] || { cat "$ERR" >&2; fail "$what: something on stderr"; }
}

# --- a job with one live rank here ----------------------------------------
start_sleeper
s1=$SPID s1_ticks=$STICKS
start_sleeper
reused=$SPID reused_ticks=$STICKS
watched=("$s1" "$reused")
job_a=0123456789ab
make_job $job_a 0 "$host" "$s1" "$s1_ticks" 1 "$host" "$no_pid" 12345 \
	2 elsewhere.invalid "$no_pid" 777 3 "$host" "$reused" $((reused_ticks + 1))
# A finished job: its only rank is gone.
job_c=fedcba987654
make_job $job_c 0 "$host" "$no_pid" 42

expect_error "unknown rank" "rank 9 is not a rank of job $job_a.*accepted: 0 to 3" --rundir "$rd" kill 9
expect_error "gone rank" "rank 1 \(pid $no_pid\) of job $job_a is gone" --rundir "$rd" kill 1
expect_error "reused pid" "rank 3 \(pid $reused\) of job $job_a is gone" --rundir "$rd" kill 3
expect_error "other host" "" --rundir "$rd" kill 2
grep -qxF "ftshim-inject: rank 2 runs on host elsewhere.invalid, not on this one ($host): ftshim-inject can only reach ranks on its own host" "$ERR" ||
	fail "other host: not the expected message"
expect_error "live and gone ranks" "rank 1 .* is gone" --rundir "$rd" kill 0 1
expect_error "live and unknown ranks" "rank 7 is not a rank" --rundir "$rd" kill --signal TERM 0 7
expect_error "bad signal" "--signal FOO: not a signal; accepted: .*KILL" --rundir "$rd" kill --signal FOO 0
expect_error "signal 0" "--signal 0: not a signal" --rundir "$rd" kill --signal 0 0
# Durations are read as ftshim reads FTSHIM_* and FTSHIM_INJECT: units us,
# ms, s (and ns), a bare number is milliseconds; the same words for an error.
units="with unit us, ms or s \(a bare number is ms\)"
expect_error "bad --at" "^ftshim-inject: --at soon: not a duration; accepted: a duration from 0 to 86400s, $units$" \
	--rundir "$rd" kill --at soon 0
expect_error "unknown unit in --at" "^ftshim-inject: --at 3parsecs: unknown unit 'parsecs'; accepted: a duration from 0 to 86400s, $units$" \
	--rundir "$rd" kill --at 3parsecs 0
expect_error "minutes are not a unit" "^ftshim-inject: --at 1m: unknown unit 'm'; accepted: " --rundir "$rd" kill --at 1m 0
expect_error "--at over a day" "^ftshim-inject: --at 86400001: out of range; accepted: a duration from 0 to 86400s" \
	--rundir "$rd" kill --at 86400001 0
expect_error "--at finer than 1ns" "^ftshim-inject: --at 1.5ns: finer than a nanosecond; accepted: " --rundir "$rd" kill --at 1.5ns 0
expect_error "--at with ten decimals" "^ftshim-inject: --at 0.0000000001s: too many decimals; accepted: " \
	--rundir "$rd" kill --at 0.0000000001s 0
expect_error "negative --at" "unknown option -1|--at -1: not a duration" --rundir "$rd" kill --at -1 0
expect_error "bad --for" "^ftshim-inject: --for 2x: unknown unit 'x'; accepted: a duration of more than 0 and at most 86400s, $units$" \
	--rundir "$rd" pause --for 2x 0
expect_error "unknown unit in --for" "^ftshim-inject: --for 3parsecs: unknown unit 'parsecs'; accepted: a duration of more than 0" \
	--rundir "$rd" pause --for 3parsecs 0
expect_error "zero --for" "^ftshim-inject: --for 0: out of range; accepted: a duration of more than 0 and at most 86400s, $units$" \
	--rundir "$rd" pause --for 0 0
expect_error "zero --for with a unit" "^ftshim-inject: --for 0s: out of range; accepted: " --rundir "$rd" pause --for 0s 0
expect_error "missing --for" "pause: --for DURATION is missing" --rundir "$rd" pause 0
expect_error "--copy without replicas" "--copy both: job $job_a runs no replicas" --rundir "$rd" kill --copy both 0
expect_error "no run directory (--rundir)" "no run directory $tmp/none \(from --rundir\)" --rundir "$tmp/none" kill 0
FTSHIM_RUNDIR=$tmp/none expect_error "no run directory (FTSHIM_RUNDIR)" "no run directory $tmp/none \(from FTSHIM_RUNDIR\)" list
expect_error "unknown --job" "--job ffff: no such job in $rd; jobs there: $job_a, $job_c" --rundir "$rd" kill --job ffff 0
expect_error "not a job id" "--job xyz: not a job id" --rundir "$rd" kill --job xyz 0
expect_error "finished job" "job $job_c has finished.*running ranks here: $job_a" --rundir "$rd" kill --job fedc 0
expect_error "--random larger than the live ranks" "--random 2: job $job_a has only 1 running rank on this host \(0\)" \
	--rundir "$rd" kill --random 2 --seed 1
expect_error "--host without ranks" "--host nowhere.invalid: job $job_a has no rank on host nowhere.invalid" \
	--rundir "$rd" kill --host nowhere.invalid
expect_error "--host elsewhere" "rank 2 runs on host elsewhere.invalid, not on this one" \
	--rundir "$rd" kill --host elsewhere.invalid
expect_error "no ranks" "kill: which ranks\?" --rundir "$rd" kill
expect_error "ranks and --random" "not several" --rundir "$rd" kill --random 1 0
expect_error "--seed without --random" "--seed goes with --random" --rundir "$rd" kill --seed 3 0
expect_error "not a rank" "'x' is not a rank" --rundir "$rd" kill x
expect_error "unknown option" "unknown option --bogus" --rundir "$rd" kill --bogus 0
expect_error "unknown command" "unknown command 'frob'; accepted: list, kill, pause, clean" frob
expect_error "no command" "no command given" --rundir "$rd"

# --- a second live job ------------------------------------------------------
start_sleeper
s3=$SPID s3_ticks=$STICKS
watched+=("$s3")
job_b=0123cdef0000
make_job $job_b 0 "$host" "$s3" "$s3_ticks" 1 other.invalid "$no_pid" 5
expect_error "two jobs without --job" "2 jobs have running ranks on this host \($job_a, $job_b\): choose one with --job ID" \
	--rundir "$rd" kill 0
expect_error "ambiguous --job" "--job 0123 is ambiguous.*$job_a, $job_b" --rundir "$rd" kill --job 0123 0
expect_error "unique prefix" "rank 5 is not a rank of job $job_a" --rundir "$rd" kill --job 01234 5

expect_ok "list" --rundir "$rd" list
grep -q "^$job_a  size 4 .* running  program /usr/bin/fake-mpi-app$" "$OUT" || { cat "$OUT"; fail "list: no line for $job_a"; }
grep -q "^$job_b " "$OUT" || { cat "$OUT"; fail "list: no line for $job_b"; }
grep -qE "^ +rank 0  pid $s1  running$" "$OUT" || { cat "$OUT"; fail "list: rank 0 of $job_a"; }
grep -qE "^ +rank 1  pid $no_pid  gone$" "$OUT" || { cat "$OUT"; fail "list: rank 1 of $job_a"; }
grep -qE "^ +rank 3  pid $reused  gone$" "$OUT" || { cat "$OUT"; fail "list: rank 3 (reused pid) of $job_a"; }
grep -qE "^ +1 rank on other hosts$" "$OUT" || { cat "$OUT"; fail "list: the rank on another host"; }
! grep -q "^$job_c" "$OUT" || { cat "$OUT"; fail "list: shows the finished job $job_c without --all"; }
expect_ok "list --all" --rundir "$rd" list --all
grep -q "^$job_c .* finished " "$OUT" || { cat "$OUT"; fail "list --all: no line for $job_c"; }
echo "ok: list"

# --- kill --------------------------------------------------------------------
expect_ok "kill --signal TERM" --rundir "$rd" kill --job 01234 --signal TERM 0
[ "$(cat "$OUT")" = "killed rank 0 (pid $s1) with SIGTERM" ] || { cat "$OUT"; fail "kill: stdout"; }
expect_gone "$s1" "kill: rank 0"
inj=$rd/$job_a/injections
[ "$(wc -l <"$inj")" = 1 ] || { cat "$inj"; fail "kill: not one line in $inj"; }
grep -qE "^time=[0-9]+\.[0-9]{6} rank=0 host=$host pid=$s1 how=SIGTERM by=ftshim-inject trigger=\"kill --job 01234 --signal TERM 0\"$" "$inj" ||
	{ cat "$inj"; fail "kill: the injection line"; }
watched=("$reused" "$s3")
check_watched "kill"
echo "ok: kill --signal TERM 0: $(cat "$inj")"

# --- clean keeps the live job --------------------------------------------------
expect_ok "clean" --rundir "$rd" clean
if [ -e "$rd/$job_a" ] || [ -e "$rd/$job_c" ]; then
	ls "$rd"
	fail "clean: finished jobs left"
fi
[ -d "$rd/$job_b" ] || fail "clean: removed $job_b, which runs"
echo "ok: clean removed $job_a and $job_c, kept $job_b"

# --- pause (the only live job now: no --job needed) -----------------------------
set +e
timeout -k 2 20 "$inject" --rundir "$rd" pause --for 0.5s 0 >"$tmp/pause.out" 2>"$tmp/pause.err" &
pause_pid=$!
set -e
stopped=0
for _ in $(seq 1 200); do
	if [ "$(state_of "$s3")" = T ]; then
		stopped=1
		break
	fi
	sleep 0.01
done
set +e
wait "$pause_pid"
rc=$?
set -e
[ "$rc" = 0 ] || { cat "$tmp/pause.out" "$tmp/pause.err" >&2; fail "pause: exit $rc"; }
[ "$stopped" = 1 ] || fail "pause: rank 0 (pid $s3) was never seen stopped"
case $(state_of "$s3") in
S | R) ;;
*) fail "pause: rank 0 (pid $s3) is $(state_of "$s3") after the pause" ;;
esac
printf 'paused rank 0 (pid %s) for 500ms\nresumed rank 0 (pid %s)\n' "$s3" "$s3" | cmp -s - "$tmp/pause.out" ||
	{ cat "$tmp/pause.out"; fail "pause: stdout"; }
grep -qE "^time=[0-9.]+ rank=0 host=$host pid=$s3 how=pause:500ms by=ftshim-inject trigger=\"pause --for 0.5s 0\"$" "$rd/$job_b/injections" ||
	{ cat "$rd/$job_b/injections"; fail "pause: the injection line"; }
echo "ok: pause --for 0.5s 0: stopped during the pause, running after it"

# --- bare numbers are milliseconds: --at 1500 waits 1.5 s, --for 700 is 700ms -----
now_ms() {
	local t
	t=$(date +%s%N)
	printf '%s' $((t / 1000000))
}
# timed ARGS...: expect_ok, and $MS: how long it took, in ms.
timed() {
	local t0
	t0=$(now_ms)
	expect_ok "$@"
	MS=$(($(now_ms) - t0))
}
timed "pause --at 1500 --for 700" --rundir "$rd" pause --at 1500 --for 700 0
{ [ "$MS" -ge 2200 ] && [ "$MS" -lt 15000 ]; } || fail "pause --at 1500 --for 700: took $MS ms, expected 1.5 s + 0.7 s"
printf 'paused rank 0 (pid %s) for 700ms\nresumed rank 0 (pid %s)\n' "$s3" "$s3" | cmp -s - "$OUT" ||
	{ cat "$OUT"; fail "pause --at 1500 --for 700: stdout"; }
grep -q "how=pause:700ms by=ftshim-inject trigger=\"pause --at 1500 --for 700 0\"$" "$rd/$job_b/injections" ||
	{ cat "$rd/$job_b/injections"; fail "pause --at 1500 --for 700: the injection line"; }
case $(state_of "$s3") in
S | R) ;;
*) fail "pause --at 1500 --for 700: rank 0 (pid $s3) is $(state_of "$s3") after the pause" ;;
esac
echo "ok: pause --at 1500 --for 700 0: took $MS ms"
timed "pause --at 2s --for 1.5ms" --rundir "$rd" pause --at 2s --for 1.5ms 0
{ [ "$MS" -ge 2000 ] && [ "$MS" -lt 15000 ]; } || fail "pause --at 2s --for 1.5ms: took $MS ms, expected 2 s"
grep -q "^paused rank 0 (pid $s3) for 1.5ms$" "$OUT" || { cat "$OUT"; fail "pause --at 2s --for 1.5ms: stdout"; }
echo "ok: pause --at 2s --for 1.5ms 0: took $MS ms"

# --- kill --random, then clean removes the last job ------------------------------
timed "kill --random" --rundir "$rd" kill --random 1 --seed 4 --at 250
{ [ "$MS" -ge 250 ] && [ "$MS" -lt 10000 ]; } || fail "kill --at 250: took $MS ms, expected 250 ms"
[ "$(cat "$OUT")" = "killed rank 0 (pid $s3) with SIGKILL" ] || { cat "$OUT"; fail "kill --random: stdout"; }
expect_gone "$s3" "kill --random"
[ "$(grep -c 'how=SIGKILL by=ftshim-inject trigger="kill --random 1 --seed 4 --at 250"' "$rd/$job_b/injections")" = 1 ] ||
	{ cat "$rd/$job_b/injections"; fail "kill --random: the injection line"; }
watched=("$reused")
expect_error "nothing left to kill" "no job has a running rank on this host in $rd" --rundir "$rd" kill 0
expect_ok "clean" --rundir "$rd" clean
[ ! -e "$rd/$job_b" ] || fail "clean: $job_b left after its last rank died"
echo "ok: kill --random 1 --seed 4 --at 250 (took $MS ms), clean"

# --- a replicated job (FTSHIM_REPLICAS): ranks name the program's ranks --------
start_sleeper
s4=$SPID s4_ticks=$STICKS
start_sleeper
s5=$SPID s5_ticks=$STICKS
watched=("$reused" "$s4" "$s5")
job_r=abcabcabcabc
make_job $job_r 0 "$host" "$s4" "$s4_ticks" 1 "$host" "$no_pid" 12
printf '2 %s %s %s replica-of=0\n' "$host" "$s5" "$s5_ticks" >>"$rd/$job_r/ranks"
expect_error "a replica named by its job rank" "rank 2 of job $job_r is the replica of rank 0 \(FTSHIM_REPLICAS\): name rank 0 with --copy replica" \
	--rundir "$rd" kill 2
expect_error "--copy replica of a rank without one" "--copy replica: rank 1 of job $job_r has no replica; ranks with one: 0" \
	--rundir "$rd" kill --copy replica 1
expect_error "bad --copy" "--copy twice: accepted: primary, replica or both" --rundir "$rd" kill --copy twice 0
expect_error "--copy with --random" "--copy goes with RANK" --rundir "$rd" kill --copy replica --random 1
expect_ok "kill --copy replica" --rundir "$rd" kill --copy replica 0
[ "$(cat "$OUT")" = "killed rank 2 (pid $s5) with SIGKILL" ] || { cat "$OUT"; fail "kill --copy replica: stdout"; }
expect_gone "$s5" "kill --copy replica: the replica"
case $(state_of "$s4") in
S | R) ;;
*) fail "kill --copy replica: the primary (pid $s4) is $(state_of "$s4")" ;;
esac
grep -q "rank=2 host=$host pid=$s5 how=SIGKILL by=ftshim-inject trigger=\"kill --copy replica 0\"" "$rd/$job_r/injections" ||
	{ cat "$rd/$job_r/injections"; fail "kill --copy replica: the injection line"; }
expect_ok "kill the primary" --rundir "$rd" kill 0
echo "ok: --copy names a replica by its program rank"

# The process with the reused pid was never touched.
[ "$(state_of "$reused")" = S ] || fail "the process with a reused pid ($reused) is $(state_of "$reused")"
echo "inject_cmd_errors.sh: all checks passed"
