# install_prefix.sh - sourced (bash) by the install tests with the build
# directory as $1: installs it into a temporary prefix, removed on exit.
# Sets build, tmp, prefix, cache_get (a CMakeCache.txt entry), cc and san:
# the build's C compiler and sanitizer flags, since an instrumented
# library needs an instrumented program.
build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/openlapi-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

cache_get() {
  sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"
}
cc=$(cache_get CMAKE_C_COMPILER)
cc=${cc:-cc}
case "$(cache_get OPENLAPI_SANITIZE)" in
  address) san="-fsanitize=address,undefined" ;;
  thread) san="-fsanitize=thread" ;;
  *) san="" ;;
esac
# Sanitizers need bigger CPE stacks than the 32 KiB default.
if [ -n "$san" ]; then
  export CRTS_LDM_STACK_SIZE=${CRTS_LDM_STACK_SIZE:-128K}
fi

prefix=$tmp/prefix
echo "== cmake --install into $prefix"
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" ||
  { cat "$tmp/install.log"; exit 1; }
