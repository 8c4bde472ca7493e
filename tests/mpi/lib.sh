# lib.sh: what every MPI integration case uses: build a test program with
# the flavour's mpicc, run a job with or without the shim under a hard
# time limit, and check what happened. Sourced by the driver in a subshell
# per case; a case fails by calling fail (or by any command failing under
# set -e).
#
# From the driver's environment:
#   MPITEST_FLAVOUR   mpich | openmpi
#   MPITEST_MPICC     the flavour's compiler wrapper
#   MPITEST_MPIEXEC   the flavour's launcher
#   MPITEST_SHIM      the libftshim.so to preload
#   MPITEST_SANITIZER no, or the sanitizer the build was made with
#   MPITEST_SAN_RUNTIME  its runtime, preloaded before the shim
#   MPITEST_SRCDIR    this directory (sources)
#   MPITEST_WORKDIR   a scratch directory for this case

: "${MPITEST_TIMEOUT:=60}"

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# What LD_PRELOAD holds for a rank with the shim. The test programs are
# not instrumented, so a sanitized shim needs its runtime loaded first.
shim_preload() {
	echo "${MPITEST_SAN_RUNTIME:+$MPITEST_SAN_RUNTIME:}$MPITEST_SHIM"
}

# A sanitized build: the ranks run several times slower, so injections
# at random times chosen for the uninstrumented speed are skipped.
instrumented() {
	[ "${MPITEST_SANITIZER:-no}" != no ]
}

# A sanitized build: any report in the job's stderr fails the case (the
# runtimes' exit codes are turned off in the driver, so that the cases'
# own status checks still hold).
expect_no_sanitizer_report() {
	instrumented || return 0
	if grep -qE '^(WARNING: ThreadSanitizer|==[0-9]+==ERROR: (Address|Leak)Sanitizer)|: runtime error: ' "$1"; then
		grep -E -A 30 '^(WARNING: ThreadSanitizer|==[0-9]+==ERROR:)|: runtime error: ' "$1" | head -n 60 >&2 || true
		fail "the $MPITEST_SANITIZER sanitizer reported an error (above; all of it in $1)"
	fi
}

note() {
	echo "# $*"
}

# build NAME [FLAG...]: compile progs/NAME.c (or, for example/NAME, the
# shipped examples/NAME.c) with the flavour's mpicc and the extra flags
# (include paths, libraries); prints the binary's path.
build() {
	local name=$1 prog=${1#example/} src="$MPITEST_SRCDIR/progs/$1.c" bin
	shift
	[ "$prog" = "$name" ] || src="$MPITEST_SRCDIR/../../examples/$prog.c"
	bin="$MPITEST_BINDIR/$prog"
	mkdir -p "$MPITEST_BINDIR"
	if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ] || [ "$MPITEST_SRCDIR/progs/testutil.h" -nt "$bin" ] ||
		[ "$MPITEST_SRCDIR/progs/launch_rank.h" -nt "$bin" ]; then
		"$MPITEST_MPICC" -I"$MPITEST_SRCDIR/../../include" -std=gnu11 -O1 -g -Wall -Werror -Wno-stringop-overread -o "$bin.tmp.$$" "$src" "$@" -ldl -lm ||
			fail "cannot build $prog"
		mv -f "$bin.tmp.$$" "$bin"
	fi
	echo "$bin"
}

# build_fortran NAME VARIANT [FLAG...] [-- LINKFLAG...]: compile
# progs/NAME.F90 with the flavour's Fortran wrapper (MPITEST_MPIFC, or
# mpif90.FLAVOUR) and the flags, linking with the link flags, into
# NAME-VARIANT; prints the binary's path. A case without a Fortran
# compiler is skipped (exit 77).
build_fortran() {
	local src="$MPITEST_SRCDIR/progs/$1.F90" bin="$MPITEST_BINDIR/$1-$2" fc
	local -a flags=() link=()
	fc=${MPITEST_MPIFC:-${MPITEST_MPICC/mpicc/mpif90}}
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		flags+=("$1")
		shift
	done
	[ "${1:-}" = -- ] && shift
	link=("$@")
	mkdir -p "$MPITEST_BINDIR"
	if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ] || [ "$MPITEST_SHIM" -nt "$bin" ]; then
		if ! command -v gfortran >/dev/null || ! command -v "$fc" >/dev/null; then
			echo "no Fortran compiler ($fc, gfortran)" >&2
			exit 77
		fi
		"$fc" -g -O1 "${flags[@]}" -o "$bin.tmp.$$" "$src" "${link[@]}" ||
			fail "cannot build $bin"
		mv -f "$bin.tmp.$$" "$bin"
	fi
	echo "$bin"
}

