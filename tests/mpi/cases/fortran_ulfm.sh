# A Fortran ULFM program written for Open MPI 5 builds unchanged against
# ftshim's mpif-ext.h, mpi_ext and mpi_f08_ext (and libftshim.so), for
# each binding, and recovers: rank 2 of 4 is killed after its 3rd
# MPI_Allreduce; the survivors revoke, see the revocation, acknowledge the
# failure, agree, shrink and ishrink to 3, iagree, and sum their ranks
# (0 + 1 + 3) on the shrunk communicator. On Open MPI the program also
# makes a persistent broadcast with MPIX_Bcast_init, which Open MPI 4.1's
# own mpi_ext and mpi_f08_ext give and ftshim's keep.
MPITEST_TIMEOUT=40
if [ -z "${MPITEST_FORTRAN_INC:-}" ] || [ ! -f "$MPITEST_FORTRAN_INC/mpi_f08_ext.mod" ]; then
	echo "the build made no Fortran modules (no working MPIFC)"
	exit 77
fi
case $MPITEST_FLAVOUR in
mpich) failed=101 revoked=103 extra=() ;;
*) failed=75 revoked=77 extra=(-DFT_PCOLLREQ) ;;
esac
link=(-- -L"$(dirname "$MPITEST_SHIM")" -lftshim)
for binding in mpif use_mpi f08; do
	case $binding in
	mpif) prog=$(build_fortran ftn_ulfm mpif -I"$MPITEST_FORTRAN_INC" "${extra[@]}" "${link[@]}") ;;
	use_mpi) prog=$(build_fortran ftn_ulfm use_mpi -I"$MPITEST_FORTRAN_INC" -DFT_USE_MPI "${extra[@]}" "${link[@]}") ;;
	f08) prog=$(build_fortran ftn_ulfm f08 -I"$MPITEST_FORTRAN_INC" -DFT_F08 "${extra[@]}" "${link[@]}") ;;
	esac
	run_job shim 4 "FTSHIM_INJECT=rank=2 at=call:MPI_Allreduce:3" -- "$prog"
	expect_detected 2 0,1,3
	if grep -q 'CHECK FAILED' "$OUT" || [ "$(grep -cE "^rank [013]: allreduce class ($failed|$revoked) revoked T acked 1 failed 1 agree 1 sum 4 size 3 isize 3 iagree 5$" "$OUT")" != 3 ]; then
		cat "$OUT" >&2
		tail -n 20 "$ERR" >&2
		fail "$binding: the survivors did not all recover as expected (above)"
	fi
	expect_killed_rc
	note "$binding: $(grep -m1 '^rank 0' "$OUT")"
done
expect_no_leftovers ftn_ulfm
