#!/bin/bash
# install_fortran.sh BUILD_DIR - install BUILD_DIR into a temporary prefix
# and build the Fortran examples against it with the two compile lines of
# docs/FORTRAN.md (lapif.h and lapi.mod are in include/):
#   gfortran prog.f90 -I$PREFIX/include -L$PREFIX/lib -llapi -lcrts
#   gfortran prog.f90 $(pkg-config --cflags --libs lapi)
# then run them, as one task and, with the installed lapirun, as two.
set -euo pipefail

# shellcheck source=../install/install_prefix.sh
. "$(dirname "$0")/../install/install_prefix.sh"
src=$(cache_get openlapi_SOURCE_DIR)
fc=$(cache_get CMAKE_Fortran_COMPILER)
for f in include/lapif.h include/lapi.mod; do
  [ -f "$prefix/$f" ] || { echo "missing in prefix: $f"; exit 1; }
done
libdir=$(dirname "$(compgen -G "$prefix/lib*/liblapi.so" | head -n1)")

pcdir=$(dirname "$(compgen -G "$prefix/lib*/pkgconfig/lapi.pc" | head -n1)")
for prog in amsendv_iovector.f90 amsendv_strided.f90 put_get.f; do
  name=${prog%.*}
  for how in flags pkg-config; do
    if [ "$how" = flags ]; then
      link=(-I"$prefix/include" -L"$libdir" -llapi -lcrts)
    else
      # shellcheck disable=SC2207  # pkg-config prints words
      link=($(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs lapi))
    fi
    echo "== $fc $prog ${link[*]}"
    # shellcheck disable=SC2086  # $san is zero or one word
    (cd "$tmp" && "$fc" $san -Wall -Werror -Wno-unused-parameter \
      "$src/examples/fortran/$prog" "${link[@]}" -o "$tmp/$name")
  done
  libs=$(LD_LIBRARY_PATH=$libdir ldd "$tmp/$name")
  case "$libs" in
    *"$libdir/liblapi.so"*) ;;
    *) echo "$name does not load liblapi from $libdir:"; echo "$libs"; exit 1 ;;
  esac
  LD_LIBRARY_PATH=$libdir "$tmp/$name"
  if [ -x "$prefix/bin/lapirun" ]; then
    LD_LIBRARY_PATH=$libdir "$prefix/bin/lapirun" -n 2 "$tmp/$name"
  fi
done
echo "fortran_install: the examples built against the installed tree passed"