# build_lib NAME: compile progs/NAME.c into a shared object (a tool to
# preload) with the flavour's mpicc; prints its path.
build_lib() {
	local src="$MPITEST_SRCDIR/progs/$1.c" lib="$MPITEST_BINDIR/$1.so"
	mkdir -p "$MPITEST_BINDIR"
	if [ ! -f "$lib" ] || [ "$src" -nt "$lib" ] || [ "$MPITEST_SRCDIR/progs/launch_rank.h" -nt "$lib" ]; then
		"$MPITEST_MPICC" -std=gnu11 -O1 -g -Wall -Werror -shared -fPIC -o "$lib.tmp.$$" "$src" ||
			fail "cannot build $1.so"
		mv -f "$lib.tmp.$$" "$lib"
	fi
	echo "$lib"
}

# split_launch_args shim|plain [NAME=VALUE...] -- PROG ARGS: the ranks'
# environment into LAUNCH_ENV (LD_PRELOAD of the shim first when $1 =
# shim), the program and its arguments into LAUNCH_PROG.
split_launch_args() {
	local mode=$1
	shift
	LAUNCH_ENV=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		LAUNCH_ENV+=("$1")
		shift
	done
	[ "${1:-}" = -- ] && shift
	[ "$mode" = shim ] && LAUNCH_ENV=("LD_PRELOAD=$(shim_preload)" "${LAUNCH_ENV[@]}")
	# Ranks started through a remote agent (the multihost cases) do not
	# inherit the driver's environment: the sanitizer's settings go along.
	if [ "$mode" = shim ] && instrumented; then
		LAUNCH_ENV+=("TSAN_OPTIONS=$TSAN_OPTIONS" "ASAN_OPTIONS=$ASAN_OPTIONS" "UBSAN_OPTIONS=$UBSAN_OPTIONS"
			"UCX_MEM_EVENTS=no" "UCX_MEM_MALLOC_HOOKS=no")
	fi
	LAUNCH_PROG=("$@")
}

# finish_launch: LAUNCH_ENV, as the flavour's launcher takes it (-genv /
# -x), then LAUNCH_PROG, appended to LAUNCH.
finish_launch() {
	local kv
	for kv in "${LAUNCH_ENV[@]}"; do
		case $MPITEST_FLAVOUR in
		mpich) LAUNCH+=(-genv "${kv%%=*}" "${kv#*=}") ;;
		*) LAUNCH+=(-x "$kv") ;;
		esac
	done
	LAUNCH+=("${LAUNCH_PROG[@]}")
}

# The launcher's command line for NP ranks, with the shim when $1 = shim.
# Extra NAME=VALUE words before -- become the ranks' environment.
launch_cmd() {
	local np=$2
	split_launch_args "$1" "${@:3}"
	case $MPITEST_FLAVOUR in
	mpich)
		LAUNCH=("$MPITEST_MPIEXEC" -disable-auto-cleanup -n "$np")
		;;
	openmpi)
		LAUNCH=("$MPITEST_MPIEXEC" --oversubscribe --enable-recovery -n "$np")
		[ "$(id -u)" = 0 ] && LAUNCH+=(--allow-run-as-root)
		;;
	*)
		fail "unknown MPI flavour '$MPITEST_FLAVOUR'"
		;;
	esac
	finish_launch
}

# run_job shim|plain NP [NAME=VALUE...] -- PROG ARGS...
# Runs the job under timeout -k; stdout in $OUT, stderr in $ERR, exit
# status in $RC. Never fails by itself: the case checks $RC.
run_job() {
	launch_cmd "$@"
	run_launch
}

# run_launch [NOTE]: run the command in $LAUNCH as run_job does (NOTE, if
# any, goes before it in the commands log).
run_launch() {
	local n=$((${RUN_COUNT:-0} + 1))
	RUN_COUNT=$n
	OUT="$MPITEST_WORKDIR/run$n.out"
	ERR="$MPITEST_WORKDIR/run$n.err"
	echo "\$ ${1:+$1 }${LAUNCH[*]}" >>"$MPITEST_WORKDIR/commands"
	JOB_T0=$SECONDS JOB_N=$n JOB_ERR=$ERR
	timeout -k 5 "$MPITEST_TIMEOUT" "${LAUNCH[@]}" >"$OUT" 2>"$ERR" </dev/null &
	JOB_PID=$!
	wait_job
}

