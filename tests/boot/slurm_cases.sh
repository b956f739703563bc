#!/bin/bash
# slurm_cases.sh - LAPI jobs started the way a Slurm user starts them,
# `srun --mpi=pmix`, on a Slurm cluster of the case's own: munged,
# slurmctld and slurmd with their configuration, state, sockets and logs
# in a private directory and ports of their own (nothing in /etc, no
# system service), ended on any exit.
#
#   slurm_cases.sh CASE BOOT_CHECK BOOT_LAPI EXAMPLES_DIR [READMID TASKFETCH...]
#
#   node   one node (this host): 2 and 4 CGs, provider shm by default, and
#          examples/slurm/lapi_job.sbatch submitted with sbatch
#   nodes  two nodes, each in a network namespace of its own joined by a
#          veth pair, so the CGs of different nodes meet over tcp;ofi_rxm;
#          a CG killed on one node; with READMID and TASKFETCH programs,
#          also CRTS_task_fetch across the nodes (tests/taskfetch/run.sh,
#          srun for lapirun)
#
# Exit 0 pass, 1 fail, 77 skipped: Slurm not installed (apt-get install
# slurmd slurmctld slurm-client munge), not root, a build without PMIx,
# or (nodes) no network namespaces.  Every srun is bounded by `timeout`.
set -u
case_name=$1 CHECK=$2 LAPI=$3 EXAMPLES=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)

skip() { echo "SKIP slurm $case_name: $*"; exit 77; }
for c in srun sbatch slurmctld slurmd munged sinfo nsenter unshare ss; do
  command -v $c >/dev/null ||
    skip "no $c (apt-get install slurmd slurmctld slurm-client munge)"
done
[ "$(id -u)" = 0 ] || skip "slurmd must run as root to start jobs"

dir=$(mktemp -d /tmp/lapi-slurm.XXXXXX)
out=$dir/out err=$dir/err
tag=$(( $$ % 100000 ))
ns=lsl$tag
netns=0

# stop_pidfile FILE: end the daemon FILE names (TERM, then KILL after 5 s).
# stop_pidfile FILE --check: only say whether it may run (1: it ended).
stop_pidfile() {
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 0 # none (yet): nothing to end
  if [ "${2-}" = --check ]; then
    kill -0 "$pid" 2>/dev/null
    return
  fi
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null
}

cleanup() {
  for f in "$dir"/slurmd-*.pid "$dir"/slurmctld.pid "$dir"/munged.pid; do
    [ -e "$f" ] && stop_pidfile "$f"
  done
  if [ "$netns" = 1 ]; then
    ip netns del "$ns-0" 2>/dev/null
    ip netns del "$ns-1" 2>/dev/null
  fi
  rm -rf "$dir"
}
trap cleanup EXIT

