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
#   MPITEST_SRCDIR    this directory (sources)
#   MPITEST_WORKDIR   a scratch directory for this case

: "${MPITEST_TIMEOUT:=60}"

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

note() {
	echo "# $*"
}

# build PROG: compile progs/PROG.c into $MPITEST_BINDIR/PROG (once).
build() {
	local prog=$1 src="$MPITEST_SRCDIR/progs/$1.c" bin="$MPITEST_BINDIR/$1"
	mkdir -p "$MPITEST_BINDIR"
	if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ] || [ "$MPITEST_SRCDIR/progs/testutil.h" -nt "$bin" ]; then
		"$MPITEST_MPICC" -std=gnu11 -O1 -g -Wall -Werror -Wno-stringop-overread -o "$bin.tmp.$$" "$src" -ldl -lm ||
			fail "cannot build $prog"
		mv -f "$bin.tmp.$$" "$bin"
	fi
	echo "$bin"
}

# The launcher's command line for NP ranks, with the shim when $1 = shim.
# Extra NAME=VALUE words before -- become the ranks' environment.
launch_cmd() {
	local mode=$1 np=$2
	shift 2
	local -a env=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		env+=("$1")
		shift
	done
	[ "${1:-}" = -- ] && shift
	[ "$mode" = shim ] && env=("LD_PRELOAD=$MPITEST_SHIM" "${env[@]}")
	case $MPITEST_FLAVOUR in
	mpich)
		LAUNCH=("$MPITEST_MPIEXEC" -disable-auto-cleanup -n "$np")
		for kv in "${env[@]}"; do LAUNCH+=(-genv "${kv%%=*}" "${kv#*=}"); done
		;;
	openmpi)
		LAUNCH=("$MPITEST_MPIEXEC" --oversubscribe --enable-recovery -n "$np")
		[ "$(id -u)" = 0 ] && LAUNCH+=(--allow-run-as-root)
		for kv in "${env[@]}"; do LAUNCH+=(-x "$kv"); done
		;;
	*)
		fail "unknown MPI flavour '$MPITEST_FLAVOUR'"
		;;
	esac
	LAUNCH+=("$@")
}

# run_job shim|plain NP [NAME=VALUE...] -- PROG ARGS...
# Runs the job under timeout -k; stdout in $OUT, stderr in $ERR, exit
# status in $RC. Never fails by itself: the case checks $RC.
run_job() {
	launch_cmd "$@"
	local n=$((${RUN_COUNT:-0} + 1))
	RUN_COUNT=$n
	OUT="$MPITEST_WORKDIR/run$n.out"
	ERR="$MPITEST_WORKDIR/run$n.err"
	echo "\$ ${LAUNCH[*]}" >>"$MPITEST_WORKDIR/commands"
	set +e
	timeout -k 5 "$MPITEST_TIMEOUT" "${LAUNCH[@]}" >"$OUT" 2>"$ERR" </dev/null
	RC=$?
	set -e
	if [ $RC = 124 ] || [ $RC = 137 ]; then
		echo "--- stderr of the timed-out job:" >&2
		tail -n 20 "$ERR" >&2
		fail "job timed out after ${MPITEST_TIMEOUT}s: ${LAUNCH[*]}"
	fi
	return 0
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
	local -a env=("LD_PRELOAD=$MPITEST_SHIM")
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
