#!/usr/bin/env bash
# bench/fenix.sh: Fenix (github.com/sandialabs/Fenix, spare processes and
# in-memory checkpoints over ULFM), built unchanged against ftshim's
# headers, runs its own examples and tests under the shim on each MPI
# built by dev/setup; one line per program: the launcher's status, whether
# it printed a failure (FAILURE, a failed assertion, a crash) and ftshim's
# summary line. Asserts nothing; a benchmark of correctness, kept out of
# make check because the suite cannot fetch Fenix.
#
# Usage: bench/fenix.sh FENIX_SOURCE_DIR [mpich|openmpi ...]
#
# Needs cmake. The programs and arguments are those of Fenix's own CTest
# files. On MPICH, Fenix's headers use size_t without including
# <stddef.h> (Open MPI's mpi.h happens to include it), so the build adds
# -include stddef.h there.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
src=${1:?usage: bench/fenix.sh FENIX_SOURCE_DIR [mpich|openmpi ...]}
shift
flavours=${*:-mpich openmpi}
command -v cmake >/dev/null || { echo "bench/fenix.sh: needs cmake (apt-get install cmake)" >&2; exit 2; }
[ -f "$src/CMakeLists.txt" ] || { echo "bench/fenix.sh: $src: not a Fenix source tree" >&2; exit 2; }

runs=(
	"3 examples/01_hello_world/fenix/fenix_hello_world 1"
	"5 examples/02_send_recv/fenix/fenix_ring 1 2"
	"5 examples/05_subset_create/subset_create 1"
	"5 examples/06_subset_createv/subset_createv 1"
	"6 test/failed_spares/fenix_failed_spares 3 1 3 4"
	"5 test/issend/fenix_issend_test 1"
	"5 test/request_cancelled/fenix_request_cancelled_test 1"
	"3 test/request_tracking/fenix_request_tracking_test"
	"5 test/no_jump/fenix_no_jump_test 1"
)

for flavour in $flavours; do
	case $flavour in
	mpich) cc=mpicc.mpich extra="-include stddef.h" launch=(mpiexec.hydra -disable-auto-cleanup) env=(-genv LD_PRELOAD) ;;
	openmpi) cc=mpicc.openmpi extra="" launch=(mpirun.openmpi --oversubscribe --enable-recovery) env=(-x) ;;
	*) echo "bench/fenix.sh: $flavour: accepted: mpich, openmpi" >&2; exit 2 ;;
	esac
	[ "$(id -u)" = 0 ] && [ "$flavour" = openmpi ] && launch+=(--allow-run-as-root)
	shim=$top/build/$flavour/.libs/libftshim.so
	[ -f "$shim" ] || { echo "bench/fenix.sh: $shim: build first (dev/setup)" >&2; exit 2; }
	work=$(mktemp -d "/tmp/ftshim-fenix-$flavour-XXXXXX")
	if ! (cd "$work" && cmake "$src" -DCMAKE_C_COMPILER="$cc" -DMPI_C_COMPILER="$cc" \
		-DCMAKE_C_FLAGS="$extra -I$top/include/wrap -I$top/include" \
		-DBUILD_EXAMPLES=ON -DBUILD_TESTING=ON -DBUILD_DOCS=OFF >cmake.log 2>&1 &&
		make -j2 >make.log 2>&1); then
		echo "$flavour: Fenix did not build (see $work/cmake.log, $work/make.log)"
		continue
	fi
	echo "$flavour: Fenix built in $work"
	for r in "${runs[@]}"; do
		set -- $r
		n=$1 prog=$2
		shift 2
		if [ "$flavour" = mpich ]; then
			pre=("${env[@]}" "$shim")
		else
			pre=("${env[@]}" "LD_PRELOAD=$shim")
		fi
		timeout -k 5 60 "${launch[@]}" -n "$n" "${pre[@]}" "$work/$prog" "$@" >"$work/out" 2>"$work/err" </dev/null
		rc=$?
		bad=$(cat "$work/out" "$work/err" | grep -cE 'FAILURE|Assertion|Segmentation|signal 11|Fatal error')
		printf '%-8s %-30s status %3s  failure lines %s  %s\n' "$flavour" "$(basename "$prog")" "$rc" "$bad" \
			"$(grep -h '^ftshim: ' "$work/err" | cut -c1-110)"
	done
done