fail() {
  echo "FAIL slurm $case_name: $*"
  echo "--- stdout"; cat "$out"
  echo "--- stderr"; cat "$err"
  for f in "$dir"/*.log; do
    echo "--- $(basename "$f") (last lines)"; tail -n 15 "$f"
  done
  exit 1
}

. "$here/../lib_cases.sh"

# in_ns I CMD...: run CMD in node I's namespace (nodes), or here (node).
# nsenter changes the network namespace only: `ip netns exec` would also
# mount a /sys of its own, without the cgroup tree slurmd needs.
in_ns() {
  local i=$1
  shift
  if [ "$netns" = 1 ]; then
    nsenter --net="/run/netns/$ns-$i" "$@"
  else
    "$@"
  fi
}

# job EXPECTED_STATUS srun-args...: one srun, its exit status checked.
job() {
  local want=$1
  shift
  in_ns 0 timeout -k 5 90 srun --mpi=pmix --overcommit "$@" >"$out" 2>"$err"
  local rc=$?
  [ "$rc" -eq "$want" ] || fail "srun $* exited $rc, expected $want"
}

# noterm srun-args...: a CG exits (code 0) without LAPI_Term while its
# peer waits for it with no time limit.  The wait must end: either the
# job's exchange reports the leaver and the wait fails (task 0 prints
# PASS), or Slurm ends the job first because PMIx was left unfinalized
# (a failing exit).  A hang is the failure.
noterm() {
  local start=$SECONDS
  in_ns 0 timeout -k 5 90 srun --mpi=pmix --overcommit "$@" "$LAPI" noterm \
    >"$out" 2>"$err"
  local rc=$?
  # 137 is also srun's status when Slurm kills the job's task.
  [ $rc -ne 124 ] && [ $((SECONDS - start)) -lt 85 ] ||
    fail "srun $* noterm hung"
  [ $rc -ne 0 ] || grep -q '^PASS noterm$' "$out" ||
    fail "srun $* noterm exited 0, and task 0's wait did not fail"
  expect "$err" 'rank 1: exiting without LAPI_Term'
}

# cluster ADDR0 [ADDR1]: munged, slurmctld on node 0, one slurmd a node.
cluster() {
  local host port
  host=$(hostname -s)
  # Two ports of our own, below the kernel's ephemeral range and with no
  # listener on them now.
  port=$(( 20000 + (tag % 6000) * 2 ))
  for _ in $(seq 50); do
    [ -z "$(in_ns 0 ss -Hltn "( sport = :$port or sport = :$((port + 1)) )")" ] &&
      break
    port=$(( 20000 + (port - 20000 + 2) % 12000 ))
  done
  head -c 1024 /dev/urandom >"$dir/munge.key"
  chmod 0400 "$dir/munge.key"
  # A munged of our own, on our own socket and key: the job's credentials
  # do not depend on a system munge being set up.
  munged --force --socket="$dir/munge.sock" --key-file="$dir/munge.key" \
    --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" \
    --seed-file="$dir/munged.seed" 2>>"$err" ||
    fail "munged did not start"
  {
    echo "ClusterName=lapitest"
    echo "SlurmctldHost=$host($1)"
    echo "SlurmctldPort=$port"
    echo "SlurmdPort=$((port + 1))"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "AuthType=auth/munge"
    echo "AuthInfo=socket=$dir/munge.sock"
    echo "CredType=cred/munge"
    echo "StateSaveLocation=$dir/state"
    echo "SlurmdSpoolDir=$dir/spool-%n"
    echo "SlurmctldPidFile=$dir/slurmctld.pid"
    echo "SlurmdPidFile=$dir/slurmd-%n.pid"
    echo "SlurmctldLogFile=$dir/slurmctld.log"
    echo "SlurmdLogFile=$dir/slurmd-%n.log"
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "AccountingStorageType=accounting_storage/none"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_Core"
    echo "ReturnToService=2"
    echo "MpiDefault=none"
    # One CPU a node, whatever this machine has (ctest may run pinned to
    # one core); the jobs ask for --overcommit.
    local i=0
    for a in "$@"; do
      echo "NodeName=lapi$i NodeAddr=$a CPUs=1 State=UNKNOWN"
      i=$((i + 1))
    done
    echo "PartitionName=lapi Nodes=ALL Default=YES MaxTime=10 State=UP OverSubscribe=FORCE"
  } >"$dir/slurm.conf"
  mkdir -p "$dir/state" "$dir/spool-lapi0" "$dir/spool-lapi1"
  export SLURM_CONF=$dir/slurm.conf
  in_ns 0 slurmctld -f "$SLURM_CONF" 2>>"$err" || fail "slurmctld did not start"
  # PMIx's client directories (spmix_appdir_UID_JOB.STEP) are named
  # alike on every node: each slurmd, and the steps it starts, sees a
  # directory of its own node at $dir/tmp (as each real node has its
  # own /tmp).
  echo "PMIxCliTmpDirBase=$dir/tmp" >"$dir/mpi.conf"
  mkdir -p "$dir/tmp"
  for ((i = 0; i < $#; i++)); do
    mkdir -p "$dir/tmp-lapi$i"
    in_ns "$i" unshare --mount --propagation private sh -c \
      'mount --bind "$1" "$2" && exec slurmd -f "$3" -N "$4"' \
      sh "$dir/tmp-lapi$i" "$dir/tmp" "$SLURM_CONF" "lapi$i" 2>>"$err" ||
      fail "slurmd lapi$i did not start"
  done
  # Up when every node reports idle, within 30 s (sinfo itself waits long
  # for a controller that is not there: each call gets 5 s).
  local end=$((SECONDS + 30))
  while [ $SECONDS -lt $end ]; do
    [ "$(in_ns 0 timeout 5 sinfo -h -N -t idle -o %N 2>/dev/null |
         sort -u | wc -l)" -eq $# ] && return 0
    stop_pidfile "$dir/slurmctld.pid" --check ||
      fail "slurmctld ended (its log, below, says why)"
    sleep 0.2
  done
  in_ns 0 timeout 5 sinfo -N >>"$err" 2>&1
  fail "the nodes did not come up within 30 s"
}

case $case_name in
node)
  cluster 127.0.0.1
  # PMIx's view of the job against Slurm's environment.
  for n in 2 4; do
    job 0 -n $n "$CHECK" pmixinfo $n
    if grep -q 'kind singleton' "$out"; then
      skip "this build has no PMIx (apt-get install libpmix-dev)"
    fi
    count "$out" '^PASS pmixinfo$' $n
  done
  job 0 -n 4 "$CHECK" coll 100
  count "$out" '^PASS coll$' 4
  job 0 -n 4 "$CHECK" fence 100
  count "$out" '^PASS fence$' 4
  # LAPI_Init, Gfence and Address_init; the environment reaches every CG.
  LAPI_TIMEOUT=9 job 0 -n 2 "$LAPI" job
  expect "$out" '^task 1 of 2$'
  count "$out" '^PASS job$' 2
  # A user's program: LAPI_Amsendv with the three vector types, on shm.
  LAPI_DEBUG=3 job 0 -n 4 "$EXAMPLES/lapi_amsendv_vectors"
  count "$out" '^PASS' 4
  expect "$err" 'on provider shm'
  noterm -n 2
  # The batch script of examples/slurm, as a user submits it.
  in_ns 0 timeout -k 5 120 sbatch --wait --overcommit -n 4 -o "$dir/batch.out" \
    "$here/../../examples/slurm/lapi_job.sbatch" \
    "$EXAMPLES/lapi_amsendv_vectors" >"$out" 2>"$err" ||
    { cat "$dir/batch.out" >>"$err"; fail "sbatch lapi_job.sbatch failed"; }
  count "$dir/batch.out" '^PASS' 4
  count "$dir/batch.out" 'on provider shm' 4
  # srun without --mpi=pmix (this cluster's default is none): LAPI_Init
  # must fail and say how to start the job, not run two jobs of one CG.
  in_ns 0 timeout -k 5 90 srun --overcommit -n 2 "$LAPI" job >"$out" 2>"$err"
  [ $? -ne 0 ] || fail "srun -n 2 without PMIx: LAPI_Init did not fail"
  count "$err" 'SLURM_STEP_NUM_TASKS=2: a launcher started this process as one of 2, but not through PMIx' 2
  ;;
nodes)
  command -v ip >/dev/null || skip "no ip command (apt-get install iproute2)"
  netns=1
  sub=$(( $$ % 200 + 20 ))
  why=$(ns_pair "$ns" "10.79.$sub") || skip "$why"
  cluster "10.79.$sub.1" "10.79.$sub.2"
  job 0 -N 2 -n 2 "$CHECK" pmixinfo 1
  if grep -q 'kind singleton' "$out"; then
    skip "this build has no PMIx (apt-get install libpmix-dev)"
  fi
  count "$out" '^PASS pmixinfo$' 2
  job 0 -N 2 -n 4 "$CHECK" pmixinfo 2
  count "$out" '^PASS pmixinfo$' 4
  job 0 -N 2 -n 4 "$CHECK" coll 100
  count "$out" '^PASS coll$' 4
  # No CG leaves a barrier or an all-gather before all have entered it
  # (with PMIx fences under Slurm's tree collective, CGs of one node did).
  job 0 -N 2 -n 4 "$CHECK" fence 200
  count "$out" '^PASS fence$' 4
  # Rank 0 exits first; the CGs of both nodes still count.
  job 0 -N 2 -n 4 "$CHECK" late
  count "$out" '^PASS late$' 4
  LAPI_TIMEOUT=9 job 0 -N 2 -n 2 "$LAPI" job
  count "$out" '^PASS job$' 2
  # Two CGs a node; the job spans nodes, so every pair meets over
  # tcp;ofi_rxm, and the address it uses must be the veth's.
  LAPI_DEBUG=3 job 0 -N 2 -n 4 "$EXAMPLES/lapi_amsendv_vectors"
  count "$out" '^PASS' 4
  expect "$err" 'on provider tcp'
  LAPI_DEBUG=3 job 0 -N 2 -n 2 "$EXAMPLES/lapi_put_get_rmw"
  count "$out" '^PASS' 2
  # CPE tasks: 2 core groups of 4 tasks, one a node (docs/CPE-TASKS.md).
  LAPIRUN_TASKS_PER_CG=4 CRTS_NUM_CPES=4 job 0 -N 2 -n 2 \
    "$EXAMPLES/crts_lapi_halo"
  expect "$out" '^halo: tasks 0\.\.3 of 8, .*: PASS$'
  expect "$out" '^halo: tasks 4\.\.7 of 8, .*: PASS$'
  noterm -N 2 -n 2
  # A CG dies (_exit, no LAPI_Term) alone on the second node: the two on
  # the first see their operations to it fail within TIMEOUT, then end
  # (tests/ofi/ofi_killed.c, built next to boot_check).
  killed=$(dirname "$CHECK")/ofi_killed
  if [ -x "$killed" ]; then
    job 0 -N 2 -n 3 "$killed"
    count "$out" '^ofi_killed task [01] of 3: PASS' 2
  fi
  if [ $# -ge 2 ]; then
    # CRTS_task_fetch's checks, with srun on both nodes in lapirun's place:
    # run.sh calls "LAUNCHER -n N --timeout T PROG ARGS...".
    cat >"$dir/srun-for-lapirun" <<EOF
#!/bin/bash
[ "\$1" = -n ] && [ "\$3" = --timeout ] || exit 2
n=\$2 t=\$4
shift 4
export LAPI_TIMEOUT=\$t SLURM_CONF=$SLURM_CONF
exec nsenter --net=/run/netns/$ns-0 srun --mpi=pmix --overcommit -N 2 -n \$n "\$@"
EOF
    chmod +x "$dir/srun-for-lapirun"
    bash "$here/../taskfetch/run.sh" "$dir/srun-for-lapirun" "$@" >"$out" \
      2>"$err" || fail "CRTS_task_fetch under srun on two nodes"
    expect "$out" '^PASS: CRTS_task_fetch'
  fi
  ;;
*)
  echo "unknown case $case_name"
  exit 1
  ;;
esac
echo "PASS slurm $case_name"
