# Transparent replication of a real Fortran code from Debian's archive,
# unmodified (issue 43): Quantum ESPRESSO's pw.x (built with Open MPI; it
# makes its own communicators with MPI_Comm_create and writes and deletes
# files in its outdir from every rank) computes bulk silicon's ground
# state on 2 program ranks, each with a replica (FTSHIM_REPLICAS=100%, 4
# processes). Before, each replica stopped at start-up ("File cannot be
# deleted": its primary had deleted the file first). Now, with no failure
# and with a primary killed at a random time: the same total energy as
# without replicas, no failure but the injected one, and the outdir holds
# what the unreplicated run writes (the wave functions and charge
# density byte for byte, the XML files but for their dates and timings),
# with no replica's copy left.
MPITEST_TIMEOUT=90
work=$MPITEST_WORKDIR/qe
run=$MPITEST_WORKDIR/run
qe_setup "$work" 24.0 6

# qe_run NP [ENV...]: pw.x on NP processes, its outdir made empty first.
qe_run() {
	local np=$1
	shift
	rm -rf "$work/out" "$run"
	mkdir -p "$work/out"
	run_job shim "$np" OMP_NUM_THREADS=1 "FTSHIM_RUNDIR=$run" "$@" -- "$pw" -input "$work/si.in"
}

# The outdir's files, each with its content's digest; in the XML files,
# the lines that carry the run's dates and timings are left out.
outdir_digest() {
	(cd "$work/out" && find . -type f | sort | while read -r f; do
		case $f in
		*.xml) printf '%s %s\n' "$f" "$(grep -vE '<(created|closed|cpu|wall)[ >]' "$f" | md5sum | cut -d' ' -f1)" ;;
		*) printf '%s %s\n' "$f" "$(md5sum <"$f" | cut -d' ' -f1)" ;;
		esac
	done)
}

# qe_check WHAT: the run gave the reference's energy and outdir.
qe_check() {
	grep -q 'JOB DONE' "$OUT" || { tail -n 20 "$OUT" >&2; tail -n 20 "$ERR" >&2; fail "$1: pw.x did not finish"; }
	[ "$(grep '^!' "$OUT" | tail -n 1)" = "$energy" ] || fail "$1: $(grep '^!' "$OUT" | tail -n 1), not $energy"
	outdir_digest | diff -u "$MPITEST_WORKDIR/want.digest" - >&2 ||
		fail "$1: the outdir is not what pw.x writes without replicas"
	expect_err_no_match 'ftshim\[[0-9]+\] \+[0-9.]+ (error|warn): '
}

qe_run 2
expect_rc 0
grep -q 'JOB DONE' "$OUT" || { tail -n 20 "$OUT" >&2; fail "pw.x did not finish without replicas"; }
energy=$(grep '^!' "$OUT" | tail -n 1)
outdir_digest >"$MPITEST_WORKDIR/want.digest"
note "without replicas: $energy; $(wc -l <"$MPITEST_WORKDIR/want.digest") files in the outdir"

qe_run 4 FTSHIM_REPLICAS=100%
expect_rc 0
qe_check "replicated, no failure"
expect_err_no_match 'failed: |is gone'
note "replicated with no failure: the same energy and outdir"

seed=${REPLICAS_QE_SEED:-$RANDOM}
note "kill times drawn with seed $seed (REPLICAS_QE_SEED=$seed replays them)"
RANDOM=$seed
for victim in 0 1; do
	at="time:$((300 + RANDOM % 1200))ms"
	qe_run 4 FTSHIM_REPLICAS=100% "FTSHIM_INJECT=rank=$victim copy=primary at=$at"
	expect_killed_rc
	grep -q "ftshim\[$victim\] .* info: injecting SIGKILL now" "$ERR" ||
		{ tail -n 20 "$ERR" >&2; fail "the primary of rank $victim was not killed at $at (the run is too short?)"; }
	p=$(sed -n "s/^\([0-9]*\) .* replica-of=$victim\$/\1/p" "$run"/*/ranks)
	expect_err_match "ftshim\[$p\] \+[0-9.]+ info: rank $victim: primary \(process $victim\) lost, replica \(process $p\) promoted"
	qe_check "rank $victim's primary killed at $at"
	[ "$(grep -c '^ftshim: ' "$ERR")" = 1 ] && grep -q '^ftshim: 1 failure ' "$ERR" ||
		fail "rank $victim's primary killed at $at: not the one failure injected: $(grep '^ftshim: ' "$ERR")"
	note "rank $victim's primary killed at $at: $(grep -o "promoted, [0-9.]* ms" "$ERR"); the same energy and outdir"
done
expect_no_leftovers pw.x
