#!/bin/bash
# run.sh - CRTS_task_fetch across core groups: start taskfetch_job with
# lapirun and check that every task id went to exactly one CG, that a
# restart runs only the unfinished blocks, and that CRTS_task_quit stops
# every CG and marks the mid file finished.
#
#   run.sh LAPIRUN READMID PROG...
#
# Each PROG is a build of taskfetch_job (linked with liblapi, or with
# libcrts alone so that libcrts loads liblapi itself).  Prints PASS/FAIL
# lines; exit status 0 when every check passed.
set -u
lapirun=$1 readmid=$2
shift 2
cgs=3
work=$(mktemp -d /tmp/taskfetch.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# ids LOOP DIR: the ids every CG got in loop LOOP, one per line, sorted.
ids() { cat "$2"/ids.* | awk -v l="$1" '$1 == l { print $2 }' | sort -n; }

# expect_once LOOP DIR WANT...: loop LOOP handed out exactly WANT, once each.
expect_once() {
  local loop=$1 dir=$2
  shift 2
  local got want
  got=$(ids "$loop" "$dir" | tr '\n' ' ')
  want=$(printf '%s\n' "$@" | sort -n | tr '\n' ' ')
  [ "$got" = "$want" ] ||
    fail "$name: $loop handed out [$got], expected [$want]"
}

# all_done FILE BLOCKS: the mid file is BLOCKS bytes of '1'.
all_done() {
  local want
  want=$(printf '1%.0s' $(seq "$2"))
  [ "$(cat "$1")" = "$want" ] || fail "$name: $1 is '$(cat "$1")', not all '1'"
}

# job NAME PROG ARGS...: run the job in a fresh directory $dir.
job() {
  name=$1
  local prog=$2
  shift 2
  dir=$work/$name
  mkdir -p "$dir"
  if ! timeout 120 "$lapirun" -n $cgs --timeout 30 "$prog" "$dir" "$@" \
       > "$dir/out" 2>&1; then
    fail "$name: the job failed"
    sed 's/^/  | /' "$dir/out"
    return 1
  fi
  if [ "$(grep -c '^PASS' "$dir/out")" != $cgs ]; then
    fail "$name: not every CG passed"
    sed 's/^/  | /' "$dir/out"
    return 1
  fi
  return 0
}

for prog in "$@"; do
  tag=$(basename "$prog")

  # A fresh job: 100 tasks in blocks of 3, then 51 in blocks of 4.
  if job "$tag-fresh" "$prog" "$work/$tag-fresh.mid" 100 3 $cgs; then
    expect_once L1 "$dir" $(seq 0 99)
    expect_once L2 "$dir" $(seq 0 50)
    all_done "$work/$name.mid" 34
    all_done "$work/$name.mid.2" 13
    used=$(for f in "$dir"/ids.*; do grep -q '^L1' "$f" && echo x; done | wc -l)
    echo "$name: loop 1 spread over $used of $cgs CGs"
    out=$("$readmid" "$work/$name.mid")
    echo "$out" | grep -qx 'unfinished tasks: 0' ||
      fail "$name: readmid says: $out"
  fi

  # A restart: 50 tasks in blocks of 7 (8 blocks), blocks 0, 2, 3, 7 done.
  mid=$work/$tag-restart.mid
  printf '10110001' > "$mid"
  if job "$tag-restart" "$prog" "$mid" 50 7 $cgs; then
    expect_once L1 "$dir" $(seq 7 13) $(seq 28 48)
    all_done "$mid" 8
  fi

  # A quit: 300 tasks in blocks of 1; the CG that gets task 10 quits.
  mid=$work/$tag-quit.mid
  if job "$tag-quit" "$prog" "$mid" 300 1 $cgs 10; then
    got=$(ids L1 "$dir")
    twice=$(echo "$got" | uniq -d | tr '\n' ' ')
    [ -z "$twice" ] || fail "$name: tasks handed out twice: $twice"
    echo "$got" | grep -qx 10 || fail "$name: task 10 was not handed out"
    [ "$(cat "$dir"/ids.* | grep -c '^quit 10$')" = 1 ] ||
      fail "$name: no CG reports the quit"
    all_done "$mid" 300
    expect_once L2 "$dir" $(seq 0 150)
    echo "$name: $(echo "$got" | wc -l) of 300 tasks ran before the quit"
  fi
done

if [ $failures = 0 ]; then
  echo "PASS: CRTS_task_fetch across $cgs core groups"
  exit 0
fi
echo "FAIL: $failures check(s)"
exit 1
