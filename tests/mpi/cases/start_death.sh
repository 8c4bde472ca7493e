# A rank that dies in ftshim's own part of MPI_Init, after the MPI's
# MPI_Init returned and before ftshim's detector runs (its exchange of
# control-plane addresses, one PMPI_Allgather), is seen by nobody; the
# others must not wait for it for ever (issue 39, item 4). They leave
# under a deadline of 10 heartbeat timeouts (at least 5 s), or at once if
# the MPI reports the death, with one line each (status 76). Before,
# they waited in the MPI for ever (MPICH).
# Surviving such a death, rather than leaving, needs a start that does
# not use the MPI's collectives (left for issue 39, item 3).
MPITEST_TIMEOUT=30
prog=$(build hello)
lib=$(build_lib die_at_start)
t0=$SECONDS
run_job plain 4 "LD_PRELOAD=$(shim_preload) $lib" DIE_RANK=2 FTSHIM_HB_TIMEOUT=300ms -- "$prog"
took=$((SECONDS - t0))
# A survivor that the MPI tells of the death (MPICH over UCX's shared
# memory may) leaves at once, with its own line.
stuck="stuck in ftshim's start in MPI_Init for 5\.0 s: a rank must have died while the job was starting, before ftshim could watch it, so this rank exits \(status 76\) rather than hang"
failed="ftshim's start in MPI_Init failed \(the MPI's MPI_Allgather returned error class [0-9]+\): a rank must have died while the job was starting, before ftshim could watch it, so this rank exits \(status 76\) rather than go on without it"
n=$(grep -cE "ftshim\[[013]\] \+[0-9.]+ error: ($stuck|$failed)$" "$ERR" || true)
[ "$n" = 3 ] || { tail -n 20 "$ERR" >&2; fail "$n of 3 survivors said they were stuck in the start"; }
! grep -q '^hello from' "$OUT" || fail "the job went on without rank 2"
# Hydra ORs its ranks' statuses: 137 (the SIGKILL) | 76 = 205; or 137
# alone when Hydra, seeing rank 2 killed, kills the survivors after they
# said their line (1 run in 11 when the MPI told them of the death).
if [ "$MPITEST_FLAVOUR" = mpich ] && [ "$RC" = 137 ]; then
	RC=205
fi
expect_rc "$(launcher_rc 205)"
note "$n of 3 survivors left on the start's deadline; the job took ${took}s"
expect_no_leftovers hello
