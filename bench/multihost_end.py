#!/usr/bin/env python3
"""bench/multihost_end.py: the end of a job on several hosts (issue 18),
measured with the test suite's network-namespace hosts (4 hosts x 3
ranks, each host with a run directory of its own): it runs the
`multihost` case of tests/mpi/driver --reps times per MPI and gathers
the figures the case notes:

  merge     how long after every rank had left the reporting rank had
            the other 3 hosts' files (no failure)
  report    the size of report.json on rank 0's host, with no failure
            and with rank 11 (on the last host) killed
  exit      from the last rank's MPI_Finalize (its event in the report)
            to the launcher's exit, with no failure and with rank 11
            killed (the case fails if the launcher does not end)

Medians over the runs (the case itself checks the report's content).
Needs root (namespaces) and the builds dev/setup makes. Asserts nothing.

Usage: bench/multihost_end.py [--flavours mpich,openmpi] [--reps 5]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_var(build, name):
    with open(os.path.join(build, "Makefile")) as f:
        for line in f:
            if line.startswith(name + " = "):
                return line.split(" = ", 1)[1].strip()
    return ""


def run_case(flavour):
    """One run of the multihost case; its notes, or None if it failed."""
    build = os.path.join(TOP, "build", flavour)
    env = dict(os.environ,
               MPITEST_FLAVOUR=flavour,
               MPITEST_MPICC=make_var(build, "MPICC"),
               MPITEST_MPIEXEC=make_var(build, "MPIEXEC"),
               MPITEST_MPIFC=make_var(build, "MPIFC"),
               MPITEST_SHIM=os.path.join(build, ".libs", "libftshim.so"),
               MPITEST_OUTDIR=os.path.join(build, "tests", "mpi", "out"),
               FT_BUILDDIR=build, FT_SRCDIR=TOP, NM="nm", MPITEST_SANITIZER="no")
    proc = subprocess.run(["timeout", "-k", "5", "300", os.path.join(TOP, "tests", "mpi", "driver"), "multihost"],
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        sys.stderr.write(f"{flavour}: the multihost case did not pass (or skipped):\n{proc.stdout[-2000:]}\n")
        return None
    with open(os.path.join(build, "tests", "mpi", "out", "multihost", "log")) as f:
        return f.read()


def ms(text):
    """'1.2 ms' / '0.35 s' / '68 ms' -> ms; None for 'never ...'."""
    m = re.match(r"([0-9.]+) (ms|s)\b", text)
    if not m:
        return None
    return float(m.group(1)) * (1000.0 if m.group(2) == "s" else 1.0)


def figures(log):
    out = {}
    m = re.search(r"# a: report (\d+) bytes on h1, the other 3 hosts' files came (.+?) after every rank left;"
                  r" \S+ exited (.+?) after the last MPI_Finalize", log)
    if m:
        out["report_ok"] = int(m.group(1))
        out["merge"] = ms(m.group(2))
        out["exit_ok"] = ms(m.group(3))
    m = re.search(r"# d: .*; report (\d+) bytes; \S+ exited (.+?) after the last MPI_Finalize", log)
    if m:
        out["report_fail"] = int(m.group(1))
        out["exit_fail"] = ms(m.group(2))
    return out


def median(values, unit):
    vals = [v for v in values if v is not None]
    never = len(values) - len(vals)
    if not values:
        return "-"
    if not vals:
        return "never"
    text = f"{statistics.median(vals):.1f} {unit}" if unit == "ms" else f"{statistics.median(vals):.0f} {unit}"
    return text + (f" ({never} never)" if never else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--flavours", default="mpich,openmpi")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    if os.getuid() != 0:
        sys.exit("bench/multihost_end.py: network namespaces need root")
    rows = []
    for flavour in args.flavours.split(","):
        runs = []
        for i in range(args.reps):
            log = run_case(flavour)
            if log:
                runs.append(figures(log))
            print(f"{flavour} run {i + 1}: {runs[-1] if log else 'failed'}", file=sys.stderr)
        col = lambda k: [r.get(k) for r in runs if k in r]
        merged = [v for v in col("merge") if v is not None]
        merge = f"{median(merged, 'ms')} (largest {max(merged):.1f} ms)" if merged else "-"
        rows.append((flavour, len(runs), merge, median(col("report_ok"), "B"),
                     median(col("report_fail"), "B"), median(col("exit_ok"), "ms"), median(col("exit_fail"), "ms")))
    print("4 namespace hosts x 3 ranks; medians over the runs that passed")
    print("| MPI | runs | files merged after all left | report, no failure | report, rank 11 killed"
          " | launcher exit after last MPI_Finalize, no failure | same, rank 11 killed |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")


if __name__ == "__main__":
    main()
