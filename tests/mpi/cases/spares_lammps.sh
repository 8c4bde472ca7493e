# Restart in place of a real program from Debian's archive, unmodified,
# that resumes from its own restart file (issue 41): LAMMPS (built with
# Open MPI) runs a Lennard-Jones melt on 2 program ranks with one spare
# (FTSHIM_SPARES=1, 3 processes). Its input writes a restart file every
# 100 steps, atomically (write_restart to a temporary name, then a
# rename), and reads it at start when it is there. Rank 1 is killed at a
# random point in the middle of the run (its Nth MPI_Irecv, some 4 to a
# step, so N from 1500 to 6000 lands between steps 300 and 1500): the spare takes its place, both
# ranks run main again, LAMMPS reads its restart file and ends on the
# same thermo line at step 2000 as without the failure. LAMMPS makes a
# Cartesian communicator of the repaired MPI_COMM_WORLD (a view), which
# ftshim makes on the view's base.
[ "$MPITEST_FLAVOUR" = openmpi ] || { echo "Debian's LAMMPS is built with Open MPI only"; exit 77; }
lmp=$(command -v lmp || true)
[ -n "$lmp" ] || { echo "lammps is not installed (dev/setup installs it)"; exit 77; }
# Under mpirun with a sanitizer's runtime preloaded, LAMMPS's ranks stop
# in exit() (libp11-kit's destructor waits on glibc's locale lock, whose
# reader count was already -1 before main), with or without ftshim.
if instrumented; then
	echo "skipped in a $MPITEST_SANITIZER-sanitized build: LAMMPS hangs at exit with the runtime preloaded"
	exit 77
fi
MPITEST_TIMEOUT=60
STEPS=2000
cat >"$MPITEST_WORKDIR/in.melt" <<IN
# The bundled melt example, resuming from melt.restart when it is there.
units		lj
atom_style	atomic
if "\$(is_file(melt.restart))" then "jump SELF resume"
lattice		fcc 0.8442
region		box block 0 10 0 10 0 10
create_box	1 box
create_atoms	1 box
mass		1 1.0
velocity	all create 3.0 87287 loop geom
jump		SELF setup
label		resume
read_restart	melt.restart
label		setup
pair_style	lj/cut 2.5
pair_coeff	1 1 1.0 1.0 2.5
neighbor	0.3 bin
neigh_modify	every 20 delay 0 check no
fix		1 all nve
thermo		50
thermo_modify	format float %20.15g
label		chunk
if "\$(step) >= $STEPS" then "jump SELF done"
run		100
write_restart	melt.restart.tmp
shell		mv melt.restart.tmp melt.restart
jump		SELF chunk
label		done
IN
cd "$MPITEST_WORKDIR"

# The last thermo line: step, temperature, energies, pressure.
last_thermo() {
	grep -E "^ +$STEPS +-?[0-9.]+ " "$1" | tail -n 1
}

rm -f melt.restart*
run_job plain 2 OMP_NUM_THREADS=1 -- "$lmp" -in in.melt -log none
expect_rc 0
want=$(last_thermo "$OUT")
[ -n "$want" ] || { tail -n 30 "$OUT" >&2; fail "LAMMPS alone did not reach step $STEPS"; }
note "without spares or failures, step $STEPS: $want"

seed=${SPARES_LAMMPS_SEED:-$RANDOM}
RANDOM=$seed
at="call:MPI_Irecv:$((1500 + RANDOM % 4500))"
note "rank 1 killed at $at (seed $seed; SPARES_LAMMPS_SEED=$seed replays it)"
rm -f melt.restart*
run_job shim 3 OMP_NUM_THREADS=1 FTSHIM_SPARES=1 "FTSHIM_INJECT=rank=1 at=$at" -- "$lmp" -in in.melt -log none
expect_killed_rc
grep -q "ftshim\[1\] .* info: injecting SIGKILL now" "$ERR" ||
	{ tail -n 20 "$ERR" >&2; fail "rank 1 was not killed at $at (the run is too short?)"; }
expect_err_match "info: spares: rank 1's process 1 \([^)]*\) lost; spare 0 \(process 2, [^)]*\) takes rank 1, and every rank runs main again"
[ "$(grep -c '^LAMMPS (' "$OUT")" = 2 ] || fail "expected LAMMPS to start twice"
[ "$(grep -c '^Reading restart file' "$OUT")" = 1 ] || fail "the second run did not read its restart file"
got=$(last_thermo "$OUT")
[ "$got" = "$want" ] || fail "step $STEPS after the restart: '$got', without the failure: '$want'"
expect_err_no_match 'ftshim\[[0-9]+\] \+[0-9.]+ (error|warn): '
expect_no_leftovers lmp
from=$(awk '/^Reading restart file/ { found = 1 } found && /^ +[0-9]+ +-?[0-9.]+ / { print $1; exit }' "$OUT")
note "rank 1 killed at $at: LAMMPS resumed from its restart file at step $from and ended on the same line"
