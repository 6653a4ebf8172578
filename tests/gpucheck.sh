#!/bin/sh
# gpucheck.sh — validate/gpu-check.sh's build phase on a machine it has never seen, with fakes:
# a bin/tierplan brought from elsewhere is used where the build fails, cJSON comes from a bundle
# (validate/gpu-bundle.sh), and a helper that does not link against the toolkit's cuBLAS is
# linked against the libcublas found beside nvcc; what cannot be built stops with exit 2 and says
# what to do. Runs in a scratch copy of the few files the script needs, never in this tree.
# Usage: sh tests/gpucheck.sh bin/tierplan
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() {
	if [ "$1" -eq 0 ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL: gpu-check: $2"
		[ -f "$tmp/out/build.log" ] && sed 's/^/    /' "$tmp/out/build.log" | tail -n 20
	fi
}

tree=$tmp/tree
mkdir -p "$tree/validate/cuda" "$tree/bin" "$tmp/cuda/bin" "$tmp/cuda/lib64" "$tmp/t"
cp Makefile "$tree/" && cp validate/gpu-check.sh validate/gpu-bundle.sh "$tree/validate/" &&
	cp validate/cuda/harness.cu "$tree/validate/cuda/" || exit 4

# a bundle made here; a second one into the same folder is refused
sh validate/gpu-bundle.sh "$tmp/deps" >/dev/null
ok $? "gpu-bundle.sh failed"
[ -f "$tmp/deps/include/cjson/cJSON.h" ] && [ -f "$tmp/deps/lib/libcjson.so" ]
ok $? "the bundle lacks the header or the library"
sh validate/gpu-bundle.sh "$tmp/deps" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "exists" "$tmp/err"
ok $? "a bundle into an existing folder was not refused"

# a toolkit whose nvcc links only where -L names a folder holding libcublas.so and
# libcublasLt.so, and whose libraries sit beside it as libcublas.so.13 and libcublasLt.so.13 (no
# unversioned links: pip's layout)
: >"$tmp/cuda/lib64/libcublas.so.13"
: >"$tmp/cuda/lib64/libcublasLt.so.13"
cat >"$tmp/cuda/bin/nvcc" <<'EOF'
#!/bin/sh
echo "$*" >>"${0%/bin/nvcc}/args"
o= found=false lt=false prev=
for a in "$@"; do
	[ "$prev" = -o ] && o=$a
	case $a in -L*)
		[ -e "${a#-L}/libcublas.so" ] && found=true
		[ -e "${a#-L}/libcublasLt.so" ] && lt=true ;;
	esac
	prev=$a
done
$found || { echo "ld: cannot find -lcublas" >&2; exit 1; }
$lt || { echo "ld: cannot find -lcublasLt" >&2; exit 1; }
{
	echo '#!/bin/sh'
	echo 'printf "{\"test\": \"%s\", \"status\": \"waived\", \"reason\": \"fake\"}\n" "$1"'
} >"$o"
chmod +x "$o"
EOF
chmod +x "$tmp/cuda/bin/nvcc"

# the sources are not there, so make all fails: the bin/tierplan brought along is used
cp "$bin" "$tree/bin/tierplan"
(cd "$tree" && OUT= TMPDIR="$tmp/t" NVCC="$tmp/cuda/bin/nvcc" TIERPLAN_DEPS="$tmp/deps" \
	sh validate/gpu-check.sh "$tmp/out" --build-only) >"$tmp/log" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q "bin/tierplan and bin/tierplan-cuda start" "$tmp/log"
ok $? "build phase with a brought bin/tierplan and a fallback cuBLAS: exit $rc"
grep -q "linking the helper against $tmp/cuda/bin/../lib64/libcublas.so.13 and .*/libcublasLt.so.13" \
	"$tmp/out/build.log"
ok $? "the helper was not linked against the libcublas and libcublasLt beside nvcc"
tail -n 1 "$tmp/cuda/args" | grep -q -- "-rpath -Xlinker $(cd "$tmp/cuda/lib64" && pwd -P)"
ok $? "the fallback link has no rpath to the library's folder"
[ "$(ls "$tmp/out")" = build.log ]
ok $? "--build-only wrote more than build.log: $(ls "$tmp/out")"
[ -z "$(ls "$tmp/t")" ]
ok $? "gpu-check left its temporary folder behind: $(ls "$tmp/t")"

# a libcublas with no libcublasLt beside it: exit 2 naming what is missing
rm -f "$tree/bin/tierplan-cuda" "$tmp/cuda/lib64/libcublasLt.so.13"
(cd "$tree" && OUT= TMPDIR="$tmp/t" NVCC="$tmp/cuda/bin/nvcc" TIERPLAN_DEPS="$tmp/deps" \
	sh validate/gpu-check.sh "$tmp/out" --build-only) >"$tmp/log" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "no libcublasLt beside $tmp/cuda/bin/../lib64/libcublas.so.13" "$tmp/log"
ok $? "a libcublas without libcublasLt: exit $rc (want 2 naming it)"
: >"$tmp/cuda/lib64/libcublasLt.so.13"

# no bin/tierplan and no way to build one: exit 2, saying how to bring cJSON
rm -f "$tree/bin/tierplan"
(cd "$tree" && OUT= TMPDIR="$tmp/t" NVCC="$tmp/cuda/bin/nvcc" TIERPLAN_DEPS="$tmp/deps" \
	sh validate/gpu-check.sh "$tmp/out" --build-only) >"$tmp/log" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "gpu-bundle.sh DIR" "$tmp/log" && grep -q "last lines of" "$tmp/log"
ok $? "no bin/tierplan and no build: exit $rc (want 2 and the way out)"

# a helper that links nowhere: exit 2 naming the libraries found
cp "$bin" "$tree/bin/tierplan"
rm -f "$tree/bin/tierplan-cuda" "$tmp/cuda/lib64/libcublas.so.13"
printf '#!/bin/sh\necho "nvcc: broken" >&2\nexit 1\n' >"$tmp/cuda/bin/nvcc"
(cd "$tree" && OUT= TMPDIR="$tmp/t" NVCC="$tmp/cuda/bin/nvcc" TIERPLAN_DEPS="$tmp/deps" \
	sh validate/gpu-check.sh "$tmp/out" --build-only) >"$tmp/log" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "libcublas found:" "$tmp/log" &&
	grep -q "nvcc: $tmp/cuda/bin/nvcc" "$tmp/log"
ok $? "a helper that cannot be built: exit $rc (want 2 with the toolkit described)"

# TIERPLAN_DEPS naming nothing
(cd "$tree" && OUT= TMPDIR="$tmp/t" TIERPLAN_DEPS="$tmp/nosuch" \
	sh validate/gpu-check.sh "$tmp/out" --build-only) >"$tmp/log" 2>&1
[ $? -eq 2 ] && grep -q "is not a folder" "$tmp/log"
ok $? "TIERPLAN_DEPS naming no folder was not refused"

echo "gpucheck: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
