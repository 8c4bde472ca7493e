#!/usr/bin/env python3
"""bench/detector.py: the failure detector's figures, measured with real
jobs on this machine, for each MPI built by dev/setup (build/mpich,
build/openmpi). Prints a table; asserts nothing (the tests do that).

  crash    SIGKILL of one rank of 16: time from its death to the moment
           the shim of every survivor knows (its failure callback ran;
           CLOCK_MONOTONIC, shared on one host). The survivors then sleep
           for a second before their next MPI call, so that MPICH's busy
           polling in that call does not slow the others' detection.
  stop     SIGSTOP of one rank of 16 at the default period and timeout:
           the same time, to compare with FTSHIM_HB_TIMEOUT + 2 periods
  starve   16 ranks computing flat out plus 2 CPU hogs (one per core) for
           --starve-seconds at FTSHIM_HB_PERIOD=10ms FTSHIM_HB_TIMEOUT=100ms:
           the number of ranks falsely declared failed
  cpu      CPU used by each rank's detector thread at the default period,
           16 ranks idle for 20 s, from its own thread clock

Usage: bench/detector.py [--flavours mpich,openmpi] [--reps 10]
                         [--starve-seconds 60] [--only crash,stop,starve,cpu]
"""

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROG_SRC = os.path.join(TOP, "tests", "mpi", "progs", "detect.c")
MPICC = {"mpich": "mpicc.mpich", "openmpi": "mpicc.openmpi"}


def launch(flavour, nprocs, env, argv, shim=None):
    """The launch line of argv under shim (default: this build's)."""
    shim = shim or os.path.join(TOP, "build", flavour, ".libs", "libftshim.so")
    env = dict(env, LD_PRELOAD=shim)
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
    return cmd + argv


def run(cmd, cwd, timeout, on_start=None):
    """Run cmd in its own process group; kill the group on timeout."""
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    if on_start:
        on_start(p)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return None, out, err
    return p.returncode, out, err


def read_ns(path):
    with open(path) as f:
        return int(f.read().strip())


def time_to_all(d):
    """ms from the (last) death to the last survivor knowing, or None."""
    deaths = [read_ns(os.path.join(d, f)) for f in os.listdir(d) if f.startswith("death.")]
    seen = [read_ns(os.path.join(d, f)) for f in os.listdir(d) if f.startswith("seen.")]
    if not deaths or not seen:
        return None
    return (max(seen) - max(deaths)) / 1e6


def fresh_dir(work, name):
    d = os.path.join(work, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def bench_crash(flavour, prog, work, reps):
    times = []
    for i in range(reps):
        d = fresh_dir(work, "crash%d" % i)
        victim = 1 + i % 15
        rc, out, err = run(launch(flavour, 16, {}, [prog, "--kill", "%d@300" % victim, "--how",
                                                    "sigkill", "--times-dir", d,
                                                    "--linger-ms", "1000"]), d, 120)
        t = time_to_all(d)
        if t is None or "ALL CHECKS PASSED" not in out:
            print("  crash run %d failed (rc %s): %s" % (i, rc, err[-300:]), file=sys.stderr)
            continue
        times.append(t)
    return times


def bench_stop(flavour, prog, work, reps):
    times = []
    for i in range(reps):
        d = fresh_dir(work, "stop%d" % i)
        victim = 1 + i % 15

        def resume_later(p, d=d, victim=victim):
            # Resume the stopped rank once the survivors are done, so that
            # it learns it was excluded and the job ends.
            for _ in range(600):
                if os.path.exists(os.path.join(d, "survivors.done")):
                    break
                time.sleep(0.1)
            pidfile = os.path.join(d, "stopped.%d.pid" % victim)
            if os.path.exists(pidfile):
                os.kill(int(open(pidfile).read()), signal.SIGCONT)

        import threading
        holder = {}

        def start(p):
            holder["t"] = threading.Thread(target=resume_later, args=(p,))
            holder["t"].start()

        rc, out, err = run(launch(flavour, 16, {}, [prog, "--kill", "%d@300" % victim, "--how",
                                                    "stop", "--times-dir", d,
                                                    "--linger-ms", "1000"]), d, 120, start)
        holder["t"].join()
        t = time_to_all(d)
        if t is None or "ALL CHECKS PASSED" not in out:
            print("  stop run %d failed (rc %s): %s" % (i, rc, err[-300:]), file=sys.stderr)
            continue
        times.append(t)
    return times


def bench_starve(flavour, prog, work, seconds):
    d = fresh_dir(work, "starve")
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)]
    try:
        rc, out, err = run(launch(flavour, 16, {"FTSHIM_HB_PERIOD": "10ms", "FTSHIM_HB_TIMEOUT": "100ms"},
                                  [prog, "--linger-ms", str(seconds * 1000), "--spin"]), d,
                           seconds + 120)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    false_alarms = len(re.findall(r"info: rank \d+ failed", err))
    ok = rc is not None and "ALL CHECKS PASSED" in out
    return false_alarms, ok


def bench_cpu(flavour, prog, work):
    d = fresh_dir(work, "cpu")
    rc, out, err = run(launch(flavour, 16, {"FTSHIM_LOG": "debug"}, [prog, "--linger-ms", "20000"]), d, 120)
    pct = [float(m) for m in re.findall(r"\(([0-9.]+)% of a core\)", err)]
    return pct


def fmt(times):
    if not times:
        return "no data"
    return "median %.1f ms, max %.1f ms (%d runs)" % (statistics.median(times), max(times), len(times))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flavours", default="mpich,openmpi")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--starve-seconds", type=int, default=60)
    ap.add_argument("--only", default="crash,stop,starve,cpu")
    a = ap.parse_args()
    only = set(a.only.split(","))
    bad = only - {"crash", "stop", "starve", "cpu"}
    if bad:
        ap.error("--only %s: accepted: crash, stop, starve, cpu" % ",".join(sorted(bad)))
    work = tempfile.mkdtemp(prefix="ftshim-bench-")
    print("ftshim detector benchmark: %d cores, %s" % (os.cpu_count() or 0, time.strftime("%Y-%m-%d %H:%M")))
    for flavour in a.flavours.split(","):
        if flavour not in MPICC:
            ap.error("--flavours %s: accepted: mpich, openmpi" % flavour)
        prog = os.path.join(work, "detect-" + flavour)
        subprocess.check_call([MPICC[flavour], "-std=gnu11", "-O2", "-o", prog, PROG_SRC, "-ldl"])
        print("\n%s" % flavour)
        if "crash" in only:
            print("  SIGKILL, 16 ranks, death to every survivor knowing: %s"
                  % fmt(bench_crash(flavour, prog, work, a.reps)))
        if "stop" in only:
            print("  SIGSTOP, 16 ranks, defaults (timeout 1 s + 2 periods = 1200 ms): %s"
                  % fmt(bench_stop(flavour, prog, work, max(3, a.reps // 2))))
        if "starve" in only:
            n, ok = bench_starve(flavour, prog, work, a.starve_seconds)
            print("  starved %d s, 16 computing ranks + %d hogs, 10 ms / 100 ms: %d false positives%s"
                  % (a.starve_seconds, os.cpu_count() or 2, n, "" if ok else " (the job did not finish cleanly)"))
        if "cpu" in only:
            pct = bench_cpu(flavour, prog, work)
            if pct:
                print("  detector thread CPU at the default period, 16 idle ranks: median %.3f%%, max %.3f%% of a core"
                      % (statistics.median(pct), max(pct)))
            else:
                print("  detector thread CPU: no data")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
