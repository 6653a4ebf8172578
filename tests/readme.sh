#!/bin/sh
# readme.sh — every `bin/tierplan ...` line inside a ```sh block of the README must run and exit 0,
# a shown output must match what the command prints, and each figure the prose quotes (CLAIMS below)
# must be what simulate prints, so the documented examples cannot rot. Usage: sh tests/readme.sh README.md bin/tierplan
readme=$1 bin=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
pass=0 fail=0
# examples may write files (--trace): run them in a scratch directory
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TIERPLAN_CONFIGS="${TIERPLAN_CONFIGS:-$(pwd)/configs}"
cmds=$(awk '/^```sh/{on=1; next} /^```/{on=0} on && /^bin\/tierplan /{print}' "$readme")
[ -n "$cmds" ] || { echo "readme: no examples found in $readme"; exit 1; }
echo "$cmds" | {
	while IFS= read -r line; do
		args=${line#bin/tierplan }
		# shellcheck disable=SC2086
		if (cd "$work" && "$bin" $args >/dev/null 2>/tmp/readme.err.$$); then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
			echo "FAIL: $line: $(head -c 300 /tmp/readme.err.$$)"
		fi
	done
	rm -f /tmp/readme.err.$$
	# a one-command ```sh block followed by a plain ``` block shows that command's output: it
	# must be what the command prints today (regenerate it, and the prose quoting it, on change)
	awk -v dir="$work" '
		/^```sh$/ { insh = 1; n = 0; next }
		insh && /^```$/ { insh = 0; want = (n == 1); next }
		insh { if ($0 ~ /^bin\/tierplan /) { n++; cmd = $0 } ; next }
		want && /^```$/ && !inout { inout = 1; k++; f = dir "/shown." k; print cmd > (dir "/cmd." k); next }
		inout && /^```$/ { inout = 0; want = 0; close(f); next }
		inout { print > f; next }
		/^[^[:space:]]/ { want = 0 }
	' "$readme"
	for c in "$work"/cmd.*; do
		[ -e "$c" ] || continue
		k=${c##*.}
		args=$(sed 's/^bin\/tierplan //' "$c")
		# shellcheck disable=SC2086
		(cd "$work" && "$bin" $args >"$work/real.$k" 2>&1)
		if diff -u "$work/shown.$k" "$work/real.$k" >"$work/diff.$k"; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
			echo "FAIL: the README's output of '$(cat "$c")' is not what it prints now:"
			head -20 "$work/diff.$k"
		fi
	done
	# the trade-off the prose after the 70B plan spells out is the one that plan prints
	for c in "$work"/cmd.*; do
		[ "$(cat "$c")" = "bin/tierplan plan --model 70b --seq 4096" ] || continue
		real="$work/real.${c##*.}"
		said=$(awk '/^The trade-off the tool exists to show/ {on = 1} on {printf "%s ", $0}
			on && /^$/ {exit}' "$readme")
		for fig in "[0-9]* fewer GPUs" "[0-9]* % less hardware" "[0-9]* % less peak" \
			"[0-9]* % more per job" "[0-9.]*x longer"; do
			want=$(tr '\n' ' ' <"$real" | sed 's/  */ /g' | grep -o -- "$fig" | head -1)
			if [ -n "$want" ] && printf '%s' "$said" | sed 's/  */ /g' | grep -qF -- "$want"; then
				pass=$((pass + 1))
			else
				fail=$((fail + 1))
				echo "FAIL: the README's trade-off prose does not say '$want' as the 70B plan does"
			fi
		done
	done
	# the figures the README's prose quotes: its words, what the command prints of the same
	# figure today, and the command (update all three when a mechanism moves one)
	ladder="--model llama-3.2-3b --seq 4096 --batch 2 --grad-accum 1 --precision bf16"
	ladder="$ladder --recompute none --gpu a100-80g --host hgx-8gpu"
	fsdp8b="--model 8b --seq 8192 --gpus 8 --zero 3 --recompute none"
	moe="--model qwen3-30b-a3b --seq 4096 --gpus 8 --zero 3"
	eager="--model 8b --seq 4096 --grad-accum 1 --attention eager --recompute none --method lora"
	qlora="--model 8b --seq 2048 --batch 2 --grad-accum 1 --method qlora --lora-targets all"
	qlora="$qlora --pointwise eager --recompute full --gpu rtx4090"
	peft="--model mistral-7b --seq 4096 --gpu a100-80g --pointwise eager --loss full --batch 4"
	peft="$peft --recompute full --grad-accum 1 --method lora --lora-rank 16 --precision bf16"
	peft="$peft --lora-dropout 0.1 --lora-targets q,k,v,o --foreach-optimizer yes"
	loss1b="--model llama-3.2-1b --seq 4096 --batch 2 --grad-accum 1 --gpu a100-80g"
	loss1b="$loss1b --recompute none --pointwise eager"
	qhead="--model llama-3.1-8b --seq 512 --batch 2 --method qlora --precision bf16 --gpu a10g"
	qhead="$qhead --recompute none --fused-qkv yes --lora-rank 32 --lora-dropout 0.05"
	qhead="$qhead --lora-targets q,v --optimizer paged-adamw --loss chunked-output --quant nf4-legacy"
	qhead="$qhead --double-quant no --pointwise eager --graph-freed next-forward"
	foak="--model mistral-7b --seq 4096 --gpu a100-80g --batch 4 --recompute full --grad-accum 1"
	foak="$foak --method lora --lora-rank 16 --precision bf16 --lora-dropout 0.1"
	foak="$foak --lora-targets q,k,v,o --foreach-optimizer yes --lora-dtype fp32"
	gsync="--model 8b --seq 2048 --gpus 8 --grad-accum 4 --recompute full"
	epo="--model mixtral-8x7b --gpu h100-sxm --gpus 16 --tp 2 --ep 8 --zero 1 --seq 4096"
	epo="$epo --batch 1 --grad-accum 3 --recompute none --clip-grad no"
	mdp="--model qwen3-30b-a3b --gpu h100-sxm --gpus 16 --ep 16 --zero 1 --seq 4096 --batch 1"
	mdp="$mdp --grad-accum 3 --recompute none"
	sxo="--model deepseek-v2-lite --gpu h100-sxm --gpus 16 --ep 16 --zero 1 --seq 4096 --batch 1"
	sxo="$sxo --grad-accum 3 --recompute none --moe-gemm grouped"
	rmq="--model qwen3-30b-a3b --gpu h100-sxm --gpus 16 --ep 16 --zero 1 --seq 4096 --batch 1"
	rmq="$rmq --grad-accum 3 --moe-gemm grouped --recompute selective"
	while IFS='|' read -r words printed args; do
		[ -n "$words" ] || continue
		# shellcheck disable=SC2086
		out=$(cd "$work" && "$bin" simulate $args 2>&1)
		if ! grep -qF -- "$words" "$readme"; then
			fail=$((fail + 1))
			echo "FAIL: the README no longer says '$words' (update this test with it)"
		elif ! printf '%s\n' "$out" | grep -qF -- "$printed"; then
			fail=$((fail + 1))
			echo "FAIL: the README says '$words', but 'simulate $args' no longer prints" \
				"'$printed':"
			printf '%s\n' "$out" | grep -E 'step |throughput|peak memory|max_memory' | head -5
		else
			pass=$((pass + 1))
		fi
	done <<CLAIMS
19.8 s a step looped|19.82 s (|$moe
7.6 s grouped|7.64 s (|$moe --moe-gemm grouped
14.49 s a step in bf16|14.49 s (|$fsdp8b
12.41 s torchao|12.41 s (|$fsdp8b --precision fp8 --fp8-recipe torchao
11.61 s TE|11.61 s (|$fsdp8b --precision fp8 --fp8-recipe te
73.2 GiB a GPU in bf16 and torchao|GPU 73.2 GiB per GPU|$fsdp8b --precision fp8 --fp8-recipe torchao
66.6 TE|GPU 66.6 GiB per GPU|$fsdp8b --precision fp8 --fp8-recipe te
8,327 tokens/s predicted fused|8327 tokens/s|$ladder --compile no --loss full --pointwise fused
6,954 eager|6954 tokens/s|$ladder --compile no --loss full --pointwise eager
a step of 493 ms with the full loss|493 ms (|$loss1b --loss full
462 ms with the fused one|462 ms (|$loss1b --loss fused
peak 54.6 GiB fused|max_memory_allocated 54.6 GiB|$ladder --compile no --loss full --pointwise fused
59.8 eager, 60 measured|max_memory_allocated 59.8 GiB|$ladder --compile no --loss full --pointwise eager
47.2 GiB predicted, 51.0 measured|max_memory_allocated 47.2 GiB|$ladder --compile yes --loss full
142 GiB against|max_memory_allocated 142 GiB|$eager --pointwise eager
against 76.2 GiB|max_memory_allocated 76.2 GiB|$eager
13.6 GiB with|max_memory_allocated 13.6 GiB|$qlora
14.6 GiB with|max_memory_allocated 14.6 GiB|$qlora --kbit-upcast norms
17.5 GiB with|max_memory_allocated 17.5 GiB|$qlora --kbit-upcast all
a step of 2.38 s|2.38 s (|$qlora
becomes 3.04 s|3.04 s (|$qlora --kbit-upcast norms
the step from 5.04 s|5.04 s (|$peft
to 5.46 s, 5.29 s|5.46 s (|$peft --lora-dtype fp32
5.29 s under autocast|5.29 s (|$peft --lora-dtype fp32 --precision bf16-mixed
14.7 GiB without|max_memory_allocated 14.7 GiB|$qhead
15.2 GiB with (LitGPT|max_memory_allocated 15.2 GiB|$qhead --quant-head yes
peaks at 24.8 GiB with the full loss|max_memory_allocated 24.8 GiB|$foak --pointwise eager --loss full
22.8 GiB with fused-fp32|max_memory_allocated 22.8 GiB|$foak --pointwise fused --loss fused-fp32
15.1 GiB of gradients a GPU|gradients 15.1 GiB|$gsync --gpu l40s --zero 2 --grad-sync last
for 1.9 GiB|gradients 1.89 GiB|$gsync --gpu l40s --zero 2
4.04 s a step|4.04 s (|$gsync --gpu l40s --zero 2 --grad-sync last
for 5.05;|5.05 s (|$gsync --gpu l40s --zero 2
35.0 GiB at the peak|GPU 35.0 GiB per GPU|$gsync --zero 3 --grad-sync last
for 22.2 GiB|GPU 22.2 GiB per GPU|$gsync --zero 3
needs 145 GiB a GPU|needs 145 GiB of|--model 70b --seq 2048 --gpus 8 --gpu a100-80g --policy zero3-offload --grad-accum 4 --recompute full --grad-sync last
holds 14.7.|GPU 14.7 GiB per GPU|--model 70b --seq 2048 --gpus 8 --gpu a100-80g --policy zero3-offload --grad-accum 4 --recompute full
tokens: 1.19 s a step|1.19 s (|$epo
1.09 s with it|1.09 s (|$epo --ep-overlap yes
take 1.87 s a step under alltoall|1.87 s (|$mdp
1.25 s under deepep|1.25 s (|$mdp --moe-dispatcher deepep
tokens: 923 ms a step|923 ms (|$sxo
871 ms with it|871 ms (|$sxo --shared-expert-overlap yes
71.2 GiB and 1.84 s a step with|max_memory_allocated 71.2 GiB|$rmq
71.2 GiB and 1.84 s a step with|1.84 s (|$rmq
68.2 GiB and 1.79 s with|max_memory_allocated 68.2 GiB|$rmq --recompute-modules layernorm,moe_act
68.2 GiB and 1.79 s with|1.79 s (|$rmq --recompute-modules layernorm,moe_act
CLAIMS
	# the plan the --activation-offload row quotes simulates the layouts it says
	words="405, where a bound of compute alone"
	out=$(cd "$work" && "$bin" plan --model mixtral-8x7b --gpu h200 --seq 32768 \
		--activation-offload yes 2>&1)
	if ! grep -qF -- "$words" "$readme"; then
		fail=$((fail + 1))
		echo "FAIL: the README no longer says '$words' (update this test with it)"
	elif ! printf '%s\n' "$out" | grep -qF "405 configurations simulated"; then
		fail=$((fail + 1))
		echo "FAIL: the README says '$words', but the plan now says:"
		printf '%s\n' "$out" | grep "configurations simulated"
	else
		pass=$((pass + 1))
	fi
	# the accuracy table: each row's runs, mean and worst error, bias and band (what 90 % of the
	# runs measured over the prediction; - where validate prints none) as validate prints them
	"$bin" validate >"$work/validate.txt" 2>&1
	rows=$(awk -F'|' '/^## How accurate it is/ { on = 1; next } /^## / { on = 0 }
		on && /^\| `[a-z_]+` \|/ {
			c = $2; gsub(/[` ]/, "", c); n = $4; m = $5; w = $6; b = $7; r = $8
			gsub(/[ %]/, "", n); gsub(/[ %]/, "", m); gsub(/[ %]/, "", w)
			gsub(/[ %]/, "", b); gsub(/[ x]/, "", r)
			print c, n, m, w, b, r }' "$readme")
	[ -n "$rows" ] || { fail=$((fail + 1)); echo "FAIL: the README's accuracy table is gone"; }
	while read -r cat n mean worst bias band; do
		[ -n "$cat" ] || continue
		got=$(awk -v c="$cat" '$0 == c { on = 1; next } on && /MAPE/ { r = $5 " " $2 " " $9 }
				on && r && /^  bias / { b = "-"
					if (match($0, /measured [0-9.]+-[0-9.]+x/))
						b = substr($0, RSTART + 9, RLENGTH - 10)
					print r, $2, b; exit }' "$work/validate.txt")
		if [ "$got" = "$n $mean $worst $bias $band" ]; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
			echo "FAIL: the README says $cat: $n runs, $mean % mean, $worst % worst," \
				"$bias % bias, $band band; validate prints '$got'" \
				"(runs, mean, worst, bias, band)"
		fi
	done <<ROWS
$rows
ROWS
	# the per-source figures the prose after the table quotes, as validate's by-source rows
	for q in "gpu_memory LitGPT" "gpu_memory PEFT" "framework_throughput fms-acceleration" \
		"framework_throughput fms-fsdp"; do
		cat=${q% *} src=${q#* }
		mape=$(awk -v c="$cat" -v s="$src" '$0 == c { on = 1; next } on && /^$/ { exit }
			on && /^  by source/ { by = 1; next } by && $1 == s { print $3; exit }' \
			"$work/validate.txt")
		if [ -n "$mape" ] && tr '\n' ' ' <"$readme" | grep -qF "$src runs at $mape %"; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
			echo "FAIL: the README's per-source figure for $src ($cat) is not validate's $mape %"
		fi
	done
	echo "readme: $pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}
