#!/bin/sh
# run_lapi_bench.sh - raw libfabric baseline then LAPI, same provider, same
# session; lapi_bench prints its ratios against ofi_raw's figures.
# Usage: bench/run_lapi_bench.sh BUILD_DIR PROVIDER [--quick] [--csv]
set -e
B=${1:-build}; P=${2:-shm}; shift 2 || true
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
"$B/bin/lapirun" -n 2 --provider "$P" "$B/bench/ofi_raw" "$@" | tee "$raw"
"$B/bin/lapirun" -n 2 --provider "$P" "$B/bench/lapi_bench" --raw "$raw" "$@"
