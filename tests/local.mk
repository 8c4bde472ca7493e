# tests/: unit tests of the core (Check), checks of the built library and
# its docs, and the MPI integration driver that runs real jobs on the
# configured MPI.

FT_UNIT_TESTS = \
	tests/unit/check_agreement \
	tests/unit/check_callsite \
	tests/unit/check_ckpt_disk \
	tests/unit/check_ckpt_link \
	tests/unit/check_ckpt_store \
	tests/unit/check_clock \
	tests/unit/check_coll_sched \
	tests/unit/check_comm_table \
	tests/unit/check_config \
	tests/unit/check_detector \
	tests/unit/check_fdio \
	tests/unit/check_frame \
	tests/unit/check_inject \
	tests/unit/check_log \
	tests/unit/check_mailbox \
	tests/unit/check_overlay \
	tests/unit/check_pmi \
	tests/unit/check_pmix \
	tests/unit/check_proc_table \
	tests/unit/check_prune \
	tests/unit/check_rank_map \
	tests/unit/check_repl_log \
	tests/unit/check_replica_plan \
	tests/unit/check_spare_plan \
	tests/unit/check_report \
	tests/unit/check_ring \
	tests/unit/check_shadow_files \
	tests/unit/check_shm_fifo \
	tests/unit/check_spread

check_PROGRAMS += $(FT_UNIT_TESTS)
FT_UNIT_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
FT_UNIT_LDADD = src/libftcore.la $(CHECK_LIBS)

