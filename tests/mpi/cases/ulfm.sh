# The ULFM recovery calls, by a program written for them: revoke, agree
# (uniform, also when its coordinator dies), shrink (also when a member
# dies on its way in), and 100 rounds of revoke and shrink; the shrunk
# communicator keeping its parent's error handler through two failures;
# MPIX_FT, and the nonblocking iagree and ishrink completed by every kind
# of call;
# agree and shrink on an intercommunicator; the messages of a rank that
# died still received; no stale message of a revoked communicator
# reaching a later one. Between ranks of one host the agreement goes
# through the shared-memory mailbox, and progresses while its coordinator
# makes no MPI call.
prog=$(build ulfm)
for t in revoke agree coordinator shrink shrink-death loop errh-loop nonblocking ishrink-death inter inter-lost \
	last-words stale; do
	run_job shim 5 -- "$prog" "$t"
	expect_all_checks "$t"
	note "$t: passed"
done
mkdir -p "$MPITEST_WORKDIR/progress"
run_job shim 4 FTSHIM_LOG=debug -- "$prog" progress "$MPITEST_WORKDIR/progress"
expect_all_checks progress
expect_err_match 'ftshim\[0\] \+[0-9.]+ debug: shared-memory mailbox for the 4 ranks of this host$'
note "progress: passed"
# The revoked communicator's MPI object is freed 10 s later, at rank 1
# with the stale message discarded.
run_job shim 3 FTSHIM_LOG=debug -- "$prog" stale --sweep
grep -q '^ALL CHECKS PASSED$' "$OUT" || { cat "$OUT" >&2; fail "stale --sweep: the checks did not pass"; }
expect_err_match 'ftshim\[1\] \+[0-9.]+ debug: MPI_Comm_free: communicator 0x[0-9a-f]+ was revoked: retired'
expect_err_match 'ftshim\[1\] \+[0-9.]+ debug: freed retired communicator 0x[0-9a-f]+: 1 stale message\(s\) discarded$'
expect_err_match 'ftshim\[0\] \+[0-9.]+ debug: freed retired communicator 0x[0-9a-f]+: 0 stale message\(s\) discarded$'
note "stale --sweep: passed"
expect_no_leftovers ulfm
