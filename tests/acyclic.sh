#!/usr/bin/env bash
# acyclic.sh: pmpi/'s modules form no circle: no module includes a header
# of, or needs a symbol defined by, a module that depends on it in turn
# (tools/deps.py reads the includes of the sources and, with nm, the
# symbols of this build's objects), with each recovery mode's folder as one
# module and again with its files apart. On a circle it names every arrow in
# it; `tools/deps.py SRCDIR BUILDDIR` shows the floors.
set -euo pipefail

srcdir=${FT_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${FT_BUILDDIR:-$PWD}
exec "${PYTHON:-python3}" "$srcdir/tools/deps.py" --check "$srcdir" "$builddir"
