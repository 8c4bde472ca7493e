# examples/: programs users build with their own mpicc (dev/demo does).
EXTRA_DIST += $(wildcard $(srcdir)/examples/*.c) $(wildcard $(srcdir)/examples/*.h) dev/setup dev/test dev/demo dev/lib.sh .ci/run
