# FTSHIM_LOG_FILE with %r writes one file per rank, every line prefixed
# with ftshim[RANK] and the time since MPI_Init; FTSHIM_LOG sets the level.
prog=$(build hello)
run_job shim 3 FTSHIM_LOG=debug "FTSHIM_LOG_FILE=$MPITEST_WORKDIR/ft.%r.log" -- "$prog"
expect_rc 0
for r in 0 1 2; do
	f="$MPITEST_WORKDIR/ft.$r.log"
	[ -s "$f" ] || fail "no log file for rank $r"
	grep -qE "^ftshim\[$r\] \+[0-9]+\.[0-9]{6} debug: on: rank $r of 3" "$f" ||
		{ cat "$f" >&2; fail "rank $r's log lacks the start line"; }
	if grep -vqE "^ftshim\[$r\] \+[0-9]+\.[0-9]{6} (error|warn|info|debug|trace): " "$f"; then
		cat "$f" >&2
		fail "rank $r's log has a line without the prefix"
	fi
done
expect_err_no_match '^ftshim'
# At the default level (info) a failure-free run logs nothing.
run_job shim 3 -- "$prog"
expect_rc 0
expect_err_no_match '^ftshim'
