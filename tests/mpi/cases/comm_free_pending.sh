# A request outlives the communicator it was posted on: receives pending
# on freed duplicates still complete with their own messages after new
# communicators were made, revoked and freed in between; a receive pending
# on a freed duplicate whose sender dies ends with MPI_ERR_PROC_FAILED.
# Three runs, as the mix-up depends on where malloc puts the new ones;
# round one also runs without the shim, to show it is correct MPI.
prog=$(build comm_free_pending)
run_job plain 4 -- "$prog" plain
grep -q '^ALL CHECKS PASSED$' "$OUT" || {
	cat "$OUT" >&2
	tail -n 15 "$ERR" >&2
	fail "without the shim (round one): the checks did not pass (status $RC)"
}
note "without the shim (round one): passed"
for i in 1 2 3; do
	run_job shim 4 -- "$prog"
	grep -q '^ALL CHECKS PASSED$' "$OUT" || {
		cat "$OUT" >&2
		grep -v 'info: rank' "$ERR" | tail -n 15 >&2
		fail "run $i: the checks did not pass (status $RC)"
	}
	note "run $i: passed"
done
expect_no_leftovers comm_free_pending
