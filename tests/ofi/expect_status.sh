#!/bin/bash
# expect_status.sh STATUS [--expect RE]... [--reject RE]... -- COMMAND...
#
# Run COMMAND (a lapirun job), pass its output on (once it ended), and succeed only if it
# exited with STATUS, every --expect extended regex matches a line of its
# output (stdout or stderr) and no --reject one does.  For jobs whose
# right outcome is a failure lapirun reports, such as a CG that exits
# without LAPI_Term (70), while the survivors must still pass.
set -u
want=$1
shift
expects=() rejects=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  case $1 in
  --expect) expects+=("$2") ;;
  --reject) rejects+=("$2") ;;
  *) echo "expect_status: unknown option $1"; exit 2 ;;
  esac
  shift 2
done
shift
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
"$@" >"$out" 2>"$err"
rc=$?
cat "$out"
cat "$err" >&2
if [ "$rc" -ne "$want" ]; then
  echo "expect_status: $1 exited $rc, expected $want"
  exit 1
fi
for re in "${expects[@]}"; do
  grep -Eq -- "$re" "$out" "$err" || { echo "expect_status: no line matches /$re/"; exit 1; }
done
for re in "${rejects[@]}"; do
  if grep -Eq -- "$re" "$out" "$err"; then
    echo "expect_status: a line matches /$re/"
    exit 1
  fi
done
exit 0
