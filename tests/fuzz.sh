#!/bin/sh
# fuzz.sh: builds tests/fuzz/fuzz_frame.c with clang's libFuzzer, ASan and
# UBSan into $FT_BUILDDIR/tests/fuzz, writes a seed corpus of valid frames
# of every type (every kind of control message among them), and fuzzes
# the frame parser. Fails if the fuzzer finds a crash, a leak, undefined
# behaviour or a broken round trip (its input is kept under
# tests/fuzz/artifacts/ in the build directory and dumped into the log);
# skips (77) where clang or its fuzzer runtime is missing. At the end it
# prints the executions, the CPU time and, where llvm-cov is installed,
# the line and branch coverage of src/frame.c that the corpus reaches.
#
#   FT_FUZZ_SECONDS  how long to fuzz, wall clock (20; an hour is 3600)
#   FT_FUZZ_JOBS     fuzzing processes side by side (1): libFuzzer's fork
#                    mode, sharing one corpus
#   FT_FUZZ_CORPUS   a directory to keep the corpus in, so that a long run
#                    goes on from the last (a temporary one by default)
set -eu

: "${FT_SRCDIR:?FT_SRCDIR must name the source tree (make check sets it)}"
: "${FT_BUILDDIR:?FT_BUILDDIR must name the build tree (make check sets it)}"

out="$FT_BUILDDIR/tests/fuzz"
bin="$out/fuzz_frame"
artifacts="$out/artifacts"
flags="-std=c11 -g -O1 -fsanitize=fuzzer,address,undefined"

if ! command -v clang >/dev/null 2>&1; then
	echo "fuzz.sh: SKIP: clang not found"
	exit 77
fi

mkdir -p "$out"
tmp=$(mktemp -d "$out/tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# An empty target first, so that a missing fuzzer or sanitizer runtime
# (a skip) is not confused with an error in our own code (a failure).
cat >"$tmp/probe.c" <<'EOF'
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	(void)data;
	(void)size;
	return 0;
}
EOF
# shellcheck disable=SC2086 # $flags is a list of options
if ! clang $flags "$tmp/probe.c" -o "$tmp/probe" >"$tmp/probe.log" 2>&1; then
	echo "fuzz.sh: SKIP: clang cannot link a libFuzzer target here (fuzzer runtime missing?): $(grep -m1 -i error "$tmp/probe.log" || head -n1 "$tmp/probe.log")"
	exit 77
fi

echo "fuzz.sh: building $bin"
# shellcheck disable=SC2086
clang $flags -I"$FT_SRCDIR" -I"$FT_BUILDDIR" "$FT_SRCDIR/src/frame.c" \
	"$FT_SRCDIR/tests/fuzz/fuzz_frame.c" -o "$bin" || {
	echo "fuzz.sh: FAIL: the fuzz target does not build"
	exit 1
}

# The seed corpus: printf escapes of the exact bytes (frame.h's layout).
# le16/le32 N print the little-endian bytes of N as printf escapes.
le16() {
	printf '\\%03o\\%03o' $(($1 & 255)) $(($1 >> 8 & 255))
}
le32() {
	printf '\\%03o\\%03o\\%03o\\%03o' $(($1 & 255)) $(($1 >> 8 & 255)) \
		$(($1 >> 16 & 255)) $(($1 >> 24 & 255))
}
# entry RANK EVENT HOW DETECTOR AT-LOW AT-HIGH: at_ns as two u32 halves
# (sh arithmetic may be only 32 bits wide); 20 bytes, FT_ENTRY_LEN.
entry() {
	printf '%s' "$(le32 "$1")$(le16 "$2")$(le16 "$3")$(le32 "$4")$(le32 "$5")$(le32 "$6")"
}
# frame TYPE SENDER PAYLOAD-LENGTH PAYLOAD-ESCAPES: the secret is the one
# of fuzz_frame.c, nprocs there is 64.
frame() {
	# shellcheck disable=SC2059 # the format is the frame, escapes and all
	printf "FTSH\\002$(printf '\\%03o' "$1")\\000\\000$(le32 "$3")$(le32 "$2")ftshim fuzz key!$4"
}
corpus=${FT_FUZZ_CORPUS:-$tmp/corpus}
mkdir -p "$corpus"
hb=$(printf '%s' "$(le32 7)$(le32 0)$(le32 2)$(le32 1)$(le32 0x89abcdef)$(le32 0x01234567)$(le32 0)")
frame 1 3 28 "$hb" >"$corpus/heartbeat"
frame 1 63 28 "$(le32 0)$(le32 0)$(le32 0)$(le32 0)$(le32 0)$(le32 0)$(le32 0)" >"$corpus/heartbeat-zero"
frame 4 5 8 "$(le32 2)$(le32 9)" >"$corpus/excluded"
# app KIND VALUE DATA-LENGTH DATA-ESCAPES: a control message (pmpi/state.h's
# enum ftp_app_kind), key 0x0123456789abcdef, sequence 5.
app() {
	frame 5 2 $((24 + $3)) "$(le32 0x89abcdef)$(le32 0x01234567)$(le32 5)$(le16 "$1")$(le16 0)$(le32 "$2")$(le32 "$3")$4"
}
for kind in 1 2 3 4 5 6 7 8; do
	app $kind 1 0 "" >"$corpus/app-$kind"
	app $kind 0xffffffff 8 "$(le32 3)$(le32 0xff)" >"$corpus/app-$kind-data"
