# Transparent partial replication of a real program from Debian's
# archive, unmodified (issue 16): LAMMPS (built with Open MPI) runs its
# bundled Lennard-Jones melt on 2 program ranks, each with a replica
# (FTSHIM_REPLICAS=100%, 4 processes). It uses a Cartesian communicator,
# which ftshim answers for the program's ranks. A primary, rank 0's (which
# writes the thermo table) and in another run rank 1's, is killed at a
# random time in the middle of the run: its replica carries on, and the
# job prints the thermo table once, ending on the same line as without
# replicas or failures. (A line the primary printed after the last
# outcome it told its replica, the replica prints again once promoted:
# such a repeat, right after itself, is counted and allowed.)
[ "$MPITEST_FLAVOUR" = openmpi ] || { echo "Debian's LAMMPS is built with Open MPI only"; exit 77; }
lmp=$(command -v lmp || true)
melt=/usr/share/lammps/examples/melt/in.melt
if [ -z "$lmp" ] || [ ! -f "$melt" ]; then
	echo "lammps is not installed (dev/setup installs it)"
	exit 77
fi
MPITEST_TIMEOUT=60
run=$MPITEST_WORKDIR/run
STEPS=1000
sed "s/^run[[:space:]].*/run $STEPS/" "$melt" >"$MPITEST_WORKDIR/in.melt"
grep -q "^run $STEPS\$" "$MPITEST_WORKDIR/in.melt" || fail "$melt has no run line to change"

# The thermo lines (step, temperature, energies, pressure) of the output.
thermo() {
	grep -E '^ +[0-9]+ +-?[0-9.]+ +-?[0-9.]+ ' "$1" || true
}

run_job plain 2 OMP_NUM_THREADS=1 -- "$lmp" -in "$MPITEST_WORKDIR/in.melt" -log none
expect_rc 0
thermo "$OUT" >want.txt
last=$(tail -n 1 want.txt)
[ -n "$last" ] && [ "$(echo $last | cut -d' ' -f1)" = $STEPS ] ||
	{ tail -n 30 "$OUT" >&2; fail "LAMMPS alone did not reach step $STEPS"; }
note "without replicas or failures: $(wc -l <want.txt) thermo lines, the last: $last"

seed=${REPLICAS_LAMMPS_SEED:-$RANDOM}
note "kill times drawn with seed $seed (REPLICAS_LAMMPS_SEED=$seed replays them)"
RANDOM=$seed
for victim in 0 1; do
	at="time:$((700 + RANDOM % 700))ms"
	rm -rf "$run"
	run_job shim 4 OMP_NUM_THREADS=1 "FTSHIM_RUNDIR=$run" FTSHIM_REPLICAS=100% \
		"FTSHIM_INJECT=rank=$victim at=$at" -- "$lmp" -in "$MPITEST_WORKDIR/in.melt" -log none
	expect_killed_rc
	grep -q "ftshim\[$victim\] .* info: injecting SIGKILL now" "$ERR" ||
		{ tail -n 20 "$ERR" >&2; fail "the primary of rank $victim was not killed at $at (the run is too short?)"; }
	p=$(sed -n "s/^\([0-9]*\) .* replica-of=$victim\$/\1/p" "$run"/*/ranks)
	expect_err_match "ftshim\[$p\] \+[0-9.]+ info: rank $victim: primary \(process $victim\) lost, replica \(process $p\) promoted, [0-9.]+ ms"
	thermo "$OUT" >all.txt
	uniq all.txt >got.txt
	diff -u want.txt got.txt >&2 ||
		{ tail -n 20 "$ERR" >&2; fail "rank $victim's primary killed at $at: not LAMMPS's thermo table without replicas or failures"; }
	[ "$(grep -c '^Loop time of ' "$OUT")" = 1 ] || fail "rank $victim's primary killed at $at: the run's summary is not printed once"
	expect_err_no_match 'ftshim\[[0-9]+\] \+[0-9.]+ (error|warn): '
	expect_err_no_match 'MPI_ERR|PROC_FAILED'
	note "the primary of rank $victim killed at $at: $(grep -o "promoted, [0-9.]* ms.*" "$ERR"); the same $(wc -l <got.txt) thermo lines, $(($(wc -l <all.txt) - $(wc -l <got.txt))) printed again"
done
expect_no_leftovers lmp
