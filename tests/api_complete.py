#!/usr/bin/env python3
"""api_complete.py: every function the MPI of this build exports is a row
of pmpi/ftshim-api.tsv, whatever way a program reaches it.

- The C library (the libmpi that libftshim.so links): every exported
  MPI_/PMPI_/MPIX_/PMPIX_ function has a row. A wrapped one is exported by
  libftshim.so under both its names (so that callers of PMPI_ reach it).
- The Fortran bindings (the libraries the flavour's mpif90 links a
  `use mpi_f08` program with, which also hold mpif.h's and `use mpi`'s):
  every binding symbol (mpi_send_, MPI_SEND, pmpi_send__, mpi_send_f08ts_,
  ...) names a function that has a row, and every wrapped function that
  has a Fortran binding is reached through its MPI_ or PMPI_ name (some
  Fortran library imports one of them), which ftshim defines.

Rows whose class is pass or unwatched carry a note saying why no other
process can make the call wait, or on what it can wait (the generator
refuses them without one). Without a Fortran compiler the Fortran part is
skipped, and said so.

Environment (from make check): FT_BUILDDIR, FT_SRCDIR, MPITEST_MPICC,
optionally MPITEST_MPIFC, NM.
"""

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

BUILD = os.environ.get("FT_BUILDDIR", ".")
# Every process this test starts is bounded (seconds).
LIMIT = 120
SRC = os.environ.get("FT_SRCDIR", os.path.join(os.path.dirname(__file__), ".."))
NM = shlex.split(os.environ.get("NM") or "nm")  # libtool's may carry flags ("nm -B")
UNWRAPPED = {"pass", "unwatched"}


def fail(msg):
    sys.stderr.write("api_complete: %s\n" % msg)
    sys.exit(1)


