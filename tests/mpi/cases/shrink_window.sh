# A member that dies inside MPIX_Comm_shrink (ftshim's own injection
# point ftshim.shrink, right after the shrink's agreement is decided at
# the victim, while the others are still in the shrink) does not end the
# survivors: the shrink succeeds with the victim a member, and the ULFM
# loop's next shrink gives a communicator of the 4 live ranks that works
# like any other (every blocking collective, nonblocking ones started
# together with point-to-point between, point-to-point with
# MPI_ANY_SOURCE and MPI_ANY_TAG, dup, split, a window, agree,
# attributes), both
# views on spare contexts made at MPI_Init; with MPIX_Comm_ishrink too
# (the ULFM loop's collective then an MPI_Iallreduce that the dead member
# fails),
# with the agreement's coordinator (rank 0) as the victim, and with one
# spare context only, where the second shrink is the MPI's and its
# communicator takes a nonblocking collective. Before views every
# survivor left with status 76 here (20 of 20 runs on both MPIs).
prog=$(build shrink_window)
for v in shrink:3 ishrink:3 shrink:0; do
	mode=${v%%:*} victim=${v#*:}
	run_job shim 6 "FTSHIM_INJECT=rank=5 at=call:MPI_Barrier:1; rank=$victim at=point:ftshim.shrink:1" \
		-- "$prog" "$mode" "$victim"
	expect_all_checks "$mode, rank $victim dies inside"
	note "$mode, rank $victim dies inside: passed"
done
run_job shim 6 FTSHIM_RECOVERY_CONTEXTS=1 "FTSHIM_INJECT=rank=5 at=call:MPI_Barrier:1; rank=3 at=point:ftshim.shrink:1" \
	-- "$prog" shrink 3 --mpi-last
expect_all_checks "one spare context"
note "one spare context, the second shrink the MPI's: passed"
expect_no_leftovers shrink_window
