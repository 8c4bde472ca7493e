# The MPI-4 calls never hang on a dead member (issue 22): a communicator
# made from a session's group is watched and takes the ULFM calls, a
# creation from groups that hold a dead rank fails at once, and
# partitioned communication with a dead peer ends with
# MPIX_ERR_PROC_FAILED (MPI_Parrived, MPI_Wait), and so does a persistent
# collective started after the death (before, MPI_Testall and MPI_Waitany
# failed on persistent collectives under ftshim: MPICH 4.0.2's own do on
# inactive ones, which ftshim's waits poll); persistent collectives on
# the shrunk communicator, which refused them. MPICH only: Open MPI
# 4.1 has none of these calls.
[ "$MPITEST_FLAVOUR" = mpich ] || { echo "skip: Open MPI 4.1 has no MPI-4 calls"; exit 77; }
prog=$(build mpi4)
for i in 1 2 3; do
	run_job shim 4 -- "$prog"
	expect_all_checks "run $i"
	note "run $i: passed"
done
expect_no_leftovers mpi4
