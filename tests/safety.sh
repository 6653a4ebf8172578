#!/bin/sh
# safety.sh — the tool never writes where the user did not point, never runs data as code, and
# says so with one line and a non-zero exit when it cannot do what was asked (issue 14's
# findings, one check each). Usage: sh tests/safety.sh bin/tierplan (from the repository root)
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TIERPLAN_CONFIGS="${TIERPLAN_CONFIGS:-$(pwd)/configs}"
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
skipped() { skip=$((skip + 1)); echo "skipped: $*"; }
# run CODE ARGS...: tierplan exits with CODE; stderr in $tmp/err, stdout in $tmp/out
run() {
	want=$1
	shift
	"$bin" "$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" -eq "$want" ]; then ok; else bad "tierplan $* -> exit $got (want $want): $(head -c 300 "$tmp/err")"; fi
}
check() { # check DESCRIPTION COMMAND...: the command succeeds
	d=$1
	shift
	if "$@"; then ok; else bad "$d"; fi
}
sim="simulate --model 8b --seq 512 --gpus 1 --policy tiered"
echo "victim" >"$tmp/victim"

# 1. devices, FIFOs and symlinks: written in place or refused, never replaced or followed
if [ "$(id -u)" = 0 ] && mknod "$tmp/null" c 1 3 2>/dev/null; then
	run 0 $sim --trace "$tmp/null"
	check "--trace onto a character device keeps the device" test -c "$tmp/null"
else
	skipped "--trace onto a device node (needs root for mknod)"
fi
mkfifo "$tmp/fifo"
timeout 60 cat "$tmp/fifo" >"$tmp/fifo.out" &
reader=$!
run 0 $sim --trace "$tmp/fifo"
{ sleep 1; kill $reader 2>/dev/null; } & # a writer that replaced the FIFO never opens it
wait $reader
check "--trace onto a FIFO writes through it and keeps it" test -p "$tmp/fifo" -a -s "$tmp/fifo.out"
ln -s "$tmp/victim" "$tmp/link.json"
run 3 $sim --trace "$tmp/link.json"
check "--trace onto a symlink leaves its target alone" grep -qx victim "$tmp/victim"
check "--trace onto a symlink keeps the link" test -L "$tmp/link.json"
ln -s "$tmp/victim" "$tmp/t.json.tmp"
run 0 $sim --trace "$tmp/t.json"
check "a planted FILE.tmp symlink is not followed" grep -qx victim "$tmp/victim"
check "the trace is whole JSON" python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/t.json"
run 3 $sim --trace "$tmp"
run 3 $sim --trace "$tmp/nodir/t.json"
mkdir "$tmp/rep" && : >"$tmp/rep/.tierplan-report" && ln -s "$tmp/victim" "$tmp/rep/report.md"
run 3 plan --model 8b --seq 512 --report "$tmp/rep"
check "--report does not write through a planted report.md" grep -qx victim "$tmp/victim"
mkdir "$tmp/gold" && ln -s "$tmp/victim" "$tmp/gold/s1.json"
printf '{"scenarios": [{"name": "s1", "flags": {"model": "8b", "seq": 512}}]}' >"$tmp/scen.json"
mkdir "$tmp/scen" && cp "$tmp/scen.json" "$tmp/scen/"
run 3 regress --scenarios "$tmp/scen" --golden "$tmp/gold" --update
check "regress --update does not write through a planted golden" grep -qx victim "$tmp/victim"
run 3 calibrate --quick --tests host_pinned_alloc --out "$tmp/link.json"
check "calibrate --out onto a symlink is refused before measuring" grep -qx victim "$tmp/victim"

