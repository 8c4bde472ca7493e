# examples/manager_worker.c, a ULFM bag of tasks: with no failure (also
# without the shim), with one worker killed holding a task, killed idle
# mid-run, killed idle before it ever got a task, several killed at
# different points, every worker killed (the manager finishes alone), and
# two workers chosen at random with a seed. Each time the manager must
# report every task completed once, the known checksum and exactly the
# workers killed, and every other worker must stop normally.
#
# Kills use the program's inject points, "task:N" (a worker's Nth task,
# which it dies holding) and "idle:N" (after returning N results), never
# times: which worker fails and in what state does not depend on load.
prog=$(build example/manager_worker)
rundir="FTSHIM_RUNDIR=$MPITEST_WORKDIR/run"
answer='checksum 142913828922 (148933 primes below 2000000)'

# run_mw MODE NP TASKS [INJECT]: run the example on NP ranks.
run_mw() {
	local -a env=("$rundir")
	[ -z "${4:-}" ] || env+=("FTSHIM_INJECT=$4")
	run_job "$1" "$2" "${env[@]}" -- "$prog" "$3"
}

# check_mw MODE NP TASKS LOST HOLDING [INJECT]: check the job just run.
# LOST: the workers that must be reported lost ("none", or 1,3); HOLDING:
# those of them that must be reported dying with a task (re-queued), "-"
# if none.
check_mw() {
	local mode=$1 np=$2 tasks=$3 lost=$4 holding=$5 inject=${6:-}
	local what="${inject:-no failure} ($mode, $np ranks)"
	if [ "$lost" = none ]; then expect_rc 0; else expect_killed_rc; fi
	grep -qxF "manager_worker: $tasks tasks, each completed once, $answer; workers lost: $lost" "$OUT" || {
		cat "$OUT" >&2
		grep -v ' info: ' "$ERR" | tail -n 20 >&2
		fail "$what: not the expected result line (workers lost: $lost)"
	}
	# The program's complaints, and the shim's errors (not Open MPI's
	# "PMIX ERROR" noise after a death).
	if grep -E '^manager_worker(: .*(FAILED|ERROR|giving up)|\[)' "$OUT" "$ERR" >&2 ||
		grep -E 'ftshim\[[0-9]+\] \+[0-9.]+ error: ' "$ERR" >&2; then
		fail "$what: errors reported"
	fi
	local w
	for w in $(seq 1 $((np - 1))); do
		case ",$lost," in
		*",$w,"*)
			! grep -q "^manager_worker: worker $w stopped after" "$OUT" || fail "$what: worker $w was to die, and stopped normally"
			;;
		*)
			grep -q "^manager_worker: worker $w stopped after [0-9]* task(s)$" "$OUT" || {
				cat "$OUT" >&2
				fail "$what: survivor $w did not stop normally"
			}
			;;
		esac
	done
	for w in ${holding//,/ }; do
		[ "$w" = - ] && continue
		grep -qE "^manager_worker: worker $w failed holding task [0-9]+; re-queued$" "$OUT" || {
			cat "$OUT" >&2
			fail "$what: the manager did not re-queue worker $w's task"
		}
	done
	note "$what: lost $lost; $(sed -n 's/^manager_worker: \(.*re-queued,.*\)/\1/p' "$OUT")"
}

# mw MODE NP TASKS LOST HOLDING [INJECT]: run and check.
mw() {
	run_mw "$1" "$2" "$3" "${6:-}"
	check_mw "$@"
}

# No failure: with the shim, and without it (no ULFM call is made then).
mw shim 5 100 none -
mw plain 5 100 none -

# One worker killed holding its 3rd task.
mw shim 5 100 2 2 "rank=2 at=point:task:3"

# One killed idle, just after returning its 2nd result: the manager has
# usually sent it the next task already (then it is re-queued), but need
# not have.
mw shim 6 100 3 - "rank=3 at=point:idle:2"

# Idle for good: 3 tasks for 5 workers, so ranks 4 and 5 never get one;
# rank 5 dies before its first receive. Nothing to re-queue; the manager
# finds it during the work or, at the latest, when it says goodbye.
mw shim 6 3 5 - "rank=5 at=point:idle:0"
grep -qxF 'manager_worker: 0 task(s) re-queued, 0 late result(s) ignored, 0 done by the manager' "$OUT" ||
	{ cat "$OUT" >&2; fail "an idle worker's death re-queued a task"; }

# Several, at different points: holding its 2nd task, idle after 5
# results, holding its 9th.
mw shim 6 100 1,4,5 1,5 "rank=1 at=point:task:2; rank=4 at=point:idle:5; rank=5 at=point:task:9"

# Every worker: the manager does what is left itself.
mw shim 4 100 1,2,3 1,2,3 "rank=1-3 at=point:task:3"
grep -q '^manager_worker: no worker left; the manager does the [0-9]* remaining task(s)$' "$OUT" ||
	{ cat "$OUT" >&2; fail "the manager did not finish alone"; }

# Two random ranks, each at its 3rd task. random:K may choose rank 0, the
# manager (whose loss is out of scope); seed 2 chooses ranks 2 and 4 of
# 6. The expected list is read from the plan rank 0 logs, so a change in
# the draw is caught here rather than mistaken for a wrong answer.
inject="rank=random:2 at=point:task:3 seed=2"
run_mw shim 6 100 "$inject"
plan=$(sed -n "s/.* info: FTSHIM_INJECT \"$inject\": SIGKILL for ranks \([0-9,]*\)$/\1/p" "$ERR")
plan=$(echo "$plan" | tr , '\n' | sort -n | paste -sd, -)
[ -n "$plan" ] || { tail -n 20 "$ERR" >&2; fail "rank 0 did not log the plan of $inject"; }
case ",$plan," in *,0,*) fail "$inject chooses rank 0, the manager ($plan): choose another seed" ;; esac
check_mw shim 6 100 "$plan" "$plan" "$inject"

expect_no_leftovers manager_worker
