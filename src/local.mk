# src/: the MPI-free core, built once per build directory into a
# convenience library that the shim and the unit tests link.

noinst_LTLIBRARIES += src/libftcore.la
src_libftcore_la_SOURCES = \
	src/agreement.c src/agreement.h \
	src/callsite.c src/callsite.h src/callsite_python.c \
	src/ckpt_link.c src/ckpt_link.h \
	src/ckpt_disk.c src/ckpt_disk.h \
	src/ckpt_store.c src/ckpt_store.h \
	src/clock.c src/clock.h \
	src/coll_sched.c src/coll_sched.h \
	src/comm_table.c src/comm_table.h \
	src/common.h src/thread.h \
	src/config.c src/config.h src/config_vars.h \
	src/detector.c src/detector.h \
	src/engine.c src/engine.h \
	src/events.c src/events.h \
	src/fdio.c src/fdio.h \
	src/frame.c src/frame.h \
	src/hash.h \
	src/inject.c src/inject.h \
	src/log.c src/log.h \
	src/mailbox.c src/mailbox.h \
	src/overlay.c src/overlay.h \
	src/pmi.c src/pmi.h \
	src/pmix.c src/pmix.h \
	src/preflight.c src/preflight.h \
	src/proc_table.c src/proc_table.h \
	src/prune.c src/prune.h \
	src/rank_map.c src/rank_map.h \
	src/repl_log.c src/repl_log.h \
	src/replica_plan.c src/replica_plan.h \
	src/spare_plan.c src/spare_plan.h \
	src/report.c src/report.h \
	src/ring.c src/ring.h \
	src/shadow_files.c src/shadow_files.h \
	src/shm_fifo.c src/shm_fifo.h \
	src/spread.c src/spread.h \
	src/supervisor.c src/supervisor.h
# libunwind and libdw for src/callsite.c; libtool passes a convenience
# library's LIBADD on to whatever links it (the shim, tests, tools).
src_libftcore_la_CFLAGS = $(AM_CFLAGS) $(LIBUNWIND_CFLAGS) $(LIBDW_CFLAGS)
src_libftcore_la_LIBADD = -lm $(LIBUNWIND_LIBS) $(LIBDW_LIBS)
