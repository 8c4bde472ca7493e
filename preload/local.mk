# preload/: what makes libftshim.so a preloadable library: the version
# script that exports only MPI_*, MPIX_* and ftshim_*.

EXTRA_DIST += preload/libftshim.map
include_HEADERS += include/ftshim.h
