# Transparent replication of an mpi4py program (Debian's python3-mpi4py,
# built against Open MPI): its lowercase calls receive every pickled
# object by MPI_Mprobe and MPI_Mrecv, which replication refused before
# ("MPI_Mprobe on a replicated communicator is not supported yet"), so no
# mpi4py program that receives an object could run replicated. Now 3
# program ranks at 100% (6 processes) print what they print without
# replicas, the replicas too, and so they do with a primary killed right
# after its 50th MPI_Mprobe, after its 30th MPI_Improbe, and in a random
# round.
[ "$MPITEST_FLAVOUR" = openmpi ] || { echo "skip: Debian's python3-mpi4py is built against Open MPI only"; exit 77; }
py=/usr/bin/python3
timeout -k 5 30 "$py" -c 'import mpi4py' 2>/dev/null || { echo "skip: $py cannot import mpi4py (Debian package python3-mpi4py)"; exit 77; }
src=$MPITEST_SRCDIR/progs/mpi4py_repl.py
run=$MPITEST_WORKDIR/run

# Anywhere on a line: mpirun joins the ranks' output, not always at line ends.
lines() {
	grep -o 'mpi4py rank [0-9]*: [0-9]*' "$1" | sort || true
}

# 100 rounds, 5 ms apart.
args=(100 5)
run_job plain 3 -- "$py" "$src" "${args[@]}"
expect_rc 0
lines "$OUT" >want.txt
[ "$(grep -c '^mpi4py rank' want.txt)" = 3 ] || fail "mpi4py_repl.py alone did not print 3 lines"

# replicated [INJECT]: 6 processes at 100%; the terminal's lines and every
# replica's are the plain run's.
replicated() {
	rm -rf "$run"
	run_job shim 6 "FTSHIM_RUNDIR=$run" FTSHIM_REPLICAS=100% ${1:+"FTSHIM_INJECT=$1"} -- "$py" "$src" "${args[@]}"
	lines "$OUT" >got.txt
	diff -u want.txt got.txt >&2 || { tail -n 20 "$ERR" >&2; fail "${1:-no failure}: not the lines of the run without replicas"; }
	# A replica prints to its file until it is promoted, then to the
	# terminal.
	local f line
	for f in "$run"/*/replica-*.out; do
		[ -f "$f" ] || continue
		lines "$f" | while read -r line; do
			grep -qxF "$line" want.txt || fail "${1:-no failure}: ${f##*/} printed $line"
		done
	done
	expect_err_no_match 'ftshim\[[0-9]+\] \+[0-9.]+ (error|warn): '
	expect_err_no_match 'Traceback|MPI_ERR|PROC_FAILED'
}

replicated
[ "$(ls "$run"/*/replica-*.out | wc -l)" = 3 ] || fail "no failure: not 3 replica output files"
note "no failure: the same 3 lines, the replicas' too"
for at in "rank=1 copy=primary at=call:MPI_Mprobe:50" "rank=0 copy=primary at=call:MPI_Improbe:30"; do
	replicated "$at"
	expect_killed_rc
	grep -q "info: injecting SIGKILL now" "$ERR" || fail "$at: nothing was killed"
	expect_err_match 'info: rank [01]: primary \(process [01]\) lost, replica \(process [0-9]+\) promoted'
	note "$at: the same 3 lines"
done
seed=${REPLICAS_MPI4PY_SEED:-$RANDOM}
RANDOM=$seed
# After a random one of its 400 sends (4 a round): not at a time, which
# on a slow machine may fall in mpi4py's own start, where the MPI makes
# communicators (a known gap: status 76).
at="rank=2 copy=primary at=call:MPI_Send:$((10 + RANDOM % 380))"
replicated "$at"
expect_killed_rc
grep -q "info: injecting SIGKILL now" "$ERR" || fail "$at (seed $seed): nothing was killed (the run is too short?)"
note "$at (seed $seed): the same 3 lines"
if pgrep -f "$src" >/dev/null; then
	pkill -9 -f "$src" || true
	fail "processes of mpi4py_repl.py were left running"
fi