# 2. fio writes only a file it created, in a private directory; the user's files stay
mkdir "$tmp/fio" && ln -s "$tmp/victim" "$tmp/fio/tierplan-fio.dat" && echo mine >"$tmp/fio/keep.dat"
if command -v fio >/dev/null 2>&1; then
	"$bin" calibrate --quick --tests flash_seq_write --dir "$tmp/fio" --out "$tmp/p.json" 2>"$tmp/err" >/dev/null
	check "fio does not write through a planted symlink" grep -qx victim "$tmp/victim"
	check "the planted symlink and the user's file are left" test -L "$tmp/fio/tierplan-fio.dat" -a -f "$tmp/fio/keep.dat"
	check "fio's private directory is removed" test "$(ls "$tmp/fio" | wc -l)" -eq 2
	# the SLC-cache stream: its file and its bandwidth log in the private directory alone
	"$bin" calibrate --quick --tests flash_slc_fill --flash-fill 32MiB --dir "$tmp/fio" --out "$tmp/p.json" 2>"$tmp/err" >/dev/null
	check "the fill stream leaves the planted symlink, the user's file and nothing else" \
		test -L "$tmp/fio/tierplan-fio.dat" -a -f "$tmp/fio/keep.dat" -a "$(ls "$tmp/fio" | wc -l)" -eq 2
	check "the fill stream does not write through a planted symlink" grep -qx victim "$tmp/victim"
	# interrupted while fio writes: the handler removes the private directory and its file
	# (and stops fio), then dies of the signal; the user's files stay
	"$bin" calibrate --tests flash_slc_fill --flash-fill 2GiB --dir "$tmp/fio" \
		--out "$tmp/p.json" >/dev/null 2>&1 &
	cal=$!
	i=0
	while [ $i -lt 200 ] && ! ls -d "$tmp"/fio/tierplan-fio-*/fio.dat >/dev/null 2>&1; do
		sleep 0.05
		i=$((i + 1))
	done
	if ls -d "$tmp"/fio/tierplan-fio-*/fio.dat >/dev/null 2>&1; then
		kill -INT $cal
		wait $cal
		st=$?
		check "an interrupted calibrate dies of SIGINT" test "$st" -eq 130
		check "an interrupted fio run leaves the user's files and nothing else" \
			test -L "$tmp/fio/tierplan-fio.dat" -a -f "$tmp/fio/keep.dat" -a \
			"$(ls "$tmp/fio" | wc -l)" -eq 2
	else
		wait $cal
		skipped "interrupting fio (the fill ended before its file was seen)"
	fi
else
	skipped "fio under --dir (fio not installed)"
fi

# 3. data never becomes program text: gnuplot, HTML, JSON
cd "$tmp" || exit 1
mkdir traces evil
cat >evil/cat.json <<'J'
{"category": "x';system('touch PWNED1');'", "cases": []}
J
run 3 validate --traces "$tmp/evil"
cat >traces/ids.json <<'J'
{"category": "evil_ids", "cases": [{"id": "a' `touch PWNED2` \"; system(\"touch PWNED3\")\n'", "confidence": "A",
 "source": "test", "quantity": "params", "measured": {"value": 8030261248, "unit": "params"},
 "flags": {"model": "8b", "seq": 512}}]}
J
echo '{"evil_ids": 1}' >th.json
run 0 validate --traces "$tmp/traces" --thresholds th.json --report "$tmp/vrep"
check "validate --report ran gnuplot on the chart" test -s "$tmp/vrep/validate_evil_ids.svg"
check "no data ran as a command" test ! -e PWNED1 -a ! -e PWNED2 -a ! -e PWNED3
cp "$TIERPLAN_CONFIGS/models/llama-3.1-8b.json" "$tmp/<b>m'\`touch PWNED4\`.json"
run 0 plan --model "$tmp/<b>m'\`touch PWNED4\`.json" --seq 512 --batch 1 --report "$tmp/hrep"
check "the model name is escaped in report.html" grep -q '&lt;b&gt;m' "$tmp/hrep/report.html"
check "no model name ran as a command" test ! -e PWNED4
run 0 simulate --model "$tmp/<b>m'\`touch PWNED4\`.json" --seq 512 --gpus 1 --policy tiered --trace "$tmp/q\".json"
check "a model name with quotes leaves the trace valid JSON" python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/q\".json"
cd - >/dev/null || exit 1

# 4. concurrent writers: the last one wins whole
for i in 1 2 3 4; do "$bin" $sim --trace "$tmp/c.json" >/dev/null 2>&1 & done
wait
check "four concurrent --trace writers leave one valid file" python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/c.json"
check "no temporaries are left behind" test "$(ls -a "$tmp" | grep -c '^\.c\.json\.')" -eq 0

# 6. output is not duplicated by the forked gnuplot
"$bin" validate >"$tmp/v1" 2>/dev/null
"$bin" validate --report "$tmp/vrep2" >"$tmp/v2" 2>/dev/null
check "validate --report prints its table once" cmp -s "$tmp/v1" "$tmp/v2"

# 7. sweep --out is whole or absent
printf '{"base": {"model": "8b", "seq": 512}, "grid": {"gpus": [1, 2], "policy": ["gpu", "tiered"]}}' >"$tmp/g.json"
run 0 sweep --grid "$tmp/g.json" --out "$tmp/s.csv"
check "sweep --out writes the header and every row" test "$(wc -l <"$tmp/s.csv")" -eq 5
run 3 sweep --grid "$tmp/g.json" --out "$tmp/link.json"

