# examples/: programs users build with their own mpicc (dev/demo does).
EXTRA_DIST += examples/demo.c dev/setup dev/test dev/demo dev/lib.sh .ci/run
