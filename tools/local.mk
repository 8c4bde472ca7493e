# tools/: programs for the build and for developers (not installed), and
# ftshim-info (installed).

# Prints the FTSHIM_* table for the README and the man page.
noinst_PROGRAMS += tools/config-doc
tools_config_doc_SOURCES = tools/config-doc.c
tools_config_doc_LDADD = src/libftcore.la

# Drives the failure detector (src/detector.c) for up to 1M simulated
# ranks: flooding cost per broadcast kind, and host loss with and without
# ring shuffling; the revocation's flood (src/spread.c); and one agreement
# (src/agreement.c) with members killed on the way. tools/sim --table
# prints the README's tables.
noinst_PROGRAMS += tools/sim
tools_sim_SOURCES = tools/sim.c
tools_sim_LDADD = src/libftcore.la

# ftshim-info: the installed command that lists what ftshim is installed
# here (version, each MPI's library and launch lines, the FTSHIM_* table)
# and, with --check, checks this environment and node. It finds the
# libraries from where it runs, through the configured bindir and libdir.
bin_PROGRAMS += tools/ftshim-info
tools_ftshim_info_SOURCES = tools/ftshim-info.c
tools_ftshim_info_CPPFLAGS = $(AM_CPPFLAGS) -DFT_BINDIR='"$(bindir)"' -DFT_LIBDIR='"$(libdir)"'
tools_ftshim_info_LDADD = src/libftcore.la
