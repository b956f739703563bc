#!/bin/bash
# run.sh BUILD_DIR - install BUILD_DIR into a temporary prefix, then build and
# run a user program against that prefix three ways: find_package(openlapi)
# with openlapi::crts and openlapi::crts_static, and the compile line
# `cc main.c $(pkg-config --cflags --libs crts)` that docs/BUILDING.md gives;
# then examples/crts/sw26010_axpy.c against the installed athread.h and slave.h.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=install_prefix.sh
. "$here/install_prefix.sh"
for f in include/crts.h include/sw26010/athread.h include/sw26010/slave.h include/sw26010/dma.h lib*/pkgconfig/crts.pc lib*/cmake/openlapi/openlapiConfig.cmake; do
  compgen -G "$prefix/$f" >/dev/null || { echo "missing in prefix: $f"; exit 1; }
done

echo "== find_package(openlapi)"
cmake -S "$here/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$san" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$tmp/configure.log" ||
  { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/consumer" >"$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log"; exit 1; }
# The shared library must come from the prefix, not from the build tree.
# (ldd's output is captured first: with pipefail, grep -q closing the pipe
# early would make ldd die of SIGPIPE and fail the check at random.)
libs=$(ldd "$tmp/consumer/consumer")
grep -q "$prefix/.*libcrts.so" <<<"$libs" ||
  { echo "consumer does not load libcrts from $prefix:"; ldd "$tmp/consumer/consumer"; exit 1; }
"$tmp/consumer/consumer"
CRTS_NUM_CPES=5 "$tmp/consumer/consumer"
static_libs=$(ldd "$tmp/consumer/consumer_static")
if grep -q libcrts <<<"$static_libs"; then
  echo "consumer_static links libcrts dynamically"; exit 1
fi
"$tmp/consumer/consumer_static"

echo "== cc main.c \$(pkg-config --cflags --libs crts)"
pcdir=$(dirname "$(compgen -G "$prefix/lib*/pkgconfig/crts.pc" | head -n1)")
export PKG_CONFIG_PATH=$pcdir
flags=$(pkg-config --cflags --libs crts)
case "$flags" in
  *"$prefix"*) ;;
  *) echo "pkg-config flags do not name the prefix $prefix: $flags"; exit 1 ;;
esac
libdir=$(pkg-config --variable=libdir crts)
# shellcheck disable=SC2086  # the flags are words by design
"$cc" $san -Wall -Werror "$here/consumer/main.c" $flags -o "$tmp/consumer_pc"
LD_LIBRARY_PATH=$libdir "$tmp/consumer_pc"

echo "== the SW26010 athread example against the installed athread.h / slave.h"
# shellcheck disable=SC2086
"$cc" $san -Wall -Werror "$here/../../examples/crts/sw26010_axpy.c" $flags \
  -o "$tmp/sw26010_axpy"
LD_LIBRARY_PATH=$libdir CRTS_NUM_CPES=8 "$tmp/sw26010_axpy"

echo "install_consumer: 4 programs built against the installed libcrts passed"
