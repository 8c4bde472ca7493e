#!/usr/bin/env python3
"""bench/thirdparty.py: what the shim costs unmodified programs from
Debian's archive, on the MPIs built by dev/setup. Each program runs
alternately without and with the shim (the same launch line, the shim
preloaded or not), --reps times, in one session; the table shows the
medians and their ratio (shim / plain: above 1 is slower for times, below
1 is slower for bandwidth). Asserts nothing, but says when two runs of
LAMMPS disagree.

  NetPIPE (netpipe-mpich2, netpipe-openmpi), 2 ranks, sizes 1 B to 1 MiB
    (-p 0): one-way latency at 8 B, bandwidth at 1 MiB, wall time of the
    sweep
  LAMMPS (lammps, an Open MPI build), 2 ranks, its bundled 3-d
    Lennard-Jones melt (examples/melt/in.melt) on a box 2x larger each
    way (32,000 atoms) for --steps steps: wall time, LAMMPS's own loop
    time, and the last thermo line, which must be the same in every run

With --replicas 50%,100% (transparent replication, FTSHIM_REPLICAS;
issue 16), each program also runs under the shim with each degree on
N + R processes (N = 2, so R = 1 and 2), interleaved with the plain
program on N processes, on N + R processes (LAMMPS only: NetPIPE runs on
2 processes and no more), and under the shim without replicas. This
2-core machine oversubscribes from 3 processes on, so the plain N + R
column says how much of the cost is the oversubscription. A replicated
LAMMPS run must end on the plain run's thermo line. NetPIPE runs
replicated at 100% only: it sets its repetition counts from
gettimeofday, which the copies do not agree on, so below 100% the
replica of rank 0 repeats a different number of times than its primary
while rank 1, a single, serves only the primary's (at 100% each copy
pairs with the other rank's copy of the same kind).

Installs the three packages if they are missing (apt-get, with sudo when
not root).

Usage: bench/thirdparty.py [--flavours mpich,openmpi] [--reps 5] [--steps 500]
                           [--only netpipe,lammps] [--replicas 50%,100%]
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from replica_mtti import replicas_for  # R for a FTSHIM_REPLICAS degree

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ["netpipe-mpich2", "netpipe-openmpi", "lammps"]
NETPIPE = {"mpich": "NPmpich2", "openmpi": "NPopenmpi"}
MELT = "/usr/share/lammps/examples/melt/in.melt"


def ensure_packages():
    missing = [p for p in PACKAGES
               if "install ok installed" not in subprocess.run(
                   ["dpkg-query", "-W", "-f=${Status}", p], capture_output=True, text=True).stdout]
    if not missing:
        return
    print("installing: " + " ".join(missing), flush=True)
    sudo = [] if os.getuid() == 0 else ["sudo"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.check_call(sudo + ["apt-get", "install", "-y", "-q"] + missing, env=env,
                          stdout=subprocess.DEVNULL)


def launch(flavour, nprocs, shim, replicas=None):
    """The recommended launch line (README), with or without the shim, and
    with FTSHIM_REPLICAS=replicas (the run directory in the temporary
    work directory)."""
    lib = os.path.join(TOP, "build", flavour, ".libs", "libftshim.so")
    env = {"LD_PRELOAD": lib} if shim else {}
    if replicas:
        env["FTSHIM_REPLICAS"] = replicas
        env["FTSHIM_RUNDIR"] = "ftshim-run"
    if flavour == "mpich":
        cmd = ["mpiexec.hydra", "-disable-auto-cleanup", "-n", str(nprocs)]
        for k, v in env.items():
            cmd += ["-genv", k, v]
    else:
        cmd = ["mpirun.openmpi", "--oversubscribe", "--enable-recovery", "-n", str(nprocs)]
        if os.getuid() == 0:
            cmd.append("--allow-run-as-root")
        for k, v in env.items():
            cmd += ["-x", "%s=%s" % (k, v)]
    return cmd


def run(cmd, cwd, timeout=600):
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    return time.monotonic() - t0, p


def netpipe_once(flavour, shim, work, replicas=None):
    out = os.path.join(work, "np.out")
    if os.path.exists(out):
        os.unlink(out)
    nprocs = 2 + (replicas_for(replicas, 2) if replicas else 0)
    # -p 0: powers of two and their midpoints only (no +-3 B perturbations)
    wall, p = run(launch(flavour, nprocs, shim, replicas) +
                  [NETPIPE[flavour], "-l", "1", "-u", str(1 << 20), "-p", "0", "-o", out], work)
    if p.returncode != 0 or not os.path.exists(out):
        sys.exit("NetPIPE failed (%s, shim %s): %s" % (flavour, shim, (p.stderr or p.stdout)[-500:]))
    rows = {}
    for line in open(out):
        f = line.split()
        if len(f) >= 3:
            rows[int(float(f[0]))] = (float(f[1]), float(f[2]))  # bytes: Mbps, seconds one way
    lat = rows[8][1] * 1e6 if 8 in rows else None
    bw = rows[1 << 20][0] if (1 << 20) in rows else None
    return {"latency 8 B (us)": lat, "bandwidth 1 MiB (Mbps)": bw, "sweep wall (s)": wall}


def lammps_once(shim, work, steps, nprocs=2, replicas=None):
    src = open(MELT).read()
    src = re.sub(r"region\s+box\s+block\s+0 10 0 10 0 10", "region box block 0 20 0 20 0 20", src)
    src = re.sub(r"^run\s+\d+", "run %d" % steps, src, flags=re.M)
    with open(os.path.join(work, "in.melt"), "w") as f:
        f.write(src)
    wall, p = run(launch("openmpi", nprocs, shim, replicas) + ["lmp", "-in", "in.melt", "-log", "none"], work)
    if p.returncode != 0:
        sys.exit("LAMMPS failed (shim %s): %s" % (shim, (p.stderr or p.stdout)[-500:]))
    loop = re.search(r"^Loop time of ([0-9.eE+-]+) on", p.stdout, re.M)
    thermo = [l for l in p.stdout.splitlines() if re.match(r"^\s+%d\s" % steps, l)]
    return {"wall (s)": wall, "loop (s)": float(loop.group(1)) if loop else None}, \
        (thermo[-1].split() if thermo else None)


def table_row(flavour, name, plain, shim, higher):
    plain = [v for v in plain if v is not None]
    shim = [v for v in shim if v is not None]
    if not plain or not shim:
        print("%-8s %-26s %12s" % (flavour, name, "no data"))
        return
    mp, ms = statistics.median(plain), statistics.median(shim)
    print("%-8s %-26s %12.4g %12.4g %7.3f%s" % (flavour, name, mp, ms, ms / mp,
                                               "  (higher is better)" if higher else ""))


def replicated(only, flavours, reps, steps, degrees, work):
    """The --replicas table: each program's figures per way of running it,
    medians, and in brackets their ratio to the plain program on N."""
    finals = set()

    def netpipe(flavour, shim, degree, n):
        # NetPIPE runs on 2 processes only: no plain N+R.
        return None if n > 2 and not degree else netpipe_once(flavour, shim, work, degree)

    def lammps(flavour, shim, degree, n):
        res, final = lammps_once(shim, work, steps, n, degree)
        if n == 2 or degree:  # the runs of 2 program ranks
            finals.add(" ".join(final) if final else "(none)")
        return res

    programs = [(f, "NetPIPE", netpipe) for f in flavours if "netpipe" in only]
    if "lammps" in only:
        programs.append(("openmpi", "LAMMPS melt", lammps))
    print()
    print("Transparent replication (FTSHIM_REPLICAS), N = 2; medians of %d interleaved runs "
          "(ratio to plain N)" % reps)
    print("%-8s %-7s %-30s %14s %18s %18s %18s" % ("mpi", "degree", "measure", "plain N",
                                                   "plain N+R", "shim N", "shim N+R replicated"))
    for degree in degrees:
        r = replicas_for(degree, 2)
        ways = (("plain N", False, None, 2), ("plain N+R", False, None, 2 + r),
                ("shim N", True, None, 2), ("shim N+R", True, degree, 2 + r))
        for flavour, name, once in programs:
            if once is netpipe and r < 2:
                continue  # replicated at 100% only (see above)
            res = {w[0]: [] for w in ways}
            for _ in range(reps):
                for way, shim, rep, n in ways:
                    res[way].append(once(flavour, shim, rep, n))
            for key in res["plain N"][0]:
                cells, base = [], None
                for way, _, _, _ in ways:
                    vals = [x[key] for x in res[way] if x and x.get(key) is not None]
                    med = statistics.median(vals) if vals else None
                    base = med if way == "plain N" else base
                    cells.append("n/a" if med is None else "%.4g (%.2f)" % (med, med / base) if base
                                 else "%.4g" % med)
                print("%-8s %-7s %-30s %14s %18s %18s %18s" % ((flavour, degree, "%s %s" % (name, key))
                                                               + tuple(cells)), flush=True)
    if finals:
        print("LAMMPS on 2 program ranks, plain and replicated: %s" % (
            "every run ended on the same thermo line: %s" % finals.pop() if len(finals) == 1
            else "RUNS DISAGREE; last thermo lines: %s" % " | ".join(sorted(finals))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flavours", default="mpich,openmpi")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--only", default="netpipe,lammps")
    ap.add_argument("--replicas", default="",
                    help="also run replicated with these FTSHIM_REPLICAS degrees (50%%,100%%)")
    a = ap.parse_args()
    only = set(a.only.split(","))
    bad = only - {"netpipe", "lammps"}
    if bad:
        ap.error("--only %s: accepted: netpipe, lammps" % ",".join(sorted(bad)))
    for flavour in a.flavours.split(","):
        if flavour not in NETPIPE:
            ap.error("--flavours %s: accepted: mpich, openmpi" % flavour)
    ensure_packages()
    work = tempfile.mkdtemp(prefix="ftshim-thirdparty-")
    print("ftshim on third-party programs, %d cores, %d interleaved runs each; medians"
          % (os.cpu_count() or 0, a.reps))
    print("%-8s %-26s %12s %12s %7s" % ("mpi", "measure", "plain", "shim", "ratio"))
    if "netpipe" in only:
        for flavour in a.flavours.split(","):
            res = {False: [], True: []}
            for _ in range(a.reps):
                for shim in (False, True):
                    res[shim].append(netpipe_once(flavour, shim, work))
            for key in res[False][0]:
                table_row(flavour, "NetPIPE " + key, [r[key] for r in res[False]],
                          [r[key] for r in res[True]], key.startswith("bandwidth"))
    if "lammps" in only:
        res = {False: [], True: []}
        finals = set()
        for _ in range(a.reps):
            for shim in (False, True):
                r, final = lammps_once(shim, work, a.steps)
                res[shim].append(r)
                finals.add(" ".join(final) if final else "(none)")
        for key in res[False][0]:
            table_row("openmpi", "LAMMPS melt %s" % key, [r[key] for r in res[False]],
                      [r[key] for r in res[True]], False)
        if len(finals) == 1:
            print("LAMMPS: every run ended on the same thermo line: %s" % finals.pop())
        else:
            print("LAMMPS: RUNS DISAGREE; last thermo lines: %s" % " | ".join(sorted(finals)))
    if a.replicas:
        replicated(only, a.flavours.split(","), a.reps, a.steps, a.replicas.split(","), work)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
