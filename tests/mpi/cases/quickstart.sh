# The README's quick start, as written: this build is installed into a
# scratch DESTDIR, the README's C skeleton (the ULFM loop under "Making a
# program survive") is built with the installed pkg-config flags, and
# the README's launch line for this MPI runs it with /opt/ftshim replaced
# by the scratch prefix and nothing else changed (the environment allows
# root and oversubscription to Open MPI, as a user's machine would not
# need). A rank is killed: the skeleton must end with the survivors, the
# summary line must say so, and FTSHIM_LOG=debug must show ftshim on in
# every rank, as the README's "Is ftshim active?" says. A wrong path in
# the README, or a line that does not preload the library, fails here.
# The srun line is Slurm's (slurm.sh checks srun launches). Skipped in a
# sanitized build, whose runtime the README's line does not preload.
[ "${MPITEST_SANITIZER:-no}" = no ] || { echo "skip: the README's line preloads no sanitizer runtime"; exit 77; }
readme=$FT_SRCDIR/README.md
root=$MPITEST_WORKDIR/root
rm -rf "$root"
timeout -k 5 300 env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL ${MAKE:-make} -C "$FT_BUILDDIR" install DESTDIR="$root" \
	>"$MPITEST_WORKDIR/install.log" 2>&1 || { tail -n 20 "$MPITEST_WORKDIR/install.log" >&2; fail "make install DESTDIR=... failed"; }
pc=$(find "$root" -name "ftshim-$MPITEST_FLAVOUR.pc" -path '*/pkgconfig/*')
[ -n "$pc" ] || fail "no ftshim-$MPITEST_FLAVOUR.pc installed"
export PKG_CONFIG_PATH=${pc%/*} PKG_CONFIG_SYSROOT_DIR=$root
prefix=$root$(pkg-config --variable=prefix "ftshim-$MPITEST_FLAVOUR" | sed "s|^$root||")

# The skeleton: the README's only C block.
sed -n '/^```c$/,/^```$/p' "$readme" | sed '1d;$d' >app.c
[ "$(grep -c 'MPIX_Comm_shrink' app.c)" -ge 1 ] || fail "no C skeleton with MPIX_Comm_shrink in the README"
# shellcheck disable=SC2046 # the flags are words
timeout -k 5 120 "$MPITEST_MPICC" $(pkg-config --cflags "ftshim-$MPITEST_FLAVOUR") -o app app.c 2>cc.log ||
	{ cat cc.log >&2; fail "the README's skeleton does not build with the installed flags"; }

# The launch line for this MPI, from between the quick-start markers.
case $MPITEST_FLAVOUR in
mpich) launcher=mpiexec.hydra ;;
openmpi) launcher=mpirun.openmpi ;;
esac
line=$(sed -n '/<!-- quick-start:begin -->/,/<!-- quick-start:end -->/p' "$readme" | sed -n "s/^    \($launcher .*\)$/\1/p")
[ "$(printf '%s\n' "$line" | grep -c .)" = 1 ] || fail "the README's quick start has not one $launcher line: '$line'"
case $line in *'/opt/ftshim/'*' ./app') ;; *) fail "the README's $launcher line does not preload from /opt/ftshim and run ./app: $line" ;; esac
line=${line//\/opt\/ftshim/$prefix}
note "the README's line, prefix replaced: $line"
read -r -a LAUNCH <<<"$line"
[ -f "${prefix}/lib/ftshim/$MPITEST_FLAVOUR/libftshim.so" ] || fail "the installed library is not at PREFIX/lib/ftshim/$MPITEST_FLAVOUR/libftshim.so"
grep -q -- "$prefix/lib/ftshim/$MPITEST_FLAVOUR/libftshim.so" <<<"$line" ||
	fail "the README's $launcher line preloads another flavour's library: $line"

export FTSHIM_LOG=debug FTSHIM_INJECT="rank=2 at=call:MPI_Allreduce:30"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
run_launch "(the README's quick start)"
unset FTSHIM_LOG FTSHIM_INJECT
grep -qx "100 steps, 3 ranks at the end, last sum 3" "$OUT" ||
	{ cat "$OUT" >&2; tail -n 30 "$ERR" >&2; fail "the skeleton did not finish with the 3 survivors"; }
for r in 0 1 2 3; do
	expect_err_match "ftshim\[$r\] \+[0-9.]+ debug: on: rank $r of 4, $MPITEST_FLAVOUR"
done
expect_err_match "^ftshim: 1 failure \(rank 2 SIGKILL at [0-9.]+ s\); .*3 of 4 ranks finished; report: "
expect_err_no_match 'ftshim\[[0-9]+\] \+[0-9.]+ error: '
note "the README's skeleton, launched by its quick-start line, lost rank 2 and finished on 3"
