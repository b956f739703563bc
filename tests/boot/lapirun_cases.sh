#!/bin/bash
# lapirun_cases.sh - the lapirun and bootstrap tests, one case per ctest.
#
#   lapirun_cases.sh CASE LAPIRUN BOOT_CHECK BOOT_LAPI [EXAMPLES_DIR]
#
# Each case runs a job and checks lapirun's exit status and output.  Exit
# 0 pass, 1 fail, 77 skipped (the netns case where namespaces cannot be
# made).  Every job is bounded by `timeout`, so a hang fails the case.
set -u
case_name=$1 LAPIRUN=$2 CHECK=$3 LAPI=$4 EXAMPLES=${5-}
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

fail() {
  echo "FAIL $case_name: $*"
  echo "--- stdout"; cat "$out"
  echo "--- stderr"; cat "$err"
  exit 1
}

# run EXPECTED_STATUS lapirun-args...: run a job, check its exit status.
run() {
  local want=$1
  shift
  timeout -k 5 60 "$LAPIRUN" "$@" >"$out" 2>"$err"
  local rc=$?
  [ "$rc" -eq "$want" ] || fail "lapirun $* exited $rc, expected $want"
}

. "$(dirname "$0")/../lib_cases.sh"

case $case_name in
info)
  run 0 -n 2 -c 2 --provider tcp "$CHECK" info tcp
  count "$out" '^PASS info$' 2
  expect "$out" '^rank 1 size 2 local 1/2 tpc 2 kind lapirun'
  run 0 -n 4 --label "$CHECK" info
  count "$out" '^\[[0-3]\] PASS info$' 4
  ;;
apart)
  # Each CG through its own command: each alone on its "host".
  run 0 -n 3 --host-cmd 'env LAPIRUN_TEST_HOST=h{rank}' "$CHECK" info - apart
  count "$out" '^PASS info$' 3
  expect "$out" '^rank 2 size 3 local 0/1'
  ;;
ssh)
  # A stand-in for ssh that, like ssh, joins its words for a shell:
  # lapirun quotes them, so ';', spaces and quotes arrive intact.
  dir=$(mktemp -d)
  trap 'rm -rf "$out" "$err" "$dir"' EXIT
  cat >"$dir/ssh" <<'SH'
#!/bin/sh
while [ $# -gt 0 ]; do case $1 in -*) shift ;; *) break ;; esac; done
shift
exec sh -c "$*"
SH
  chmod +x "$dir/ssh"
  run 0 -n 2 --provider 'tcp;ofi_rxm' --host-cmd "$dir/ssh -n node{rank}" \
    "$CHECK" info 'tcp;ofi_rxm' apart
  count "$out" '^PASS info$' 2
  run 0 -n 1 --host-cmd "$dir/ssh node{rank}" "$CHECK" echo "a b" "it's" '$HOME'
  expect "$out" '^arg <a b>$'
  expect "$out" "^arg <it's>\$"
  expect "$out" '^arg <\$HOME>$'
  ;;
coll2)
  run 0 -n 2 "$CHECK" coll 500
  count "$out" '^PASS coll$' 2
  ;;
coll4)
  run 0 -n 4 --label "$CHECK" coll 500
  count "$out" '^\[[0-3]\] PASS coll$' 4
  run 0 -n 4 "$CHECK" fence 200
  count "$out" '^PASS fence$' 4
  ;;
leave)
  # Ranks 1 and 2 finish; rank 0's next barrier fails, naming a rank.
  LAPI_TIMEOUT=20 run 0 -n 3 "$CHECK" leave
  count "$out" '^PASS leave$' 1
  expect "$err" 'rank 0: collective round 1 cannot complete: rank [12] '
  ;;
mismatch)
  run 0 -n 3 "$CHECK" mismatch
  count "$out" '^PASS mismatch$' 3
  count "$err" "collective round 1 cannot complete: .*collective calls differ" 3
  ;;
exit)
  run 3 -n 3 "$CHECK" exit 1 3
  expect "$err" '^lapirun: rank 1 \(pid [0-9]+\) exited with code 3: ending the job$'
  count "$err" 'exited with code|killed by signal' 1
  ;;
noterm)
  # Rank 1 exits with 0 without LAPI_Term while rank 0 waits for it: the
  # exchange tells rank 0 (its wait fails, it passes), lapirun exits 70.
  run 70 -n 2 "$LAPI" noterm
  expect "$err" '^lapirun: rank 1 \(pid [0-9]+\) exited with code 0 without calling LAPI_Term'
  count "$err" 'exited with code|killed by signal' 1
  count "$out" '^PASS' 1
  ;;
