# preload/: what makes libftshim.so a preloadable library: its start-up
# (the constructor that supervises Hydra's ranks, the wrapper of
# __libc_start_main that keeps the restart point), glibc's file calls
# that give a replica its own copies of the program's files, and the
# version script
# that exports only MPI_*, MPIX_*, ftshim_* and that.

libftshim_la_SOURCES += preload/preload.c preload/restart_point.c preload/restart_point.h \
	preload/replica_files.c preload/replica_files.h

EXTRA_DIST += preload/libftshim.map
include_HEADERS += include/ftshim.h
