#!/bin/sh
# pkgconfig.sh: the installed ftshim-FLAVOUR.pc is what a build system
# needs. This build is installed into a scratch DESTDIR; pkg-config finds
# the file there (PKG_CONFIG_SYSROOT_DIR prefixes its paths), and a
# program written for ULFM (MPIX_ calls and error classes from mpi.h and
# mpi-ext.h, ftshim.h's query API, ftshim-rts.h's calls) compiles and links with its flags
# alone; the preload variable names the installed library, fmoddir the
# Fortran modules when they were built; the installed ftshim-info lists
# the library and the file. Every command it starts is bounded (timeout -k).
set -eu
flavour=$MPITEST_FLAVOUR
command -v pkg-config >/dev/null || { echo "pkgconfig.sh: no pkg-config (Debian package pkgconf)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
timeout -k 5 300 env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL ${MAKE:-make} -C "$FT_BUILDDIR" install DESTDIR="$tmp/root" >"$tmp/install.log" 2>&1 ||
	{ tail -n 20 "$tmp/install.log" >&2; echo "pkgconfig.sh: make install DESTDIR=... failed" >&2; exit 1; }
pc=$(find "$tmp/root" -name "ftshim-$flavour.pc" -path '*/pkgconfig/*')
[ -n "$pc" ] || { echo "pkgconfig.sh: no ftshim-$flavour.pc installed in a pkgconfig directory" >&2; exit 1; }
export PKG_CONFIG_PATH="$(dirname "$pc")" PKG_CONFIG_SYSROOT_DIR="$tmp/root"
pkg-config --exists "ftshim-$flavour" || { pkg-config --print-errors --exists "ftshim-$flavour" >&2 || true; exit 1; }
cflags=$(pkg-config --cflags "ftshim-$flavour")
libs=$(pkg-config --libs "ftshim-$flavour")
for want in "-I$tmp/root/.*/include/ftshim" "-I$tmp/root/.*/include"; do
	echo " $cflags " | grep -qE " $want " || { echo "pkgconfig.sh: --cflags '$cflags' lacks $want" >&2; exit 1; }
done
[ "$(pkg-config --variable=flavour "ftshim-$flavour")" = "$flavour" ] || { echo "pkgconfig.sh: flavour variable wrong" >&2; exit 1; }
preload=$tmp/root$(pkg-config --variable=preload "ftshim-$flavour" | sed "s|^$tmp/root||")
[ -f "$preload" ] || { echo "pkgconfig.sh: the preload variable names $preload, which was not installed" >&2; exit 1; }

cat >"$tmp/app.c" <<'C'
#include <mpi.h>
#include <mpi-ext.h>
#include <ftshim-rts.h>
#include <ftshim.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int flag = 1;
	MPI_Rank_info info = { 0, 0, MPI_RANK_OK };
	MPI_Init(&argc, &argv);
	if (MPIX_Comm_agree)
		MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
	if (MPI_Comm_validate_rank)
		MPI_Comm_validate_rank(MPI_COMM_WORLD, 0, &info);
	printf("%d %d %d %d\n", MPI_ERR_PROC_FAILED, MPIX_ERR_REVOKED, FTSHIM_ALIVE, MPI_ERR_RANK_FAIL_STOP + info.state);
	MPI_Finalize();
	return 0;
}
C
# shellcheck disable=SC2086 # the flags are words
timeout -k 5 120 "$MPITEST_MPICC" $cflags -o "$tmp/app" "$tmp/app.c" $libs 2>"$tmp/cc.log" ||
	{ cat "$tmp/cc.log" >&2; echo "pkgconfig.sh: a ULFM program does not build with: $cflags $libs" >&2; exit 1; }
fmoddir=$tmp/root$(pkg-config --variable=fmoddir "ftshim-$flavour" | sed "s|^$tmp/root||")
if [ -n "${MPITEST_MPIFC:-}" ] && [ -f "$FT_BUILDDIR/fortran/mpif-ext.h" ]; then
	[ -f "$fmoddir/mpif-ext.h" ] || { echo "pkgconfig.sh: fmoddir $fmoddir has no mpif-ext.h" >&2; exit 1; }
fi
# The installed ftshim-info finds the installed library from where it
# runs (under DESTDIR here, not the configured prefix), with this file.
info=$(find "$tmp/root" -name ftshim-info -path '*/bin/*' -type f)
[ -n "$info" ] || { echo "pkgconfig.sh: no ftshim-info installed in a bin directory" >&2; exit 1; }
find "$tmp/root" -name ftshim-info.1 -path '*/man1/*' | grep -q . ||
	{ echo "pkgconfig.sh: no ftshim-info.1 installed in a man1 directory" >&2; exit 1; }
find "$tmp/root" -name ftshim-rts.3 -path '*/man3/*' | grep -q . ||
	{ echo "pkgconfig.sh: no ftshim-rts.3 installed in a man3 directory" >&2; exit 1; }
timeout -k 5 30 "$info" >"$tmp/info.out" 2>&1 ||
	{ cat "$tmp/info.out" >&2; echo "pkgconfig.sh: the installed ftshim-info failed" >&2; exit 1; }
preload_real=$(cd "$(dirname "$preload")" && pwd -P)/libftshim.so
pc_real=$(cd "$(dirname "$pc")" && pwd -P)/$(basename "$pc")
grep -qxF "$flavour: $preload_real" "$tmp/info.out" && grep -qxF "  pkg-config: ftshim-$flavour ($pc_real)" "$tmp/info.out" ||
	{ cat "$tmp/info.out" >&2; echo "pkgconfig.sh: the installed ftshim-info does not list $preload_real with $pc_real" >&2; exit 1; }
echo "pkgconfig.sh: ftshim-$flavour.pc: $cflags $libs; preload and fmoddir installed; ftshim-info finds them"