tests_unit_check_agreement_SOURCES = tests/unit/check_agreement.c
tests_unit_check_agreement_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_agreement_LDADD = $(FT_UNIT_LDADD)
# -g: the test checks the file:line of its own calls.
tests_unit_check_callsite_SOURCES = tests/unit/check_callsite.c
tests_unit_check_callsite_CFLAGS = $(FT_UNIT_CFLAGS) -g
tests_unit_check_callsite_LDADD = $(FT_UNIT_LDADD)
tests_unit_check_ckpt_link_SOURCES = tests/unit/check_ckpt_link.c
tests_unit_check_ckpt_link_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_ckpt_link_LDADD = $(FT_UNIT_LDADD)
tests_unit_check_clock_SOURCES = tests/unit/check_clock.c
tests_unit_check_clock_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_clock_LDADD = $(FT_UNIT_LDADD)
tests_unit_check_comm_table_SOURCES = tests/unit/check_comm_table.c
tests_unit_check_comm_table_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_comm_table_LDADD = $(FT_UNIT_LDADD)
tests_unit_check_config_SOURCES = tests/unit/check_config.c
tests_unit_check_config_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_config_LDADD = $(FT_UNIT_LDADD)
tests_unit_check_detector_SOURCES = tests/unit/check_detector.c
tests_unit_check_detector_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_detector_LDADD = $(FT_UNIT_LDADD)
tests_unit_check_frame_SOURCES = tests/unit/check_frame.c
tests_unit_check_frame_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_frame_LDADD = $(FT_UNIT_LDADD)
tests_unit_check_inject_SOURCES = tests/unit/check_inject.c
tests_unit_check_inject_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_inject_LDADD = $(FT_UNIT_LDADD)
tests_unit_check_mailbox_SOURCES = tests/unit/check_mailbox.c
tests_unit_check_mailbox_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_mailbox_LDADD = $(FT_UNIT_LDADD)
tests_unit_check_overlay_SOURCES = tests/unit/check_overlay.c
tests_unit_check_overlay_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_overlay_LDADD = $(FT_UNIT_LDADD)
tests_unit_check_pmi_SOURCES = tests/unit/check_pmi.c
tests_unit_check_pmi_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_pmi_LDADD = $(FT_UNIT_LDADD)
tests_unit_check_fdio_SOURCES = tests/unit/check_fdio.c
tests_unit_check_fdio_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_fdio_LDADD = $(FT_UNIT_LDADD)
tests_unit_check_pmix_SOURCES = tests/unit/check_pmix.c
tests_unit_check_pmix_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_pmix_LDADD = $(FT_UNIT_LDADD)
tests_unit_check_shm_fifo_SOURCES = tests/unit/check_shm_fifo.c
tests_unit_check_shm_fifo_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_shm_fifo_LDADD = $(FT_UNIT_LDADD)
tests_unit_check_prune_SOURCES = tests/unit/check_prune.c
tests_unit_check_prune_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_prune_LDADD = $(FT_UNIT_LDADD)
tests_unit_check_coll_sched_SOURCES = tests/unit/check_coll_sched.c
tests_unit_check_coll_sched_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_coll_sched_LDADD = $(FT_UNIT_LDADD)
tests_unit_check_rank_map_SOURCES = tests/unit/check_rank_map.c
tests_unit_check_rank_map_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_rank_map_LDADD = $(FT_UNIT_LDADD)
tests_unit_check_shadow_files_SOURCES = tests/unit/check_shadow_files.c
tests_unit_check_shadow_files_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_shadow_files_LDADD = $(FT_UNIT_LDADD)
tests_unit_check_repl_log_SOURCES = tests/unit/check_repl_log.c
tests_unit_check_repl_log_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_repl_log_LDADD = $(FT_UNIT_LDADD)
tests_unit_check_replica_plan_SOURCES = tests/unit/check_replica_plan.c
tests_unit_check_replica_plan_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_replica_plan_LDADD = $(FT_UNIT_LDADD)
tests_unit_check_ckpt_disk_SOURCES = tests/unit/check_ckpt_disk.c
tests_unit_check_ckpt_disk_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_ckpt_disk_LDADD = $(FT_UNIT_LDADD)
tests_unit_check_ckpt_store_SOURCES = tests/unit/check_ckpt_store.c
tests_unit_check_ckpt_store_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_ckpt_store_LDADD = $(FT_UNIT_LDADD)
tests_unit_check_spare_plan_SOURCES = tests/unit/check_spare_plan.c
tests_unit_check_spare_plan_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_spare_plan_LDADD = $(FT_UNIT_LDADD)
tests_unit_check_report_SOURCES = tests/unit/check_report.c
tests_unit_check_report_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_report_LDADD = $(FT_UNIT_LDADD)
tests_unit_check_ring_SOURCES = tests/unit/check_ring.c
tests_unit_check_ring_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_ring_LDADD = $(FT_UNIT_LDADD)
tests_unit_check_spread_SOURCES = tests/unit/check_spread.c
tests_unit_check_spread_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_spread_LDADD = $(FT_UNIT_LDADD)
tests_unit_check_log_SOURCES = tests/unit/check_log.c
tests_unit_check_log_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_log_LDADD = $(FT_UNIT_LDADD)
tests_unit_check_proc_table_SOURCES = tests/unit/check_proc_table.c
tests_unit_check_proc_table_CFLAGS = $(FT_UNIT_CFLAGS)
tests_unit_check_proc_table_LDADD = $(FT_UNIT_LDADD)

TESTS += $(FT_UNIT_TESTS)

# The built library exports only (P)MPI_*, (P)MPIX_* and ftshim_* symbols,
# and every function the table says is wrapped, under both names.
TESTS += tests/symbols.sh
EXTRA_DIST += tests/symbols.sh

# Every function the MPI exports (C and Fortran bindings) is classified
# in pmpi/ftshim-api.tsv, and every wrapped one reaches ftshim.
TESTS += tests/api_complete.py
EXTRA_DIST += tests/api_complete.py

# ftshim-inject against a fake run directory: its errors, kill, pause, clean.
TESTS += tests/inject_cmd_errors.sh
EXTRA_DIST += tests/inject_cmd_errors.sh

# ftshim-timeline on synthetic reports: lanes, marks, zoom, its errors.
TESTS += tests/timeline.sh
EXTRA_DIST += tests/timeline.sh

