# In-memory checkpoints with spare processes (ftshim_protect,
# ftshim_checkpoint, ftshim_restart_version): progs/ckpt_calls.c, a ring
# whose answer is wrong if any rank resumes from another step than the
# others, checkpoints every 10 steps. A rank killed: a spare takes its
# place, fetches the dead rank's copy from the buddy that kept it, and
# every rank resumes from the last checkpoint, with the failure-free
# result. Also: a rank killed inside a checkpoint (after its local copy,
# before its buddy kept it: the restore goes back to the one before), a
# rank killed during the restore, two ranks killed at random times, the
# buddy and the rank it keeps killed together (no copy left: every rank
# starts again from the beginning), and the bad calls: a request pending,
# different versions, overlapping regions, a rank that never
# checkpoints (the job ends with one line, not a hang).
prog=$(build ckpt_calls)

# A rank killed at its 35th step: back to the checkpoint of step 30.
run_job shim 6 FTSHIM_SPARES=2 "FTSHIM_INJECT=rank=2 at=call:MPI_Sendrecv:35" -- "$prog" 100 --kib 64 --nap-ms 2
expect_rc "$(death_rc sigkill)"
expect_main_runs 2
[ "$(grep -c '^in main: rank [0-3] of 4 from step 30 (restart version 30)$' "$OUT")" = 4 ] ||
	{ cat "$OUT" >&2; fail "the second run did not resume every rank from version 30"; }
expect_err_match "ftshim\[0\] \+[0-9.]+ info: checkpoints: every rank goes back to version 30 \(checkpoint 3, taken [0-9.]+ s ago: the work since is done again\)$"
expect_err_match "info: checkpoints: rank 2's copy of version 30 \(0\.1 MiB\) came from process 3 \([^)]*\) in [0-9.]+ ms$"
summary=$(grep '^ftshim: ' "$ERR" || true)
python3 - "$(echo "$summary" | sed 's/.*; report: //')" <<'PY' || fail "report.json lacks the checkpoints or the restore (see above)"
import json, sys
r = json.load(open(sys.argv[1]))
ck = [e for e in r["events"] if e["kind"] == "checkpoint"]
rs = [e for e in r["events"] if e["kind"] == "restore"]
# 3 checkpoints by 4 ranks before the kill, 7 after; a restore on each rank.
if not (len(ck) >= 4 * 3 and all(e["bytes"] > 65536 for e in ck) and len(rs) == 4
        and all(e["version"] == 30 for e in rs) and sorted(e["from"] for e in rs) == [0, 1, 3, 3]):
    print("report.json: %d checkpoints, restores %s" % (len(ck), rs), file=sys.stderr)
    sys.exit(1)
PY
expect_no_leftovers ckpt_calls
note "rank 2 killed: its copy came from its buddy, every rank resumed from version 30"

# Killed inside its 4th checkpoint, after its local copy and before its
# buddy kept it: checkpoint 4 is not whole, every rank goes back to 3.
run_job shim 6 FTSHIM_SPARES=2 "FTSHIM_INJECT=rank=1 at=point:ftshim.checkpoint:4" -- "$prog" 100 --kib 64 --nap-ms 1
expect_rc "$(death_rc sigkill)"
expect_main_runs 2
expect_err_match "info: checkpoints: every rank goes back to version 30 \(checkpoint 3, taken [0-9.]+ s ago: the work since is done again\)$"
expect_no_leftovers ckpt_calls
note "a rank killed inside a checkpoint: back to the one before, which is whole"

# Rank 0 (the one that chooses) killed during the restore: a second
# repair, a second restore, the same version (rank 0's copy is kept by
# rank 1, rank 2's by rank 3).
run_job shim 6 FTSHIM_SPARES=2 "FTSHIM_INJECT=rank=2 at=call:MPI_Sendrecv:35; rank=0 at=point:ftshim.restore:1" -- "$prog" 100 --nap-ms 1
expect_rc "$(death_rc sigkill)"
[ "$(grep -c 'takes rank' "$ERR")" = 2 ] || fail "expected two substitutions"
[ "$(grep -c '^result: ' "$OUT")" = 1 ] && grep -qE '^result: ([0-9]+) \(expected \1\)$' "$OUT" ||
	{ cat "$OUT" >&2; fail "a rank killed during the restore: the result is not the failure-free one"; }
