# A revocation reaches every live member whatever set of members is dead:
# with dead ranks in every position around the revoker (before, after,
# both sides, runs of neighbours, all the even ranks, all but two), each
# survivor blocked in a receive from the revoker gets MPI_ERR_REVOKED,
# sees the communicator revoked, and the survivors shrink it; also with
# the dead ranks stopping just as the revocation starts.
prog=$(build revoke_dead)
for p in 6:1,3,4:0 8:1,2,4,5:0 8:0,1,6,7:3 6:1,2,4:5 4:2:0 12:1,2,3,5,9:11 8:0,2,4,6:7 5:1,2,3:4; do
	np=${p%%:*} rest=${p#*:}
	dead=${rest%:*} revoker=${rest#*:}
	run_job shim "$np" -- "$prog" "$dead" "$revoker"
	expect_all_checks "$np ranks, dead $dead, revoker $revoker"
	note "$np ranks, dead $dead, revoker $revoker: passed"
done
# Members stopped as the revocation starts, declared failed a heartbeat
# timeout later: the members that learn of it then pass it on to their
# new targets (without that, the survivors behind them wait for ever).
for p in 8:1,2,4:0 8:1,2,3,4:0 12:1,3,4,5,7:0; do
	np=${p%%:*} rest=${p#*:}
	dead=${rest%:*} revoker=${rest#*:}
	run_job shim "$np" -- "$prog" "$dead" "$revoker" during
	expect_all_checks "$np ranks, $dead stopped as it starts, revoker $revoker"
	note "$np ranks, $dead stopped as it starts, revoker $revoker: passed"
done
expect_no_leftovers revoke_dead