# 8. errors that used to exit 0
if [ -w /dev/full ]; then
	for c in models hardware validate regress; do
		"$bin" $c >/dev/full 2>"$tmp/err"
		rc=$?
		[ "$rc" -eq 4 ] && [ "$(wc -l <"$tmp/err")" -ge 1 ] && ok || bad "tierplan $c >/dev/full -> exit $rc (want 4)"
	done
else
	skipped "writes to /dev/full"
fi
printf '{"base": {"model": "8b", "sqe": 512}, "grid": {"gpus": [1]}}' >"$tmp/g1.json"
run 3 sweep --grid "$tmp/g1.json"
printf '{"base": {"seq": 512}, "grid": {"gpus": [1]}}' >"$tmp/g2.json"
run 3 sweep --grid "$tmp/g2.json"
printf '{"base": {"model": "8b", "seq": 512}, "grid": {"tp": [3, 5]}}' >"$tmp/g3.json"
run 3 sweep --grid "$tmp/g3.json"
mkdir "$tmp/empty"
run 3 validate --traces "$tmp/empty"
run 3 validate --traces "$tmp/nonexistent"
echo '{}' >"$tmp/th0.json"
run 1 validate --traces "$tmp/traces" --thresholds "$tmp/th0.json"
grep -q "no threshold" "$tmp/err" && ok || bad "a category without a threshold says so"
run 3 regress --scenarios "$tmp/empty" --golden "$tmp/gold"

# 9. scenario names cannot escape --golden or break the golden's JSON
for name in '/../../x' 'a\"b' '.hidden'; do
	printf '{"scenarios": [{"name": "%s", "flags": {"model": "8b", "seq": 512}}]}' "$name" >"$tmp/scen/scen.json"
	run 3 regress --scenarios "$tmp/scen" --golden "$tmp/gold2" --update
done
printf '{"scenarios": [{"name": "a", "flags": {"model": "8b", "seq": 512}}, {"name": "a", "flags": {"model": "8b", "seq": 1024}}]}' >"$tmp/scen/scen.json"
run 3 regress --scenarios "$tmp/scen" --golden "$tmp/gold2" --update
check "no golden was written outside --golden" test ! -e "$tmp/x.json" -a ! -e "$tmp/gold2"

# 10. a bad grid path and a helper that prints mismatched arrays
run 3 sweep --grid /nonexistent
printf '#!/bin/sh\necho %s\n' "'{\"status\": \"ok\", \"samples\": [1e9], \"sizes\": [1, 2], \"times\": [1]}'" >"$tmp/helper"
chmod +x "$tmp/helper"
run 1 calibrate --quick --tests cuda_h2d_pinned --cuda-helper "$tmp/helper" --out "$tmp/p2.json"
grep -q "malformed" "$tmp/err" && ok || bad "a malformed helper result is named"

# 11. bounded work
printf '{"model_type": "llama", "num_hidden_layers": 100000}' >"$tmp/deep.json"
run 3 compare --model "$tmp/deep.json" --seq 512
mkdir "$tmp/cfg" && cp "$TIERPLAN_CONFIGS"/*.json "$tmp/cfg/"
python3 -c "
import json
print(json.dumps({'models': [{'name': 'm%d' % i, 'file': 'x.json'} for i in range(5000)]}))" >"$tmp/cfg/models.json"
TIERPLAN_CONFIGS="$tmp/cfg" run 3 models

# 12. one line per usage error, and checks before long work
run 2 plan --model 8b --sqe 512
check "a usage error is one line" test "$(wc -l <"$tmp/err")" -eq 1
grep -q "see 'tierplan plan --help'" "$tmp/err" && ok || bad "the usage hint names 'tierplan plan --help'"
run 2 frobnicate
check "an unknown command is one line" test "$(wc -l <"$tmp/err")" -eq 1
run 3 calibrate --quick --device /dev/null
run 3 calibrate --quick --out ""
run 3 calibrate --quick --out "$tmp/nodir/p.json"
run 3 sweep --grid "$tmp/g.json" --shard 1/0
run 3 sweep --grid "$tmp/g.json" --shard 1/99999999999999999999
run 3 plan --model 8b --seq 512 --epochs 1e6 --dataset-tokens 1e16
: >"$tmp/afile"
run 3 plan --model 8b --seq 512 --report "$tmp/afile"

echo "safety: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
