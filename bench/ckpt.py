#!/usr/bin/env python3
"""bench/ckpt.py: what ftshim's in-memory checkpoints cost and how fast a
job restarts in place from one (FTSHIM_SPARES, ftshim_protect,
ftshim_checkpoint), beside a relaunch from the same checkpoint, on each
MPI built by dev/setup. Asserts nothing; prints tables. Every job runs
4 program ranks; under FTSHIM_SPARES=1 that is 5 processes.

1. Checkpoint cost against the size of the protected state (bench/ckpt_cost.c
   "ckpt S CALLS", 4 ranks + 1 spare, --reps jobs per size): each rank
   protects S MiB (filled) and calls ftshim_checkpoint CALLS times back to
   back, so that each call's wait is the previous copy's trip to the
   buddy. Before that, every rank at once times memcpy and a loopback
   socket copy of its S MiB. Per size, medians over all ranks and jobs:

  first     the first call as the program saw it (MPI_Wtime), ms: its
            local copy fills fresh pages
  copy      report.json's copy_ms of calls 3..CALLS, ms: the local copy
            (from the 3rd call on, into the older copy's memory)
  agree     report.json's agree_ms of calls 2..CALLS, ms: the agreement
            over MPI_COMM_WORLD, where a rank whose copy was kept first
            waits for the others'
  call      the whole call as the program saw it, calls 2..CALLS, ms:
            the wait for the previous copy, the agreement, the copy
  buddy     S / median wait_ms of calls 2..CALLS, MiB/s per rank: the
            rate at which the previous copy reached its buddy and was
            kept there (all 4 ranks' copies travel at once)
  touched   memcpy of S MiB into memory already touched, MiB/s per rank
  fresh     memcpy into fresh memory (mmap'ed, every page faults), MiB/s
            (2 times per rank, the others 3)
  socket    S MiB over a loopback TCP connection (a thread sends in
            1 MiB writes, the rank receives into touched memory), MiB/s
  rss       the largest peak RSS of a program rank (VmHWM), MiB
  faults    pages a rank's process faulted in during the CALLS calls, in
            units of S: the local copies into fresh memory and the copies
            received for its buddy (CALLS - 1 of them whole by the end)

2. Recovery in place against a relaunch (--recovery-sizes, each rep
   interleaving, in a rotating order, four jobs of 4 program ranks):
   - failed: tests/mpi/progs/ckpt_calls.c 60 --kib S*1024 --every 30
     --nap-ms S*0.8 under FTSHIM_SPARES=1, rank 2 SIGKILLed after its
     55th MPI_Sendrecv (FTSHIM_INJECT rank=2 at=call:MPI_Sendrecv:55), so
     25 steps after the checkpoint of step 30 (restored only if its
     copies were all kept by then: the version restored is printed, and
     the redo counted from it);
   - free: the same job without the kill;
   - relaunch, shim: bench/ckpt_cost.c "relaunch", a fresh job of the 4
     ranks under the shim (no spares) that reads each rank's S MiB from
     a file written beforehand (in the page cache: generous to the
     relaunch), then ends;
   - relaunch, plain: the same without the shim.
   From the failed job's report.json, the times its ranks' lines came
   out and the walls, medians over reps (ms):

  ver       the version restored (the step of the checkpoint)
  detect    the death (the injection) to the first process knowing
  repair    repair_ms of the substitution (the spare takes the rank)
  agree     the fetching rank's restore agree_ms: from the repair to the
            choice of the checkpoint and where each copy is
  fetch     the fetching rank's (the spare's) restore copy_ms: its copy
            fetched from the buddy that kept it
  resumed   the death to the last rank's restore done
  back      the death to the last rank's "in main ... from step" line of
            the second run (the time the line reached this script): every
            rank back in main with its state copied in. The recovery in
            place without the redo, compared below
  step      the failure-free step time (the free job's checkpoint events,
            the calls left out)
  redo      (55 - ver) steps x step
  back+redo the recovery in place with the redo
  total     the failed job's wall minus the free job's (per rep): a check
            of back+redo, noisier (two whole jobs' walls)
  ready     relaunch: from the launch to every rank holding its state
            (rank 0's clock after a barrier); the anchor
  wall      relaunch: the whole job, its MPI_Finalize and exit included
  ratio     relaunch / in place, without the redo (ready / back) and
            with it ((ready + redo) / (back + redo)), medians of per-rep
            ratios; in brackets the same with the relaunch's whole wall

The relaunch anchor leaves out what a real relaunch also waits for: the
launcher noticing the failure and tearing the failed job down, and a
checkpoint written to and read from storage that survives the job.

With the defaults a flavour takes about 8 minutes on the project's 2-core
VM (11 beside other jobs); part 1 is most of it, its 256 MiB jobs the
longest (page faults: fresh memory fills at about 100 MiB/s per rank).

Usage: bench/ckpt.py [--flavours mpich,openmpi] [--reps 5] [--sizes 1,16,64,256]
                     [--calls 5] [--recovery-sizes 16,64]
"""

