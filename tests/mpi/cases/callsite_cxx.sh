# A C++ program's call site is shown demangled in ftshim's error line
# ("MPI_Recv failed in Foam::UPstream::waitRequests(int)+0x..."), through
# the C++ runtime the program loaded, not the mangled symbol
# (_ZN4Foam8UPstream12waitRequestsEi). Built without debug information,
# as production codes often are. Open MPI's mpicxx links its C++
# bindings, whose constructor calls MPI_Initialized before ftshim's own
# constructor has run: the program must not crash there (it did). A
# flavour without its C++ wrapper (mpicxx) is skipped.
cxx=${MPITEST_MPICC/mpicc/mpicxx}
command -v "$cxx" >/dev/null || { echo "skip: no $cxx"; exit 77; }
bin="$MPITEST_BINDIR/cxx_callsite"
mkdir -p "$MPITEST_BINDIR"
timeout -k 5 300 "$cxx" -O1 -g0 -Wall -Werror -o "$bin" "$MPITEST_SRCDIR/progs/cxx_callsite.cpp" ||
	fail "cannot build cxx_callsite"

run_job shim 2 -- "$bin"
grep -qx 'rank 0: waiting on tag 3' "$OUT" || { tail -n 20 "$ERR" >&2; fail "rank 0 never reached its receive"; }
expect_err_match 'error: MPI_Recv failed in Foam::UPstream::waitRequests\(int\)\+0x[0-9a-f]+ \('
expect_err_no_match '_ZN4Foam8UPstream12waitRequestsEi'
note "the error line names Foam::UPstream::waitRequests(int), demangled"