# guard PID N: the watchdog of run N, whose timeout process is PID,
# started at JOB_T0, with its stderr in JOB_ERR. If the job still runs a
# little before its time is up, it writes where every process of the
# job is (tests/mpi/stacks) to stacksN.short, all of gdb's output to
# stacksN.txt, and ends the job, which wait_job then reports as timed
# out.
guard() {
	local margin=$((MPITEST_TIMEOUT / 4)) end sleeper
	[ "$margin" -le 8 ] || margin=8
	end=$((JOB_T0 + MPITEST_TIMEOUT - margin))
	# It naps in a read that times out, not in sleep: a sleep of its
	# would outlive the guard that wait_job kills.
	exec {sleeper}<> <(:)
	while [ "$SECONDS" -lt "$end" ]; do
		kill -0 "$1" 2>/dev/null || return 0
		read -rt 1 -u "$sleeper" || true
	done
	kill -0 "$1" 2>/dev/null || return 0
	# Its stderr before the processes are stopped to be looked at.
	tail -n 20 "$JOB_ERR" >"$MPITEST_WORKDIR/errtail$2"
	timeout -k 2 "$((margin - 1))" "$MPITEST_SRCDIR/stacks" "$1" "$MPITEST_WORKDIR/stacks$2.txt" \
		>"$MPITEST_WORKDIR/stacks$2.short" 2>&1
	kill -TERM "$1" 2>/dev/null || true
}

# The launcher's exit status for a job whose ranks exit with status $1:
# Hydra passes it on; Open MPI 4.1's mpirun with --enable-recovery exits 0
# whatever its ranks did (even after MPI_Abort).
launcher_rc() {
	case $MPITEST_FLAVOUR in
	openmpi) echo 0 ;;
	*) echo "$1" ;;
	esac
}

# run_single [NAME=VALUE...] -- PROG ARGS: the program alone (an MPI
# singleton, no launcher) with the shim; $OUT, $ERR, $RC as run_job.
run_single() {
	local -a env=("LD_PRELOAD=$(shim_preload)")
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		env+=("$1")
		shift
	done
	shift
	local n=$((${RUN_COUNT:-0} + 1))
	RUN_COUNT=$n
	OUT="$MPITEST_WORKDIR/run$n.out"
	ERR="$MPITEST_WORKDIR/run$n.err"
	set +e
	env "${env[@]}" timeout -k 5 "$MPITEST_TIMEOUT" "$@" >"$OUT" 2>"$ERR" </dev/null
	RC=$?
	set -e
	expect_no_sanitizer_report "$ERR"
}

# start_job: as run_job, but in the background; wait_job collects it.
start_job() {
	launch_cmd "$@"
	start_launch
}

# start_launch [NOTE]: start the command in $LAUNCH as start_job does.
start_launch() {
	local n=$((${RUN_COUNT:-0} + 1))
	RUN_COUNT=$n
	OUT="$MPITEST_WORKDIR/run$n.out"
	ERR="$MPITEST_WORKDIR/run$n.err"
	echo "\$ ${1:+$1 }${LAUNCH[*]} &" >>"$MPITEST_WORKDIR/commands"
	JOB_T0=$SECONDS JOB_N=$n JOB_ERR=$ERR
	timeout -k 5 "$MPITEST_TIMEOUT" "${LAUNCH[@]}" >"$OUT" 2>"$ERR" </dev/null &
	JOB_PID=$!
}