done
frame 6 5 8 "$(le32 3)$(le32 0)" >"$corpus/probe"
frame 6 9 8 "$(le32 0xffffffff)$(le32 3)" >"$corpus/probe-reply-recheck"
frame 2 0 4 "$(le32 0)" >"$corpus/notice-0"
frame 2 1 24 "$(le32 1)$(entry 3 1 2 1 0x2b1f2a15 0x179a6cb1)" >"$corpus/notice-1"
frame 2 1 64 "$(le32 3)$(entry 3 1 2 1 0x2b1f2a15 0x179a6cb1)$(entry 4 2 0 1 0 0)$(entry 63 1 255 62 0xffffffff 0xffffffff)" >"$corpus/notice-3"
frame 3 63 8 "$(le32 1)$(le32 0)" >"$corpus/sync-0"
frame 3 2 48 "$(le32 0)$(le32 2)$(entry 10 1 3 2 0x2b1f2a15 0x179a6cb1)$(entry 11 2 0 2 0 0)" >"$corpus/sync-2"
{
	frame 1 3 28 "$hb"
	frame 2 1 24 "$(le32 1)$(entry 3 1 2 1 0x2b1f2a15 0x179a6cb1)"
	frame 4 5 8 "$(le32 2)$(le32 9)"
	frame 6 5 8 "$(le32 3)$(le32 1)"
	frame 3 2 8 "$(le32 1)$(le32 0)"
} >"$corpus/stream"

rm -rf "$artifacts"
mkdir -p "$artifacts"
secs=${FT_FUZZ_SECONDS:-20}
jobs=${FT_FUZZ_JOBS:-1}
case $secs$jobs in
*[!0-9]*)
	echo "fuzz.sh: FT_FUZZ_SECONDS=$secs FT_FUZZ_JOBS=$jobs: both must be whole numbers"
	exit 1
	;;
esac
set -- "$corpus"/*
echo "fuzz.sh: fuzzing the frame parser for ${secs}s in $jobs process(es) ($# inputs in $corpus)"
# libFuzzer exits 77 on a crash by default, which Automake would read as a
# skip: make every finding exit 1. UBSan reports become fatal too. The
# limit leaves the fuzzer time to wrap up after max_total_time.
fork=
[ "$jobs" -gt 1 ] && fork="-fork=$jobs -ignore_crashes=0"
status=0
# shellcheck disable=SC2086 # $fork is a list of options
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	timeout -k 5 $((secs + 120)) "$bin" -max_total_time="$secs" -max_len=4096 -timeout=10 \
	-error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 $fork \
	-artifact_prefix="$artifacts/" "$corpus" >"$tmp/fuzz.log" 2>&1 || status=$?
cat "$tmp/fuzz.log"

# The fork mode's parent prints no final stats: its last status line
# has the executions.
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/fuzz.log" | tail -n 1)
[ -n "$runs" ] || runs=$(sed -n 's/^#\([0-9][0-9]*\).*exec\/s.*/\1/p' "$tmp/fuzz.log" | tail -n 1)
if [ "$status" -ne 0 ]; then
	echo "fuzz.sh: FAIL: the fuzzer exited with status $status after ${runs:-?} executions"
	for f in "$artifacts"/*; do
		[ -f "$f" ] || continue
		echo "fuzz.sh: input kept in $f (first 256 bytes):"
		od -An -tx1 "$f" | head -n 16
	done
	exit 1
fi
rmdir "$artifacts" 2>/dev/null || true
# The children's CPU time, user and system (the second line of times).
times >"$tmp/times"
cpu=$(sed -n 2p "$tmp/times")
echo "fuzz.sh: PASS: ${runs:-?} executions, no finding; CPU time of the fuzzers (user, system): $cpu"

# Coverage of the parser by the corpus now in $corpus, where llvm-cov is.
if command -v llvm-profdata >/dev/null 2>&1 && command -v llvm-cov >/dev/null 2>&1; then
	cov="$out/fuzz_frame_cov"
	# shellcheck disable=SC2086
	if clang -std=c11 -g -O0 -fsanitize=fuzzer -fprofile-instr-generate -fcoverage-mapping \
		-I"$FT_SRCDIR" -I"$FT_BUILDDIR" "$FT_SRCDIR/src/frame.c" \
		"$FT_SRCDIR/tests/fuzz/fuzz_frame.c" -o "$cov" 2>"$tmp/cov.log" &&
		LLVM_PROFILE_FILE="$tmp/frame.profraw" timeout -k 5 600 "$cov" -runs=0 "$corpus" >>"$tmp/cov.log" 2>&1 &&
		llvm-profdata merge -sparse "$tmp/frame.profraw" -o "$tmp/frame.profdata" 2>>"$tmp/cov.log"; then
		llvm-cov report "$cov" -instr-profile="$tmp/frame.profdata" "$FT_SRCDIR/src/frame.c" >"$tmp/cov.txt" 2>>"$tmp/cov.log"
		# The TOTAL row: regions, missed, cover, functions, missed,
		# executed, lines, missed, cover, branches, missed, cover.
		awk '/^TOTAL/ { printf "fuzz.sh: coverage of src/frame.c by %s inputs: lines %s, branches %s, regions %s, functions %s\n", n, $10, $13, $4, $7 }' \
			n="$(find "$corpus" -type f | wc -l)" "$tmp/cov.txt"
	else
		echo "fuzz.sh: no coverage figures: $(tail -n 1 "$tmp/cov.log")"
	fi
fi
