#!/usr/bin/env bash
# timeline.sh: ftshim-timeline on synthetic job reports, no MPI. A report
# with every kind of event, one with failed ranks, missing ranks and an
# event of a rank the job does not have, and a minimal one must each give
# exit 0, the path on stdout, and an SVG that parses as XML with one lane
# label per rank, a red cross per failed rank and one element with a
# <title> per event; --from/--to must leave out the events outside the
# range. A spares job's report (FTSHIM_SPARES: substitution, checkpoint,
# restore, and the duplicate "rank" key of its substitution) must draw
# each kind with its own mark, tooltip and legend entry, no warning, on
# the lane of the process that wrote it. Every mistake must exit 2 with one line on stderr, print nothing
# on stdout, and leave no file behind (nor touch an existing output).
set -euo pipefail

srcdir=${FT_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
tl=$srcdir/scripts/ftshim-timeline
[ -x "$tl" ] || { echo "timeline.sh: $tl is missing or not executable" >&2; exit 1; }
if ! command -v python3 >/dev/null 2>&1; then
	echo "timeline.sh: no python3 here; skipped"
	exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# run ARGS...: ftshim-timeline, bounded; $RC, $OUT, $ERR (files).
OUT=$tmp/out ERR=$tmp/err
run() {
	set +e
	timeout -k 5 30 "$tl" "$@" >"$OUT" 2>"$ERR"
	RC=$?
	set -e
}

py() {
	timeout -k 5 30 python3 "$@"
}

# What a picture holds, one "key=value" line each: lanes (the lane labels,
# comma-separated), crosses, events (elements in the events group with a
# <title> child), untitled (marks there without one), kinds (KIND:N,...),
# noevents (lanes marked "(no events)").
cat >"$tmp/inspect.py" <<'EOF'
import sys
import xml.dom.minidom

doc = xml.dom.minidom.parse(sys.argv[1])
def text(node):
    return "".join(c.data for c in node.childNodes if c.nodeType == c.TEXT_NODE)
def titled(node):
    return any(c.nodeType == c.ELEMENT_NODE and c.tagName == "title" for c in node.childNodes)
groups = {g.getAttribute("id"): g for g in doc.getElementsByTagName("g") if g.getAttribute("id")}
lanes = [text(t) for t in doc.getElementsByTagName("text") if t.getAttribute("class") == "lane-label"]
crosses = [p for p in groups["failures"].getElementsByTagName("path") if p.getAttribute("class") == "cross"]
events = untitled = 0
kinds = {}
for g in groups["events"].getElementsByTagName("g"):
    for m in g.childNodes:
        if m.nodeType != m.ELEMENT_NODE:
            continue
        if titled(m):
            events += 1
            kinds[g.getAttribute("class")] = kinds.get(g.getAttribute("class"), 0) + 1
        else:
            untitled += 1
noevents = sum(1 for t in doc.getElementsByTagName("text") if text(t) == "(no events)")
print("lanes=" + ",".join(lanes))
print(f"crosses={len(crosses)}")
print(f"events={events}")
print(f"untitled={untitled}")
print("kinds=" + ",".join(f"{k}:{v}" for k, v in sorted(kinds.items())))
print(f"noevents={noevents}")
EOF

# lane_of.py SVG CLASS: the lane label of each mark of CLASS in the events
# group, one line each in drawing order (the label whose baseline is
# nearest the middle of the mark).
cat >"$tmp/lane_of.py" <<'EOF'
import re, sys
import xml.dom.minidom

doc = xml.dom.minidom.parse(sys.argv[1])
def text(node):
    return "".join(c.data for c in node.childNodes if c.nodeType == c.TEXT_NODE)
labels = [(float(t.getAttribute("y")), text(t)) for t in doc.getElementsByTagName("text")
          if t.getAttribute("class") == "lane-label"]
def middle(m):
    if m.tagName == "circle":
        return float(m.getAttribute("cy"))
    if m.tagName == "rect":
        return float(m.getAttribute("y")) + float(m.getAttribute("height")) / 2
    ys, cmd, args = [], None, []
    for tok in re.findall(r"[MLHVZ]|-?[0-9.]+", m.getAttribute("d")):
        if tok.isalpha():
            cmd, args = tok, []
            continue
        args.append(float(tok))
        if cmd in ("M", "L") and len(args) == 2:
            ys.append(args[1])
            args = []
        elif cmd == "V":
            ys.append(args[0])
            args = []
        elif cmd == "H":
            args = []
    return (min(ys) + max(ys)) / 2
events = [g for g in doc.getElementsByTagName("g") if g.getAttribute("id") == "events"][0]
for g in events.getElementsByTagName("g"):
    if g.getAttribute("class") != sys.argv[2]:
        continue
    for m in g.childNodes:
        if m.nodeType == m.ELEMENT_NODE:
            y = middle(m)
            print(min(labels, key=lambda l: abs(l[0] - y))[1])
EOF

# The events of REPORT that fall in [FROM, TO] (a bar when any part of it
# does), with a rank of the job; and its lane labels.
cat >"$tmp/expect.py" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
lo = float(sys.argv[2]) if len(sys.argv) > 2 else -1e300
hi = float(sys.argv[3]) if len(sys.argv) > 3 else 1e300
n = 0
for e in r.get("events", []):
    if not 0 <= e["rank"] < r["ranks"]:
        continue
    start = e["t"] - e.get("duration_ms", 0) / 1000 if e["kind"] in ("agree", "shrink") else e["t"]
    if e["t"] >= lo and start <= hi:
        n += 1
print(f"events={n}")
print("lanes=" + ",".join(f"rank {i}" for i in range(r["ranks"])))
EOF

# field NAME FILE: the value of NAME= in FILE.
field() {
	sed -n "s/^$1=//p" "$2"
}

# check_picture WHAT SVG REPORT CROSSES [FROM TO]: the SVG parses, has
# the report's lanes, CROSSES crosses, and one titled mark per event.
check_picture() {
	local what=$1 svg=$2 report=$3 crosses=$4
	shift 4
	py -c 'import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])' "$svg" ||
		fail "$what: $svg does not parse as XML"
	py "$tmp/inspect.py" "$svg" >"$tmp/have"
	py "$tmp/expect.py" "$report" "$@" >"$tmp/want"
	[ "$(field lanes "$tmp/have")" = "$(field lanes "$tmp/want")" ] ||
		fail "$what: lane labels '$(field lanes "$tmp/have")', expected '$(field lanes "$tmp/want")'"
	[ "$(field crosses "$tmp/have")" = "$crosses" ] ||
		fail "$what: $(field crosses "$tmp/have") red crosses, expected $crosses"
	[ "$(field events "$tmp/have")" = "$(field events "$tmp/want")" ] ||
		fail "$what: $(field events "$tmp/have") marks with a title, expected $(field events "$tmp/want") ($(field kinds "$tmp/have"))"
	[ "$(field untitled "$tmp/have")" = 0 ] || fail "$what: $(field untitled "$tmp/have") marks without a title"
}

expect_ok() {
	local what=$1
	shift
	run "$@"
	[ "$RC" = 0 ] || { cat "$OUT" "$ERR" >&2; fail "$what: exit $RC, expected 0 ($*)"; }
	[ ! -s "$ERR" ] || { cat "$ERR" >&2; fail "$what: something on stderr"; }
}

# --- a report with every kind of event (and text that needs escaping) -----
mkdir "$tmp/full"
cat >"$tmp/full/report.json" <<'EOF'
{
  "ftshim_report": 1,
  "job": "a1b2c3d4e5f6",
  "program": "/path/to/prog <&> \"x\"",
  "ranks": 4,
  "reported_by": 0,
  "hosts": ["vm", "vm", "node-b", "node-b"],
  "start_unix": 1795312345.123456,
  "end_s": 3.21,
  "failed": [2],
  "finished": [0, 1, 3],
  "missing_ranks": [],
  "failures": [
    {"rank": 2, "host": "node-b", "how": "SIGKILL", "failed_s": 1.2, "detection": "crash",
     "detected_by": 3, "detected_s": 1.2021, "all_knew_s": 1.205, "injected": true}
  ],
  "events": [
    {"t": 3.2, "rank": 0, "kind": "finalize"},
    {"t": 1.2, "rank": 2, "kind": "injection", "how": "SIGKILL", "by": "FTSHIM_INJECT \"rank=2 at=point:iteration:5\"", "trigger": ""},
    {"t": 1.2021, "rank": 3, "kind": "detection", "failed": 2, "how": "crash", "detected_by": 3},
    {"t": 1.2040, "rank": 0, "kind": "notification", "failed": 2, "detected_by": 3, "told_by": 3},
    {"t": 1.20401, "rank": 1, "kind": "notification", "failed": 2, "detected_by": 3, "told_by": 0},
    {"t": 1.3, "rank": 0, "kind": "error", "call": "MPI_Recv", "error": "MPI_ERR_PROC_FAILED", "site": "wait <for> & \"neighbour\"\u0001 (report.c:40) \u00e9\u2713"},
    {"t": 1.31, "rank": 0, "kind": "revoke", "comm": "0x1f00", "by": 0},
    {"t": 1.32, "rank": 0, "kind": "agree", "comm": "0x1f00", "flag": 1, "result": "MPI_SUCCESS", "duration_ms": 0.4},
    {"t": 1.33, "rank": 0, "kind": "shrink", "comm": "0x1f00", "new_comm": "0x2a00", "size": 3, "duration_ms": 1.1},
    {"t": 1.5, "rank": 1, "kind": "rebalance", "note": "a kind from a newer ftshim"},
    {"t": 0, "rank": 3, "kind": "dropped", "count": 12},
    {"t": 3.1, "rank": 1, "kind": "finalize"},
    {"t": 3.15, "rank": 3, "kind": "finalize"}
  ]
}
EOF
expect_ok "full report" "$tmp/full/report.json"
[ "$(cat "$OUT")" = "$tmp/full/report.svg" ] || { cat "$OUT"; fail "full report: stdout is not the path written"; }
[ -s "$tmp/full/report.svg" ] || fail "full report: no $tmp/full/report.svg"
check_picture "full report" "$tmp/full/report.svg" "$tmp/full/report.json" 1
py "$tmp/inspect.py" "$tmp/full/report.svg" >"$tmp/have"
[ "$(field kinds "$tmp/have")" = "agree:1,detection:1,error:1,finalize:3,injection:1,notification:2,other:2,revoke:1,shrink:1" ] ||
	fail "full report: marks by kind: $(field kinds "$tmp/have")"
grep -qF 'MPI_Recv returned MPI_ERR_PROC_FAILED' "$tmp/full/report.svg" || fail "full report: the error's tooltip"
echo "ok: full report: 4 lanes, 1 cross, 13 marks with a title, every kind"
! grep -qF 'replica promoted' "$tmp/full/report.svg" || fail "full report: the legend has replication's marks"

# --- a replicated job (FTSHIM_REPLICAS): a promotion and a replica lost ----
mkdir "$tmp/repl"
cat >"$tmp/repl/report.json" <<'EOF'
{
  "ftshim_report": 1, "job": "b1b2c3d4e5f6", "program": "/bin/app", "ranks": 6, "reported_by": 1,
  "hosts": ["vm", "vm", "vm", "vm", "vm", "vm"], "start_unix": 1795312345.0, "end_s": 2.0,
  "failed": [0, 5], "finished": [1, 2, 3, 4], "missing_ranks": [],
  "failures": [
    {"rank": 0, "host": "vm", "how": "SIGKILL", "failed_s": 0.34, "detection": "crash", "detected_by": 1,
     "detected_s": 0.346, "all_knew_s": 0.347, "injected": true, "carried_on_by": 4},
    {"rank": 5, "host": "vm", "how": "SIGKILL", "failed_s": 0.35, "detection": "crash", "detected_by": 3,
     "detected_s": 0.3499, "all_knew_s": 0.35, "injected": true, "replica_of": 1, "carried_on_by": 1}
  ],
  "events": [
    {"t": 0.348, "rank": 4, "kind": "promotion", "program_rank": 0, "primary": 0, "after_ms": 1.351},
    {"t": 0.3505, "rank": 1, "kind": "replica_lost", "program_rank": 1, "replica": 5}
  ]
}
EOF
expect_ok "replicated report" "$tmp/repl/report.json"
py "$tmp/inspect.py" "$tmp/repl/report.svg" >"$tmp/have"
[ "$(field kinds "$tmp/have")" = "promotion:1,replica_lost:1" ] ||
	fail "replicated report: marks by kind: $(field kinds "$tmp/have")"
grep -qF 'rank 4: replica promoted to carry rank 0 on, its primary (rank 0) lost, at 0.348000 s, 1.35 ms after the loss was known here' \
	"$tmp/repl/report.svg" || fail "replicated report: the promotion's tooltip"
grep -qF 'rank 1: the replica of rank 1 (rank 5) is gone, rank 1 goes on alone' "$tmp/repl/report.svg" ||
	fail "replicated report: the lost replica's tooltip"
grep -qF '>replica promoted<' "$tmp/repl/report.svg" && grep -qF '>a replica lost<' "$tmp/repl/report.svg" ||
	fail "replicated report: the legend lacks replication's marks"
echo "ok: replicated report: a promotion and a lost replica, in the legend"

# --- a job with spares (FTSHIM_SPARES=2: 6 processes, 4 program ranks) -------
# The report of "ckpt_calls 100 --kib 64" (tests/mpi: spares_ckpt) under
# Open MPI, rank 2 killed at its 35th MPI_Sendrecv: spare 0 (process 4)
# takes rank 2 and every rank goes back to checkpoint 3. Trimmed:
# checkpoints 1, 3 and 4 of each rank only, and without the "death" event
# (its supervisor's, a kind drawn as "other"). The substitution's line is
# as ftshim writes it, with two "rank" keys: the process that wrote it (4),
# then the program rank it took (2).
mkdir "$tmp/spares"
cat >"$tmp/spares/report.json" <<'EOF'
{
  "ftshim_report": 1,
  "job": "c33140513a21",
  "program": "/build/openmpi/tests/mpi/out/bin/ckpt_calls",
  "ranks": 6,
  "reported_by": 0,
  "start_unix": 1795925790.535086,
  "end_s": 1.301243,
  "hosts": ["vm", "vm", "vm", "vm", "vm", "vm"],
  "failed": [2],
  "finished": [0, 1, 3, 4, 5],
  "readmitted": [],
  "missing_ranks": [],
  "lost_hosts": [],
  "missing_hosts": [],
  "failures": [
    {"rank": 2, "host": "vm", "how": "SIGKILL", "failed_s": 1.088281, "detection": "crash", "detected_by": 4, "detected_s": 1.092694, "all_knew_s": 1.093324, "injected": true}
  ],
  "events": [
    {"t":1.017998,"rank":3,"kind":"checkpoint","version":10,"number":1,"bytes":65608,"buddy":0,"wait_ms":5.111,"copy_ms":0.300},
    {"t":1.078981,"rank":3,"kind":"checkpoint","version":30,"number":3,"bytes":65608,"buddy":0,"wait_ms":0.016,"copy_ms":1.016},
    {"t":1.093324,"rank":3,"kind":"notification","failed":2,"how":"crash","detected_by":4,"told_by":4,"failed_s":1.092604},
    {"t":1.099022,"rank":3,"kind":"restore","version":30,"number":3,"from":3,"bytes":65608,"agree_ms":1.654,"copy_ms":0.001},
    {"t":1.123764,"rank":3,"kind":"checkpoint","version":40,"number":4,"bytes":65608,"buddy":0,"wait_ms":0.199,"copy_ms":0.736},
    {"t":1.265929,"rank":3,"kind":"finalize"},
    {"t":1.020428,"rank":1,"kind":"checkpoint","version":10,"number":1,"bytes":65608,"buddy":2,"wait_ms":0.178,"copy_ms":7.596},
    {"t":1.078423,"rank":1,"kind":"checkpoint","version":30,"number":3,"bytes":65608,"buddy":2,"wait_ms":0.225,"copy_ms":0.423},
    {"t":1.093019,"rank":1,"kind":"notification","failed":2,"how":"crash","detected_by":4,"told_by":5,"failed_s":1.092604},
    {"t":1.099111,"rank":1,"kind":"restore","version":30,"number":3,"from":1,"bytes":65608,"agree_ms":2.115,"copy_ms":0.006},
    {"t":1.123378,"rank":1,"kind":"checkpoint","version":40,"number":4,"bytes":65608,"buddy":4,"wait_ms":0.353,"copy_ms":0.334},
    {"t":1.265602,"rank":1,"kind":"finalize"},
    {"t":1.092694,"rank":4,"kind":"detection","failed":2,"how":"crash","detected_by":4,"failed_s":1.092604},
    {"t":1.097669,"rank":4,"kind":"substitution","rank":2,"lost":2,"by":4,"spare":0,"repair":1,"repair_ms":0.804},
    {"t":1.100611,"rank":4,"kind":"restore","version":30,"number":3,"from":3,"bytes":65608,"agree_ms":1.340,"copy_ms":1.587},
    {"t":1.124714,"rank":4,"kind":"checkpoint","version":40,"number":4,"bytes":65608,"buddy":3,"wait_ms":0.464,"copy_ms":1.548},
    {"t":1.266074,"rank":4,"kind":"finalize"},
    {"t":1.020325,"rank":0,"kind":"checkpoint","version":10,"number":1,"bytes":65608,"buddy":1,"wait_ms":0.013,"copy_ms":7.447},
    {"t":1.078059,"rank":0,"kind":"checkpoint","version":30,"number":3,"bytes":65608,"buddy":1,"wait_ms":0.219,"copy_ms":0.014},
    {"t":1.093324,"rank":0,"kind":"notification","failed":2,"how":"crash","detected_by":4,"told_by":1,"failed_s":1.092604},
    {"t":1.098638,"rank":0,"kind":"restore","version":30,"number":3,"from":0,"bytes":65608,"agree_ms":1.411,"copy_ms":0.001},
    {"t":1.123430,"rank":0,"kind":"checkpoint","version":40,"number":4,"bytes":65608,"buddy":1,"wait_ms":0.177,"copy_ms":0.342},
    {"t":1.262095,"rank":0,"kind":"finalize"},
    {"t":1.092866,"rank":5,"kind":"notification","failed":2,"how":"crash","detected_by":4,"told_by":4,"failed_s":1.092604},
    {"t":1.300149,"rank":5,"kind":"finalize"},
    {"t":1.088281,"rank":2,"kind":"injection","how":"SIGKILL","by":"FTSHIM_INJECT \"rank=2 at=call:MPI_Sendrecv:35\"","trigger":"after call 35 of MPI_Sendrecv"}
  ]
}
EOF
# No warning (expect_ok: nothing on stderr) and no kind drawn as "other".
expect_ok "spares report" "$tmp/spares/report.json"
svg=$tmp/spares/report.svg
check_picture "spares report" "$svg" "$tmp/spares/report.json" 1
py "$tmp/inspect.py" "$svg" >"$tmp/have"
[ "$(field kinds "$tmp/have")" = "checkpoint:10,detection:1,finalize:5,injection:1,notification:4,restore:4,substitution:1" ] ||
	fail "spares report: marks by kind: $(field kinds "$tmp/have")"
for want in \
	'spare 0 (process 4) takes rank 2 from process 2 at 1.097669 s; every rank runs main again (repair 1, 804 µs)' \
	'rank 3: checkpoint 3 (version 30) at 1.078981 s: 64.1 KiB, copied in 1.02 ms, kept by process 0 (waited 16 µs for the previous one)' \
	'rank 3: checkpoint 1 (version 10) at 1.017998 s: 64.1 KiB, copied in 300 µs, kept by process 0<' \
	'rank 3: back to version 30 (checkpoint 3) at 1.099022 s: own copy; agreed in 1.65 ms' \
	'rank 4 (spare 0, as rank 2): back to version 30 (checkpoint 3) at 1.100611 s: copy of 64.1 KiB fetched from process 3 in 1.59 ms; agreed in 1.34 ms' \
	'rank 4 (spare 0, as rank 2): checkpoint 4 (version 40) at 1.124714 s: 64.1 KiB, copied in 1.55 ms, kept by process 3 (waited 464 µs for the previous one)' \
	'rank 4 on vm: MPI_Finalize at 1.266074 s; spare 0, took rank 2 at 1.097669 s' \
	'>spare took a rank<' '>checkpoint<' '>back to a checkpoint<'; do
	grep -qF -- "$want" "$svg" || fail "spares report: not in the picture: $want"
done
! grep -qF '>other event<' "$svg" || fail "spares report: a kind drawn as \"other\" (the legend has 'other event')"
# The substitution on the lane of the process that wrote it (the first
# "rank"), not on the program rank's (the second, which JSON's usual
# last-wins reading takes): rank 2's lane ended at its failure.
[ "$(py "$tmp/lane_of.py" "$svg" substitution)" = "rank 4" ] ||
	fail "spares report: the substitution is on the lane of '$(py "$tmp/lane_of.py" "$svg" substitution)', expected rank 4"
[ "$(py "$tmp/lane_of.py" "$svg" restore | sort | tr '\n' ,)" = "rank 0,rank 1,rank 3,rank 4," ] ||
	fail "spares report: restores on the lanes $(py "$tmp/lane_of.py" "$svg" restore | tr '\n' ' ')"
echo "ok: spares report: a substitution, 10 checkpoints, 4 restores, each with its mark, tooltip and legend entry"

# The same kinds written otherwise: a substitution whose report kept one
# "rank", the program's (as a JSON tool's rewrite would), and one that
# names it "program_rank"; a restore to the beginning (no checkpoint
# whole); a checkpoint no other process keeps; a re-admission.
mkdir "$tmp/spares2"
cat >"$tmp/spares2/report.json" <<'EOF'
{"ftshim_report": 1, "job": "d1d2c3d4e5f6", "program": "/bin/app", "ranks": 6, "end_s": 1.0,
 "failed": [1, 3], "finished": [0, 2, 4, 5],
 "failures": [{"rank": 1, "failed_s": 0.4}, {"rank": 3, "failed_s": 0.55}],
 "events": [
  {"t": 0.5, "rank": 1, "kind": "substitution", "lost": 1, "by": 5, "spare": 1, "repair": 2, "repair_ms": 3.4},
  {"t": 0.6, "rank": 4, "kind": "substitution", "program_rank": 3, "lost": 3, "by": 4, "spare": 0, "repair": 3, "repair_ms": 1.25},
  {"t": 0.7, "rank": 0, "kind": "restore", "version": -1, "number": 0, "from": -1, "bytes": 0, "agree_ms": 0.9, "copy_ms": 0.0},
  {"t": 0.2, "rank": 2, "kind": "checkpoint", "version": 7, "number": 2, "bytes": 1572864, "buddy": -1, "wait_ms": 0.05, "copy_ms": 2.5},
  {"t": 0.8, "rank": 0, "kind": "readmission", "readmitted": 1, "readmitted_by": 2}
 ]}
EOF
expect_ok "spares report, other forms" "$tmp/spares2/report.json"
svg=$tmp/spares2/report.svg
check_picture "spares report, other forms" "$svg" "$tmp/spares2/report.json" 2
py "$tmp/inspect.py" "$svg" >"$tmp/have"
[ "$(field kinds "$tmp/have")" = "checkpoint:1,readmission:1,restore:1,substitution:2" ] ||
	fail "spares report, other forms: marks by kind: $(field kinds "$tmp/have")"
for want in \
	'spare 1 (process 5) takes rank 1 from process 1 at 0.500000 s; every rank runs main again (repair 2, 3.4 ms)' \
	'spare 0 (process 4) takes rank 3 from process 3 at 0.600000 s; every rank runs main again (repair 3, 1.25 ms)' \
	'rank 0: back to the beginning at 0.700000 s: no checkpoint that every rank has a copy of, main runs from its start; agreed in 900 µs' \
	'rank 2: checkpoint 2 (version 7) at 0.200000 s: 1.5 MiB, copied in 2.5 ms, kept by no other process (waited 50 µs for the previous one)' \
	'rank 0: rank 1 re-admitted at 0.800000 s (heard by rank 2)' '>rank re-admitted<'; do
	grep -qF -- "$want" "$svg" || fail "spares report, other forms: not in the picture: $want"
done
[ "$(py "$tmp/lane_of.py" "$svg" substitution | tr '\n' ,)" = "rank 5,rank 4," ] ||
	fail "spares report, other forms: substitutions on the lanes $(py "$tmp/lane_of.py" "$svg" substitution | tr '\n' ' ')"
echo "ok: spares report, other forms: one \"rank\" or \"program_rank\", back to the beginning, a re-admission"

# -o, --width, --title.
expect_ok "-o --width --title" "$tmp/full/report.json" -o "$tmp/full/wide.svg" --width 2000 --title 'a <title> & more'
[ "$(cat "$OUT")" = "$tmp/full/wide.svg" ] || fail "-o: stdout is not the path written"
grep -q 'width="2000"' "$tmp/full/wide.svg" || fail "--width 2000: not in the picture"
grep -qF 'a &lt;title&gt; &amp; more' "$tmp/full/wide.svg" || fail "--title: not in the picture, escaped"
check_picture "-o --width --title" "$tmp/full/wide.svg" "$tmp/full/report.json" 1
echo "ok: -o, --width, --title"

# --from/--to: only what happened from 1.2035 s to 1.31 s (two
# notifications, the error, the revoke), and a range in microseconds.
expect_ok "--from --to" "$tmp/full/report.json" -o "$tmp/full/zoom.svg" --from 1.2035s --to 1.31s
check_picture "--from --to" "$tmp/full/zoom.svg" "$tmp/full/report.json" 0 1.2035 1.31
py "$tmp/inspect.py" "$tmp/full/zoom.svg" >"$tmp/have"
[ "$(field kinds "$tmp/have")" = "error:1,notification:2,revoke:1" ] ||
	fail "--from 1.2035s --to 1.31s: marks by kind: $(field kinds "$tmp/have")"
! grep -q 'rank 0: MPI_Finalize at' "$tmp/full/zoom.svg" || fail "--from --to: a finalize outside the range is drawn"
expect_ok "--from --to with units" "$tmp/full/report.json" -o "$tmp/full/zoom2.svg" --from=1203999us --to 1204.02ms
check_picture "--from --to with units" "$tmp/full/zoom2.svg" "$tmp/full/report.json" 0 1.203999 1.20402
py "$tmp/inspect.py" "$tmp/full/zoom2.svg" >"$tmp/have"
[ "$(field kinds "$tmp/have")" = "notification:2" ] || fail "--from 1203999us --to 1204.02ms: $(field kinds "$tmp/have")"
expect_ok "--from alone" "$tmp/full/report.json" -o "$tmp/full/zoom3.svg" --from 1.32s
check_picture "--from alone" "$tmp/full/zoom3.svg" "$tmp/full/report.json" 0 1.32
echo "ok: --from/--to keep only the events in the range"

# --- failed ranks, missing ranks, an event of no rank of the job ------------
mkdir "$tmp/failed"
cat >"$tmp/failed/job.json" <<'EOF'
{"ftshim_report": 1, "job": "0123456789ab", "program": "/bin/app", "ranks": 6,
 "hosts": ["n1", "n1", "n1", "n1", "n2", "n2"], "start_unix": 1795312345.5, "end_s": 2.5,
 "failed": [1, 3], "finished": [0, 2], "missing_ranks": [4, 5],
 "failures": [
  {"rank": 1, "host": "n1", "how": "SIGKILL", "failed_s": 0.8, "detection": "crash", "detected_by": 0, "detected_s": 0.8004, "all_knew_s": 0.801, "injected": "ftshim-inject \"kill 1\""},
  {"rank": 3, "host": "n1", "how": "heartbeat", "failed_s": 1.5, "detection": "heartbeat timeout", "detected_by": 2, "detected_s": 1.9, "all_knew_s": 1.95}
 ],
 "events": [
  {"t": 0.8, "rank": 1, "kind": "injection", "how": "SIGKILL", "by": "ftshim-inject"},
  {"t": 0.8004, "rank": 0, "kind": "detection", "failed": 1, "how": "crash", "detected_by": 0},
  {"t": 0.8008, "rank": 2, "kind": "notification", "failed": 1, "detected_by": 0, "told_by": 0},
  {"t": 1.9, "rank": 2, "kind": "detection", "failed": 3, "how": "heartbeat timeout", "detected_by": 2},
  {"t": 1.95, "rank": 0, "kind": "notification", "failed": 3, "detected_by": 2, "told_by": 2},
  {"t": 1.0, "rank": 9, "kind": "error", "call": "MPI_Send", "error": "MPI_ERR_PROC_FAILED"},
  {"t": 2.4, "rank": 0, "kind": "finalize"},
  {"t": 2.45, "rank": 2, "kind": "finalize"}
 ]}
EOF
run "$tmp/failed/job.json"
[ "$RC" = 0 ] || { cat "$ERR" >&2; fail "failed ranks: exit $RC"; }
[ "$(cat "$OUT")" = "$tmp/failed/job.svg" ] || fail "failed ranks: stdout is not the path written"
[ "$(wc -l <"$ERR")" = 1 ] && grep -qE '^ftshim-timeline: warning: 1 event ignored: .*0 to 5' "$ERR" ||
	{ cat "$ERR" >&2; fail "failed ranks: not one warning line about the event of rank 9"; }
check_picture "failed ranks" "$tmp/failed/job.svg" "$tmp/failed/job.json" 2
py "$tmp/inspect.py" "$tmp/failed/job.svg" >"$tmp/have"
[ "$(field noevents "$tmp/have")" = 2 ] || fail "failed ranks: $(field noevents "$tmp/have") lanes marked (no events), expected 2"
echo "ok: failed ranks: 6 lanes, 2 crosses, 2 lanes without events, 7 marks, a warning: $(cat "$ERR")"

# --- only the required keys ----------------------------------------------------
mkdir "$tmp/min"
printf '{"ftshim_report": 1, "ranks": 3}\n' >"$tmp/min/report"
expect_ok "minimal report" "$tmp/min/report"
[ "$(cat "$OUT")" = "$tmp/min/report.svg" ] || fail "minimal report: stdout is not $tmp/min/report.svg"
check_picture "minimal report" "$tmp/min/report.svg" "$tmp/min/report" 0
echo "ok: minimal report: 3 lanes, no marks"

run --help
[ "$RC" = 0 ] && grep -q '^Usage:' "$OUT" || fail "--help: exit $RC"

# --- mistakes -------------------------------------------------------------------
mkdir "$tmp/bad"
cp "$tmp/full/report.json" "$tmp/bad/good.json"
printf '{"ftshim_report": 1, "ranks": 2, "events": [\n' >"$tmp/bad/truncated.json"
printf '{"job": "a1b2c3d4e5f6", "ranks": 2}\n' >"$tmp/bad/other.json"
printf '{"ftshim_report": 2, "ranks": 2}\n' >"$tmp/bad/newer.json"
printf '{"ftshim_report": 1, "ranks": "four"}\n' >"$tmp/bad/ranks.json"
printf 'not json at all\n' >"$tmp/bad/text.json"
: >"$tmp/bad/afile"
printf 'keep\n' >"$tmp/bad/existing.svg"

# expect_error WHAT PATTERN ARGS...: exit 2, nothing on stdout, one line on
# stderr that starts "ftshim-timeline: " and matches PATTERN (grep -E), no
# file added to or changed in $tmp/bad.
expect_error() {
	local what=$1 pattern=$2
	shift 2
	(cd "$tmp/bad" && ls -A && cat existing.svg) >"$tmp/before"
	run "$@"
	[ "$RC" = 2 ] || { cat "$OUT" "$ERR" >&2; fail "$what: exit $RC, expected 2 ($*)"; }
	[ ! -s "$OUT" ] || { cat "$OUT" >&2; fail "$what: something on stdout"; }
	[ "$(wc -l <"$ERR")" = 1 ] || { cat "$ERR" >&2; fail "$what: not one line on stderr"; }
	grep -q '^ftshim-timeline: ' "$ERR" || { cat "$ERR" >&2; fail "$what: stderr does not start with 'ftshim-timeline: '"; }
	grep -qE -- "$pattern" "$ERR" || { cat "$ERR" >&2; fail "$what: stderr does not match: $pattern"; }
	(cd "$tmp/bad" && ls -A && cat existing.svg) | cmp -s - "$tmp/before" ||
		{ ls -A "$tmp/bad" >&2; fail "$what: a file was left or changed in $tmp/bad"; }
	echo "ok: $what: $(cat "$ERR")"
}

cd "$tmp/bad"
expect_error "missing report" "cannot read nothing\.json: No such file" nothing.json
expect_error "a directory as report" "cannot read" "$tmp/bad"
expect_error "not JSON" "text\.json is not JSON \(.*line 1 column 1\); accepted: " text.json
expect_error "truncated JSON" "truncated\.json is not JSON" truncated.json
expect_error "not an ftshim report" "other\.json is not an ftshim job report \(no \"ftshim_report\" key\); accepted: .*\"ftshim_report\": 1" other.json
expect_error "another report format" "newer\.json is not an ftshim job report .*\"ftshim_report\": 2" newer.json
expect_error "ranks not a number" "ranks\.json .*\"ranks\": four.*accepted: " ranks.json
expect_error "bad --width" "--width wide: not a width; accepted: a whole number of pixels from 400 to 20000" good.json --width wide
expect_error "--width too small" "--width 10: not a width" good.json --width 10
expect_error "bad --from" "--from soon: not a time; accepted: a time since the job's start with its unit" good.json --from soon
expect_error "--from without a unit" "--from 1\\.2: no unit; accepted: a time since the job's start with its unit us, ms or s \\(1\\.2s for seconds, as the log's stamps are, 1\\.2ms for milliseconds\\)$" good.json --from 1.2
expect_error "bad --to" "--to 1e3: not a time; accepted: " good.json --to 1e3
expect_error "--to before --from" "--from 2s --to 1s: empty time range; accepted: " good.json --from 2s --to 1s
expect_error "--from equal to --to" "--from 1.5s --to 1500ms: empty time range" good.json --from 1.5s --to 1500ms
expect_error "--from after the end" "--from 10s: empty time range: the report ends at 3.21 s" good.json --from 10s
expect_error "--to before the start" "--to 0: empty time range" good.json --to 0
expect_error "output in no directory" "cannot write $tmp/bad/nodir/x\.svg: No such file or directory; accepted: " good.json -o "$tmp/bad/nodir/x.svg"
expect_error "output under a file" "cannot write $tmp/bad/afile/x\.svg: Not a directory" good.json -o "$tmp/bad/afile/x.svg"
expect_error "output a directory" "cannot write $tmp/bad: it is a directory" good.json -o "$tmp/bad"
expect_error "output the report" "good\.json is the report itself" good.json -o good.json
expect_error "error keeps an existing output" "--to 0: empty time range" good.json -o existing.svg --to 0
expect_error "no report" "no report given" --width 800
expect_error "two reports" "one report at a time" good.json other.json
expect_error "unknown option" "unknown option --colour" good.json --colour red
expect_error "option twice" "--width given twice" good.json --width 800 --width 900
expect_error "option without value" "-o needs a value" good.json -o
cd /

echo "timeline.sh: all checks passed"
