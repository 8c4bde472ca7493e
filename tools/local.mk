# tools/: programs for the build and for developers, not installed.

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
