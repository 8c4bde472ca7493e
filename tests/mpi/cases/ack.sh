# Acknowledging failures (both generations of the ULFM names) and what it
# does to MPI_ANY_SOURCE receives, blocking and nonblocking.
prog=$(build ack)
run_job shim 4 -- "$prog"
expect_all_checks
expect_no_leftovers ack
