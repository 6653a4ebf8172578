#!/bin/sh
# valgrind.sh — memcheck over the commands users run most: any error or definite/indirect leak
# fails. Usage: sh tests/valgrind.sh bin/tierplan
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! command -v valgrind >/dev/null 2>&1; then
	echo "valgrind: not installed (apt-get install valgrind); skipped"
	exit 0
fi
printf '{"base": {"model": "8b", "seq": 2048}, "grid": {"gpus": [1, 2], "policy": ["gpu", "tiered"]}}' >"$tmp/grid.json"
fail=0
run() {
	if valgrind -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite,indirect \
		"$bin" "$@" >/dev/null 2>"$tmp/vg"; then
		:
	elif [ $? -eq 9 ]; then
		fail=$((fail + 1))
		echo "FAIL: valgrind tierplan $*"
		head -20 "$tmp/vg"
	fi
}
run plan --model 70b --seq 4096
run compare --model 8b --seq 2048 --format json
run simulate --model 70b --seq 4096 --batch 4 --gpus 1 --policy tiered --dram 256GiB --trace "$tmp/t.json"
run simulate --model 70b --seq 4096 --gpus 16 --tp 4 --pp 2 --zero 3
run sweep --grid "$tmp/grid.json" --threads 2
run plan --model "$tmp/missing.json" --seq 1
echo "valgrind: $((6 - fail)) of 6 runs clean"
[ "$fail" -eq 0 ]
