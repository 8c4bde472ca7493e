#!/usr/bin/env bash
# sim_agree.sh: the agreement protocol (src/agreement.c) under tools/sim,
# no MPI: many seeds of one agreement with members (coordinators among
# them) killed at random rounds, some of their last messages lost, and
# each survivor learning each death at its own time, with messages taking
# one round, or up to --jitter rounds more (never overtaking an earlier one
# between the same two members, as on TCP). Every survivor must
# decide, and decide the same (the simulator exits 1 otherwise, saying
# why). The seeds are fixed, so a failure is reproduced by the line it
# prints: tools/sim --agree=N --kill=K --jitter=J --seed=S.
set -euo pipefail

sim=${FT_BUILDDIR:-.}/tools/sim
[ -x "$sim" ] || { echo "sim_agree.sh: $sim is missing; build first" >&2; exit 1; }

failed=0 runs=0
# members killed jitter seeds
for cfg in "16 1 0 300" "64 1 0 300" "64 4 0 300" "64 16 0 300" "1024 4 0 300" \
	"64 4 3 300" "256 8 4 100"; do
	set -- $cfg
	for seed in $(seq 1 "$4"); do
		runs=$((runs + 1))
		if ! out=$(timeout -k 5 60 "$sim" --agree="$1" --kill="$2" --jitter="$3" --seed="$seed" 2>&1); then
			failed=$((failed + 1))
			echo "FAIL: tools/sim --agree=$1 --kill=$2 --jitter=$3 --seed=$seed: $(head -n 1 <<<"$out")"
		fi
	done
done
echo "sim_agree.sh: $runs agreements simulated, $failed failed"
[ "$failed" = 0 ]
