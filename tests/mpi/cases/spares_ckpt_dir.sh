# Checkpoint files beside the in-memory copies (FTSHIM_CKPT_DIR), with
# progs/ckpt_calls.c (a ring whose answer is wrong if any rank resumes
# from another step than the others; checkpoints every 10 steps). Rank 1
# and its buddy, rank 2, killed together: no process kept rank 1's copy
# in memory, so the spare that takes rank 1 reads its file, rank 2's
# comes from its buddy's memory, and every rank resumes from the last
# checkpoint (without the files every rank starts from the beginning:
# spares_ckpt). With FTSHIM_CKPT_DISK_EVERY=2 only every second
# checkpoint has files: back to the one before. The files are gone when
# the program ends; another job's file is left alone; a directory that
# cannot be written is refused with one line at MPI_Init.
prog=$(build ckpt_calls)
dir="$MPITEST_WORKDIR/ckpt"
mkdir -p "$dir"
# Another job's file, as if left by a job that died whole: never read,
# never removed.
stranger="$dir/ftshim-000000000000-r1-3-0.ckpt"
echo "not a checkpoint" >"$stranger"

# Only our job's files, and no temporary one.
ours() {
	find "$dir" -mindepth 1 ! -path "$stranger" | sort
}

run_job shim 6 FTSHIM_SPARES=2 "FTSHIM_CKPT_DIR=$dir" "FTSHIM_INJECT=rank=1,2 at=call:MPI_Sendrecv:35" -- "$prog" 60 --kib 64 --nap-ms 2
expect_rc "$(death_rc sigkill)"
expect_main_runs 2
[ "$(grep -c '^in main: rank [0-3] of 4 from step 30 (restart version 30)$' "$OUT")" = 4 ] ||
	{ cat "$OUT" >&2; fail "the second run did not resume every rank from version 30"; }
expect_err_match "info: checkpoints: every rank goes back to version 30 \(checkpoint 3, taken [0-9.]+ s ago: the work since is done again\)$"
expect_err_match "info: checkpoints: rank 1's copy of version 30 \(0\.1 MiB\) came from its file $dir/ftshim-[0-9a-f]{12}-r1-3-0\.ckpt in [0-9.]+ ms$"
expect_err_match "info: checkpoints: rank 2's copy of version 30 \(0\.1 MiB\) came from process 3 \([^)]*\) in [0-9.]+ ms$"
grep -qE '^result: ([0-9]+) \(expected \1\)$' "$OUT" || { cat "$OUT" >&2; fail "the result is not the failure-free one"; }
summary=$(grep '^ftshim: ' "$ERR" || true)
python3 - "$(echo "$summary" | sed 's/.*; report: //')" <<'PY' || fail "report.json lacks the files written or the restore from one (see above)"
import json, sys
r = json.load(open(sys.argv[1]))
files = [e for e in r["events"] if e["kind"] == "checkpoint_file"]
rs = [e for e in r["events"] if e["kind"] == "restore"]
# Files of checkpoints 1 and 2 by 4 ranks at least (the third's are
# seen written at the next call or not at all), 64 KiB and more each.
if not (len(files) >= 8 and all(e["bytes"] > 65536 for e in files)
        and sorted(e["file"] for e in rs) == [False, False, False, True]):
    print("report.json: files %s, restores %s" % (files, rs), file=sys.stderr)
    sys.exit(1)
PY
[ -z "$(ours)" ] || { ours >&2; fail "the job's checkpoint files were left behind"; }
[ -f "$stranger" ] || fail "another job's file was removed"
expect_no_leftovers ckpt_calls
note "rank 1 and its buddy killed: rank 1 came back from its file, every rank from version 30; the files removed at the end"

# Files for every second checkpoint only (20, 40): rank 1's latest file
# is of version 20, so every rank goes back to it, the in-memory copies
# of 30 notwithstanding.
run_job shim 6 FTSHIM_SPARES=2 "FTSHIM_CKPT_DIR=$dir" FTSHIM_CKPT_DISK_EVERY=2 "FTSHIM_INJECT=rank=1,2 at=call:MPI_Sendrecv:35" -- "$prog" 60 --nap-ms 2
expect_rc "$(death_rc sigkill)"
expect_main_runs 2
expect_err_match "info: checkpoints: every rank goes back to version 20 \(checkpoint 2, taken [0-9.]+ s ago: the work since is done again\)$"
expect_err_match "info: checkpoints: rank 1's copy of version 20 \([0-9.]+ MiB\) came from its file $dir/ftshim-[0-9a-f]{12}-r1-2-0\.ckpt in [0-9.]+ ms$"
grep -qE '^result: ([0-9]+) \(expected \1\)$' "$OUT" || { cat "$OUT" >&2; fail "the result is not the failure-free one"; }
[ -z "$(ours)" ] || { ours >&2; fail "the job's checkpoint files were left behind"; }
expect_no_leftovers ckpt_calls
note "FTSHIM_CKPT_DISK_EVERY=2: back to the last checkpoint with files"

# A failure-free job leaves no file either.
run_job shim 5 FTSHIM_SPARES=1 "FTSHIM_CKPT_DIR=$dir" -- "$prog" 40
expect_rc 0
grep -qE '^result: ([0-9]+) \(expected \1\)$' "$OUT" || { cat "$OUT" >&2; fail "the result is not the right one"; }
[ -z "$(ours)" ] || { ours >&2; fail "a failure-free job left its checkpoint files"; }

# A directory that is a file, and one that cannot be made.
run_job shim 5 FTSHIM_SPARES=1 "FTSHIM_CKPT_DIR=$stranger" -- "$prog" 20
expect_rc "$(launcher_rc 78)"
expect_err_line "ftshim: FTSHIM_CKPT_DIR=$stranger: not a directory; accepted: a directory this process can write in, on a filesystem every host sees"
run_job shim 5 FTSHIM_SPARES=1 "FTSHIM_CKPT_DIR=$dir/missing/sub" -- "$prog" 20
expect_rc "$(launcher_rc 78)"
expect_err_line "ftshim: FTSHIM_CKPT_DIR=$dir/missing/sub: missing, and it cannot be made (No such file or directory); accepted: a directory this process can write in, on a filesystem every host sees"
expect_no_leftovers ckpt_calls
note "bad directories refused with one line at MPI_Init"
