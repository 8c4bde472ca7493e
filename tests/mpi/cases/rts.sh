# Run-through stabilization (ftshim-rts.h), each call on its own
# (progs/rts.c): validation states, point-to-point with unrecognized and
# recognized failed ranks, MPI_ANY_SOURCE, recognition per communicator,
# MPI_Comm_validate_all and every collective among the live ranks after
# it, MPI_Icomm_validate_all, a creation refused, a second death. Then
# the bad arguments' lines.
prog=$(build rts)
run_job shim 6 -- "$prog"
expect_all_checks
expect_killed_rc
for line in \
	"MPI_Comm_validate_rank: rank 6 is not a rank of the communicator \\(0 to 5\\)" \
	"MPI_Comm_validate: incount -1 is negative \\(0 or more\\)" \
	"MPI_Comm_validate_clear: rank_infos\[0\].rank [0-9] has not failed; only a failed rank can be recognized" \
	"MPI_Comm_dup on a validated \\(one whose failures MPI_Comm_validate_all recognized, ftshim-rts\\(3\\)\\) communicator is not supported yet"; do
	grep -qE "error: $line" "$ERR" || { grep -v ' info: ' "$ERR" | tail -n 20 >&2; fail "no line: $line"; }
done
expect_no_leftovers rts
