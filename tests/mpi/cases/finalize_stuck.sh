# A rank that leaves after ftshim's control plane has let everyone go,
# but without the MPI library's MPI_Finalize (as one that died just then
# would), is seen by nobody; the others' MPI_Finalize waits for it in the
# MPI (MPICH's always does). ftshim bounds that wait: after 10 heartbeat
# timeouts (at least 5 s) each stuck rank says why in one line and ends
# with status 0 (its work is done), and the job ends instead of hanging. The leaving is
# simulated by tests/mpi/progs/skipfin.c, preloaded after the shim. Then
# the same rank dies there by SIGKILL: its supervisor records the death
# in the run directory, and the stuck ranks of its host leave a second
# after it rather than at the deadline, with status 0.
prog=$(build hello)
lib="$MPITEST_BINDIR/skipfin.so"
gcc -std=gnu11 -Wall -Werror -shared -fPIC -o "$lib" "$MPITEST_SRCDIR/progs/skipfin.c" -ldl ||
	fail "cannot build skipfin.so"
# stuck_run LABEL LINE [NAME=VALUE...]: the job with rank 3 leaving at the
# MPI's MPI_Finalize as skipfin.c does (the variables say how); on MPICH
# ranks 0 to 2 must each say LINE (after their rank and time stamp) and
# leave; the launcher's status must be 0. Sets $took (seconds).
stuck_run() {
	local label=$1 line=$2 t0=$SECONDS n
	shift 2
	run_job plain 4 "LD_PRELOAD=$(shim_preload) $lib" SKIPFIN_RANK=3 FTSHIM_HB_TIMEOUT=300ms "$@" -- "$prog"
	took=$((SECONDS - t0))
	grep -q '^hello from 4 ranks' "$OUT" || { cat "$OUT" "$ERR" >&2; fail "$label: the job did not run"; }
	n=$(grep -cE "ftshim\[[0-2]\] \+[0-9.]+ $line\$" "$ERR" || true)
	# Open MPI's MPI_Finalize may or may not wait for the missing rank.
	if [ "$MPITEST_FLAVOUR" = mpich ] && [ "$n" != 3 ]; then
		tail -n 20 "$ERR" >&2
		fail "$label: $n ranks said they were stuck in MPI_Finalize, expected 3"
	fi
	[ "$RC" = 0 ] || { tail -n 20 "$ERR" >&2; fail "$label: exit status $RC, expected 0"; }
	note "$label: $n rank(s) stuck in MPI_Finalize left; the job took ${took}s"
}

stuck_run exit "warn: stuck in the MPI library's MPI_Finalize for 5\.0 s: a rank must have left without it \(one that died as the job ended\); this rank's work is done, so it ends with status 0 rather than hang"
stuck_run kill "warn: stuck in the MPI library's MPI_Finalize: a rank of this host died after every rank had left ftshim's watch \(its supervisor recorded the death\); this rank's work is done, so it ends with status 0 rather than hang" SKIPFIN_HOW=kill
[ "$MPITEST_FLAVOUR" != mpich ] || [ "$took" -lt 5 ] || fail "kill: the job took ${took}s, not less than the 5 s deadline"
expect_no_leftovers hello
