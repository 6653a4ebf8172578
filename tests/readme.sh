#!/bin/sh
# readme.sh — every `bin/tierplan ...` line inside a ```sh block of the README must run and exit 0,
# and a shown output must match what the command prints, so the documented examples cannot rot. Usage: sh tests/readme.sh README.md bin/tierplan
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
	echo "readme: $pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}