grep -q '^in main: rank 0 of 4 from step 30 (restart version 30)$' "$OUT" || { cat "$OUT" >&2; fail "rank 0 did not resume from 30"; }
expect_err_no_match 'CHECK FAILED|error:'
expect_no_leftovers ckpt_calls
note "a rank killed during the restore: repaired and restored again"

# Two ranks at random times (from the moment the job is up), the ring a
# Cartesian communicator (made in each run, on the repaired world too).
run_job shim 6 FTSHIM_SPARES=2 "FTSHIM_INJECT=rank=random:2 at=exp:150ms seed=5" -- "$prog" 400 --nap-ms 2 --cart
expect_rc "$(death_rc sigkill)"
expect_main_runs 3
expect_no_leftovers ckpt_calls
note "two ranks killed at random times: both resumed from checkpoints, on a Cartesian ring"

# A spare killed while it waits, then a rank: the other spare takes the
# rank, with the lost rank's copy. A waiting spare makes no MPI call to
# count: its time counts from the moment the job is up (the spares
# waiting), and the rank's kill comes after 35 steps of at least 5 ms.
run_job shim 6 FTSHIM_SPARES=2 "FTSHIM_INJECT=rank=spare:0 at=time:50ms; rank=2 at=call:MPI_Sendrecv:35" -- "$prog" 100 --nap-ms 5
expect_rc "$(death_rc sigkill)"
expect_main_runs 2
expect_err_match "info: spares: rank 2's process 2 \([^)]*\) lost; spare 1 \(process 5, [^)]*\) takes rank 2, and every rank runs main again"
expect_err_match "info: checkpoints: rank 2's copy of version 30 \([0-9.]+ MiB\) came from process 3 \([^)]*\) in [0-9.]+ ms$"
expect_no_leftovers ckpt_calls
note "spare 0 killed while waiting, then rank 2: spare 1 took rank 2 with its copy"

# Rank 1 and its buddy, rank 2, at once: rank 1's copies are gone, so
# every rank starts again from the beginning, and still ends right.
run_job shim 6 FTSHIM_SPARES=2 "FTSHIM_INJECT=rank=1,2 at=call:MPI_Sendrecv:35" -- "$prog" 60 --nap-ms 1
expect_rc "$(death_rc sigkill)"
expect_err_match "info: checkpoints: no checkpoint has every rank's copy; every rank starts from the beginning$"
[ "$(grep -c '^in main: rank [0-3] of 4 from step 0 (restart version -1)$' "$OUT")" = 8 ] ||
	{ cat "$OUT" >&2; fail "expected every rank to start again from step 0"; }
grep -qE '^result: ([0-9]+) \(expected \1\)$' "$OUT" || { cat "$OUT" >&2; fail "the result is not the failure-free one"; }
expect_no_leftovers ckpt_calls
note "a rank and its buddy lost together: every rank started again from the beginning"

# Bad calls, each on every rank alike.
run_job shim 5 FTSHIM_SPARES=1 -- "$prog" 20 --pending
expect_rc 0
[ "$(grep -c '^rank [0-3]: checkpoint at step [12]0: -1$' "$OUT")" = 8 ] || { cat "$OUT" >&2; fail "a pending request: expected the checkpoint refused on every rank"; }
expect_err_match "error: ftshim_checkpoint\(10\): 1 request\(s\) of the program's still pending on rank 1; accepted: a call with every request completed \(MPI_Wait\) or freed$"
grep -qE '^result: ([0-9]+) \(expected \1\)$' "$OUT" || fail "the program did not go on after a refused checkpoint"

