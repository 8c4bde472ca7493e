# pmpi/: the MPI wrappers, compiled against the mpi.h configure chose. The
# mechanical wrappers are generated from pmpi/ftshim-api.tsv; the
# generator fails if this mpi.h declares a function the table misses.

ftshimlibdir = $(libdir)/ftshim/$(MPI_FLAVOUR)
ftshimlib_LTLIBRARIES = libftshim.la

libftshim_la_SOURCES = \
	pmpi/agree.c pmpi/agree.h pmpi/hangwatch.c pmpi/hangwatch.h \
	pmpi/block.c \
	pmpi/call.h pmpi/call_base.h pmpi/call_record.h pmpi/block.h pmpi/create.h \
	pmpi/coll_p2p.c pmpi/coll_p2p.h \
	pmpi/view_coll.c pmpi/view_coll.h \
	pmpi/coll_forms.c pmpi/coll_forms.h \
	pmpi/spare_view.c pmpi/spare_view.h \
	pmpi/ckpt.c pmpi/ckpt.h \
	pmpi/ckpt_watch.c pmpi/ckpt_watch.h \
	pmpi/comm_health.c pmpi/comm_health.h \
	pmpi/comm_lookup.c pmpi/comm_lookup.h \
	pmpi/seam.h \
	pmpi/comms.c pmpi/comms.h \
	pmpi/cover.h \
	pmpi/complete.c pmpi/complete.h \
	pmpi/persist.c pmpi/persist.h \
	pmpi/coll_call.c pmpi/coll_call.h \
	pmpi/alltoallw.c \
	pmpi/held_msg.c pmpi/held_msg.h \
	pmpi/mpix_decls.h \
	pmpi/create.c \
	pmpi/create_group.c pmpi/create_group.h \
	pmpi/detect.c pmpi/detect.h \
	pmpi/errors.c pmpi/errors.h \
	pmpi/fortran.c \
	pmpi/hostmail.c pmpi/hostmail.h \
	pmpi/outcome.c pmpi/outcome.h \
	pmpi/shm_repair.c pmpi/shm_repair.h \
	pmpi/state.h \
	pmpi/init.c \
	pmpi/inject.c pmpi/inject.h \
	pmpi/job.c pmpi/job.h \
	pmpi/leave.c pmpi/leave.h \
	pmpi/listen.c pmpi/listen.h \
	pmpi/mode/mode.c pmpi/mode/mode.h pmpi/mode/registry.c pmpi/mode/registry.h \
	pmpi/mpi_lib.c pmpi/mpi_lib.h \
	pmpi/mode/spares/spares.c pmpi/mode/spares/spares.h \
	pmpi/restart.c pmpi/restart.h \
	pmpi/mode/replication/calls.c pmpi/mode/replication/calls.h \
	pmpi/mode/replication/cart.c pmpi/mode/replication/cart.h \
	pmpi/mode/replication/graph.c pmpi/mode/replication/graph.h \
	pmpi/mode/replication/coll.c pmpi/mode/replication/coll.h \
	pmpi/mode/replication/coll_args.c pmpi/mode/replication/coll_args.h \
	pmpi/mode/replication/coll_log.c pmpi/mode/replication/coll_log.h \
	pmpi/mode/replication/comm.c pmpi/mode/replication/comm.h \
	pmpi/mode/replication/complete.c pmpi/mode/replication/complete.h \
	pmpi/mode/replication/counts.c pmpi/mode/replication/counts.h \
	pmpi/mode/replication/hooks.c pmpi/mode/replication/hooks.h \
	pmpi/mode/replication/p2p.c pmpi/mode/replication/p2p.h \
	pmpi/mode/replication/promote.c pmpi/mode/replication/promote.h \
	pmpi/mode/replication/recv.c pmpi/mode/replication/recv.h \
	pmpi/mode/replication/runs.c pmpi/mode/replication/runs.h \
	pmpi/mode/replication/setup.c pmpi/mode/replication/setup.h \
	pmpi/mode/replication/state.c pmpi/mode/replication/state.h \
	pmpi/mode/replication/stream.c pmpi/mode/replication/stream.h \
	pmpi/mode/replication/team.c pmpi/mode/replication/team.h \
	pmpi/mode/replication/views.c pmpi/mode/replication/views.h \
	pmpi/objects.c pmpi/objects.h \
	pmpi/p2p.c pmpi/p2p.h \
	pmpi/ranks.c pmpi/ranks.h \
	pmpi/report_merge.c pmpi/report_merge.h \
	pmpi/public.c \
	pmpi/requests.c pmpi/requests.h \
	pmpi/retire.c pmpi/retire.h \
	pmpi/revoke.c pmpi/revoke.h \
	pmpi/rts.c pmpi/rts_state.c pmpi/rts_state.h \
	pmpi/rundir.c pmpi/rundir.h \
	pmpi/self_attrs.c pmpi/self_attrs.h \
	pmpi/spawn.c pmpi/spawn.h \
	pmpi/state.c \
	pmpi/ucx_yield.c pmpi/ucx_yield.h \
	pmpi/wtime.c \
	pmpi/ulfm.c pmpi/ulfm.h
nodist_libftshim_la_SOURCES = pmpi/wrappers.c pmpi/fn_table.h pmpi/mode_calls.h pmpi/mpi_entry.c \
	pmpi/mpi_entry.h
libftshim_la_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CFLAGS)
libftshim_la_LIBADD = src/libftcore.la $(MPI_LIBS)
libftshim_la_LDFLAGS = -avoid-version -shared -no-undefined \
	-Wl,--version-script=$(srcdir)/preload/libftshim.map
EXTRA_libftshim_la_DEPENDENCIES = $(srcdir)/preload/libftshim.map

BUILT_SOURCES += pmpi/wrappers.c pmpi/fn_table.h pmpi/mode_calls.h pmpi/mpi_entry.c pmpi/mpi_entry.h
CLEANFILES += pmpi/wrappers.c pmpi/fn_table.h pmpi/mode_calls.h pmpi/wrapped.txt pmpi/mpi_entry.c pmpi/mpi_entry.h pmpi/mpi-decls.i
EXTRA_DIST += pmpi/ftshim-api.tsv pmpi/gen-wrappers.py

pmpi/mpi-decls.i: Makefile $(srcdir)/pmpi/mpix_decls.h
	$(AM_V_GEN)$(MKDIR_P) pmpi && \
	echo '#include "pmpi/mpix_decls.h"' | $(CPP) -I$(srcdir) $(MPI_CFLAGS) - > $@.tmp && mv $@.tmp $@

pmpi/wrappers.c: $(srcdir)/pmpi/ftshim-api.tsv $(srcdir)/pmpi/gen-wrappers.py pmpi/mpi-decls.i
	$(AM_V_GEN)$(PYTHON) $(srcdir)/pmpi/gen-wrappers.py $(srcdir)/pmpi/ftshim-api.tsv \
		pmpi/mpi-decls.i pmpi

pmpi/fn_table.h pmpi/mode_calls.h pmpi/wrapped.txt pmpi/mpi_entry.c pmpi/mpi_entry.h: pmpi/wrappers.c
	@test -f $@ || { rm -f pmpi/wrappers.c; $(MAKE) $(AM_MAKEFLAGS) pmpi/wrappers.c; }

# The ULFM extension header, for programs written for Open MPI 5's ULFM.
ftshimincludedir = $(includedir)/ftshim
ftshiminclude_HEADERS = include/mpi-ext.h include/ftshim-rts.h include/wrap/mpi.h
