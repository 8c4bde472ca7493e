# Fortran programs get what C programs get, through every binding of the
# MPI (include 'mpif.h', use mpi, use mpi_f08): rank 2 of 4 is killed by
# an injection after its 5th MPI_Allreduce, which ftshim counts whichever
# binding made the call; the survivors' allreduce and their receive from
# rank 2 return the ULFM error classes instead of hanging (or the program
# running on as if nothing were preloaded); the log and the report name
# the failure, and the report's error events name the Fortran routine.
MPITEST_TIMEOUT=40
rundir=$MPITEST_WORKDIR/run
# MPIX_ERR_PROC_FAILED and MPIX_ERR_REVOKED: the MPI's own where it has
# them (MPICH), Open MPI 5's otherwise (include/mpi-ext.h).
case $MPITEST_FLAVOUR in
mpich) failed=101 revoked=103 ;;
*) failed=75 revoked=77 ;;
esac
for binding in mpif use_mpi f08; do
	case $binding in
	mpif) prog=$(build_fortran ftn_lose mpif) ;;
	use_mpi) prog=$(build_fortran ftn_lose use_mpi -DFT_USE_MPI) ;;
	f08) prog=$(build_fortran ftn_lose f08 -DFT_F08) ;;
	esac
	rm -rf "$rundir"
	run_job shim 4 "FTSHIM_RUNDIR=$rundir" "FTSHIM_INJECT=rank=2 at=call:MPI_Allreduce:5" -- "$prog"
	expect_err_match 'ftshim\[2\] .* info: injecting SIGKILL now \(after call 5 of MPI_Allreduce; '
	expect_detected 2 0,1,3
	for r in 0 1 3; do
		grep -qE "^rank $r allreduce class ($failed|$revoked) recv class $failed$" "$OUT" || {
			cat "$OUT" >&2
			tail -n 20 "$ERR" >&2
			fail "$binding: rank $r did not get MPIX_ERR_PROC_FAILED ($failed) or MPIX_ERR_REVOKED ($revoked) from its allreduce and $failed from its receive"
		}
	done
	expect_killed_rc
	report=$(ls "$rundir"/*/report.json 2>/dev/null | head -n 1)
	[ -f "$report" ] || fail "$binding: no report.json in $rundir"
	python3 - "$report" <<'PY' || fail "$binding: report.json is not as expected (above)"
import json, sys
r = json.load(open(sys.argv[1]))
def need(cond, what):
    if not cond:
        print("report.json: " + what, file=sys.stderr)
        sys.exit(1)
need(r["failed"] == [2] and r["finished"] == [0, 1, 3], "failed/finished: %s %s" % (r["failed"], r["finished"]))
f = r["failures"]
need(len(f) == 1 and f[0]["how"] == "SIGKILL" and f[0]["injected"], "failures %s" % f)
errs = [e for e in r["events"] if e["kind"] == "error"]
need(errs, "no error events")
# The call site is the Fortran program's own line, not a frame of the
# MPI's Fortran bindings.
need(all("ftn_lose.F90:" in e["site"] for e in errs), "error sites %s" % [e["site"] for e in errs])
PY
	note "$binding: $(grep -m1 'allreduce class' "$OUT"); site: $(grep -o 'to [^ ]* (ftn_lose.F90:[0-9]*)' "$ERR" | head -n 1)"
done
expect_no_leftovers ftn_lose
