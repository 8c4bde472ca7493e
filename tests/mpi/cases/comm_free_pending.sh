# A request outlives the communicator it was posted on: receives pending
# on freed duplicates still complete with their own messages after new
# communicators were made, revoked and freed in between; a receive pending
# on a freed duplicate whose sender dies ends with MPI_ERR_PROC_FAILED.
# Three runs, as the mix-up depends on where malloc puts the new ones;
# round one also runs without the shim, to show it is correct MPI.
prog=$(build comm_free_pending)
run_job plain 4 -- "$prog" plain
expect_all_checks "without the shim (round one)"
note "without the shim (round one): passed"
for i in 1 2 3; do
	run_job shim 4 -- "$prog"
	expect_all_checks "run $i"
	note "run $i: passed"
done
expect_no_leftovers comm_free_pending
