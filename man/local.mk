# man/: the manual pages. ftshim.7 carries the FTSHIM_* table, generated
# from src/config_vars.h by tools/config-doc.

mpix_man3 = \
	man/MPIX_Comm_failure_ack.3 man/MPIX_Comm_failure_get_acked.3 \
	man/MPIX_Comm_get_failed.3 man/MPIX_Comm_ack_failed.3 \
	man/MPIX_Comm_revoke.3 man/MPIX_Comm_is_revoked.3 \
	man/MPIX_Comm_agree.3 man/MPIX_Comm_iagree.3 \
	man/MPIX_Comm_shrink.3 man/MPIX_Comm_ishrink.3
man_MANS += man/ftshim.7 man/ftshim.3 $(mpix_man3)
EXTRA_DIST += man/ftshim.7.in man/ftshim.3 $(mpix_man3)
man_MANS += man/ftshim-inject.1
EXTRA_DIST += man/ftshim-inject.1
man_MANS += man/ftshim-timeline.1
EXTRA_DIST += man/ftshim-timeline.1
man_MANS += man/ftshim-info.1
EXTRA_DIST += man/ftshim-info.1
man_MANS += man/ftshim-rts.3
EXTRA_DIST += man/ftshim-rts.3
CLEANFILES += man/ftshim.7

man/ftshim.7: $(srcdir)/man/ftshim.7.in tools/config-doc$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) man && \
	tools/config-doc$(EXEEXT) --man > $@.table && \
	sed -e '/@CONFIG_TABLE@/{r $@.table' -e 'd;}' \
	    -e 's|@VERSION@|$(VERSION)|g' -e 's|@FTSHIMLIBDIR@|$(ftshimlibdir)|g' \
	    $(srcdir)/man/ftshim.7.in > $@.tmp && \
	rm -f $@.table && mv $@.tmp $@
