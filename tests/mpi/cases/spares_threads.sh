# Restart in place and the program's own threads
# (progs/restart_threads.c, 3 program ranks and 1 spare, rank 2 killed at
# its 20th step). A thread the program started that still runs, or a
# failure met inside an OpenMP parallel region, stops main from running
# again: the job ends with one line saying why, instead of running main
# beside a thread of the abandoned run (or leaving the OpenMP team
# waiting for its master). A thread joined before the failure, or an
# OpenMP pool idle between parallel regions, restarts as usual.
prog=$(build restart_threads -fopenmp -pthread)
kill2="FTSHIM_INJECT=rank=2 at=call:MPI_Sendrecv:20"

# A sanitizer's runtime, preloaded before ftshim, starts every thread
# from its own code, where ftshim cannot tell whose thread it is.
if [ "${MPITEST_SANITIZER:-no}" = no ]; then
	run_job shim 4 FTSHIM_SPARES=1 "$kill2" -- "$prog" 100 thread
	expect_err_match "error: spares: rank [01] cannot run main again: 1 thread the program started \(pthread_create\) still runs; restart in place needs main's thread alone in the program's code: ending the job$"
	grep -q '^result: ' "$OUT" && fail "the program went on although a thread of its own still ran"
	grep -q '(run 2)' "$OUT" && fail "main ran again beside a thread of the program's"
	expect_no_leftovers restart_threads
	note "a thread of the program's still running: the job ended with one line"
else
	note "a thread of the program's: skipped in a $MPITEST_SANITIZER-sanitized build (its runtime starts every thread)"
fi

run_job shim 4 FTSHIM_SPARES=1 "$kill2" -- "$prog" 100 omp
expect_err_match "error: spares: rank [01] cannot run main again: it is inside an OpenMP parallel region \(nesting level 1\); restart in place needs main's thread alone in the program's code: ending the job$"
grep -q '^result: ' "$OUT" && fail "the program went on from inside an OpenMP parallel region"
expect_no_leftovers restart_threads
note "a failure met inside an OpenMP parallel region: the job ended with one line"

for mode in joined omp-idle; do
	run_job shim 4 FTSHIM_SPARES=1 "$kill2" -- "$prog" 100 "$mode"
	expect_rc "$(death_rc sigkill)"
	# The survivors' second run, the spare's first.
	[ "$(grep -c '^in main: rank [01] (run 2)$' "$OUT")" = 2 ] && [ "$(grep -c '^in main: ' "$OUT")" = 6 ] ||
		{ cat "$OUT" >&2; fail "$mode: expected every rank to run main again"; }
	grep -q '^result: right$' "$OUT" || { cat "$OUT" >&2; fail "$mode: the result is not the right one"; }
	expect_err_no_match "cannot run main again"
	expect_no_leftovers restart_threads
done
note "a thread joined before the failure, an idle OpenMP pool: main ran again"
