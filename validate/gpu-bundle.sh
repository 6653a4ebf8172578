#!/bin/sh
# gpu-bundle — cJSON's header and shared library, copied from this machine (where libcjson-dev
# is installed) into a new folder DIR, for a machine where the package cannot be installed (a
# GPU node without root or network): there `TIERPLAN_DEPS=DIR make` builds bin/tierplan against
# them (the Makefile skips its package check) and `TIERPLAN_DEPS=DIR make gpu-check` runs the
# calibration. Writes nothing but DIR, which must not exist yet. Exit 0 ok, 2 usage, 4 when the
# header or the library is not found here.
# Usage: sh validate/gpu-bundle.sh DIR
set -u
[ $# -eq 1 ] && [ -n "$1" ] || { echo "usage: sh validate/gpu-bundle.sh DIR" >&2; exit 2; }
dir=$1
[ ! -e "$dir" ] || { echo "gpu-bundle: $dir exists: name a new folder" >&2; exit 2; }
cc=${CC:-cc}
# the header the compiler includes, and the library the linker takes for -lcjson
hdr=$(printf '#include <cjson/cJSON.h>\n' | "$cc" -E -x c - 2>/dev/null |
	sed -n 's/^# [0-9]* "\(\/[^"]*cjson\/cJSON\.h\)".*/\1/p' | head -n 1)
lib=$("$cc" -print-file-name=libcjson.so 2>/dev/null)
[ -n "$hdr" ] && [ -f "$hdr" ] ||
	{ echo "gpu-bundle: cjson/cJSON.h not found (apt-get install libcjson-dev)" >&2; exit 4; }
[ "$lib" != libcjson.so ] && [ -f "$lib" ] ||
	{ echo "gpu-bundle: libcjson.so not found (apt-get install libcjson-dev)" >&2; exit 4; }
# the name the program asks the loader for (libcjson.so.1): the library under both names
soname=$(objdump -p "$lib" 2>/dev/null | awk '$1 == "SONAME" {print $2}')
mkdir -p "$dir/include/cjson" "$dir/lib" || exit 4
cp "$hdr" "$dir/include/cjson/cJSON.h" && cp -L "$lib" "$dir/lib/libcjson.so" || exit 4
if [ -n "$soname" ] && [ "$soname" != libcjson.so ]; then
	cp -L "$lib" "$dir/lib/$soname" || exit 4
fi
echo "gpu-bundle: $dir holds cjson/cJSON.h and libcjson.so${soname:+ ($soname)}"
