#!/bin/bash
# netns.sh LAPIRUN PROGRAM - two core groups in two network namespaces
# joined by a veth pair, over FI_PROVIDER=tcp;ofi_rxm (PROGRAM: ofi_calls,
# or ofi_netdown, which takes the pair down in the middle of the job).
#
# lapirun itself runs in the first namespace, its exchange on that side
# of the pair, so both CGs reach it; each CG runs in its own namespace
# (--host-cmd), and the transport must pick the veth (not a loopback that
# the other namespace cannot reach).  Exit 0 pass, 1 fail, 77 skipped
# (no root or no `ip netns`).  The namespaces go away on any exit.
set -u
LAPIRUN=$1 PROG=$2
. "$(dirname "$0")/../lib_cases.sh"
skip() { echo "SKIP ofi netns: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root to create network namespaces"
command -v ip >/dev/null || skip "no ip command"
tag=$(( $$ % 100000 ))
ns=ofins$tag
sub=$(( $$ % 200 + 20 ))
cleanup() {
  ip netns del "$ns-0" 2>/dev/null
  ip netns del "$ns-1" 2>/dev/null
}
trap cleanup EXIT
why=$(ns_pair "$ns" "10.78.$sub") || skip "$why"
# ofi_netdown takes the link down and up again by this name.
export LAPI_TEST_IFACE=lapi0
out=$(timeout 150 ip netns exec "$ns-0" "$LAPIRUN" -n 2 --label \
  --provider 'tcp;ofi_rxm' --timeout 30 --exchange-addr "10.78.$sub.1" \
  --host-cmd "ip netns exec $ns-{rank}" "$PROG" 2>&1)
rc=$?
echo "$out"
passes=$(echo "$out" | grep -c 'PASS$')
if [ "$rc" != 0 ] || [ "$passes" != 2 ]; then
  echo "FAIL ofi netns: exit code $rc, $passes of 2 CGs passed"
  exit 1
fi
echo "PASS ofi netns"
exit 0
