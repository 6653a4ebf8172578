#!/bin/sh
# gpu-check — the one run a machine with a GPU makes (`make gpu-check`): gets bin/tierplan and the
# CUDA helper to start, records the machine (nvidia-smi), runs `calibrate` (full mode) and
# replays the new profile through `validate` (the tiering kernel against the simulator).
#
# Made for a first run on a machine nobody has looked at, where a failed build costs the run:
#  - both are built here from these sources where that works; where it does not, a bin/tierplan
#    or bin/tierplan-cuda brought from elsewhere is used when it starts here (the loader finds
#    its libraries);
#  - TIERPLAN_DEPS=DIR takes cJSON from DIR (validate/gpu-bundle.sh) where libcjson-dev is not
#    installed, with no package check;
#  - where the helper does not link or start against the toolkit's cuBLAS (a toolkit laid out
#    as pip wheels lay it out), it is linked against the first libcublas found beside nvcc, in
#    /usr/local/cuda*, /usr or /opt, through a link in a temporary folder, with an rpath;
#  - what cannot be built is said with the toolkit's version and the libraries found, so the
#    next try can fix it.
# Files, six at most: build.log, machine.txt, calibrate.log, profile.json, validate.json and
# validate.txt, all in one folder: $OUT when set, else the first argument, else gpu-check-out.
# Nothing else is written but a temporary folder it removes, and fio's, which calibrate removes.
# --build-only stops once both programs start. Exit: calibrate's (0 ok, 1 a test failed), or 2
# when a program cannot be built. Meant to finish well under 8 minutes on one GPU; about 4 of
# them are fio (waived where fio is not installed).
set -u
# its makes build bin/ as a plain `make` does, whatever make called it with (BUILD=, CFLAGS=)
unset MAKEFLAGS MFLAGS MAKELEVEL
build_only=false
arg=
for a in "$@"; do
	case $a in
	--build-only) build_only=true ;;
	*) [ -n "$arg" ] || arg=$a ;;
	esac
done
out=${OUT:-${arg:-gpu-check-out}}
mkdir -p "$out" || exit 2
log=$out/build.log
: >"$log" || exit 2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check-XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 2' INT TERM

# whether a program starts here: the loader exits 127 when a library is missing, 126 when the
# file cannot run at all
starts() {
	"$@" >/dev/null 2>&1
	started=$?
	[ "$started" -ne 126 ] && [ "$started" -ne 127 ]
}

# says why a build failed, with what the next try needs to know, and stops
cannot() {
	{
		echo "gpu-check: $1"
		echo "  nvcc: ${nvcc:-not found}"
		[ -z "${nvcc:-}" ] || "$nvcc" --version 2>&1 | tail -n 2 | sed 's/^/    /'
		echo "  libcublas found: $(find_cublas all | tr '\n' ' ')"
		echo "  last lines of $log:"
		tail -n 15 "$log" | sed 's/^/    /'
	} | tee -a "$log"
	exit 2
}

nvcc=${NVCC:-$(command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)}
# a bin/tierplan brought from elsewhere finds the bundle's libcjson too
if [ -n "${TIERPLAN_DEPS:-}" ]; then
	deps=$(cd "$TIERPLAN_DEPS" 2>/dev/null && pwd -P) ||
		{ echo "gpu-check: TIERPLAN_DEPS=$TIERPLAN_DEPS is not a folder"; exit 2; }
	LD_LIBRARY_PATH="$deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	export LD_LIBRARY_PATH
fi

