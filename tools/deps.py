#!/usr/bin/env python3
"""deps.py: the dependency graph of pmpi/'s modules, from the code itself.

A module is a .c file with its .h (pmpi/comms.c and pmpi/comms.h are
pmpi/comms), a header alone (pmpi/call.h), a generated file of the build
(pmpi/mpi_entry.c), or a recovery mode's whole folder (pmpi/mode/NAME/,
reached from the core only through the contract, pmpi/mode/mode.h). Module A depends on module B when a file of
A includes a header of B, or when A's object file needs a symbol that B's
object file defines (what `nm` reads, so a call made by an inline function
of a header counts for every module that expands it).

The graph is checked twice: with each mode's folder as one module, and
with its files apart (a file and its header one module), so that neither
the core and a mode nor a mode's own files form a circle.

  deps.py SRCDIR BUILDDIR          the modules floor by floor, lowest first
  deps.py --check SRCDIR BUILDDIR  exit 1, naming each circle and the
                                   arrows inside it, if there is one
  -v                               with each module, what it depends on
  --files                          a mode's files apart in the floors

BUILDDIR is a configured and built tree (make all); NM names the nm to
run, with its options (default: nm).
"""
import collections
import glob
import os
import re
import shlex
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"(pmpi/[^"]+)"')


def module_of(rel, fold=True):
    """The module of a file, by its path below the top (pmpi/x.c); fold:
    a mode's folder is one."""
    m = re.match(r"(pmpi/mode/[^/]+)/", rel)
    if m and fold:
        return m.group(1)
    return re.sub(r"\.(c|h|py)$", "", rel)


def sources(top):
    """The C files under top/pmpi, as paths below top."""
    found = []
    for path in glob.glob(os.path.join(top, "pmpi", "**", "*.[ch]"), recursive=True):
        found.append(os.path.relpath(path, top))
    return found


def include_edges(srcdir, builddir, edges, fold):
    seen = set()
    for top in (srcdir, builddir):
        for rel in sources(top):
            if rel in seen:
                continue
            seen.add(rel)
            with open(os.path.join(top, rel), encoding="utf-8", errors="replace") as f:
                for line in f:
                    m = INCLUDE.match(line)
                    if m:
                        edges[module_of(rel, fold)][module_of(m.group(1), fold)].add(
                            "#include " + m.group(1))


def objects(srcdir, builddir, fold):
    """(module, object file) for each of the library's pmpi/ objects: the
    PIC one libtool keeps in .libs/ where there is one; not one whose
    source is gone (left by an earlier build)."""
    found = {}
    paths = [os.path.join(d, f) for d, _, files in os.walk(os.path.join(builddir, "pmpi"))
             for f in files if f.endswith(".o")]
    for path in paths:
        d, base = os.path.split(path)
        pic = os.path.basename(d) == ".libs"
        if pic:
            d = os.path.dirname(d)
        name = re.sub(r"^[A-Za-z0-9_]+_la-", "", base)[:-2]
        rel = os.path.relpath(os.path.join(d, name + ".c"), builddir)
        if not any(os.path.exists(os.path.join(top, rel)) for top in (srcdir, builddir)):
            continue
        if pic or rel not in found:
            found[rel] = path
    return [(module_of(rel, fold), path) for rel, path in sorted(found.items())]


COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\])*"', re.S)
NAME = re.compile(r"(?<![.>\w])([A-Za-z_]\w*)\s*(\()?")


def header_edges(srcdir, defined, functions, edges, fold):
    """A header of pmpi/ that calls or declares a function another module
    defines, or names its variable, depends on that module (comments,
    strings and struct members left out; generated headers too, which
    name every MPI function)."""
    for rel in sources(srcdir):
        if not rel.endswith(".h"):
            continue
        with open(os.path.join(srcdir, rel), encoding="utf-8", errors="replace") as f:
            text = COMMENT.sub(" ", f.read())
        mod = module_of(rel, fold)
        for name, call in NAME.findall(text):
            to = defined.get(name)
            if to and to != mod and (call or name not in functions):
                edges[mod][to].add(name)


def call_edges(srcdir, builddir, edges, fold):
    nm = shlex.split(os.environ.get("NM") or "nm")
    defined, functions, needed = {}, set(), collections.defaultdict(set)
    objs = objects(srcdir, builddir, fold)
    if not objs:
        sys.exit(f"deps.py: no object files under {builddir}/pmpi: build first (make all)")
    for mod, path in objs:
        out = subprocess.run(nm + [path], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in "TDBRCGSVW":
                defined[f[2]] = mod
                if f[1] in "TW":
                    functions.add(f[2])
            elif len(f) == 2 and f[0] == "U":
                needed[mod].add(f[1])
    for mod, names in needed.items():
        for name in names:
            to = defined.get(name)
            if to:
                edges[mod][to].add(name)
    return defined, functions


def circles(nodes, edges):
    """The strongly connected components of more than one module
    (Tarjan's algorithm, iterative)."""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = 0
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))
    return found


def floors(nodes, edges):
    """Each module's floor: 0 for one that depends on no other, else one
    above the highest it depends on (the graph must be acyclic)."""
    floor = {}

    def of(m):
        if m not in floor:
            floor[m] = 0
            floor[m] = 1 + max((of(t) for t in edges[m]), default=-1)
        return floor[m]

    for m in nodes:
        of(m)
    return floor


def graph(srcdir, builddir, fold):
    """The modules and the arrows among them (fold: see module_of)."""
    edges = collections.defaultdict(lambda: collections.defaultdict(set))
    include_edges(srcdir, builddir, edges, fold)
    defined, functions = call_edges(srcdir, builddir, edges, fold)
    header_edges(srcdir, defined, functions, edges, fold)
    for m in list(edges):
        edges[m].pop(m, None)
    nodes = set(edges) | {t for m in list(edges) for t in edges[m]}
    return nodes, edges


def report_circles(found, edges):
    for comp in found:
        inside = set(comp)
        print(f"deps.py: a circle of {len(comp)} modules: {' '.join(comp)}")
        for m in comp:
            for t in sorted(edges[m]):
                if t in inside:
                    why = sorted(edges[m][t])
                    more = f" and {len(why) - 4} more" if len(why) > 4 else ""
                    print(f"  {m} -> {t}: {', '.join(why[:4])}{more}")


def main(argv):
    check = "--check" in argv
    verbose = "-v" in argv
    files = "--files" in argv
    args = [a for a in argv if not a.startswith("-")]
    if len(args) != 2:
        sys.exit("usage: deps.py [--check] [-v] [--files] SRCDIR BUILDDIR")
    srcdir, builddir = args
    status, shown = 0, None
    for fold in (True, False):
        nodes, edges = graph(srcdir, builddir, fold)
        found = circles(nodes, edges)
        if found:
            report_circles(found, edges)
            status = 1
        elif check:
            apart = "each mode as one module" if fold else "each mode's files apart"
            narrows = sum(len(edges[m]) for m in nodes)
            print(f"deps.py: {len(nodes)} modules, {narrows} arrows, no circle ({apart})")
        if fold != files:
            shown = (nodes, edges)
    if status or check:
        return status
    nodes, edges = shown
    floor = floors(nodes, edges)
    for m in sorted(nodes, key=lambda m: (floor[m], m)):
        deps = f": {' '.join(sorted(edges[m]))}" if verbose and edges[m] else ""
        print(f"{floor[m]:3d} {m}{deps}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
