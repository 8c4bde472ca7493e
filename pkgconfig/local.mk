# pkgconfig/: ftshim-FLAVOUR.pc, so that build systems (pkg-config,
# CMake's pkg_check_modules, Meson, Autotools' PKG_CHECK_MODULES) find
# ftshim's headers and this MPI's library without written-out paths. One
# file per MPI, so that both builds can share a prefix; configure makes
# pkgconfig/ftshim.pc (its paths stay relative to ${prefix}).

pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = pkgconfig/ftshim-$(MPI_FLAVOUR).pc
EXTRA_DIST += pkgconfig/ftshim.pc.in
CLEANFILES += pkgconfig/ftshim-$(MPI_FLAVOUR).pc

pkgconfig/ftshim-$(MPI_FLAVOUR).pc: pkgconfig/ftshim.pc
	$(AM_V_GEN)cp pkgconfig/ftshim.pc $@

# A program built with what the installed file says: see tests/pkgconfig.sh.
TESTS += tests/pkgconfig.sh
EXTRA_DIST += tests/pkgconfig.sh