run_job shim 5 FTSHIM_SPARES=1 -- "$prog" 20 --odd-version
expect_rc 0
[ "$(grep -c '^rank [0-3]: checkpoint at step [12]0: -1$' "$OUT")" = 8 ] || { cat "$OUT" >&2; fail "different versions: expected the checkpoint refused on every rank"; }
expect_err_match "error: ftshim_checkpoint\(10\): the ranks gave different versions; accepted: the same version on every rank; no checkpoint taken$"

run_job shim 5 FTSHIM_SPARES=1 -- "$prog" 20 --overlap
expect_rc 0
[ "$(grep -c '^rank [0-3]: overlapping region: -1$' "$OUT")" = 4 ] || { cat "$OUT" >&2; fail "an overlapping region was not refused"; }
expect_err_match "error: ftshim_protect\(2, 0x[0-9a-f]+, 8\): overlaps region 1 \(0x[0-9a-f]+, 4096 bytes\); accepted: regions that share no byte$"

# Rank 3 skips the checkpoints and waits in MPI_Sendrecv on rank 2,
# which waits in ftshim_checkpoint for it: found within seconds, the
# job ends with one line. (Open MPI's mpirun --enable-recovery exits 0
# whatever happened, so the line is what is checked.)
run_job shim 5 FTSHIM_SPARES=1 -- "$prog" 20 --skip-rank 3
expect_err_match "ftshim\[3\] \+[0-9.]+ error: ftshim_checkpoint: rank 3 waits in MPI_Sendrecv on rank 2, which waits in ftshim_checkpoint \(its checkpoint 1\) for this rank; every rank of MPI_COMM_WORLD must call it: ending the job$"
grep -q '^result: ' "$OUT" && fail "the program finished although rank 3 never checkpointed"
# The same with the ring's exchange in MPI_Waitall: its wait watches too.
run_job shim 5 FTSHIM_SPARES=1 -- "$prog" 20 --skip-rank 3 --nonblocking
expect_err_match "ftshim\[3\] \+[0-9.]+ error: ftshim_checkpoint: rank 3 waits in MPI_Waitall on rank 2, which waits in ftshim_checkpoint \(its checkpoint 1\) for this rank; every rank of MPI_COMM_WORLD must call it: ending the job$"
grep -q '^result: ' "$OUT" && fail "the program finished although rank 3 never checkpointed"
# Rank 3 skips the only checkpoint (at the last step) and goes straight
# to MPI_Finalize: its agreement there meets the others' checkpoint, and
# the job ends with one line from rank 0.
run_job shim 5 FTSHIM_SPARES=1 -- "$prog" 10 --skip-rank 3 --no-result
expect_err_match "ftshim\[0\] \+[0-9.]+ error: ftshim_checkpoint: not every rank called it \(some entered MPI_Finalize while others waited in ftshim_checkpoint\); it is collective over MPI_COMM_WORLD: ending the job$"
expect_no_leftovers ckpt_calls
note "bad calls: a pending request, different versions, overlapping regions refused; a missing checkpoint ends the job"

# Every 3rd call (FTSHIM_CKPT_EVERY=3, calls every 10 steps): a kill at
# step 75 goes back to step 60.
run_job shim 5 FTSHIM_SPARES=1 FTSHIM_CKPT_EVERY=3 "FTSHIM_INJECT=rank=0 at=call:MPI_Sendrecv:75" -- "$prog" 100 --nap-ms 1
expect_rc "$(death_rc sigkill)"
expect_main_runs 2
expect_err_match "info: checkpoints: every rank goes back to version 60 \(checkpoint 2, taken [0-9.]+ s ago: the work since is done again\)$"
note "FTSHIM_CKPT_EVERY=3 took every third call"

# Without the shim's spares the calls keep nothing and the program runs.
run_job shim 4 -- "$prog" 30
expect_rc 0
expect_main_runs 1
