#!/bin/sh
# bench.sh — wall time of whole `plan` runs (process start, catalog loading, search, render),
# median of N runs each, written to bench.json. Usage: sh tests/bench.sh bin/tierplan bench.json
bin=$1 out=$2 n=${N:-21}

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

p70=$(median_ms plan --model 70b --seq 4096 --format json)
p405=$(median_ms plan --model 405b --seq 8192 --format json)
cat >"$out" <<JSON
{
  "plan_70b_seq4096_ms": $p70,
  "plan_405b_seq8192_ms": $p405,
  "runs": $n,
  "statistic": "median wall time of a whole process"
}
JSON
cat "$out"