import argparse
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import threading
import time

# overhead.measure_cmd is not used: these jobs' stderr (the report's path)
# and the times their lines come out are needed too (run() below).
from overhead import MPICC, TOP, launch_env

N = 4  # program ranks
SPARES = 1
# The recovery jobs: checkpoints every EVERY steps, the kill after KILL
# MPI_Sendrecv calls (KILL - EVERY steps after the first checkpoint,
# before the second), STEPS steps. Each step sweeps the rank's S MiB and
# then naps nap_ms(S) ms, so that the 4 ranks keep about a third of the 2
# cores busy: the buddy's copy (page faults on its side, bound by CPU)
# is then kept some 10 steps after the checkpoint, well before the kill,
# and the step time the redo is counted with is not the one of steps
# slowed by that copy.
EVERY, KILL, STEPS = 30, 55, 60


def nap_ms(size):
    return max(2, round(size * 0.8))


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def recovery_flag(flavour):
    # Hydra ends the job when a rank dies unless told not to; Open MPI's
    # mpirun needs --enable-recovery (tests/mpi/lib.sh's launch_cmd).
    return "-disable-auto-cleanup" if flavour == "mpich" else "--enable-recovery"


def launch(flavour, nprocs, env, argv, recovery=False):
    cmd = launch_env(flavour, nprocs, env, argv)
    if recovery:
        cmd.insert(1, recovery_flag(flavour))
    return cmd