signal)
  run 137 -n 3 "$CHECK" kill 2 9
  expect "$err" '^lapirun: rank 2 \(pid [0-9]+\) was killed by signal 9 .*ending the job$'
  ;;
prefix)
  run 0 -n 2 --label "$CHECK" print
  for r in 0 1; do
    count "$out" "^\[$r\] out line one of $r\$" 1
    count "$out" "^\[$r\] out line two of $r\$" 1
    count "$out" "^\[$r\] tail of $r\$" 1
    count "$err" "^\[$r\] err line of $r\$" 1
  done
  count "$out" '^\[[01]\] ' 6
  # Without --label the lines pass unchanged, each whole.
  run 0 -n 2 "$CHECK" print
  count "$out" '^out line (one|two) of [01]$' 4
  count "$err" '^err line of [01]$' 2
  ;;
sigterm)
  timeout -k 5 60 "$LAPIRUN" -v -n 2 "$CHECK" wait >"$out" 2>"$err" &
  lr=$!
  for _ in $(seq 200); do
    [ "$(grep -c waiting "$out")" -eq 2 ] && break
    sleep 0.1
  done
  [ "$(grep -c waiting "$out")" -eq 2 ] || fail "the job did not start"
  kill -TERM $lr
  wait $lr
  rc=$?
  [ $rc -eq 143 ] || fail "lapirun exited $rc after SIGTERM, expected 143"
  for pid in $(sed -n 's/^lapirun: rank [0-9]*: pid \([0-9]*\).*/\1/p' "$err"); do
    kill -0 "$pid" 2>/dev/null && fail "CG pid $pid survived"
  done
  count "$err" '^lapirun: rank [01]: pid ' 2
  ;;
unreachable)
  # Nobody listens on port 1: the CG fails within its timeout, saying so.
  LAPIRUN_ADDR=127.0.0.1:1 LAPIRUN_RANK=0 LAPIRUN_SIZE=2 \
    LAPIRUN_JOB_KEY=unreachable LAPI_TIMEOUT=2 \
    timeout -k 5 30 "$CHECK" unreachable >"$out" 2>"$err" ||
    fail "boot_check unreachable exited $?"
  expect "$out" '^PASS unreachable$'
  expect "$err" '^lapi boot: lapirun: rank 0: cannot reach the exchange at 127.0.0.1:1 within 2 s'
  count "$err" 'cannot reach' 1
  LAPIRUN_ADDR=127.0.0.1:1 LAPIRUN_RANK=1 LAPIRUN_SIZE=2 \
    LAPIRUN_JOB_KEY=unreachable LAPI_TIMEOUT=1 \
    timeout -k 5 30 "$LAPI" unreachable >"$out" 2>"$err" ||
    fail "boot_lapi unreachable exited $?"
  expect "$out" '^PASS unreachable$'
  expect "$err" '^lapi boot: lapirun: rank 1: cannot reach the exchange'
  ;;
lapi2)
  run 0 -n 2 --timeout 17 "$LAPI" job
  count "$out" '^PASS job$' 2
  expect "$out" '^task 1 of 2$'
  ;;
lapi4)
  run 0 -n 4 --timeout 17 --label "$LAPI" job
  count "$out" '^\[[0-3]\] PASS job$' 4
  expect "$out" '^\[3\] task 3 of 4$'
  ;;
usage)
  run 64 -n 0 "$CHECK" info
  expect "$err" '^lapirun: -n CGS must be an integer in 1\.\.4096'
  run 64 -n 2
  expect "$err" 'no program to run'
  run 64 --no-such-option -n 2 "$CHECK" info
  run 127 -n 2 /nonexistent/program
  expect "$err" '^lapirun: rank [01]: cannot run /nonexistent/program: No such file'
  run 0 --help
  expect "$out" '^usage: lapirun -n CGS'
  ;;
