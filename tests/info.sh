#!/usr/bin/env bash
# info.sh: ftshim-info from this build directory, no MPI job. The listing
# must give the version, this build's library with its launch lines, and
# every FTSHIM_* variable of the table (as tools/config-doc prints it) with
# its default and what it accepts, and no other. --check must pass in a
# sane environment (a run directory of the test's own, fake launchers
# first on PATH), naming each thing checked, and leave nothing behind; it
# must fail with exactly one "problem:" line, the library's own, for a
# value out of range, an unknown keyword, a near miss of a name, a timeout
# under two periods, a run directory that cannot be made (under a regular
# file or a missing directory: chmod does not stop root), a library that
# is no ELF file or misses a dependency (--libdir), and a flavour with no
# launcher on PATH; a far unknown name only warns. A bad command line
# exits 2 with one line on stderr and nothing on stdout. Every command
# runs under timeout -k.
set -euo pipefail

info=$FT_BUILDDIR/tools/ftshim-info
[ -x "$info" ] || { echo "info.sh: $info is missing or not executable" >&2; exit 1; }
flavour=${MPITEST_FLAVOUR:?}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# run [VAR=VALUE...] -- ARGS...: ftshim-info in an environment of only
# PATH (fake launchers first), HOME and the variables given; $RC, $OUT,
# $ERR (files).
OUT=$tmp/out ERR=$tmp/err
bin=$tmp/bin
run_path=$bin:$PATH
run() {
	local -a vars=()
	while [ "$1" != -- ]; do
		vars+=("$1")
		shift
	done
	shift
	set +e
	timeout -k 5 30 env -i PATH="$run_path" HOME="$tmp" ${vars[@]+"${vars[@]}"} "$info" "$@" >"$OUT" 2>"$ERR"
	RC=$?
	set -e
}

# expect_line TEXT: a line of the output is exactly TEXT.
expect_line() {
	grep -qxF -- "$1" "$OUT" || { cat "$OUT" >&2; fail "no line '$1' in the output above"; }
}

# expect_problem RC LINE: exit status RC and LINE the only "problem:" line.
expect_problem() {
	[ "$RC" = "$1" ] || { cat "$OUT" "$ERR" >&2; fail "exit status $RC, not $1"; }
	[ "$(grep -c '^problem: ' "$OUT")" = 1 ] || { cat "$OUT" >&2; fail "not exactly one problem line"; }
	expect_line "$2"
}

# Every line is a check's: ok, problem or warning.
expect_check_lines() {
	if grep -vE '^(ok|problem|warning): ' "$OUT" >&2; then
		fail "the lines above are no check's"
	fi
}

mkdir -p "$bin"
for l in mpiexec.hydra mpirun.openmpi mpiexec mpirun srun; do
	printf '#!/bin/sh\nexit 0\n' >"$bin/$l"
	chmod +x "$bin/$l"
done
case $flavour in
mpich) launcher=mpiexec.hydra ;;
openmpi) launcher=mpirun.openmpi ;;
*) launcher=mpiexec ;;
esac
build=$(cd "$FT_BUILDDIR" && pwd -P)
lib=$build/.libs/libftshim.so
version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$FT_BUILDDIR/ftshim_config.h")
[ -n "$version" ] || fail "no PACKAGE_VERSION in ftshim_config.h"

# --- the listing ---------------------------------------------------------

run -- 
[ "$RC" = 0 ] && [ ! -s "$ERR" ] || { cat "$ERR" >&2; fail "listing: exit status $RC"; }
[ "$(head -n 1 "$OUT")" = "ftshim $version" ] || fail "listing: first line '$(head -n 1 "$OUT")', not 'ftshim $version'"
expect_line "libraries: $build (build directory, not installed)"
expect_line "$flavour: $lib"
case $flavour in
mpich)
	expect_line "  Hydra:      mpiexec.hydra -disable-auto-cleanup -genv LD_PRELOAD $lib -n N ./app"
	expect_line "  Slurm:      srun --mpi=pmi2 --export=ALL,LD_PRELOAD=$lib,FTSHIM_RUNDIR=/tmp/ftshim-\$USER -n N ./app"
	;;
openmpi)
	expect_line "  Open MPI:   mpirun.openmpi --enable-recovery -x LD_PRELOAD=$lib -n N ./app"
	expect_line "  Slurm:      srun --mpi=pmix --export=ALL,LD_PRELOAD=$lib,FTSHIM_RUNDIR=/tmp/ftshim-\$USER -n N ./app"
	;;
