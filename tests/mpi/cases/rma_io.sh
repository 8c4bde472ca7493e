# One-sided communication and MPI-IO never hang on a dead member (issue
# 22): rank 2 of 4 is SIGKILLed before or during each operation class
# (window creation, fence, passive target on the dead rank and on live
# ones, lock_all/flush_all, PSCW with the dead rank as an origin of
# rank 0's exposure, request-based put; file open, collective write and
# read, split collective, ordered write, set_view). Every survivor that
# depends on rank 2 gets MPIX_ERR_PROC_FAILED from the call, those that do
# not get MPI_SUCCESS; the window or file is released without hanging;
# the survivors shrink and use a new window and a new file.
#
# Except where MPICH cannot be interrupted (FAILSTOP): a passive-target
# call that waits on a target as it dies, or on an operation towards it,
# never returns there, so each survivor either gets the error (it learned
# of the death first) or leaves after the hang watch's grace period with
# the line that says so (fail-stop, exit status 76); nothing hangs. See
# BUGS in ftshim(7).
MPITEST_TIMEOUT=30
prog=$(build rma_io)
dir=$MPITEST_WORKDIR/files
mkdir -p "$dir"
case $MPITEST_FLAVOUR in
mpich) FAILSTOP=" lock_dead:during flush_all:during rput:during " ;;
*) FAILSTOP=" " ;;
esac
for op in win_create fence lock_dead lock_alive flush_all pscw rput \
	file_open write_at_all iwrite_at_all read_at_all write_all_split write_ordered set_view; do
	for when in before during; do
		t0=$(date +%s%N)
		run_job shim 4 -- "$prog" "$op" "$when" "$dir"
		case $FAILSTOP in
		*" $op:$when "*)
			stuck=0
			for r in 0 1 3; do
				if grep -qE "^rank $r: $op: MPIX_ERR_PROC_FAILED\$" "$OUT"; then
					:
				elif grep -qE "ftshim\[$r\] \+[0-9.]+ error: stuck in the MPI library's MPI_Win_[a-z_]+ for [0-9.]+ s after rank 2, a member, failed" "$ERR"; then
					stuck=$((stuck + 1))
				else
					expect_all_checks "$op $when"
				fi
			done
			note "$op $when: $stuck of 3 survivors left stuck in MPICH (fail-stop), the others got the error; $((($(date +%s%N) - t0) / 1000000)) ms"
			;;
		*)
			expect_all_checks "$op $when"
			expect_err_no_match 'stuck in the MPI library'
			note "$op $when: passed in $((($(date +%s%N) - t0) / 1000000)) ms"
			;;
		esac
	done
done
expect_no_leftovers rma_io