netns)
  # Two CGs in two network namespaces, joined to the exchange by veth
  # pairs on a bridge; the exchange listens on the bridge's address.
  tag=$(( $$ % 100000 ))
  sub=$(( $$ % 250 + 1 ))
  ns=lrb$tag br=lrbr$tag
  cleanup() {
    ip netns del "$ns-0" 2>/dev/null
    ip netns del "$ns-1" 2>/dev/null
    ip link del "$br" 2>/dev/null
    rm -f "$out" "$err"
  }
  trap cleanup EXIT
  if ! ip netns add "$ns-0" 2>/dev/null; then
    echo "SKIP netns: cannot create network namespaces here (needs root and ip netns)"
    exit 77
  fi
  ip netns add "$ns-1" && ip link add "$br" type bridge &&
    ip addr add "10.77.$sub.1/24" dev "$br" && ip link set "$br" up ||
    { echo "SKIP netns: cannot set up the bridge"; exit 77; }
  for i in 0 1; do
    ip link add "lrv$tag$i" type veth peer name "lrp$tag$i" &&
      ip link set "lrp$tag$i" netns "$ns-$i" &&
      ip link set "lrv$tag$i" master "$br" up &&
      ip -n "$ns-$i" addr add "10.77.$sub.$((i + 10))/24" dev "lrp$tag$i" &&
      ip -n "$ns-$i" link set "lrp$tag$i" up &&
      ip -n "$ns-$i" link set lo up ||
      { echo "SKIP netns: cannot set up the veth pairs"; exit 77; }
  done
  run 0 -n 2 --timeout 20 --exchange-addr "10.77.$sub.1" \
    --host-cmd "ip netns exec $ns-{rank}" "$CHECK" coll 200
  count "$out" '^PASS coll$' 2
  run 0 -n 2 --timeout 20 --exchange-addr "10.77.$sub.1" \
    --host-cmd "ip netns exec $ns-{rank}" "$CHECK" info - apart
  count "$out" '^PASS info$' 2
  # From inside a namespace the loopback exchange is out of reach.
  LAPI_TIMEOUT=2 run 1 -n 1 --host-cmd "ip netns exec $ns-{rank}" \
    "$CHECK" info
  expect "$err" 'cannot reach the exchange at 127\.0\.0\.1:'
  ;;
pmix)
  # The PMIx source under Open MPI's mpirun (needs a build with libpmix
  # and openmpi-bin): rank/size/local info, collectives, counters.
  if ! command -v mpirun >/dev/null; then
    echo "SKIP pmix: no mpirun (apt-get install openmpi-bin)"
    exit 77
  fi
  mpi="mpirun --allow-run-as-root --oversubscribe --mca btl self,tcp"
  for n in 2 4; do
    timeout -k 5 60 $mpi -n $n "$CHECK" pmixinfo >"$out" 2>"$err"
    rc=$?
    if grep -q 'kind singleton' "$out"; then
      echo "SKIP pmix: this build has no PMIx (apt-get install libpmix-dev)"
      exit 77
    fi
    [ $rc -eq 0 ] || fail "mpirun -n $n pmixinfo exited $rc"
    count "$out" '^PASS pmixinfo$' $n
    timeout -k 5 60 $mpi -n $n "$CHECK" coll 100 >"$out" 2>"$err" ||
      fail "mpirun -n $n coll exited $?"
    count "$out" '^PASS coll$' $n
    timeout -k 5 60 $mpi -n $n "$CHECK" fence 100 >"$out" 2>"$err" ||
      fail "mpirun -n $n fence exited $?"
    count "$out" '^PASS fence$' $n
    timeout -k 5 60 $mpi -n $n "$CHECK" late >"$out" 2>"$err" ||
      fail "mpirun -n $n late exited $?"
    count "$out" '^PASS late$' $n
  done
  timeout -k 5 60 $mpi -n 2 -x LAPI_TIMEOUT=9 "$LAPI" job >"$out" 2>"$err" &&
    grep -q 'task 1 of 2' "$out" || fail "LAPI_Init under mpirun"
  # A CG that exits without LAPI_Term while its peer waits for it: it
  # does not finalize PMIx, so mpirun ends the job instead of a hang.
  timeout -k 5 60 $mpi -n 2 "$LAPI" noterm >"$out" 2>"$err"
  rc=$?
  [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -ne 137 ] ||
    fail "mpirun -n 2 noterm exited $rc: the job was not ended"
  expect "$err" 'rank 1: exiting without LAPI_Term'
  ;;