def read_table():
    """The table's class and note of each function, by name, and what this
    build's mpi.h declares, as pmpi/gen-wrappers.py reads them (with the
    large-count rows it derives)."""
    spec = importlib.util.spec_from_file_location(
        "gen_wrappers", os.path.join(SRC, "pmpi", "gen-wrappers.py"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    funcs, declared = gen.read_rows(os.path.join(SRC, "pmpi", "ftshim-api.tsv"),
                                    os.path.join(BUILD, "pmpi", "mpi-decls.i"))
    return ({n: f.cls for n, f in funcs.items()}, {n: f.note for n, f in funcs.items()},
            declared)


def exported_functions(lib):
    out = subprocess.run(NM + ["-D", "--defined-only", lib], capture_output=True, text=True,
                         check=True, timeout=LIMIT).stdout
    return {f[2].split("@")[0] for f in (l.split() for l in out.splitlines())
            if len(f) == 3 and f[1] in "TWi"}


def imported(lib):
    out = subprocess.run(NM + ["-D", "--undefined-only", lib], capture_output=True, text=True,
                         check=True, timeout=LIMIT).stdout
    return {l.split()[-1].split("@")[0] for l in out.splitlines() if l.strip()}


def shared_libs(binary):
    """The libmpi* / libmpich* objects binary loads, as ldd names them."""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True,
                         timeout=LIMIT).stdout
    libs = []
    for l in out.splitlines():
        m = re.match(r"\s*(\S+) => (\S+)", l)
        if m and re.match(r"libmpi(ch)?[._a-z0-9-]*\.so", m.group(1)):
            libs.append(os.path.realpath(m.group(2)))
    return libs


def mpi_libs(compiler, work, name, text):
    """The MPI libraries a program built by compiler from text loads."""
    src, exe = os.path.join(work, name), os.path.join(work, name + ".exe")
    with open(src, "w") as f:
        f.write(text)
    subprocess.run([compiler, "-o", exe, src], check=True, cwd=work, timeout=LIMIT)
    return shared_libs(exe)


# An exported symbol of an MPI function or of one of its bindings: the
# function's name in any case, maybe with the profiling P, and the
# decorations of the compilers and bindings (MPICH's mpi_f08 names the
# large-count forms, the C functions' _c, with _large; MPI_Sizeof has one
# specific procedure per type and rank).
SYMBOL = re.compile(r"^p?(mpix?_[a-z0-9_]+?)(_cptr)?(_f08ts|_f08|_f90|_f)?(_large)?(__|_)?$", re.I)
SIZEOF = re.compile(r"^p?mpi_sizeof(_[a-z]+[0-9]*_(r[0-9]+|scalar))?_*$", re.I)


def function_of(sym, lower):
    """The table's name of the function sym is an entry point of, or None
    if sym is not one (a helper of the bindings: ompi_send_f, a module
    procedure); "?NAME" if it looks like one and no row has that name."""
    if SIZEOF.match(sym):
        return "MPI_Sizeof"
    m = SYMBOL.match(sym)
    if not m:
        return None
    base = m.group(1).lower() + ("_c" if m.group(4) else "")
    return lower.get(base, "?" + base.upper())


def main():
    rows, notes, declared = read_table()
    lower = {n.lower(): n for n in rows}
    shim = os.path.join(BUILD, ".libs", "libftshim.so")
    if not os.path.exists(shim):
        fail("%s not built" % shim)
    shim_exports = exported_functions(shim)
    work = tempfile.mkdtemp(prefix="api_complete-")
    try:
        c_libs = mpi_libs(os.environ.get("MPITEST_MPICC", "mpicc"), work, "p.c",
                          "#include <mpi.h>\nint main(void) { return MPI_Init(0, 0); }\n")
        fc = os.environ.get("MPITEST_MPIFC") or os.environ.get("MPITEST_MPICC", "mpicc").replace("mpicc", "mpif90")
        f_libs = None
        if shutil.which(fc) and shutil.which("gfortran"):
            f_libs = [l for l in mpi_libs(fc, work, "p.f90",
                                          "program p\n  use mpi_f08\n  integer :: ierr\n"
                                          "  call MPI_Init(ierr)\nend program p\n")
                      if l not in c_libs]
    finally:
        shutil.rmtree(work)
    if not c_libs:
        fail("a program built with the MPI's compiler wrapper links no libmpi*")

    problems = []
    c_names, undeclared = set(), set()
    for lib in c_libs:
        for sym in exported_functions(lib):
            name = function_of(sym, lower)
            if name is None:
                continue
            if name.startswith("?"):
                problems.append("%s (%s): exported by the MPI, and no row of the table classifies %s" % (
                    sym, os.path.basename(lib), name[1:]))
                continue
            c_names.add(name)
    for name in sorted(c_names):
        cls = rows[name]
        if cls in UNWRAPPED:
            continue
        if name not in declared:
            # The generator wraps what this mpi.h declares: a function the
            # MPI still exports but its mpi.h no longer declares (MPI-1's
            # MPI_Errhandler_set on Open MPI 4.1) cannot be called by a
            # program built with it.
            undeclared.add(name)
            continue
        for n in (name, "P" + name):
            if n not in shim_exports:
                problems.append("%s: wrapped (%s), but libftshim.so does not export %s" % (name, cls, n))
    counts = {}
    for name in c_names:
        cls = rows[name]
        key = cls if cls in UNWRAPPED else "not in mpi.h" if name in undeclared else "wrapped"
        counts[key] = counts.get(key, 0) + 1
    print("api_complete: %s exports %d MPI functions: %s" % (
        ", ".join(os.path.basename(l) for l in c_libs), len(c_names),
        ", ".join("%d %s" % (v, k) for k, v in sorted(counts.items()))))
    if undeclared:
        print("api_complete: exported, but not declared by mpi.h, so not wrapped: %s" % " ".join(sorted(undeclared)))

    if f_libs is None:
        print("api_complete: no Fortran compiler (%s): the Fortran bindings are not checked" % fc)
    else:
        if not f_libs:
            fail("%s links no Fortran MPI library" % fc)
        reached = set()
        bound = {}
        for lib in f_libs:
            for sym in imported(lib):
                m = re.match(r"^P?(MPIX?_[A-Za-z0-9_]+)$", sym)
                if m:
                    reached.add(m.group(1))
            for sym in exported_functions(lib):
                name = function_of(sym, lower)
                if name is None:
                    continue  # a helper of the bindings (ompi_send_f, a module procedure)
                if name.startswith("?"):
                    problems.append("%s (%s): a Fortran binding, and no row of the table classifies %s" % (
                        sym, os.path.basename(lib), name[1:]))
                    continue
                bound.setdefault(name, set()).add(sym)
        for name in sorted(bound):
            if rows[name] in UNWRAPPED or name in reached or name not in declared:
                continue
            if "Fortran bypasses" in notes[name]:
                print("api_complete: %s: its Fortran binding does not reach ftshim; the table says why" % name)
            else:
                problems.append("%s: wrapped, but its Fortran binding (%s) imports neither %s nor P%s: "
                                "it reaches the MPI some other way, past ftshim" % (
                                    name, " ".join(sorted(bound[name])[:3]), name, name))
        nsym = sum(len(v) for v in bound.values())
        print("api_complete: %s export %d Fortran binding symbols for %d functions" % (
            ", ".join(os.path.basename(l) for l in f_libs), nsym, len(bound)))
    if problems:
        for p in problems:
            sys.stderr.write("api_complete: %s\n" % p)
        fail("%d problem(s) above; classify each function in pmpi/ftshim-api.tsv" % len(problems))
    print("api_complete: every exported function is classified, and every wrapped one reached")


if __name__ == "__main__":
    main()
