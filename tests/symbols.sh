#!/bin/sh
# symbols.sh: libftshim.so exports exactly the MPI/MPIX functions that the
# table says are wrapped, each under its PMPI_/PMPIX_ name too, the ULFM
# calls' Fortran bindings (mpix_*_, mpix_*_f08_ and mpix_*_ulfm_f08_, one
# of each per ULFM call), the public ftshim_* API and, built for MPICH,
# UCX's ucp_worker_progress (pmpi/ucx_yield.c), glibc's
# __libc_start_main (its wrapper keeps the restart point) and
# pthread_create (its wrapper counts the program's threads, both in
# preload/restart_point.c), glibc's calls that name a file (a replica's
# own copies, preload/replica_files.c), and nothing else (no
# internal ft_/ftp_ symbol).
set -eu
lib="$FT_BUILDDIR/.libs/libftshim.so"
wrapped="$FT_BUILDDIR/pmpi/wrapped.txt"
[ -f "$lib" ] || { echo "symbols.sh: $lib not built" >&2; exit 1; }
libc_files='open open64 __open_2 __open64_2 openat openat64 __openat_2 __openat64_2 creat creat64
fopen fopen64 freopen freopen64 truncate truncate64 unlink unlinkat remove rename renameat renameat2
access faccessat stat stat64 lstat lstat64 fstatat fstatat64'
libc_re=$(echo $libc_files | sed 's/ /$|/g')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
${NM:-nm} -D --defined-only "$lib" | awk '$2 ~ /^[TtWwDdBbVvRrIi]$/ {print $3}' | sed 's/@.*//' | sort -u >"$tmp/exported"
bad=$(grep -vE '^(P?MPIX?_|ftshim_|mpix_[a-z_]+_((ulfm_)?f08_)?$|ucp_worker_progress$|__libc_start_main$|pthread_create$|'"$libc_re"'$)' "$tmp/exported" || true)
if [ -n "$bad" ]; then
	echo "symbols.sh: libftshim.so exports symbols outside (P)MPI_*, (P)MPIX_*, mpix_*_, ftshim_*, ucp_worker_progress, __libc_start_main, pthread_create, glibc's file calls:" >&2
	echo "$bad" | head -n 20 >&2
	exit 1
fi
for f in $libc_files; do
	grep -qx "$f" "$tmp/exported" || { echo "symbols.sh: glibc's $f is not wrapped (a replica's files)" >&2; exit 1; }
done
{ cat "$wrapped"; sed 's/^/P/' "$wrapped"; } | sort -u >"$tmp/wrapped"
missing=$(comm -23 "$tmp/wrapped" "$tmp/exported")
if [ -n "$missing" ]; then
	echo "symbols.sh: wrapped in the table but not exported: $missing" >&2
	exit 1
fi
extra=$(grep -E '^P?MPIX?_' "$tmp/exported" | comm -13 "$tmp/wrapped" - || true)
if [ -n "$extra" ]; then
	echo "symbols.sh: exported but not in the table as wrapped: $extra" >&2
	exit 1
fi
# The ULFM calls (MPIX_Comm_*) have their Fortran bindings.
for f in $(grep '^MPIX_Comm_' "$wrapped"); do
	lower=$(echo "$f" | tr 'A-Z' 'a-z')
	for s in "${lower}_" "${lower}_f08_" "${lower}_ulfm_f08_"; do
		grep -qx "$s" "$tmp/exported" || { echo "symbols.sh: $f has no Fortran binding $s" >&2; exit 1; }
	done
done
echo "symbols.sh: $(wc -l <"$tmp/exported") symbols exported, all expected"
