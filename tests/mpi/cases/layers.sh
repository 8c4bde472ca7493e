# The other ways into the MPI than a plain MPI_ call reach ftshim too:
# a program that calls PMPI_ itself (as libraries on the profiling
# interface do), and a tool preloaded before ftshim that wraps MPI_Recv
# and MPI_Allreduce and calls PMPI_. Rank 2 of 4 is killed after its 5th
# MPI_Allreduce (an injection ftshim counts, whichever name it was called
# by); the survivors' allreduce and their receive from rank 2 fail with
# the ULFM classes instead of hanging, and they shrink and finish.
MPITEST_TIMEOUT=40
prog=$(build layers)
tool=$(build_lib tool)
inject="FTSHIM_INJECT=rank=2 at=call:MPI_Allreduce:5"
for way in pmpi tool; do
	if [ $way = tool ]; then
		run_job plain 4 "LD_PRELOAD=${MPITEST_SAN_RUNTIME:+$MPITEST_SAN_RUNTIME:}$tool:$MPITEST_SHIM" "$inject" -- "$prog" --tool
	else
		run_job shim 4 "$inject" -- "$prog" --pmpi
	fi
	expect_all_checks "$way"
	expect_err_match 'ftshim\[2\] .* info: injecting SIGKILL now \(after call 5 of MPI_Allreduce; '
	expect_detected 2 0,1,3
	expect_killed_rc
	note "$way: rank 2 killed, survivors shrank and finished"
done
expect_no_leftovers layers
