#!/bin/sh
# gpu-check — the one run a session lent a GPU makes (`make gpu-check`): builds the CUDA helper,
# records the device (nvidia-smi), runs `calibrate` (full mode) with fio in a fresh private directory,
# and replays the new profile through `validate` (the tiering kernel against the simulator).
# Everything it writes goes into one folder: $OUT when set (the device machine's), else the
# first argument, else gpu-check-out; nothing else is written but fio's own temporary
# directory, which calibrate removes. Exit: calibrate's (0 ok, 1 a test failed), or 2 when the
# helper cannot be built. Meant to finish well under 8 minutes on one GPU.
set -u
out=${OUT:-${1:-gpu-check-out}}
mkdir -p "$out" || exit 2
make --no-print-directory cuda all >"$out/build.log" 2>&1 || { cat "$out/build.log"; exit 2; }
[ -x bin/tierplan-cuda ] || { echo "gpu-check: bin/tierplan-cuda was not built (no nvcc?)"; exit 2; }
(nvidia-smi -q || echo "nvidia-smi not available") >"$out/nvidia-smi.txt" 2>&1
(date -u; uname -a; nproc; free -b) >"$out/machine.txt" 2>&1
echo "gpu-check: calibrate (full mode: fio, host and CUDA tests; a few minutes)"
start=$(date +%s)
bin/tierplan calibrate --out "$out/profile.json" 2>"$out/calibrate.log"
rc=$?
cat "$out/calibrate.log"
[ -f "$out/profile.json" ] || exit "${rc:-1}"
mkdir -p "$out/traces"
cp "$out/profile.json" "$out/traces/profile.json"
bin/tierplan validate --traces "$out/traces" --format json >"$out/validate.json" 2>"$out/validate.log"
bin/tierplan validate --traces "$out/traces" >"$out/validate.txt" 2>&1
echo "gpu-check: done in $(($(date +%s) - start)) s; files in $out"
grep -i "tiering kernel" "$out/calibrate.log" || true
exit "$rc"