# wait_job: wait for the job run_launch or start_launch started, under
# its guard; sets RC. A job that is still running when its time is up
# fails the case with the tail of its stderr and where its processes
# were.
wait_job() {
	local n=$JOB_N gpid
	guard "$JOB_PID" "$n" &
	gpid=$!
	set +e
	wait "$JOB_PID"
	RC=$?
	set -e
	kill "$gpid" 2>/dev/null || true
	wait "$gpid" 2>/dev/null || true
	# 124 (or 137 after -k) from timeout itself, not from the job.
	if [ -e "$MPITEST_WORKDIR/stacks$n.short" ] || [ $((SECONDS - JOB_T0)) -ge "$MPITEST_TIMEOUT" ]; then
		echo "--- stderr of the timed-out job:" >&2
		if [ -e "$MPITEST_WORKDIR/errtail$n" ]; then
			cat "$MPITEST_WORKDIR/errtail$n" >&2
		else
			tail -n 20 "$JOB_ERR" >&2
		fi
		if [ -e "$MPITEST_WORKDIR/stacks$n.short" ]; then
			echo "--- where its processes were (all of it in stacks$n.txt):" >&2
			head -n 40 "$MPITEST_WORKDIR/stacks$n.short" >&2
		fi
		fail "job timed out after ${MPITEST_TIMEOUT}s: ${LAUNCH[*]}"
	fi
	expect_no_sanitizer_report "$JOB_ERR"
	return 0
}

# wait_for_file PATH SECONDS
wait_for_file() {
	local i
	for i in $(seq 1 $((${2:-30} * 10))); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	fail "no $1 after ${2:-30}s"
}

# The launcher's status for a job in which a rank died by HOW (detect's
# --how: sigkill, sigsegv, exit) and the program completed without it: 0.
# Under Hydra the lost rank's supervisor waits for the other ranks of its
# host and exits 0 once one of them has finished (src/supervisor.h);
# Open MPI's mpirun with --enable-recovery exits 0 whatever happened.
death_rc() {
	case $1 in
	sigkill | sigsegv | exit) echo 0 ;;
	*) echo "?" ;;
	esac
}

# The launcher's status for a job in which a rank died by HOW and the
# program did not complete (no rank of the lost one's host finished):
# Hydra passes on the worst status (a death by signal N as 128+N).
lost_rc() {
	case $MPITEST_FLAVOUR:$1 in
	openmpi:*) echo 0 ;;
	*:sigkill) echo 137 ;;
	*:sigsegv) echo 139 ;;
	*:exit) echo 1 ;;
	*) echo "?" ;;
	esac
}

# expect_detected RANK S1,S2,...: each listed survivor logged once that
# RANK failed.
# A rank's log lines are matched anywhere on a line, not at its start: the
# launcher merges all ranks' stderr, and a dying rank's partial writes (Open
# MPI's SIGSEGV backtrace comes in pieces) can end up in front of another
# rank's line. ftshim writes each line whole, so a line is never split.
expect_detected() {
	local s n
	for s in ${2//,/ }; do
		n=$(grep -cE "ftshim\[$s\] \+[0-9.]+ info: rank $1 failed: " "$ERR" || true)
		[ "$n" = 1 ] || { tail -n 30 "$ERR" >&2; fail "rank $s logged rank $1's failure $n times, expected once"; }
	done
}

# survivors N V1,V2,...: the ranks 0..N-1 that are not listed, comma-separated.
survivors() {
	local r out=
	for r in $(seq 0 $(($1 - 1))); do
		case ",$2," in *",$r,"*) ;; *) out="$out${out:+,}$r" ;; esac
	done
	echo "$out"
}

# expect_all_checks [LABEL]: the job printed ALL CHECKS PASSED and no
# rank a failed check; LABEL names the run in the failure.
expect_all_checks() {
	grep -q '^ALL CHECKS PASSED$' "$OUT" || {
		cat "$OUT" >&2
		grep 'CHECK FAILED' "$ERR" | head -n 20 >&2 || true
		grep -v 'info: rank' "$ERR" | tail -n 15 >&2 || true
		fail "${1:+$1: }the checks did not pass (status $RC)"
	}
	expect_err_no_match 'CHECK FAILED'
}

# expect_killed_rc: the job's status after a rank was SIGKILLed and the
# program completed without it (death_rc). On
# MPICH, Hydra ORs its ranks' wait statuses, and once in some 40 runs a
# survivor's exit races the proxy: the job then reports "Hangup (signal
# 1)", status 1, which is accepted (with a note) when Hydra says so.
expect_killed_rc() {
	if [ "$MPITEST_FLAVOUR" = mpich ] && [ "$RC" = 1 ] && grep -qF 'EXIT STRING: Hangup (signal 1)' "$OUT" "$ERR"; then
		note "Hydra reported Hangup (signal 1) for the killed rank: status 1 accepted"
		return 0
	fi
	expect_rc "$(death_rc sigkill)"
}

