# scripts/: ftshim-inject, the command that kills or pauses the ranks of a
# running job from outside (a source file, installed as is).
bin_SCRIPTS += scripts/ftshim-inject
EXTRA_DIST += scripts/ftshim-inject

# ftshim-timeline: draws a job report (report.json) as an SVG timeline
# (Python 3, standard library only; a source file, installed as is).
bin_SCRIPTS += scripts/ftshim-timeline
EXTRA_DIST += scripts/ftshim-timeline
