#!/bin/bash
# readmid.sh - the readmid tool: counts from the sidecar, from the command
# line, blocks only without either, and its errors.
#
#   readmid.sh READMID
set -u
readmid=$1
work=$(mktemp -d /tmp/readmid.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# check WHAT WANT ARGS...: readmid ARGS prints exactly WANT and exits 0.
check() {
  local what=$1 want=$2
  shift 2
  local got
  if ! got=$("$readmid" "$@" 2>/dev/null); then
    fail "$what: readmid $* failed"
  elif [ "$got" != "$want" ]; then
    fail "$what: readmid $* printed"$'\n'"$got"$'\n'"expected"$'\n'"$want"
  fi
}

# refuse WHAT ARGS...: readmid ARGS exits 1 with a message on stderr.
refuse() {
  local what=$1 err
  shift
  "$readmid" "$@" > /dev/null 2> "$work/err"
  local rc=$?
  err=$(cat "$work/err")
  [ $rc = 1 ] || fail "$what: readmid $* exited $rc, not 1"
  [ -n "$err" ] || fail "$what: readmid $* said nothing on stderr"
}

mid=$work/mid.dat
# 20 tasks in blocks of 3: 7 blocks (the last of 2 tasks); 1, 4, 6 unfinished.
printf '1011010' > "$mid"

check "blocks only" "total blocks: 7
unfinished blocks: 3" "$mid"
check "block size given" "total tasks: 21 (at most: the last block may be shorter)
unfinished tasks: 9 (at most)
blocks: 7 of 3 tasks, 3 unfinished" "$mid" 3
check "block size and task count given" "total tasks: 20
unfinished tasks: 8
blocks: 7 of 3 tasks, 3 unfinished" "$mid" 3 20

printf 'crts-mid 1\ntask_num 20\nblock_size 3\n' > "$mid.info"
check "sidecar" "total tasks: 20
unfinished tasks: 8
blocks: 7 of 3 tasks, 3 unfinished" "$mid"
check "sidecar and the same block size" "total tasks: 20
unfinished tasks: 8
blocks: 7 of 3 tasks, 3 unfinished" "$mid" 3

printf '1111111' > "$mid"
check "all finished" "total tasks: 20
unfinished tasks: 0
blocks: 7 of 3 tasks, 0 unfinished" "$mid"

refuse "no such file" "$work/none" 3 20
refuse "length does not fit" "$mid" 3 25
refuse "bad block size" "$mid" x
refuse "zero task count" "$mid" 3 0
refuse "no file argument"
printf 'junk\n' > "$mid.info"
refuse "bad sidecar" "$mid"
check "bad sidecar, everything given" "total tasks: 20
unfinished tasks: 0
blocks: 7 of 3 tasks, 0 unfinished" "$mid" 3 20
"$readmid" --help | grep -q '^usage: readmid FILE' || fail "--help"

if [ $failures = 0 ]; then
  echo "PASS: readmid"
  exit 0
fi
echo "FAIL: $failures check(s)"
exit 1
