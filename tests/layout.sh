#!/usr/bin/env bash
# layout.sh: the layout rules of pmpi/ that the compiler does not check.
#  - A recovery mode is reached only through the contract
#    (pmpi/mode/mode.h): no file outside pmpi/mode/replication/ names a
#    replication function, type or header, but the registry, which lists
#    the mode (it includes hooks.h; src/ holds its MPI-free logic: the
#    plan, the log).
#  - One rank module (pmpi/ranks.h): no other file reads a
#    communicator's member array or adds world_base (state.h defines it,
#    spawn.c sets it when a spawned process joins).
#  - No file of a recovery mode's folder is over 600 lines.
# Each breach is one line naming the file and line.
set -euo pipefail

srcdir=${FT_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$srcdir"
bad=0
breach() {
	echo "layout.sh: $*"
	bad=1
}

while IFS= read -r hit; do
	breach "replication named outside its folder: $hit"
done < <(grep -nE 'ftp_repl[_.]|struct ftp_repl|FTP_COPY_|pmpi/mode/replication/' \
	--include='*.c' --include='*.h' --include='*.py' -r pmpi |
	grep -v -e '^pmpi/mode/replication/' \
		-e '^pmpi/mode/registry\.c:[0-9]*:#include "pmpi/mode/replication/hooks\.h"$' || true)

while IFS= read -r hit; do
	breach "member array or world_base outside pmpi/ranks.h: $hit"
done < <(grep -nE --include='*.c' --include='*.h' -r -e 'core->members\b|\bworld_base\b' pmpi |
	grep -vE '^pmpi/ranks\.[ch]:|^pmpi/state\.h:|^pmpi/spawn\.c:[0-9]+:\s*ftp\.world_base = ' |
	grep -vE '^[^:]+:[0-9]+:\s*(/?\*|//)' || true)

for f in pmpi/mode/*/*.c pmpi/mode/*/*.h; do
	[ -e "$f" ] || continue
	n=$(wc -l <"$f")
	[ "$n" -le 600 ] || breach "$f has $n lines (at most 600 in a recovery mode's folder)"
done

[ "$bad" = 0 ] && echo "layout.sh: pmpi/ keeps its layout rules"
exit "$bad"
