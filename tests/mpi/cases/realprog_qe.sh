# A real Fortran code from Debian's archive, unmodified: Quantum
# ESPRESSO's pw.x (built with Open MPI; its Fortran calls reach the MPI
# through Open MPI's Fortran bindings, PMPI_ only). 4 ranks compute
# bulk silicon's ground state; rank 2 is killed after its 40th
# MPI_Allreduce. pw.x keeps MPI_ERRORS_ARE_FATAL, so the job must end at
# once with ftshim's account (the death, and the call it ended) and
# never finish as if nothing happened ("JOB DONE."); before the PMPI_
# entry ftshim saw none of it (no injection, no detection).
MPITEST_TIMEOUT=90
work=$MPITEST_WORKDIR/qe
qe_setup "$work" 18.0 4
mkdir -p "$work/out"

# Without a failure it finishes under the shim.
run_job shim 4 OMP_NUM_THREADS=1 -- "$pw" -input "$work/si.in"
grep -q 'JOB DONE' "$OUT" || { tail -n 20 "$OUT" >&2; tail -n 20 "$ERR" >&2; fail "pw.x did not finish without a failure"; }
energy=$(grep '^!' "$OUT" | tail -n 1)
note "no failure: $energy"

run_job shim 4 OMP_NUM_THREADS=1 "FTSHIM_INJECT=rank=2 at=call:MPI_Allreduce:40" -- "$pw" -input "$work/si.in"
expect_err_match 'ftshim\[2\] .* info: injecting SIGKILL now \(after call 40 of MPI_Allreduce; '
expect_detected 2 0,1,3
! grep -q 'JOB DONE' "$OUT" || fail "pw.x finished as if nothing happened"
expect_err_match 'ftshim\[[013]\] .*MPI_ERRORS_ARE_FATAL'
note "rank 2 killed: $(grep -m1 -o 'ftshim\[[013]\] .*MPI_ERRORS_ARE_FATAL.*' "$ERR")"
