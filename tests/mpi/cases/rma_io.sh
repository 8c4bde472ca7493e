# One-sided communication and MPI-IO never hang on a dead member (issue
# 22): rank 2 of 4 is SIGKILLed before or during each operation class
# (window creation, fence, passive target on the dead rank and on live
# ones, lock_all/flush_all, PSCW with the dead rank as an origin of
# rank 0's exposure, request-based put; file open, collective write and
# read, split collective, ordered write, set_view). Every survivor that
# depends on rank 2 gets MPIX_ERR_PROC_FAILED from the call, those that do
# not get MPI_SUCCESS; the window or file is released without hanging;
# the survivors shrink and use a new window and a new file.
MPITEST_TIMEOUT=30
prog=$(build rma_io)
dir=$MPITEST_WORKDIR/files
mkdir -p "$dir"
for op in win_create fence lock_dead lock_alive flush_all pscw rput \
	file_open write_at_all read_at_all write_all_split write_ordered set_view; do
	for when in before during; do
		t0=$(date +%s%N)
		run_job shim 4 -- "$prog" "$op" "$when" "$dir"
		expect_all_checks "$op $when"
		expect_err_no_match 'stuck in the MPI library'
		note "$op $when: passed in $((($(date +%s%N) - t0) / 1000000)) ms"
	done
done
expect_no_leftovers rma_io