expect_rc() {
	if [ "$RC" != "$1" ]; then
		echo "--- stdout:" >&2
		tail -n 20 "$OUT" >&2
		echo "--- stderr:" >&2
		tail -n 40 "$ERR" >&2
		fail "exit status $RC, expected $1"
	fi
}

# expect_err_line TEXT: stderr has a line exactly equal to TEXT.
expect_err_line() {
	grep -qxF -- "$1" "$ERR" || {
		echo "--- stderr:" >&2
		tail -n 20 "$ERR" >&2
		fail "stderr lacks the line: $1"
	}
}

expect_err_match() {
	grep -qE -- "$1" "$ERR" || {
		echo "--- stderr:" >&2
		tail -n 20 "$ERR" >&2
		fail "stderr matches nothing like: $1"
	}
}

expect_err_no_match() {
	if grep -qE -- "$1" "$ERR"; then
		grep -E -- "$1" "$ERR" | head -n 5 >&2
		fail "stderr should not match: $1"
	fi
}

# No process of this case's programs may outlive its job.
expect_no_leftovers() {
	local prog=$1
	sleep 0.2
	if pgrep -f "$MPITEST_BINDIR/$prog" >/dev/null; then
		pgrep -af "$MPITEST_BINDIR/$prog" >&2
		pkill -9 -f "$MPITEST_BINDIR/$prog" || true
		fail "processes of $prog were left running"
	fi
}

# expect_main_runs RUNS: the program restarted in place (FTSHIM_SPARES)
# ran main RUNS times on each of 4 ranks (its lines "in main: rank R of 4
# from step ...") and printed its result once, the failure-free one
# ("result: X (expected X)"), with no check failed.
expect_main_runs() {
	[ "$(grep -c '^in main: rank [0-3] of 4 from step ' "$OUT")" = $((4 * $1)) ] ||
		{ cat "$OUT" >&2; fail "expected $1 runs of main on 4 ranks"; }
	[ "$(grep -c '^result: ' "$OUT")" = 1 ] || { cat "$OUT" >&2; fail "expected one result line"; }
	grep -qE '^result: ([0-9]+) \(expected \1\)$' "$OUT" || { cat "$OUT" >&2; fail "the result is not the failure-free one"; }
	expect_err_no_match 'CHECK FAILED|error:'
}

# qe_setup DIR ECUT K: skip (77) unless this is Open MPI (Debian's pw.x
# is built with it) and Quantum ESPRESSO and its data are installed; else
# set $pw to pw.x, unpack the silicon pseudopotential into DIR/pseudo and
# write DIR/si.in (qe_si_input).
qe_setup() {
	[ "$MPITEST_FLAVOUR" = openmpi ] || { echo "pw.x is built with Open MPI only"; exit 77; }
	pw=$(command -v pw.x || true)
	local pp=/usr/share/doc/quantum-espresso/examples/EPW/sic/pp/Si.pz-vbc.UPF.gz
	if [ -z "$pw" ] || [ ! -f "$pp" ]; then
		echo "quantum-espresso or quantum-espresso-data is not installed (dev/setup installs them)"
		exit 77
	fi
	mkdir -p "$1/pseudo"
	gunzip -c "$pp" >"$1/pseudo/Si.pz-vbc.UPF"
	qe_si_input "$1/si.in" "$1" "$2" "$3"
}

# qe_si_input FILE DIR ECUT K: Quantum ESPRESSO's input for bulk
# silicon's ground state (pw.x), with its pseudopotential in DIR/pseudo,
# its outdir DIR/out, the cut-off ECUT (Ry) and a K x K x K k-point grid.
qe_si_input() {
	cat >"$1" <<IN
&control
  calculation = 'scf', prefix = 'si', pseudo_dir = '$2/pseudo', outdir = '$2/out'
/
&system
  ibrav = 2, celldm(1) = 10.2, nat = 2, ntyp = 1, ecutwfc = $3
/
&electrons
  conv_thr = 1.0d-10
/
ATOMIC_SPECIES
 Si 28.086 Si.pz-vbc.UPF
ATOMIC_POSITIONS alat
 Si 0.00 0.00 0.00
 Si 0.25 0.25 0.25
K_POINTS automatic
 $4 $4 $4 1 1 1
IN
}
