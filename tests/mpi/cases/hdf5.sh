# A real third-party library (issue 22): Debian's parallel HDF5, built
# for this flavour, writes a checkpoint dataset collectively while rank 2
# of 4 is killed. Without a failure the file reads back whole under the
# shim. With one, every survivor gets an error from H5Dwrite, closes the
# file without waiting on the dead rank, and leaves through MPI_Finalize:
# no hang, nothing left running. Rank 2 dies in two ways: by its own
# SIGKILL once the others are inside H5Dwrite, and by ftshim's injection
# just before and just after one of its collective writes.
inc=/usr/include/hdf5/$MPITEST_FLAVOUR
lib=/usr/lib/x86_64-linux-gnu/hdf5/$MPITEST_FLAVOUR
if [ ! -f "$inc/hdf5.h" ] || [ ! -e "$lib/libhdf5.so" ]; then
	echo "libhdf5-$MPITEST_FLAVOUR-dev is not installed (dev/setup installs it)"
	exit 77
fi
# With ThreadSanitizer's runtime preloaded, this program hung on MPICH
# even without ftshim (1 step, 30 s): nothing to learn there.
if instrumented; then
	echo "skip: Debian's HDF5 hangs under the $MPITEST_SANITIZER sanitizer's runtime, ftshim or not"
	exit 77
fi
prog=$(build hdf5_write -I"$inc" -L"$lib" -Wl,-rpath,"$lib" -lhdf5)
h5=$MPITEST_WORKDIR/ckpt.h5

run_job shim 4 -- "$prog" "$h5" 6
expect_rc 0
expect_all_checks "no failure"
note "no failure: 6 steps written and read back"

# expect_clean_survivors STEP: ranks 0, 1, 3 saw H5Dwrite fail at STEP,
# and H5Fclose end (with an error: its flush is collective); none
# crashed; rank 2's death was detected. The job's status: Hydra's is
# the bitwise or of the ranks' (137 | 1, or 1 when its proxy recorded
# the victim's death as 0, as multihost.sh saw), Open MPI's mpirun 0.
expect_clean_survivors() {
	local s
	for s in 0 1 3; do
		grep -qx "rank $s: H5Dwrite failed at step $1" "$OUT" ||
			{ cat "$OUT" >&2; tail -n 30 "$ERR" >&2; fail "rank $s did not see H5Dwrite fail at step $1"; }
		grep -qx "rank $s: H5Fclose failed; exiting" "$OUT" ||
			{ cat "$OUT" >&2; tail -n 30 "$ERR" >&2; fail "rank $s did not get an error from H5Fclose"; }
	done
	expect_err_no_match 'CHECK FAILED|Segmentation fault|Caught signal'
	expect_detected 2 0,1,3
	case $MPITEST_FLAVOUR:$RC in
	mpich:137 | mpich:1 | openmpi:0) ;;
	*) expect_killed_rc ;;
	esac
}

run_job shim 4 -- "$prog" "$h5" 6 3
expect_clean_survivors 3
note "killed during step 3: the 3 survivors saw H5Dwrite and H5Fclose fail and exited"

# Rank 2 dies between its view and its collective write of step 1: the
# others are left in MPI_File_write_at_all itself, with a dead member
# (on Open MPI, whose MPI_File_set_view still exchanges after rank 2's
# returned, some learn it there).
run_job shim 4 "FTSHIM_INJECT=rank=2 at=call:MPI_File_set_view:3" -- "$prog" "$h5" 6
expect_err_match 'ftshim\[2\] .* info: injecting SIGKILL now \(after call 3 of MPI_File_set_view; '
expect_clean_survivors 1
for s in 0 1 3; do
	expect_err_match "ftshim\[$s\] .* info: MPI_File_(write_at_all|set_view) returned MPI_ERR_PROC_FAILED to "
done
note "injected before rank 2's collective write of step 1: $(grep -c 'MPI_File_write_at_all returned MPI_ERR_PROC_FAILED' "$ERR") survivors saw MPI_File_write_at_all fail; all exited"

# Rank 2 dies right after that write returned, before the view reset
# that follows within the same H5Dwrite: step 1 fails there.
run_job shim 4 "FTSHIM_INJECT=rank=2 at=call:MPI_File_write_at_all:2" -- "$prog" "$h5" 6
expect_err_match 'ftshim\[2\] .* info: injecting SIGKILL now \(after call 2 of MPI_File_write_at_all; '
expect_clean_survivors 1
note "injected after rank 2's 2nd MPI_File_write_at_all: the survivors saw H5Dwrite and H5Fclose fail and exited"
expect_no_leftovers hdf5_write
