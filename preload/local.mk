# preload/: what makes libftshim.so a preloadable library: its start-up
# (the constructor that supervises Hydra's ranks) and the version script
# that exports only MPI_*, MPIX_* and ftshim_*.

libftshim_la_SOURCES += preload/preload.c

EXTRA_DIST += preload/libftshim.map
include_HEADERS += include/ftshim.h