# libcublas.so or libcublas.so.N beside nvcc first, then the usual toolkit folders, then pip's
# nvidia-cublas under /usr and /opt; the first (all: every one) on stdout
find_cublas() {
	{
		if [ -n "$nvcc" ]; then
			d=$(dirname "$nvcc")/..
			ls "$d"/lib64/libcublas.so* "$d"/lib/libcublas.so* \
				"$d"/targets/*/lib/libcublas.so* 2>/dev/null
		fi
		ls /usr/local/cuda*/lib64/libcublas.so* \
			/usr/local/cuda*/targets/*/lib/libcublas.so* 2>/dev/null
		find /usr /opt -name 'libcublas.so*' 2>/dev/null
	} | grep -E '/libcublas\.so(\.[0-9]+)*$' | awk '!seen[$0]++' | if [ "$1" = all ]; then
		cat
	else
		head -n 1
	fi
}

# built here from these sources where the build works, without make's package check (as root
# it would run apt-get, which on a node without network fails, slowly); where the build does not
# work (no compiler, no libcjson-dev), a bin/tierplan brought from elsewhere that starts is used
make --no-print-directory -j "$(nproc 2>/dev/null || echo 2)" all DEPS_OK= >>"$log" 2>&1 ||
	echo "gpu-check: make all failed; using the bin/tierplan there is if it starts" >>"$log"
starts bin/tierplan version ||
	cannot "bin/tierplan cannot be built or does not start (no libcjson-dev? where it is
  installed, sh validate/gpu-bundle.sh DIR; bring DIR; then TIERPLAN_DEPS=DIR make gpu-check)"

[ -z "$nvcc" ] || make --no-print-directory cuda NVCC="$nvcc" >>"$log" 2>&1
if ! starts bin/tierplan-cuda probe; then
	[ -n "$nvcc" ] ||
		cannot "no nvcc on PATH or in /usr/local/cuda/bin: the CUDA helper cannot be built"
	lib=$(find_cublas first)
	[ -n "$lib" ] ||
		cannot "the CUDA helper does not build or start, and no libcublas was found"
	dir=$(cd "$(dirname "$lib")" && pwd -P)
	# cuBLASLt (the FP8 GEMMs) ships beside libcublas, which needs it
	lt=$(ls "$dir"/libcublasLt.so* 2>/dev/null | grep -E '/libcublasLt\.so(\.[0-9]+)*$' | head -n 1)
	[ -n "$lt" ] || cannot "no libcublasLt beside $lib"
	mkdir "$tmp/lib" && ln -s "$dir/$(basename "$lib")" "$tmp/lib/libcublas.so" &&
		ln -s "$lt" "$tmp/lib/libcublasLt.so" ||
		cannot "no temporary folder for the links to $lib and $lt"
	inc=
	[ -f "$dir/../include/cublas_v2.h" ] && inc="-I$dir/../include"
	echo "gpu-check: linking the helper against $lib and $lt" >>"$log"
	rm -f bin/tierplan-cuda
	make --no-print-directory cuda NVCC="$nvcc" \
		CUBLAS="$inc -L$tmp/lib -lcublas -lcublasLt -Xlinker -rpath -Xlinker $dir" >>"$log" 2>&1
	LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	export LD_LIBRARY_PATH
	starts bin/tierplan-cuda probe ||
		cannot "the CUDA helper does not build or start, even against $lib"
fi
echo "gpu-check: bin/tierplan and bin/tierplan-cuda start"
$build_only && exit 0

{
	nvidia-smi -q || echo "nvidia-smi not available"
	echo
	date -u
	uname -a
	nproc
	free -b
	command -v fio || echo "fio: not installed (calibrate waives the drive tests)"
} >"$out/machine.txt" 2>&1
echo "gpu-check: calibrate (full mode: fio, host and CUDA tests; a few minutes)"
start=$(date +%s)
bin/tierplan calibrate --out "$out/profile.json" 2>"$out/calibrate.log"
rc=$?
cat "$out/calibrate.log"
[ -f "$out/profile.json" ] || exit "$rc"
# validate replays every profile of a folder: this run's alone, from a temporary one
mkdir "$tmp/traces" && cp "$out/profile.json" "$tmp/traces/profile.json" || exit 2
bin/tierplan validate --traces "$tmp/traces" >"$out/validate.txt" 2>&1
bin/tierplan validate --traces "$tmp/traces" --format json >"$out/validate.json" \
	2>>"$out/validate.txt"
echo "gpu-check: done in $(($(date +%s) - start)) s; files in $out"
grep -i -e "tiering kernel" -e "cuda_gemm_" "$out/calibrate.log" || true
exit "$rc"
