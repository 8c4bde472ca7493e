# A failure reaches the program through the communicator's error handler:
# MPI_ERRORS_ARE_FATAL ends the job at once with one clear line;
# MPI_ERRORS_RETURN returns the ULFM class, which MPI_Error_class and
# MPI_Error_string know; a user handler is called with the communicator
# and the code. Live ranks keep talking afterwards. MPI_Abort ends every
# rank, also ranks that compute without calling MPI, and FTSHIM_STATUS_FILE
# says "ended" and the status.
prog=$(build errh)
for mode in return handler; do
	run_job shim 4 -- "$prog" "$mode"
	expect_all_checks
	grep -q '^rc [0-9]* class [0-9]* string "MPI_ERR_PROC_FAILED: ' "$OUT" || { cat "$OUT" >&2; fail "$mode: no MPI_ERR_PROC_FAILED"; }
done
code=$(sed -n 's/^rc \([0-9]*\) .*/\1/p' "$OUT")
case $MPITEST_FLAVOUR in
mpich) [ "$code" = 101 ] || fail "MPICH: the code is $code, not MPIX_ERR_PROC_FAILED (101)" ;;
openmpi) [ "$code" = 75 ] || fail "Open MPI: the code is $code, not 75 (Open MPI 5's MPIX_ERR_PROC_FAILED)" ;;
esac

t0=$SECONDS
run_job shim 4 -- "$prog" fatal
[ $((SECONDS - t0)) -lt 30 ] || fail "the fatal error took $((SECONDS - t0)) s to end the job"
expect_err_match 'ftshim\[0\] \+[0-9.]+ error: MPI_Recv failed in [a-z_]+ \(errh\.c:[0-9]+\): MPI_ERR_PROC_FAILED: .*its peer, rank 2, failed \(crash.*MPI_ERRORS_ARE_FATAL.*ULFM API to survive$'
grep -q 'ALL CHECKS PASSED' "$OUT" && fail "the job went on after a fatal error"
t0=$SECONDS
run_job shim 4 "FTSHIM_STATUS_FILE=$MPITEST_WORKDIR/status" -- "$prog" abort
[ $((SECONDS - t0)) -lt 30 ] || fail "MPI_Abort took $((SECONDS - t0)) s to end the job"
expect_rc "$(launcher_rc 7)"
[ "$(cat "$MPITEST_WORKDIR/status")" = "$(printf 'ended\nstatus 7')" ] ||
	{ cat "$MPITEST_WORKDIR/status" >&2; fail "FTSHIM_STATUS_FILE does not say the job ended with status 7"; }
grep -q 'went on after MPI_Abort' "$OUT" && fail "a rank went on after MPI_Abort"
[ "$(grep -c 'error: rank 1 ended the job' "$ERR")" = 3 ] || { cat "$ERR" >&2; fail "not every rank was told of the abort"; }
# MPI_Abort while the others compute without calling MPI: every job ends
# (before, a rank that saw the aborting rank's death before its abort went
# on: 8 of 20 two-rank jobs on Open MPI). bench/abort_stress.py runs the
# long loop.
for mode in abort-spin-early abort-spin; do
	for i in $(seq 1 8); do
		t0=$SECONDS
		run_job shim 2 -- "$prog" "$mode"
		[ $((SECONDS - t0)) -lt 20 ] || fail "$mode, run $i: MPI_Abort took $((SECONDS - t0)) s to end the job"
		expect_rc "$(launcher_rc 7)"
		grep -q 'went on after MPI_Abort' "$OUT" && fail "$mode, run $i: a rank went on after MPI_Abort"
	done
	note "$mode: 8 jobs, all ended by the abort"
done
expect_no_leftovers errh
