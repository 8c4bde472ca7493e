#!/usr/bin/env python3
"""bench/overhead.py: what the shim costs a failure-free program, on each
MPI built by dev/setup. Each measurement (bench/micro.c, and its Fortran
ping-pong bench/micro_f.F90) runs alternately without and with the shim,
--reps times, in one session; the table shows the median of each and
their ratio (shim / plain: above 1 is slower for times, below 1 is slower
for bandwidth), the ratio being the median of the back-to-back pairs'
ratios. Asserts nothing.

  pingpong 8 B      half round trip, 2 ranks                  target ratio <= 1.05
  bandwidth 1 MiB   streaming, 2 ranks                        target ratio >= 0.97
  allreduce 8 B     8 ranks (oversubscribed on small hosts)   target ratio <= 1.10
  barrier           8 ranks                                   target ratio <= 1.10
  pingpong-f 8 B    the ping-pong from Fortran (use mpi)      target ratio <= 1.05
  putflush 8 B      MPI_Put + MPI_Win_flush, 2 ranks          target ratio <= 1.05
  iowrite 1 MiB     MPI_File_write_at_all, 4 ranks, /tmp      target ratio >= 0.97
  commdup           MPI_Comm_dup + MPI_Comm_free, 8 ranks     target ratio <= 2.0
  commsplit         MPI_Comm_split in two + free, 8 ranks     target ratio <= 2.0

--preload NAME=LIB[:LIB...] (repeatable) measures other libraries in
place of the build's libftshim.so, each against the same plain runs,
interleaved: how docs/DESIGN.md's entry candidates were compared (for
example bench/fortran_entry.c, built as a shared object, before an
older libftshim.so).

With --parts, it also runs bench/pingpong_parts.c under the shim, which
splits the ping-pong cost in one process: the MPI alone (PMPI_Send/Recv),
the same through nonblocking calls polled as the shim does (what the
design costs), and the shim's wrappers.

--env VAR=VALUE (repeatable) sets a variable in the runs under a
library only, for example FTSHIM_REPLICAS=2: what a creation on a
replicated communicator costs, library against library (the plain runs
have every rank a program rank, so no target applies).

Usage: bench/overhead.py [--flavours mpich,openmpi] [--reps 11] [--only NAMES]
                         [--preload NAME=LIB[:LIB...]]... [--env VAR=VALUE]... [--parts]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MPICC = {"mpich": "mpicc.mpich", "openmpi": "mpicc.openmpi"}
MPIFC = {"mpich": "mpif90.mpich", "openmpi": "mpif90.openmpi"}
TESTS = [
    # name, program, ranks, argv, higher is better, target
    ("pingpong-8B", "c", 2, ["pingpong", "8", "20000"], False, 1.05),
    ("bandwidth-1MiB", "c", 2, ["bandwidth", str(1 << 20), "20"], True, 0.97),
    ("allreduce-8B", "c", 8, ["allreduce", "300"], False, 1.10),
    ("barrier", "c", 8, ["barrier", "300"], False, 1.10),
    ("pingpong-f-8B", "fortran", 2, ["pingpong", "8", "20000"], False, 1.05),
    ("putflush-8B", "c", 2, ["putflush", "200000"], False, 1.05),
    ("iowrite-1MiB", "c", 4, ["iowrite", str(1 << 20), "16"], True, 0.97),
    # Creations: ftshim adds an agreement over the control plane to each,
    # so that its outcome is the same at every survivor.
    ("commdup", "c", 8, ["commdup", "100"], False, 2.0),
    ("commsplit", "c", 8, ["commsplit", "100"], False, 2.0),
]


def launch(flavour, nprocs, preload, argv, extra=None):
    """The launch line; preload: what LD_PRELOAD holds (None: plain),
    with the variables extra under it."""
    env = dict(extra or {}, LD_PRELOAD=preload) if preload else {}
    return launch_env(flavour, nprocs, env, argv)


def launch_env(flavour, nprocs, env, argv, mca=()):
    """The launch line with env set in every rank, and Open MPI's MCA
    parameters mca, (name, value) pairs."""
    if flavour == "mpich":
        cmd = ["mpiexec.hydra", "-n", str(nprocs)]
        for k, v in env.items():
            cmd += ["-genv", k, v]
    else:
        cmd = ["mpirun.openmpi", "--oversubscribe", "-n", str(nprocs)]
        for k, v in mca:
            cmd += ["--mca", k, v]
        if os.getuid() == 0:
            cmd.append("--allow-run-as-root")
        for k, v in env.items():
            cmd += ["-x", "%s=%s" % (k, v)]
    return cmd + argv


def measure(flavour, prog, nprocs, preload, argv, extra=None):
    return measure_cmd(launch(flavour, nprocs, preload, [prog] + argv, extra))


def measure_cmd(cmd):
    """The figure bench/micro.c prints, from the launch line cmd (under
    timeout -k, so that nothing outlives it); None if it printed none."""
    try:
        out = subprocess.run(["timeout", "-k", "5", "300"] + cmd, capture_output=True, text=True,
                             timeout=330).stdout
    except subprocess.TimeoutExpired:
        return None
    m = re.search(r"^\S+ ([0-9.]+) ", out, re.M)
    return float(m.group(1)) if m else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flavours", default="mpich,openmpi")
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--only", default="")
    ap.add_argument("--preload", action="append", default=[], metavar="NAME=LIB[:LIB...]")
    ap.add_argument("--env", action="append", default=[], metavar="VAR=VALUE")
    ap.add_argument("--parts", action="store_true")
    a = ap.parse_args()
    extra = {}
    for e in a.env:
        var, sep, value = e.partition("=")
        if not sep or not var:
            ap.error("--env %s: accepted: VAR=VALUE" % e)
        extra[var] = value
    only = set(a.only.split(",")) if a.only else None
    for c in a.preload:
        if "=" not in c:
            ap.error("--preload %s: accepted: NAME=LIB[:LIB...]" % c)
    work = tempfile.mkdtemp(prefix="ftshim-overhead-")
    print("ftshim overhead, %d cores, %d interleaved runs each; medians" % (os.cpu_count() or 0, a.reps))
    for flavour in a.flavours.split(","):
        if flavour not in MPICC:
            ap.error("--flavours %s: accepted: mpich, openmpi" % flavour)
        shim = os.path.join(TOP, "build", flavour, ".libs", "libftshim.so")
        # {flavour} in a --preload value: this flavour's name.
        cands = [tuple(c.format(flavour=flavour).split("=", 1)) for c in a.preload] or [("shim", shim)]
        print("%-8s %-15s %12s" % ("mpi", "test", "plain") +
              "".join(" %12s %7s" % (n[:12], "ratio") for n, _ in cands) + "  target")
        progs = {"c": os.path.join(work, "micro-" + flavour), "fortran": os.path.join(work, "micro_f-" + flavour)}
        subprocess.check_call([MPICC[flavour], "-O2", "-Wno-stringop-overflow", "-o", progs["c"],
                               os.path.join(TOP, "bench", "micro.c")])
        if subprocess.run([MPIFC[flavour], "-O2", "-o", progs["fortran"],
                           os.path.join(TOP, "bench", "micro_f.F90")]).returncode != 0:
            progs["fortran"] = None
        for name, lang, nprocs, argv, higher, target in TESTS:
            if only and name not in only:
                continue
            if progs[lang] is None:
                print("%-8s %-15s no %s compiler" % (flavour, name, lang))
                continue
            runs = {None: []}
            runs.update({lib: [] for _, lib in cands})
            pairs = {lib: [] for _, lib in cands}
            ways = [None] + [lib for _, lib in cands]
            for rep in range(a.reps):
                # Rotate which goes first, so that drifts hit all alike.
                order = ways[rep % len(ways):] + ways[:rep % len(ways)]
                got = {}
                for w in order:
                    v = measure(flavour, progs[lang], nprocs, w, argv, extra)
                    if v is not None:
                        runs[w].append(v)
                        got[w] = v
                for _, lib in cands:
                    if None in got and lib in got:
                        pairs[lib].append(got[lib] / got[None])
            if not runs[None] or not all(pairs.values()):
                print("%-8s %-15s no data" % (flavour, name))
                continue
            unit = "MB/s" if higher else "us"
            line = "%-8s %-15s %9.3f %-2s" % (flavour, name, statistics.median(runs[None]), unit)
            verdicts = []
            for _, lib in cands:
                # The ratio is the median of each back-to-back pair's: this
                # machine switches between fast and slow spells (Open MPI's
                # ping-pong is 0.15 or 0.38 us from one run to the next), and
                # medians taken apart can land in different spells.
                ratio = statistics.median(pairs[lib])
                ok = ratio >= target if higher else ratio <= target
                verdicts.append("ok" if ok else "MISSED")
                line += " %9.3f %-2s %7.3f" % (statistics.median(runs[lib]), unit, ratio)
            if extra:
                # The plain runs are not the same job (every rank a
                # program rank): compare the libraries' columns only.
                print(line + "  (no target under --env)")
            else:
                print(line + "  %s %s %s" % (">=" if higher else "<=", target, "/".join(verdicts)))
            sys.stdout.flush()
        if a.parts:
            parts = os.path.join(work, "parts-" + flavour)
            subprocess.check_call([MPICC[flavour], "-O2", "-o", parts,
                                   os.path.join(TOP, "bench", "pingpong_parts.c")])
            try:
                out = subprocess.run(launch(flavour, 2, shim, [parts]), capture_output=True,
                                     text=True, timeout=300).stdout
            except subprocess.TimeoutExpired:
                out = ""
            for line in out.splitlines():
                way, us, _, ratio = line.split()
                print("%-8s parts: %-4s %9.4f us %7s (of the MPI alone, in one process)" % (
                    flavour, way, float(us), ratio))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
