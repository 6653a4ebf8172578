#!/bin/sh
# tsan.sh — sweep on several threads under ThreadSanitizer: catalogs, prices and the configs
# directory are read concurrently by every worker, and nothing they share may be written; then
# plan, whose GPU-only and host-tier searches run as tasks on one worker per online CPU.
# Usage: sh tests/tsan.sh build/tsan/bin/tierplan (from the repository root)
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TIERPLAN_CONFIGS="${TIERPLAN_CONFIGS:-$(pwd)/configs}"
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1"
cat >"$tmp/grid.json" <<EOF2
{"base": {"seq": 1024, "prices": "$TIERPLAN_CONFIGS/prices.json"},
 "grid": {"model": ["8b", "llama-2-7b", "mistral-7b", "qwen2.5-7b"], "gpus": [1, 2, 4],
          "policy": ["gpu", "zero-offload", "tiered"]}}
EOF2
# JSON lines: each row's ranges read the accuracy record, shared by the workers
"$bin" sweep --grid "$tmp/grid.json" --threads 4 --format jsonl >"$tmp/out.jsonl" 2>"$tmp/err"
rc=$?
rows=$(wc -l <"$tmp/out.jsonl")
if [ "$rc" -ne 0 ] || [ "$rows" -ne 36 ] || grep -q "cannot open" "$tmp/out.jsonl" ||
	! grep -q '"ranges":{"category"' "$tmp/out.jsonl"; then
	echo "tsan: sweep on 4 threads: exit $rc, $rows rows of 36"
	head -c 3000 "$tmp/err"
	grep "cannot open" "$tmp/out.jsonl" | head -3
	echo "tsan: 0 passed, 1 failed"
	exit 1
fi
if ! "$bin" plan --model 8b --seq 2048 --gpu rtx4090 --host workstation-4gpu >"$tmp/plan" 2>"$tmp/err"; then
	echo "tsan: plan's search: exit $?"
	head -c 3000 "$tmp/err"
	echo "tsan: 1 passed, 1 failed"
	exit 1
fi
echo "tsan: 2 passed, 0 failed (36 points on 4 threads; plan's searches on $(nproc) workers; no data race)"