esac

# The variables: NAME|DEFAULT|ACCEPTED from the table and from the listing.
timeout -k 5 30 "$FT_BUILDDIR/tools/config-doc" --markdown |
	awk -F ' [|] ' '/^\| `FTSHIM_/ { gsub(/^\| |`/, "", $1); gsub(/`/, "", $2); print $1 "|" $2 "|" $3 }' \
		>"$tmp/table"
sed -n 's/^  \(FTSHIM_[A-Z_]*\)  *\([^ ]*\)  *\(.*\)$/\1|\2|\3/p' "$OUT" >"$tmp/listed"
[ "$(wc -l <"$tmp/table")" -ge 10 ] || fail "config-doc printed $(wc -l <"$tmp/table") variables"
diff -u "$tmp/table" "$tmp/listed" >&2 || fail "the listing's variables differ from the table (- table, + listing)"

# The accepted text of a variable, from the table.
accepted() {
	awk -F '|' -v v="$1" '$1 == v { print $3 }' "$tmp/table"
}
default_of() {
	awk -F '|' -v v="$1" '$1 == v { print $2 }' "$tmp/table"
}

run -- --version
[ "$RC" = 0 ] && [ "$(cat "$OUT")" = "ftshim-info (ftshim) $version" ] || fail "--version: '$(cat "$OUT")'"
run -- --help
[ "$RC" = 0 ] && grep -q -- '--check' "$OUT" && grep -q -- '--libdir DIR' "$OUT" || fail "--help lacks --check or --libdir"

# --- --check: a sane environment -----------------------------------------

run FTSHIM_RUNDIR="$tmp/rd" -- --check
[ "$RC" = 0 ] || { cat "$OUT" >&2; fail "--check in a sane environment: exit status $RC"; }
expect_check_lines
grep -q '^problem' "$OUT" && fail "--check in a sane environment has a problem"
expect_line "ok: FTSHIM_* variables: FTSHIM_RUNDIR set, all accepted"
grep -qE "^ok: $flavour library $lib: dependencies resolve \([0-9]+\)\$" "$OUT" || { cat "$OUT" >&2; fail "no library line"; }
expect_line "ok: run directory $tmp/rd (FTSHIM_RUNDIR): writable"
expect_line "ok: $flavour launchers on PATH: $launcher ($bin/$launcher), srun ($bin/srun)"
[ ! -e "$tmp/rd" ] || fail "--check left the run directory it made"
# An existing run directory is left as it was.
mkdir "$tmp/rd2"
run FTSHIM_RUNDIR="$tmp/rd2" -- --check
[ "$RC" = 0 ] && [ -d "$tmp/rd2" ] && [ -z "$(ls -A "$tmp/rd2")" ] || fail "--check changed an existing run directory"

# The default run directory: $XDG_RUNTIME_DIR/ftshim, else /tmp/ftshim-UID.
mkdir "$tmp/xdg"
run XDG_RUNTIME_DIR="$tmp/xdg" -- --check
expect_line "ok: run directory $tmp/xdg/ftshim (\$XDG_RUNTIME_DIR/ftshim): writable"
run -- --check
grep -qE "^(ok|problem): run directory /tmp/ftshim-$(id -u) \(/tmp/ftshim-UID\)" "$OUT" ||
	{ cat "$OUT" >&2; fail "no default run directory line"; }

# FTSHIM_DISABLE: nothing else is read.
run FTSHIM_DISABLE=1 FTSHIM_LOG=loud -- --check
[ "$RC" = 0 ] || fail "FTSHIM_DISABLE=1: exit status $RC"
expect_line "ok: FTSHIM_DISABLE=1: ftshim is a pass-through and reads no other variable"

# A name far from every variable's only warns, as the library does.
run FTSHIM_RUNDIR="$tmp/rd" FTSHIM_ZZZTOP=1 -- --check
[ "$RC" = 0 ] || fail "FTSHIM_ZZZTOP: exit status $RC"
expect_line "warning: FTSHIM_ZZZTOP is not a variable of ftshim's, ignored; the variables are listed in 'man 7 ftshim'"

# --- --check: the library's one-line errors --------------------------------

