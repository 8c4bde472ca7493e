# A Python program (issue 24): Debian's python3-mpi4py, built against
# Open MPI, with the shim preloaded. Rank 2 of 4 dies by SIGKILL while the
# others wait on it in Comm.Recv: each survivor catches MPI.Exception with
# MPI_ERR_PROC_FAILED; its log line names the Python line of the call
# (function, file, line) and then mpi4py's C frame; the report's error
# events carry the same; the survivors shrink through ftshim's MPIX calls
# from ctypes (docs/python.md's way) and go on. Skipped on MPICH (Debian has
# no mpi4py for it) and where python3-mpi4py is missing.
[ "$MPITEST_FLAVOUR" = openmpi ] || { echo "skip: Debian's python3-mpi4py is built against Open MPI only"; exit 77; }
py=/usr/bin/python3
timeout -k 5 30 "$py" -c 'import mpi4py' 2>/dev/null || { echo "skip: $py cannot import mpi4py (Debian package python3-mpi4py)"; exit 77; }
rundir=$MPITEST_WORKDIR/run
src=$MPITEST_SRCDIR/progs/mpi4py_lose.py
run_job shim 4 "FTSHIM_RUNDIR=$rundir" -- "$py" "$src"
expect_rc "$(launcher_rc 137)"
expect_all_checks
expect_detected 2 0,1,3
# Anywhere on a line: mpirun joins the ranks' output, not always at line ends.
line=$(grep -o 'recv line [0-9]*' "$OUT" | sed 's/recv line //' | sort -u)
[ "$(echo "$line" | grep -c .)" = 1 ] || { cat "$OUT" >&2; fail "the survivors did not all say the same line of their receive"; }
for s in 0 1 3; do
	grep -q "rank $s caught MPI_ERR_PROC_FAILED (class [0-9]*)" "$OUT" || { cat "$OUT" >&2; fail "rank $s did not catch MPI_ERR_PROC_FAILED"; }
	n=$(grep -cE "ftshim\[$s\] \+[0-9.]+ info: MPI_Recv returned MPI_ERR_PROC_FAILED to main \($src:$line\) through [^ ]+ \(/[^)]*/MPI\.cpython-[^)]*\.so\): its peer, rank 2, failed" "$ERR" || true)
	[ "$n" = 1 ] || { grep 'MPI_Recv returned' "$ERR" >&2; fail "rank $s's line does not name main ($src:$line) and mpi4py's frame once"; }
done
summary=$(grep '^ftshim: ' "$ERR" || true)
report=$(echo "$summary" | sed -n 's/.*; report: //p')
[ -f "$report" ] || fail "no report: $summary"
timeout -k 5 30 python3 - "$report" "$src:$line" <<'PY' || fail "report.json lacks the Python call sites (see above)"
import json, sys
r = json.load(open(sys.argv[1]))
errors = [e for e in r["events"] if e["kind"] == "error"]
sites = sorted(set((e["rank"], e["site"].split(" through ")[0]) for e in errors))
want = [(s, "main (%s)" % sys.argv[2]) for s in (0, 1, 3)]
if sites != want:
    print("error sites %s, expected %s" % (sites, want), file=sys.stderr)
    sys.exit(1)
PY
# The program's ULFM part is docs/python.md's, line for line.
timeout -k 5 30 python3 - "$FT_SRCDIR/docs/python.md" "$src" <<'PY' || fail "docs/python.md's mpi4py ULFM code and mpi4py_lose.py's differ"
import re, sys
readme = open(sys.argv[1]).read()
block = re.search(r"^#+ Python \(mpi4py\)$.*?^```python\n(.*?)^```$", readme, re.S | re.M).group(1)
prog = open(sys.argv[2]).read()
part = re.search(r"^# --- The ULFM calls through ftshim.*?\n(.*?)^# --- end", prog, re.S | re.M).group(1)
def lines(text):
    return [l for l in text.splitlines() if l.strip() and not l.startswith(("import ", "from "))]
if lines(block) != lines(part):
    print("README:\n" + "\n".join(lines(block)) + "\nprogram:\n" + "\n".join(lines(part)), file=sys.stderr)
    sys.exit(1)
PY
