#!/bin/sh
# readme.sh — every `bin/tierplan ...` line inside a ```sh block of the README must run and exit 0,
# so the documented examples cannot rot. Usage: sh tests/readme.sh README.md bin/tierplan
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
	echo "readme: $pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}
