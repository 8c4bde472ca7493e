# tools/: programs for the build and for developers, not installed.

# Prints the FTSHIM_* table for the README and the man page.
noinst_PROGRAMS += tools/config-doc
tools_config_doc_SOURCES = tools/config-doc.c
tools_config_doc_LDADD = src/libftcore.la
