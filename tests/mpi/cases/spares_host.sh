# Spare processes across hosts (issue 41): 3 network namespaces, 2
# processes on each; with FTSHIM_SPARES=2 the program (progs/ckpt_calls.c,
# with in-memory checkpoints) runs on ranks 0 and 1 (h1) and 2 and 3
# (h2), and the spares wait on h3. Each rank's checkpoint is kept by a
# buddy on another host (0 and 1 by rank 2, 2 and 3 by rank 0). Host h1
# is lost whole in the middle of the run: both spares (on h3) take ranks
# 0 and 1, fetch their copies from rank 2 on h2, and every rank resumes
# from the last checkpoint, with the failure-free result. Skipped (exit
# 77) where namespaces cannot be made.
. "$MPITEST_SRCDIR/netns.sh"
hosts=3 per=2
MPITEST_TIMEOUT=40
netns_setup $hosts
prog=$(build ckpt_calls)
run=$MPITEST_WORKDIR/run

rm -rf "$run"
start_multihost_job shim $per "FTSHIM_RUNDIR=$run" FTSHIM_SPARES=2 "FTSHIM_INJECT=rank=host:0 at=call:MPI_Sendrecv:45" -- "$prog" 100 --kib 256 --nap-ms 2
wait_job_or_ranks "$prog" 30 "^result: " || { tail -n 20 "$ERR" >&2; fail "the job did not end in 30 s"; }
end_multihost_job "h1 lost"
expect_rc "$(lost_rc sigkill)"
expect_main_runs 2
[ "$(grep -c '^in main: rank [0-3] of 4 from step 40 (restart version 40)$' "$OUT")" = 4 ] ||
	{ cat "$OUT" >&2; fail "the second run did not resume every rank from version 40"; }
for r in 0 1; do
	expect_err_match "info: spares: rank $r's process $r \(h1\) lost; spare [01] \(process [45], h3\) takes rank $r, and every rank runs main again"
	expect_err_match "info: checkpoints: rank $r's copy of version 40 \(0\.3 MiB\) came from process 2 \(h2\) in [0-9.]+ ms$"
done
note "h1 lost: the spares on h3 took ranks 0 and 1 with their copies from rank 2 on h2; every rank resumed from version 40"

netns_expect_no_processes
expect_no_leftovers ckpt_calls
netns_teardown
netns_expect_clean
