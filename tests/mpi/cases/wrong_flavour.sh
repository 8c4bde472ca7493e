# A program of one MPI under the shim built for the other: handles and
# constants mean other things to each MPI, and the first call crashed
# (a segmentation fault under Open MPI, "Invalid communicator" under
# MPICH). Every rank now stops in MPI_Init with status 78 and the first
# says in one line what to preload. Needs the other flavour's build
# beside this one (dev/setup and dev/test make both), in
# $FT_BUILDS/FLAVOUR (dev/test sets it, since make distcheck runs this
# from a tree of its own) or else the source tree's build/; skipped
# without it.
case $MPITEST_FLAVOUR in
mpich) other=openmpi ;;
openmpi) other=mpich ;;
esac
builds=${FT_BUILDS:-${FT_SRCDIR:-}/build}
other_shim=$builds/$other/.libs/libftshim.so
[ -f "$other_shim" ] || { echo "skip: no build of the shim for $other in $builds/$other"; exit 77; }
prog=$(build hello)
MPITEST_SHIM=$other_shim run_job shim 2 -- "$prog"
expect_rc "$(launcher_rc 78)"
expect_err_match "^ftshim: this libftshim.so was built for $other, but the program runs on (Open MPI|an MPI other than Open MPI): preload the one built for the program's MPI"
[ "$(grep -c '^ftshim: ' "$ERR")" = 1 ] || fail "not one line for the job: $(grep -c '^ftshim: ' "$ERR")"
expect_err_no_match 'Segmentation|Invalid communicator'
# Its own build runs it.
run_job shim 2 -- "$prog" --expect-shim
expect_rc 0