run FTSHIM_RUNDIR="$tmp/rd" FTSHIM_HB_PERIOD=0 -- --check
expect_problem 1 "problem: FTSHIM_HB_PERIOD=0: out of range; accepted: $(accepted FTSHIM_HB_PERIOD) (default $(default_of FTSHIM_HB_PERIOD))"
run FTSHIM_RUNDIR="$tmp/rd" FTSHIM_REPLICA_LOG_MIB=0 -- --check
expect_problem 1 "problem: FTSHIM_REPLICA_LOG_MIB=0: out of range; accepted: $(accepted FTSHIM_REPLICA_LOG_MIB) (default $(default_of FTSHIM_REPLICA_LOG_MIB))"
run FTSHIM_RUNDIR="$tmp/rd" FTSHIM_LOG=loud -- --check
expect_problem 1 "problem: FTSHIM_LOG=loud: unknown keyword; accepted: $(accepted FTSHIM_LOG) (default $(default_of FTSHIM_LOG))"
run FTSHIM_RUNDIR="$tmp/rd" FTSHIM_LGO=debug -- --check
expect_problem 1 "problem: FTSHIM_LGO=debug: unknown variable (did you mean FTSHIM_LOG?); the variables are listed in 'man 7 ftshim'"
run FTSHIM_RUNDIR="$tmp/rd" FTSHIM_HB_PERIOD=100ms FTSHIM_HB_TIMEOUT=150ms -- --check
expect_problem 1 "problem: FTSHIM_HB_TIMEOUT=150ms is less than twice FTSHIM_HB_PERIOD=100ms; accepted: a timeout of at least two periods"
run FTSHIM_RUNDIR="$tmp/rd" FTSHIM_LOG_FILE="$tmp/log.%q" -- --check
expect_problem 1 "problem: FTSHIM_LOG_FILE=$tmp/log.%q: unknown %-sequence; accepted: %r (rank), %h (host), %p (pid), %%"
# The other checks still run and pass.
expect_line "ok: run directory $tmp/rd (FTSHIM_RUNDIR): writable"

# --- --check: a run directory that cannot be made --------------------------

: >"$tmp/file"
run FTSHIM_RUNDIR="$tmp/file/rd" -- --check
expect_problem 1 "problem: run directory $tmp/file/rd (FTSHIM_RUNDIR): cannot be made: its parent $tmp/file is not a directory"
run FTSHIM_RUNDIR="$tmp/none/rd" -- --check
expect_problem 1 "problem: run directory $tmp/none/rd (FTSHIM_RUNDIR): cannot be made: its parent $tmp/none does not exist (ftshim makes the last component only)"
run FTSHIM_RUNDIR="$tmp/file" -- --check
expect_problem 1 "problem: run directory $tmp/file (FTSHIM_RUNDIR): exists and is not a directory"
# The case srun --export=ALL makes: XDG_RUNTIME_DIR from another host.
run XDG_RUNTIME_DIR="$tmp/run-user" -- --check
expect_problem 1 "problem: run directory $tmp/run-user/ftshim (\$XDG_RUNTIME_DIR/ftshim): cannot be made: its parent $tmp/run-user does not exist (ftshim makes the last component only); set FTSHIM_RUNDIR to a directory this node can make (/tmp/ftshim-\$USER)"
mkdir "$tmp/xdg-file"
: >"$tmp/xdg-file/ftshim"
run XDG_RUNTIME_DIR="$tmp/xdg-file" -- --check
expect_problem 1 "problem: run directory $tmp/xdg-file/ftshim (\$XDG_RUNTIME_DIR/ftshim): exists and is not a directory; set FTSHIM_RUNDIR to a directory this node can make (/tmp/ftshim-\$USER)"

# --- --libdir: an installation's layout -----------------------------------

mkdir -p "$tmp/inst/lib/ftshim/$flavour" "$tmp/inst/lib/pkgconfig"
cp "$lib" "$tmp/inst/lib/ftshim/$flavour/libftshim.so"
: >"$tmp/inst/lib/pkgconfig/ftshim-$flavour.pc"
run FTSHIM_RUNDIR="$tmp/rd" -- --libdir "$tmp/inst/lib/ftshim"
[ "$RC" = 0 ] || fail "--libdir: exit status $RC"
expect_line "libraries: $tmp/inst/lib/ftshim (--libdir)"
expect_line "$flavour: $tmp/inst/lib/ftshim/$flavour/libftshim.so"
expect_line "  pkg-config: ftshim-$flavour ($tmp/inst/lib/pkgconfig/ftshim-$flavour.pc)"
run FTSHIM_RUNDIR="$tmp/rd" -- --check --libdir="$tmp/inst/lib/ftshim"
[ "$RC" = 0 ] || { cat "$OUT" >&2; fail "--check --libdir: exit status $RC"; }
grep -qE "^ok: $flavour library $tmp/inst/lib/ftshim/$flavour/libftshim.so: dependencies resolve \([0-9]+\)\$" "$OUT" ||
	{ cat "$OUT" >&2; fail "--libdir: no library line"; }

