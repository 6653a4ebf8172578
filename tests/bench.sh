#!/bin/sh
# bench.sh — the simulator benchmark (build/bench: engine events/s, one 70B step per policy,
# configurations/s), whole `plan` runs (process start, catalogs, search, render; median of N
# wall times) and `sweep` over the 530B grid of tests/bench/530b-grid.json on one and two
# threads, and on two with --unfit skip (best of three whole processes: configurations/s),
# merged into bench.json.
# Usage: sh tests/bench.sh bin/tierplan build/bench bench.json
bin=$1 sim=$2 out=$3 n=${N:-11}

median_ms() {
	i=0
	while [ $i -lt "$n" ]; do
		t0=$(date +%s%N)
		"$bin" "$@" >/dev/null || exit 4
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000))
		i=$((i + 1))
	done | sort -n | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)]/1000}'
}

core=$("$sim") || exit 4
p70=$(median_ms plan --model 70b --seq 4096 --format json)
p405=$(median_ms plan --model 405b --seq 8192 --format json)
rss=$( { /usr/bin/time -f '%M' "$bin" plan --model 405b --seq 8192 >/dev/null; } 2>&1 | tail -1)
grid=tests/bench/530b-grid.json
points=$(($("$bin" sweep --grid "$grid" --threads 1 | wc -l) - 1))
# best_ms THREADS [FLAGS]: the fastest of three sweeps over the grid, milliseconds
best_ms() {
	for i in 1 2 3; do
		t0=$(date +%s%N)
		"$bin" sweep --grid "$grid" --threads "$@" >/dev/null || exit 4
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000000))
	done | sort -n | head -1
}
s1=$(best_ms 1)
s2=$(best_ms 2)
s2skip=$(best_ms 2 --unfit skip)
srss=$( { /usr/bin/time -f '%M' "$bin" sweep --grid "$grid" --threads 2 >/dev/null; } 2>&1 | tail -1)
{
	echo "$core" | sed '$d'
	cat <<JSON
  ,"plan_70b_seq4096_seconds": $(echo "$p70" | awk '{print $1/1000}'),
  "plan_seconds": $(echo "$p405" | awk '{print $1/1000}'),
  "plan_what": "plan --model 405b --seq 8192, median wall time of a whole process",
  "rss_bytes": $((${rss:-0} * 1024)),
  "sweep_530b_points": $points,
  "sweep_530b_configs_per_second_1_thread": $(awk -v p="$points" -v ms="$s1" 'BEGIN {printf "%.0f", p / (ms / 1000)}'),
  "sweep_530b_configs_per_second_2_threads": $(awk -v p="$points" -v ms="$s2" 'BEGIN {printf "%.0f", p / (ms / 1000)}'),
  "sweep_530b_configs_per_second_2_threads_unfit_skip": $(awk -v p="$points" -v ms="$s2skip" 'BEGIN {printf "%.0f", p / (ms / 1000)}'),
  "sweep_rss_bytes": $((${srss:-0} * 1024)),
  "runs": $n
}
JSON
} >"$out"
cat "$out"