launched)
  # A launcher's job size without its bootstrap (srun without PMIx, a PMI-2
  # launcher): LAPI_Init fails and says how to start the job; the size of
  # a Slurm allocation alone (a batch script: SLURM_NTASKS) is no job step.
  for v in SLURM_STEP_NUM_TASKS=2 PMI_SIZE=3 OMPI_COMM_WORLD_SIZE=2; do
    env -u PMIX_RANK -u LAPIRUN_ADDR "$v" timeout -k 5 60 "$LAPI" job \
      >"$out" 2>"$err" && fail "$v: LAPI_Init did not fail"
    expect "$err" "^lapi boot: ${v}: a launcher started this process as one of [0-9]+, but not through PMIx"
    expect "$out" 'LAPI_Init returned 413'
  done
  env -u PMIX_RANK -u LAPIRUN_ADDR SLURM_NTASKS=4 LAPIRUN_RANK=0 \
    LAPIRUN_SIZE=1 LAPI_TIMEOUT=5 timeout -k 5 60 "$LAPI" job >"$out" \
    2>"$err" || fail "SLURM_NTASKS=4 alone (a batch script): LAPI_Init failed"
  ;;
pmixhosts)
  # The PMIx source under Open MPI's mpirun on two "hosts": network
  # namespaces joined by a veth pair, each reached by mpirun's rsh agent
  # (a stand-in for ssh that enters the namespace), so the job spans
  # hosts and its CGs meet over tcp;ofi_rxm.
  command -v mpirun >/dev/null ||
    { echo "SKIP pmixhosts: no mpirun (apt-get install openmpi-bin)"; exit 77; }
  [ "$(id -u)" = 0 ] && command -v nsenter >/dev/null ||
    { echo "SKIP pmixhosts: needs root and nsenter for namespaces"; exit 77; }
  tag=$(( $$ % 100000 ))
  sub=$(( $$ % 200 + 20 ))
  ns=lph$tag dir=$(mktemp -d)
  cleanup() {
    ip netns del "$ns-0" 2>/dev/null
    ip netns del "$ns-1" 2>/dev/null
    rm -rf "$out" "$err" "$dir"
  }
  trap cleanup EXIT
  why=$(ns_pair "$ns" "10.81.$sub") ||
    { echo "SKIP pmixhosts: $why"; exit 77; }
  # mpirun's agent: "AGENT [options] HOST COMMAND-LINE" for host nodeI
  # runs the line in namespace I (nsenter: the network only), with a
  # TMPDIR of that host's own: Open MPI's session directories are named
  # alike on every host of one name, and two daemons racing to make them
  # in one /tmp failed ("mkdir ... File exists") 1 job in 11.
  mkdir -p "$dir/tmp-node0" "$dir/tmp-node1"
  cat >"$dir/agent" <<EOF
#!/bin/bash
while [ "\${1#-}" != "\$1" ]; do shift; done
h=\$1
shift
export TMPDIR=$dir/tmp-\$h
exec nsenter --net=/run/netns/$ns-\${h#node} sh -c "\$*"
EOF
  chmod +x "$dir/agent"
  printf 'node0 slots=2\nnode1 slots=2\n' >"$dir/hosts"
  mpi="nsenter --net=/run/netns/$ns-0 mpirun --allow-run-as-root
    --oversubscribe --mca plm_rsh_agent $dir/agent --mca btl self,tcp
    --mca rtc_hwloc_vmhole none
    --mca oob_tcp_if_include lapi0 --hostfile $dir/hosts --map-by node"
  for n in 2 4; do
    timeout -k 5 60 $mpi -n $n "$CHECK" pmixinfo >"$out" 2>"$err" ||
      fail "mpirun on 2 hosts -n $n pmixinfo exited $?"
    count "$out" '^PASS pmixinfo$' $n
    count "$out" "local [01]/$((n / 2)) " $n
    timeout -k 5 60 $mpi -n $n "$CHECK" fence 100 >"$out" 2>"$err" ||
      fail "mpirun on 2 hosts -n $n fence exited $?"
    count "$out" '^PASS fence$' $n
  done
  timeout -k 5 60 $mpi -n 4 -x LAPI_TIMEOUT=9 "$LAPI" job >"$out" 2>"$err" ||
    fail "LAPI_Init under mpirun on 2 hosts exited $?"
  count "$out" '^PASS job$' 4
  if [ -n "$EXAMPLES" ]; then
    timeout -k 5 90 $mpi -n 4 -x LAPI_DEBUG=3 \
      "$EXAMPLES/lapi_amsendv_vectors" >"$out" 2>"$err" ||
      fail "lapi_amsendv_vectors under mpirun on 2 hosts exited $?"
    count "$out" '^PASS' 4
    count "$err" 'on provider tcp;ofi_rxm' 4
  fi
  ;;
*)
  echo "unknown case $case_name"
  exit 1
  ;;
esac
echo "PASS $case_name"
