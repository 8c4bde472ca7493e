# A nonblocking operation started when a failure is already known hands
# back a valid request, and the error (MPIX_ERR_PROC_FAILED, or
# MPIX_ERR_REVOKED on a revoked communicator) comes when the request is
# completed, as under Open MPI 5's ULFM: collectives, point-to-point to
# and from the dead rank, a persistent send, MPI_Comm_idup, and completion
# by MPI_Wait, MPI_Test, MPI_Waitall (MPI_ERR_IN_STATUS beside requests
# that succeed) and MPI_Waitany. Two runs.
prog=$(build nb_errors)
for i in 1 2; do
	run_job shim 4 -- "$prog"
	expect_all_checks "run $i"
	note "run $i: passed"
done
expect_no_leftovers nb_errors
