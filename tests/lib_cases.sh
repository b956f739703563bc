# lib_cases.sh - helpers the multi-process test scripts source.
#
# expect and count report through the sourcing script's `fail MESSAGE`.

# expect FILE PATTERN: an extended regex must match a line of FILE.
expect() {
  grep -Eq -- "$2" "$1" || fail "no line matches /$2/ in $(basename "$1")"
}

# count FILE PATTERN N: exactly N lines match.
count() {
  local n
  n=$(grep -Ec -- "$2" "$1")
  [ "$n" -eq "$3" ] || fail "$n lines match /$2/, expected $3"
}

# ns_pair NS NET: two "hosts", network namespaces NS-0 and NS-1 joined by
# a veth pair named lapi0 on both sides, NET.1/24 in NS-0 and NET.2/24 in
# NS-1, loopbacks up (NS: at most 14 characters, it names the pair's ends
# until they move).  0, or 1 after printing what could not be made (the
# caller skips); the caller deletes the namespaces, and the pair with them.
ns_pair() {
  local ns=$1 net=$2 i end
  ip netns add "$ns-0" 2>/dev/null ||
    { echo "cannot create a network namespace (needs root and ip netns)"; return 1; }
  ip netns add "$ns-1" 2>/dev/null ||
    { echo "cannot create a second network namespace"; return 1; }
  ip link add "${ns}a" type veth peer name "${ns}b" 2>/dev/null ||
    { echo "cannot create a veth pair"; return 1; }
  for i in 0 1; do
    end=${ns}a
    [ "$i" = 1 ] && end=${ns}b
    ip link set "$end" netns "$ns-$i" &&
      ip -n "$ns-$i" link set "$end" name lapi0 &&
      ip -n "$ns-$i" addr add "$net.$((i + 1))/24" dev lapi0 &&
      ip -n "$ns-$i" link set lapi0 up &&
      ip -n "$ns-$i" link set lo up ||
      { echo "cannot set up the veth pair"; return 1; }
  done
}
