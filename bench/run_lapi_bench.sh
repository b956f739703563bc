#!/bin/sh
# run_lapi_bench.sh - the baselines, then LAPI, on one provider in one
# session: raw libfabric (ofi_pingpong), Open MPI's MPI_Type_vector
# ping-pong (mpi_vector, only if it was built: CMake found an MPI), then
# lapi_bench, which prints its ratios against both.
# Usage: bench/run_lapi_bench.sh BUILD_DIR PROVIDER [--quick] [--csv]
#   PROVIDER: shm or 'tcp;ofi_rxm' (mpi_vector then uses btl vader or tcp)
set -e
B=${1:-build}; P=${2:-shm}; shift 2 || true
quick=
for a in "$@"; do [ "$a" = --quick ] && quick=--quick; done
raw=$(mktemp); mpi=$(mktemp)
trap 'rm -f "$raw" "$mpi"' EXIT
"$B/bin/lapirun" -n 2 --provider "$P" "$B/bench/ofi_pingpong" $quick \
  | tee "$raw" >&2
mpiopt=
if [ -x "$B/bench/mpi_vector" ] && command -v mpirun >/dev/null; then
  case "$P" in
    shm*) btl=self,vader ;;
    *) btl=self,tcp ;;
  esac
  # Root in a container: allow it; 2 ranks on however many cores there are.
  if mpirun --allow-run-as-root --oversubscribe -np 2 --mca btl "$btl" \
       "$B/bench/mpi_vector" $quick > "$mpi" 2>&2; then
    cat "$mpi" >&2
    mpiopt="--mpi $mpi"
  else
    echo "run_lapi_bench.sh: mpi_vector failed; no MPI figures" >&2
  fi
fi
# shellcheck disable=SC2086 # $mpiopt is two words or none
"$B/bin/lapirun" -n 2 --provider "$P" "$B/bench/lapi_bench" --raw "$raw" \
  $mpiopt "$@"
