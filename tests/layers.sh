#!/bin/sh
# layers.sh — the arrows of the source tree: cli -> validate/reports -> sim -> model, never back
# up (validate may use reports to draw its charts; reports never reaches validate). Also the
# step builder stays below sim_run: sim/step.*, sim/engine.* and sim/pol_*.c do not include
# sim.h or plan.h. Usage: sh tests/layers.sh (from the repository root)
pass=0 fail=0
allowed() { # folder of the includer -> folders it may include
	case $1 in
	model) echo "model" ;;
	sim) echo "sim model" ;;
	reports) echo "reports sim model" ;;
	validate) echo "validate reports sim model" ;;
	cli) echo "cli validate reports sim model" ;;
	esac
}
for dir in model sim reports validate cli; do
	for f in "$dir"/*.c "$dir"/*.h; do
		[ -f "$f" ] || continue
		for inc in $(sed -n 's/^#include "\(.*\)".*/\1/p' "$f"); do
			case $inc in
			../*) target=$(echo "$inc" | sed 's|^\.\./\([^/]*\)/.*|\1|') ;;
			*) target=$dir ;;
			esac
			if echo " $(allowed "$dir") " | grep -q " $target "; then
				pass=$((pass + 1))
			else
				fail=$((fail + 1))
				echo "FAIL: $f includes $inc: $dir/ may include only $(allowed "$dir")"
			fi
		done
	done
done
for f in sim/step.c sim/step.h sim/engine.c sim/engine.h sim/workload.h sim/pol_*.c; do
	if grep -q '^#include "\(sim\|plan\)\.h"' "$f"; then
		fail=$((fail + 1))
		echo "FAIL: $f includes sim.h or plan.h: the step builder sits below sim_run"
	else
		pass=$((pass + 1))
	fi
done
echo "layers: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
