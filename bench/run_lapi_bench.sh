#!/bin/sh
# run_lapi_bench.sh - the baselines, then LAPI, in one session: raw
# libfabric on the provider on its own (ofi_pingpong, provider defaults),
# Open MPI's MPI_Type_vector ping-pong (mpi_vector, only if it was built:
# CMake found an MPI), then lapi_bench, which times raw libfabric again in
# turn with LAPI (bench/ofi_raw.c, in its own processes: the provider
# settings LAPI makes apply to it too) and prints its ratios against that
# and against mpi_vector.
# Usage: bench/run_lapi_bench.sh BUILD_DIR PROVIDER [lapi_bench options]
#   PROVIDER: shm or 'tcp;ofi_rxm' (2 core groups; mpi_vector then uses
#   btl vader or tcp), or intra-cg (2 CPE tasks of one core group, memcpy
#   baseline, mpi_vector over vader)
set -e
B=${1:-build}; P=${2:-shm}; shift 2 || true
quick=
for a in "$@"; do [ "$a" = --quick ] && quick=--quick; done
mpi=$(mktemp)
trap 'rm -f "$mpi"' EXIT
if [ "$P" != intra-cg ]; then
  "$B/bin/lapirun" -n 2 --provider "$P" "$B/bench/ofi_pingpong" $quick >&2
fi
mpiopt=
if [ -x "$B/bench/mpi_vector" ] && command -v mpirun >/dev/null; then
  case "$P" in
    tcp*) btl=self,tcp ;;
    *) btl=self,vader ;;
  esac
  # Root in a container must be allowed; 2 ranks on however many cores;
  # yield when idle, as ofi_pingpong does, or a busy machine stalls it.
  if mpirun --allow-run-as-root --oversubscribe -np 2 --mca btl "$btl" \
       --mca mpi_yield_when_idle 1 \
       "$B/bench/mpi_vector" $quick > "$mpi"; then
    cat "$mpi" >&2
    mpiopt="--mpi $mpi"
  else
    echo "run_lapi_bench.sh: mpi_vector failed; no MPI figures" >&2
  fi
fi
# $mpiopt is two words or none: unquoted on purpose.
if [ "$P" = intra-cg ]; then
  "$B/bench/lapi_bench" --intra-cg $mpiopt "$@"
else
  "$B/bin/lapirun" -n 2 --provider "$P" "$B/bench/lapi_bench" $mpiopt "$@"
fi
