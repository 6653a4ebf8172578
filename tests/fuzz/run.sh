#!/bin/sh
# run.sh — runs each libFuzzer target for FUZZ_SECONDS, then merges what it found into the
# committed corpus (tests/fuzz/corpus/TARGET, minimised). A crash leaves crash-* files in
# build/fuzz and exits non-zero; each becomes a regression test (tests/cli.sh or a unit test).
# Usage: sh tests/fuzz/run.sh build/fuzz SECONDS target...
dir=$1 secs=$2
shift 2
status=0
for t in "$@"; do
	corpus=tests/fuzz/corpus/$t
	work=$dir/work-$t
	mkdir -p "$corpus" "$work"
	echo "fuzz $t: ${secs}s"
	if ! (cd "$dir" && "./fuzz_$t" -max_total_time="$secs" -max_len=4096 -print_final_stats=1 \
		"$OLDPWD/$work" "$OLDPWD/$corpus" "$OLDPWD/tests/fuzz/seeds/$t" >"fuzz_$t.log" 2>&1); then
		echo "fuzz $t: FAILED, see $dir/fuzz_$t.log and $dir/crash-*"
		status=1
		continue
	fi
	grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$dir/fuzz_$t.log" | sed "s/^/  /"
	# keep the corpus minimal: merge everything into a fresh directory, then swap it in
	rm -rf "$corpus.new" && mkdir -p "$corpus.new"
	"$dir/fuzz_$t" -merge=1 "$corpus.new" "$corpus" "$work" >/dev/null 2>&1 &&
		rm -rf "$corpus" && mv "$corpus.new" "$corpus"
	echo "  corpus: $(ls "$corpus" | wc -l) inputs"
done
exit $status
