# src/: the MPI-free core, built once per build directory into a
# convenience library that the shim and the unit tests link.

noinst_LTLIBRARIES += src/libftcore.la
src_libftcore_la_SOURCES = \
	src/clock.c src/clock.h \
	src/comm_table.c src/comm_table.h \
	src/common.h \
	src/config.c src/config.h src/config_vars.h \
	src/detector.c src/detector.h \
	src/engine.c src/engine.h \
	src/frame.c src/frame.h \
	src/hash.h \
	src/inject.c src/inject.h \
	src/log.c src/log.h \
	src/overlay.c src/overlay.h \
	src/proc_table.c src/proc_table.h \
	src/ring.c src/ring.h \
	src/supervisor.c src/supervisor.h
src_libftcore_la_LIBADD = -lm
