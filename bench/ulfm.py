#!/usr/bin/env python3
"""bench/ulfm.py: what the ULFM recovery calls cost under ftshim, measured
with real jobs on this machine at several sizes, for each MPI built by
dev/setup (build/mpich, build/openmpi). Prints a table of medians and
99th percentiles (microseconds, the slowest rank of each repetition);
asserts nothing (the tests do that).

  agree          MPIX_Comm_agree, no failure
  allreduce      MPI_Allreduce(MPI_BAND) of one int: the MPI's own
                 collective beside it (not fault tolerant)
  shrink         MPIX_Comm_shrink, no failure
  create         MPI_Comm_create_group of all ranks: the MPI call inside
                 shrink
  shrink_failed  MPIX_Comm_shrink of MPI_COMM_WORLD after one rank was
                 killed and every survivor knows
  agree_failed   MPIX_Comm_agree on it, after the failure was acknowledged
  revoke         MPIX_Comm_revoke at one rank to the last other rank's
                 pending receive failing with MPIX_ERR_REVOKED

  detect         SIGKILL of the last rank of --detect-size while every
                 other waits in MPI_Recv from it: from the kill to the
                 slowest survivor's receive returning MPIX_ERR_PROC_FAILED
                 (one job per repetition, --detect-reps jobs)

allreduce and create are the MPI's own operations of the same shape. With
--ulfm PREFIX (an Open MPI 5 built --with-ft=ulfm, installed in PREFIX:
see the README) the same program runs on that MPI's native ULFM, without
ftshim, in the same run, and a last table gives ftshim's medians as
ratios to ULFM's. Jobs larger than the core count are oversubscribed,
which dominates their times.

--preload NAME=LIB (repeatable; {flavour} in LIB is the flavour's name)
measures those libraries in place of the build's libftshim.so, --jobs
jobs of each per size, interleaved (the order rotated from job to job),
and a last table gives each one's medians as ratios to the first's: how
an old library is compared with a new one.

Usage: bench/ulfm.py [--flavours mpich,openmpi] [--sizes 4,8,16] [--reps 50]
                     [--detect-size 16] [--detect-reps 5] [--ulfm PREFIX]
                     [--preload NAME=LIB]... [--jobs 3]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROG_SRC = os.path.join(TOP, "bench", "ulfm.c")
MPICC = {"mpich": "mpicc.mpich", "openmpi": "mpicc.openmpi"}
ORDER = ["agree", "allreduce", "shrink", "create", "shrink_failed", "agree_failed", "revoke", "detect"]
RATIOS = ["agree", "shrink", "shrink_failed", "agree_failed", "revoke", "detect"]

sys.path.insert(0, os.path.join(TOP, "bench"))
from detector import launch, run  # noqa: E402  (same launch lines)


def percentile(xs, p):
    xs = sorted(xs)
    k = min(len(xs) - 1, max(0, int(round(p / 100.0 * len(xs) + 0.5)) - 1))
    return xs[k]


def launch_on(flavour, size, argv, ulfm, shim=None):
    """The launch line: under ftshim (shim, or the build's), or on the ULFM
    MPI in ulfm."""
    if flavour != "ulfm":
        return launch(flavour, size, {}, argv, shim)
    cmd = [os.path.join(ulfm, "bin", "mpirun"), "--with-ft", "ulfm", "--oversubscribe", "-n", str(size)]
    if os.getuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd + argv


def parse(out):
    got = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] in ORDER:
            got.setdefault(parts[0], []).append(float(parts[2]))
    return got


def one_job(flavour, prog, work, size, reps, ulfm, shim=None):
    """{what: [us...]} from one job of size ranks, or None."""
    rc, out, err = run(launch_on(flavour, size, [prog, str(reps)], ulfm, shim), work, 300)
    got = parse(out)
    if not got.get("agree_failed"):
        print("  %s, %d ranks: the job failed (rc %s): %s" % (flavour, size, rc, err[-400:]),
              file=sys.stderr)
        return None
    return got


def detect_jobs(flavour, prog, work, size, reps, ulfm):
    """[us...] of the detect figure, one job each."""
    times = []
    for i in range(reps):
        stamp = os.path.join(work, "killed-%s-%d" % (flavour, i))
        rc, out, err = run(launch_on(flavour, size, [prog, "detect", stamp], ulfm), work, 120)
        got = parse(out).get("detect")
        if got:
            times += got
        else:
            print("  %s detect, %d ranks: the job failed (rc %s): %s" % (flavour, size, rc, err[-400:]),
                  file=sys.stderr)
    return times


def print_table(results, cols):
    """One line of medians and 99th percentiles per figure, a column per
    size (results: {size: {what: [us...]}}); returns {(size, what): median}."""
    medians = {}
    print("  %-14s" % "" + "".join("%22s" % ("%d ranks: median p99" % n) for n in cols))
    for what in ORDER:
        cells = []
        for n in cols:
            xs = results[n].get(what)
            if xs:
                medians[(n, what)] = statistics.median(xs)
            cells.append("%22s" % ("%.0f %.0f" % (statistics.median(xs), percentile(xs, 99)) if xs else "-"))
        print("  %-14s" % what + "".join(cells))
    return medians


def compare(flavour, prog, work, sizes, a, cands):
    """--preload: the libraries cands [(name, lib)], a.jobs jobs each per
    size, interleaved; a table of each, then of their medians' ratios to
    the first's."""
    results = {name: {n: {} for n in sizes} for name, _ in cands}
    for n in sizes:
        for job in range(a.jobs):
            for name, lib in cands[job % len(cands):] + cands[:job % len(cands)]:
                for what, xs in (one_job(flavour, prog, work, n, a.reps, None, lib) or {}).items():
                    results[name][n].setdefault(what, []).extend(xs)
    medians = {}
    for name, lib in cands:
        print("\n%s under %s (%s)" % (flavour, name, lib))
        medians[name] = print_table(results[name], sizes)
    first = cands[0][0]
    print("\n%s: each library's median / %s's (same run, interleaved)" % (flavour, first))
    print("  %-14s" % "" + "".join("%14s" % ("%s %d" % (name[:8], n)) for name, _ in cands[1:] for n in sizes))
    for what in ORDER:
        cells = []
        for name, _ in cands[1:]:
            for n in sizes:
                x, b = medians[name].get((n, what)), medians[first].get((n, what))
                cells.append("%14s" % ("%.2f" % (x / b) if x is not None and b else "-"))
        print("  %-14s" % what + "".join(cells))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flavours", default="mpich,openmpi")
    ap.add_argument("--sizes", default="4,8,16")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--detect-size", type=int, default=16)
    ap.add_argument("--detect-reps", type=int, default=5)
    ap.add_argument("--ulfm", metavar="PREFIX")
    ap.add_argument("--preload", action="append", default=[], metavar="NAME=LIB")
    ap.add_argument("--jobs", type=int, default=3)
    a = ap.parse_args()
    for c in a.preload:
        if "=" not in c:
            ap.error("--preload %s: accepted: NAME=LIB" % c)
    if len({c.split("=", 1)[0] for c in a.preload}) != len(a.preload):
        ap.error("--preload: a NAME given twice; accepted: one NAME per library")
    if a.jobs < 1:
        ap.error("--jobs %d: accepted: 1 or more" % a.jobs)
    sizes = []
    for s in a.sizes.split(","):
        if not s.isdigit() or int(s) < 3:
            ap.error("--sizes %s: accepted: numbers of ranks, 3 or more, comma-separated" % s)
        sizes.append(int(s))
    if a.reps < 1:
        ap.error("--reps %d: accepted: 1 or more" % a.reps)
    if a.detect_size < 3 or a.detect_reps < 0:
        ap.error("--detect-size %d / --detect-reps %d: accepted: 3 or more ranks, 0 or more jobs"
                 % (a.detect_size, a.detect_reps))
    work = tempfile.mkdtemp(prefix="ftshim-bench-")
    print("ftshim ULFM benchmark: %d cores, %s; microseconds, slowest rank, %d repetitions"
          % (os.cpu_count() or 0, time.strftime("%Y-%m-%d %H:%M"), a.reps))
    flavours = a.flavours.split(",")
    for flavour in flavours:
        if flavour not in MPICC:
            ap.error("--flavours %s: accepted: mpich, openmpi" % flavour)
    if a.ulfm:
        if not os.access(os.path.join(a.ulfm, "bin", "mpicc"), os.X_OK):
            ap.error("--ulfm %s: no bin/mpicc there; accepted: the prefix of an Open MPI 5 built --with-ft=ulfm"
                     % a.ulfm)
        flavours.append("ulfm")
    medians = {}
    for flavour in flavours:
        prog = os.path.join(work, "ulfm-" + flavour)
        if flavour == "ulfm":
            subprocess.check_call([os.path.join(a.ulfm, "bin", "mpicc"), "-std=gnu11", "-O2", "-o", prog,
                                   PROG_SRC, "-ldl"])
        else:
            subprocess.check_call([MPICC[flavour], "-std=gnu11", "-O2", "-I", os.path.join(TOP, "include"),
                                   "-o", prog, PROG_SRC, "-ldl"])
        if a.preload and flavour != "ulfm":
            compare(flavour, prog, work, sizes,
                    a, [tuple(c.format(flavour=flavour).split("=", 1)) for c in a.preload])
            continue
        print("\n%s" % ("Open MPI 5 ULFM, no ftshim" if flavour == "ulfm" else flavour + " under ftshim"))
        results = {n: one_job(flavour, prog, work, n, a.reps, a.ulfm) or {} for n in sizes}
        if a.detect_reps > 0:
            results.setdefault(a.detect_size, {})["detect"] = detect_jobs(flavour, prog, work, a.detect_size,
                                                                          a.detect_reps, a.ulfm)
        for (n, what), m in print_table(results, sorted(results)).items():
            medians[(flavour, n, what)] = m
    if a.ulfm:
        print("\nftshim's median / ULFM's median (same run)")
        cols = sorted({n for (_, n, _) in medians})
        print("  %-14s" % "" + "".join("%18s" % ("%s %d" % (f, n)) for f in flavours[:-1] for n in cols))
        for what in RATIOS:
            cells = []
            for f in flavours[:-1]:
                for n in cols:
                    x, u = medians.get((f, n, what)), medians.get(("ulfm", n, what))
                    cells.append("%18s" % ("%.1f" % (x / u) if x is not None and u else "-"))
            print("  %-14s" % what + "".join(cells))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