def run(cmd, limit=300):
    """Run cmd under timeout -k: (wall seconds, stdout, stderr, unix
    start, [(unix time, line)] for stdout's lines as they came)."""
    start = time.time()
    t0 = time.monotonic()
    p = subprocess.Popen(["timeout", "-k", "5", str(limit)] + cmd, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, errors="replace")
    lines, err = [], []

    def read_out():
        for line in p.stdout:
            lines.append((time.time(), line))

    def read_err():
        err.append(p.stderr.read())
    th = [threading.Thread(target=read_out), threading.Thread(target=read_err)]
    for t in th:
        t.start()
    try:
        p.wait(timeout=limit + 30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    wall = time.monotonic() - t0
    for t in th:
        t.join()
    return wall, "".join(l for _, l in lines), "".join(err), start, lines


def report_of(err, rundir):
    """The job's report.json: the summary line names it (printed when
    something happened), else the one job directory in rundir."""
    m = re.search(r"^ftshim: .*; report: (\S+)$", err, re.M)
    paths = [m.group(1)] if m else glob.glob(os.path.join(rundir, "*", "report.json"))
    if len(paths) != 1 or not os.path.exists(paths[0]):
        return None
    with open(paths[0]) as f:
        return json.load(f)


def fresh_rundir(work):
    return tempfile.mkdtemp(prefix="run-", dir=work)


# --- 1. checkpoint cost ------------------------------------------------------

def cost_job(flavour, shim, prog, size, calls, work):
    rundir = fresh_rundir(work)
    env = {"LD_PRELOAD": shim, "FTSHIM_SPARES": str(SPARES), "FTSHIM_RUNDIR": rundir}
    wall, out, err, _, _ = run(launch(flavour, N + SPARES, env, [prog, "ckpt", str(size), str(calls)]))
    rep = report_of(err, rundir)
    shutil.rmtree(rundir, ignore_errors=True)
    got = {"touched": [], "fresh": [], "socket": [], "call": [], "rss": [], "first": [], "copy": [],
           "agree": [], "wait": [], "faults": [], "refused": 0}
    for line in out.splitlines():
        f = line.split()
        if f and f[0] in ("memcpy-touched", "memcpy-fresh", "socket"):
            got[f[0].replace("memcpy-", "")].append(float(f[2]))
        elif f and f[0] == "call":
            if int(f[2]) == 1:
                got["first"].append(float(f[3]))
            else:
                got["call"].append(float(f[3]))
        elif f and f[0] == "faults":
            got["faults"].append(float(f[2]))
        elif f and f[0] == "hwm":
            got["rss"].append(float(f[2]) / 1024)
        elif "checkpoint" in line and line.startswith("rank "):
            got["refused"] += 1
    if rep is None or not got["call"]:
        print("  (%s %d MiB: no data; stderr tail: %s)" % (flavour, size, err.strip().splitlines()[-3:]))
        return None
    for e in rep["events"]:
        if e["kind"] != "checkpoint":
            continue
        if e["number"] >= 2:
            got["wait"].append(e["wait_ms"])
            got["agree"].append(e.get("agree_ms"))
        if e["number"] >= 3:
            got["copy"].append(e["copy_ms"])
    return got


def part1(flavour, shim, prog, sizes, reps, calls, work):
    data = {s: [] for s in sizes}
    for rep in range(reps):
        order = sizes[rep % len(sizes):] + sizes[:rep % len(sizes)]
        for s in order:
            g = cost_job(flavour, shim, prog, s, calls, work)
            if g:
                data[s].append(g)
    print("\n%s: checkpoint cost, %d ranks + %d spare, %d back-to-back calls, %d jobs per size; medians" %
          (flavour, N, SPARES, calls, reps))
    print("%6s %9s %9s %9s %9s %10s %10s %10s %10s %7s %7s" % (
        "MiB", "first ms", "copy ms", "agree ms", "call ms", "buddy MB/s", "touched", "fresh", "socket",
        "rss MiB", "faults"))
    for s in sizes:
        if not data[s]:
            print("%6d no data" % s)
            continue
        pool = {k: [v for g in data[s] for v in g[k]] for k in data[s][0] if k != "refused"}
        nan = float("nan")

        def rate(ms):
            return s / (ms / 1e3) if ms else float("nan")
        print("%6d %9.1f %9.1f %9.1f %9.1f %10.0f %10.0f %10.0f %10.0f %7.0f %7.1f%s" % (
            s, median(pool["first"]), median(pool["copy"]), median(pool["agree"]) or nan, median(pool["call"]),
            rate(median(pool["wait"])),
            rate(median(pool["touched"])), rate(median(pool["fresh"])), rate(median(pool["socket"])),
            max(pool["rss"]), median(pool["faults"]) or nan,
            "  (calls refused!)" if any(g["refused"] for g in data[s]) else ""), flush=True)


# --- 2. recovery in place against a relaunch ------------------------------------

def step_ms(rep):
    """The failure-free step time, ms: between one checkpoint's end and
    the next one's start, per step, median over ranks and intervals."""
    by = {}
    for e in rep["events"]:
        if e["kind"] == "checkpoint":
            by.setdefault(e["rank"], []).append(e)
    steps = []
    for evs in by.values():
        evs.sort(key=lambda e: e["number"])
        for a, b in zip(evs, evs[1:]):
            dt = b["t"] - (b["wait_ms"] + b["copy_ms"]) / 1e3 - a["t"]
            steps.append(dt * 1e3 / (b["version"] - a["version"]))
    return median(steps)


def failed_phases(rep, lines):
    """The phases of the failed job, from its report and the times its
    stdout's lines came (lines: [(unix time, line)])."""
    f = rep.get("failures") or []
    subs = [e for e in rep["events"] if e["kind"] == "substitution"]
    rest = [e for e in rep["events"] if e["kind"] == "restore"]
    if len(f) != 1 or len(subs) != 1 or not rest:
        return "%d failures, %d substitutions, %d restores in the report" % (len(f), len(subs), len(rest))
    f = f[0]
    fetch = [e for e in rest if e["from"] >= 0 and e["from"] != e["rank"]]
    fe = fetch[0] if fetch else max(rest, key=lambda e: e["copy_ms"])
    # Each rank's second "in main" line: back in main, its state copied in.
    mains = {}
    for t, line in lines:
        m = re.match(r"in main: rank (\d+) of \d+ from step", line)
        if m:
            mains.setdefault(int(m.group(1)), []).append(t)
    if len(mains) != N or any(len(v) < 2 for v in mains.values()):
        return "the output lacks a rank's second run (%s)" % {r: len(v) for r, v in mains.items()}
    died = rep["start_unix"] + f["failed_s"]
    return {
        "ver": fe["version"],
        "detect": (f["detected_s"] - f["failed_s"]) * 1e3,
        "repair": subs[0]["repair_ms"],
        "agree": fe["agree_ms"],
        "fetch": fe["copy_ms"],
        "resumed": (max(e["t"] for e in rest) - f["failed_s"]) * 1e3,
        "back": (max(v[1] for v in mains.values()) - died) * 1e3,
    }


def part2(flavour, shim, prog_calls, prog_cost, sizes, reps, work):
    rows = []
    for s in sizes:
        prefix = os.path.join(work, "state-%d" % s)
        block = bytes(range(256)) * 4096  # 1 MiB
        for r in range(N):
            with open("%s.%d" % (prefix, r), "wb") as f:
                for _ in range(s):
                    f.write(block)
        argv = [prog_calls, str(STEPS), "--kib", str(s * 1024), "--every", str(EVERY),
                "--nap-ms", str(nap_ms(s))]
        ways = ["failed", "free", "relaunch-shim", "relaunch-plain"]
        per = []
        for rep in range(reps):
            order = ways[rep % len(ways):] + ways[:rep % len(ways)]
            got = {}
            for w in order:
                rundir = fresh_rundir(work)
                if w in ("failed", "free"):
                    env = {"LD_PRELOAD": shim, "FTSHIM_SPARES": str(SPARES), "FTSHIM_RUNDIR": rundir}
                    if w == "failed":
                        env["FTSHIM_INJECT"] = "rank=2 at=call:MPI_Sendrecv:%d" % KILL
                    wall, out, err, _, lines = run(launch(flavour, N + SPARES, env, argv, recovery=True))
                    rep_json = report_of(err, rundir)
                    ok = re.search(r"^result: (\d+) \(expected \1\)$", out, re.M) is not None
                    if not ok or rep_json is None:
                        print("  (%s %d MiB %s rep %d: %s; stderr tail: %s)" % (
                            flavour, s, w, rep, "wrong or no result" if not ok else "no report",
                            err.strip().splitlines()[-3:]))
                    else:
                        got[w] = (wall, rep_json, lines)
                else:
                    env = {"FTSHIM_RUNDIR": rundir}
                    if w == "relaunch-shim":
                        env["LD_PRELOAD"] = shim
                    wall, out, err, start, _ = run(launch(flavour, N, env, [prog_cost, "relaunch", prefix, str(s)],
                                                          recovery=True))
                    m = re.search(r"^ready ([0-9.]+)$", out, re.M)
                    if m:
                        got[w] = (wall, float(m.group(1)) - start)
                    else:
                        print("  (%s %d MiB %s rep %d: no ready line; stderr tail: %s)" % (
                            flavour, s, w, rep, err.strip().splitlines()[-3:]))
                shutil.rmtree(rundir, ignore_errors=True)
            if "failed" not in got or "free" not in got:
                continue
            ph = failed_phases(got["failed"][1], got["failed"][2])
            st = step_ms(got["free"][1])
            if isinstance(ph, str) or st is None:
                print("  (%s %d MiB rep %d: %s)" % (flavour, s, rep, ph if isinstance(ph, str) else
                                                   "no step time in the free job's report"))
                continue
            d = dict(ph)
            d["step"] = st
            d["redo"] = (KILL - ph["ver"]) * st
            d["total"] = (got["failed"][0] - got["free"][0]) * 1e3
            for w in ("relaunch-shim", "relaunch-plain"):
                if w in got:
                    wall, ready = got[w]
                    d[w] = (ready * 1e3, wall * 1e3)
            per.append(d)
        rows.append((s, per))
        for r in range(N):
            os.unlink("%s.%d" % (prefix, r))

    print("\n%s: recovery in place, %d ranks + %d spare, ckpt_calls %d steps (nap S*0.8 ms), checkpoint every %d, "
          "rank 2 killed at step %d; %d reps, medians (ms)" % (flavour, N, SPARES, STEPS, EVERY, KILL, reps))
    print("%6s %4s %7s %7s %7s %7s %8s %7s %7s %7s %10s %7s" % (
        "MiB", "ver", "detect", "repair", "agree", "fetch", "resumed", "back", "step", "redo", "back+redo",
        "total"))
    for s, per in rows:
        if not per:
            print("%6d no data" % s)
            continue

        def col(k):
            return median([d[k] for d in per])
        vers = sorted(set(d["ver"] for d in per))
        print("%6d %4s %7.1f %7.1f %7.1f %7.0f %8.0f %7.0f %7.2f %7.0f %10.0f %7.0f" % (
            s, "/".join(str(v) for v in vers), col("detect"), col("repair"), col("agree"), col("fetch"),
            col("resumed"), col("back"), col("step"), col("redo"), median([d["back"] + d["redo"] for d in per]),
            col("total")))
    print("\n%s: the relaunch anchor (a fresh job of %d ranks reading its state from files in the page "
          "cache); ratio = relaunch / in place, medians of per-rep ratios, [with the relaunch's whole wall]" %
          (flavour, N))
    print("%6s %-10s %7s %7s %22s %22s" % ("MiB", "relaunch", "ready", "wall", "ratio without redo",
                                         "ratio with redo"))
    for s, per in rows:
        for w in ("relaunch-shim", "relaunch-plain"):
            ds = [d for d in per if w in d]
            if not ds:
                print("%6d %-10s no data" % (s, w))
                continue
            no_redo = median([d[w][0] / d["back"] for d in ds])
            no_redo_w = median([d[w][1] / d["back"] for d in ds])
            redo = median([(d[w][0] + d["redo"]) / (d["back"] + d["redo"]) for d in ds])
            redo_w = median([(d[w][1] + d["redo"]) / (d["back"] + d["redo"]) for d in ds])
            print("%6d %-10s %7.0f %7.0f %22s %22s" % (
                s, "shim" if w.endswith("shim") else "plain", median([d[w][0] for d in ds]),
                median([d[w][1] for d in ds]), "%.2f [%.2f]" % (no_redo, no_redo_w),
                "%.2f [%.2f]" % (redo, redo_w)), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flavours", default="mpich,openmpi")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--sizes", default="1,16,64,256", help="MiB per rank, for the checkpoint cost")
    ap.add_argument("--calls", type=int, default=5, help="back-to-back checkpoints per job")
    ap.add_argument("--recovery-sizes", default="16,64", help="MiB per rank, for the recovery")
    a = ap.parse_args()
    sizes = [int(x) for x in a.sizes.split(",") if x]
    rsizes = [int(x) for x in a.recovery_sizes.split(",") if x]
    need = max(sizes + [0]) * 6 * N  # state, 2 local copies, up to 3 kept for the buddy
    try:
        avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") >> 20
        if need > avail * 0.8:
            ap.error("--sizes up to %d MiB needs about %d MiB of memory; %d MiB free" % (max(sizes), need, avail))
    except (ValueError, OSError):
        pass
    work = tempfile.mkdtemp(prefix="ftshim-ckpt-")
    print("in-memory checkpoints, %d cores, %d program ranks + %d spare; medians" % (os.cpu_count() or 0, N, SPARES))
    try:
        for flavour in a.flavours.split(","):
            if flavour not in MPICC:
                ap.error("--flavours %s: accepted: mpich, openmpi" % flavour)
            t0 = time.monotonic()
            shim = os.path.join(TOP, "build", flavour, ".libs", "libftshim.so")
            print("\n%s: %s (built %s)" % (flavour, os.path.relpath(shim, TOP),
                                          time.strftime("%Y-%m-%d %H:%M", time.localtime(os.path.getmtime(shim)))))
            prog_cost = os.path.join(work, "ckpt_cost-" + flavour)
            prog_calls = os.path.join(work, "ckpt_calls-" + flavour)
            inc = ["-I", os.path.join(TOP, "include")]
            subprocess.check_call([MPICC[flavour], "-O2"] + inc + ["-o", prog_cost,
                                  os.path.join(TOP, "bench", "ckpt_cost.c"), "-lpthread"])
            subprocess.check_call([MPICC[flavour], "-O2"] + inc + ["-o", prog_calls,
                                  os.path.join(TOP, "tests", "mpi", "progs", "ckpt_calls.c")])
            # The host's load beside each part: a shared machine's other
            # work shows in the figures.
            print("(load average at the start: %.1f)" % os.getloadavg()[0])
            if sizes:
                part1(flavour, shim, prog_cost, sizes, a.reps, a.calls, work)
                print("(load average: %.1f)" % os.getloadavg()[0])
            if rsizes:
                part2(flavour, shim, prog_calls, prog_cost, rsizes, a.reps, work)
            print("(%s: %.0f s; load average: %.1f)" % (flavour, time.monotonic() - t0, os.getloadavg()[0]),
                  flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
