#!/bin/bash
# run_lapi.sh BUILD_DIR - install BUILD_DIR into a temporary prefix, then
# build the C LAPI examples against that prefix as a user would:
# find_package(openlapi) with openlapi::lapi and openlapi::lapi_static,
# and the compile line `cc prog.c $(pkg-config --cflags --libs lapi)` of
# docs/BUILDING.md; run each as one task and, with the installed lapirun,
# as two core groups.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=install_prefix.sh
. "$here/install_prefix.sh"
src=$(cache_get openlapi_SOURCE_DIR)
for f in include/lapi.h bin/lapirun lib*/pkgconfig/lapi.pc; do
  compgen -G "$prefix/$f" >/dev/null || { echo "missing in prefix: $f"; exit 1; }
done
lapirun=$prefix/bin/lapirun
examples="amsend_hello amsendv_vectors put_get_rmw"

# run NAME PROGRAM: one task, then two core groups over shm.
run() {
  echo "== $1: one task"
  "$2"
  echo "== $1: lapirun -n 2"
  "$lapirun" -n 2 --provider shm --label "$2"
}

echo "== find_package(openlapi): openlapi::lapi, openlapi::lapi_static"
cmake -S "$here/lapi_consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
  -DEXAMPLES="$src/examples/lapi" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_C_FLAGS="$san" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
  >"$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/consumer" >"$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log"; exit 1; }
for name in $examples; do
  # The shared library must come from the prefix, not from the build tree
  # (ldd's output is captured first: see run.sh).
  libs=$(ldd "$tmp/consumer/$name")
  grep -q "$prefix/.*liblapi.so" <<<"$libs" ||
    { echo "$name does not load liblapi from $prefix:"; echo "$libs"; exit 1; }
  run "$name (openlapi::lapi)" "$tmp/consumer/$name"
  static_libs=$(ldd "$tmp/consumer/${name}_static")
  if grep -q "liblapi\|libcrts" <<<"$static_libs"; then
    echo "${name}_static links liblapi or libcrts dynamically"; exit 1
  fi
  run "$name (openlapi::lapi_static)" "$tmp/consumer/${name}_static"
done

echo "== cc prog.c \$(pkg-config --cflags --libs lapi)"
pcdir=$(dirname "$(compgen -G "$prefix/lib*/pkgconfig/lapi.pc" | head -n1)")
export PKG_CONFIG_PATH=$pcdir
flags=$(pkg-config --cflags --libs lapi)
libdir=$(pkg-config --variable=libdir lapi)
for name in $examples; do
  # shellcheck disable=SC2086  # the flags are words by design
  "$cc" $san -Wall -Werror "$src/examples/lapi/$name.c" $flags -o "$tmp/$name"
  LD_LIBRARY_PATH=$libdir run "$name (pkg-config)" "$tmp/$name"
done

echo "install_lapi_consumer: the LAPI examples built against the installed tree passed"
