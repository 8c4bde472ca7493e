#!/usr/bin/env bash
# sim_agree.sh: the agreement protocol (src/agreement.c) under tools/sim,
# no MPI: many seeds of one agreement with members (coordinators among
# them) killed at random rounds, some of their last messages lost, and
# each survivor learning each death at its own time. Every survivor must
# decide, and decide the same (the simulator exits 1 otherwise, saying
# why). The seeds are fixed, so a failure is reproduced by the line it
# prints: tools/sim --agree=N --kill=K --seed=S.
set -euo pipefail

sim=${FT_BUILDDIR:-.}/tools/sim
[ -x "$sim" ] || { echo "sim_agree.sh: $sim is missing; build first" >&2; exit 1; }

failed=0 runs=0
for cfg in "16 1" "64 1" "64 4" "64 16" "1024 4"; do
	set -- $cfg
	for seed in $(seq 1 300); do
		runs=$((runs + 1))
		if ! out=$(timeout -k 5 60 "$sim" --agree="$1" --kill="$2" --seed="$seed" 2>&1); then
			failed=$((failed + 1))
			echo "FAIL: tools/sim --agree=$1 --kill=$2 --seed=$seed: $(head -n 1 <<<"$out")"
		fi
	done
done
echo "sim_agree.sh: $runs agreements simulated, $failed failed"
[ "$failed" = 0 ]