# A library that is no ELF file.
mkdir -p "$tmp/bad/other"
echo 'not a library' >"$tmp/bad/other/libftshim.so"
run FTSHIM_RUNDIR="$tmp/rd" -- --check --libdir "$tmp/bad"
expect_problem 1 "problem: other library $tmp/bad/other/libftshim.so: not an ELF shared library"

# A library whose dependency is gone.
cc=$(command -v cc || command -v gcc || true)
if [ -n "$cc" ]; then
	mkdir -p "$tmp/dep" "$tmp/gone/$flavour"
	echo 'int ftinfo_dep(void) { return 0; }' >"$tmp/dep.c"
	echo 'int ftinfo_dep(void); int ftinfo_use(void) { return ftinfo_dep(); }' >"$tmp/use.c"
	timeout -k 5 60 "$cc" -shared -fPIC -o "$tmp/dep/libftinfodep.so" "$tmp/dep.c"
	timeout -k 5 60 "$cc" -shared -fPIC -Wl,--no-as-needed -o "$tmp/gone/$flavour/libftshim.so" "$tmp/use.c" \
		-L"$tmp/dep" -lftinfodep
	rm "$tmp/dep/libftinfodep.so"
	run FTSHIM_RUNDIR="$tmp/rd" -- --check --libdir "$tmp/gone"
	expect_problem 1 "problem: $flavour library $tmp/gone/$flavour/libftshim.so: libftinfodep.so not found (ldd; LD_LIBRARY_PATH=unset)"
else
	echo "info.sh: no C compiler: the missing-dependency case is skipped"
fi

# No library at all.
mkdir "$tmp/empty"
run FTSHIM_RUNDIR="$tmp/rd" -- --check --libdir "$tmp/empty"
expect_problem 1 "problem: no libftshim.so in $tmp/empty/*/ (--libdir; make install puts each MPI's in PREFIX/lib/ftshim/FLAVOUR/; --libdir DIR looks elsewhere)"

# --- --check: no launcher on PATH (only ldd there) --------------------------

mkdir "$tmp/lddonly"
ln -s "$(command -v ldd)" "$tmp/lddonly/ldd"
run_path=$tmp/lddonly
run FTSHIM_RUNDIR="$tmp/rd" -- --check
case $flavour in
mpich | openmpi) expect_problem 1 "problem: $flavour launchers: none on PATH (looked for $launcher, srun)" ;;
esac
run_path=$bin:$PATH

# --- a bad command line ------------------------------------------------------

bad_usage() {
	local want=$1
	shift
	run -- "$@"
	[ "$RC" = 2 ] || fail "'$*': exit status $RC, not 2"
	[ ! -s "$OUT" ] || fail "'$*': printed on stdout"
	[ "$(wc -l <"$ERR")" = 1 ] && [ "$(cat "$ERR")" = "$want" ] ||
		fail "'$*': stderr '$(cat "$ERR")', not '$want'"
}
bad_usage "ftshim-info: unknown option '--frobnicate'; accepted: --check, --libdir DIR, --help, --version" --frobnicate
bad_usage "ftshim-info: unknown option '--frobnicate'; accepted: --check, --libdir DIR, --help, --version" --check --frobnicate
bad_usage "ftshim-info: unexpected argument 'now'; accepted: --check, --libdir DIR, --help, --version" --check now
bad_usage "ftshim-info: --libdir needs a directory: PREFIX/lib/ftshim" --libdir
bad_usage "ftshim-info: --libdir $tmp/none: no such directory; accepted: a directory, PREFIX/lib/ftshim" --libdir "$tmp/none"
bad_usage "ftshim-info: --libdir $tmp/file: not a directory; accepted: a directory, PREFIX/lib/ftshim" --libdir "$tmp/file"

echo "info.sh: listing ($(wc -l <"$tmp/table") variables), --check and its problems, usage errors: as expected"
