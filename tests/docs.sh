#!/bin/sh
# docs.sh: the README's table of FTSHIM_* variables is exactly what
# tools/config-doc prints from src/config_vars.h, and the man page lists
# every variable. Regenerate the README's table with:
#   build/mpich/tools/config-doc --markdown
set -eu
readme="$FT_SRCDIR/README.md"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$FT_BUILDDIR/tools/config-doc" --markdown >"$tmp/want"
sed -n '/<!-- config-table:begin -->/,/<!-- config-table:end -->/p' "$readme" | sed '1d;$d' >"$tmp/have"
if ! diff -u "$tmp/have" "$tmp/want"; then
	echo "docs.sh: README.md's variable table is stale; replace it with the output of tools/config-doc --markdown" >&2
	exit 1
fi
for v in $(sed -n 's/^| `\(FTSHIM_[A-Z_]*\)`.*/\1/p' "$tmp/want"); do
	grep -q "^\.B $(echo "$v" | sed 's/_/_/g')\$" "$FT_BUILDDIR/man/ftshim.7" ||
		{ echo "docs.sh: man/ftshim.7 lacks $v" >&2; exit 1; }
done
echo "docs.sh: README and man page list all $(($(wc -l <"$tmp/want") - 2)) variables"
