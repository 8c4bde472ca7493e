# scripts/: ftshim-inject, the command that kills or pauses the ranks of a
# running job from outside (a source file, installed as is).
bin_SCRIPTS += scripts/ftshim-inject
EXTRA_DIST += scripts/ftshim-inject