# ftshim-info from the build directory: the listing against the FTSHIM_*
# table, --check's lines (sane, each kind of problem), its usage errors.
TESTS += tests/info.sh
EXTRA_DIST += tests/info.sh

# The layout rules of pmpi/ (recovery modes behind their contract, one
# rank module, small files in a mode's folder).
TESTS += tests/layout.sh
EXTRA_DIST += tests/layout.sh

# pmpi/'s modules depend on one another without a circle (includes and
# the symbols their objects need).
TESTS += tests/acyclic.sh
EXTRA_DIST += tests/acyclic.sh tools/deps.py

# The agreement protocol under the simulator, many seeds (no MPI).
TESTS += tests/sim_agree.sh
EXTRA_DIST += tests/sim_agree.sh

# The MPI integration driver: real jobs with this build's MPI. It runs
# after every other test, alone: its jobs run more processes than a
# 2-core machine has cores, and a unit test beside them made some jobs
# several times slower (a Jacobi job of 8 ranks, 10 s alone, passed its
# 60 s limit beside one busy process).
TESTS += tests/mpi/driver
# (The log's name through a variable: a prerequisite without a recipe,
# which Automake would take for an override of its rule.)
FT_DRIVER_LOG = tests/mpi/driver.log
$(FT_DRIVER_LOG): $(filter-out $(FT_DRIVER_LOG),$(TEST_LOGS))
EXTRA_DIST += tests/mpi/driver tests/mpi/lib.sh tests/mpi/stacks tests/mpi/sanitizer.supp tests/mpi/netns.sh tests/mpi/netns-agent tests/mpi/netns-delay \
	tests/mpi/slurm.sh $(wildcard $(srcdir)/tests/mpi/progs/*.py) \
	$(wildcard $(srcdir)/tests/mpi/cases/*.sh) \
	$(wildcard $(srcdir)/tests/mpi/progs/*.c) $(wildcard $(srcdir)/tests/mpi/progs/*.h) \
	$(wildcard $(srcdir)/tests/mpi/progs/*.F90) $(wildcard $(srcdir)/tests/mpi/progs/*.cpp)

AM_TESTS_ENVIRONMENT = \
	export MPITEST_FLAVOUR='$(MPI_FLAVOUR)' MPITEST_MPICC='$(MPICC)' \
	MPITEST_MPIFC='$(MPIFC)' MPITEST_FORTRAN_INC='$(FT_FORTRAN_INC)' \
	MPITEST_MPIEXEC='$(MPIEXEC)' MPITEST_SHIM='$(abs_top_builddir)/.libs/libftshim.so' \
	MPITEST_OUTDIR='$(abs_top_builddir)/tests/mpi/out' \
	MPITEST_SANITIZER='$(FT_SANITIZER)' MPITEST_SAN_RUNTIME='$(FT_SAN_RUNTIME)' \
	MPITEST_SAN_SUPP='$(abs_top_srcdir)/tests/mpi/sanitizer.supp' \
	FT_BUILDDIR='$(abs_top_builddir)' FT_SRCDIR='$(abs_top_srcdir)' NM='$(NM)';

clean-local: clean-mpitest
clean-mpitest:
	rm -rf tests/mpi/out tests/mpi/matrix-*.md tests/fuzz/fuzz_frame tests/fuzz/fuzz_frame_cov tests/fuzz/artifacts
.PHONY: clean-mpitest

# The README's and the man page's FTSHIM_* tables match the parser's.
TESTS += tests/docs.sh
EXTRA_DIST += tests/docs.sh
check_SCRIPTS += man/ftshim.7

# The frame parser under libFuzzer (clang), for a bounded time; skipped
# where clang's fuzzer runtime is missing.
TESTS += tests/fuzz.sh
EXTRA_DIST += tests/fuzz.sh tests/fuzz/fuzz_frame.c
