#!/bin/sh
# SPDX-License-Identifier: MIT
#
# wal-stalls.sh: run wal-stalls (bench/wal-stalls.c) and print its Markdown table: a WAL
# writer's append and fdatasync latency and the stalls behind them, against a bulk buffered
# writer that is untagged, low, or low with IOTIER_DIRTY_BUDGET, and the bulk writer's
# throughput. Needs root (loop device, mount, vm.dirty_*, BPF), mkfs.ext4. The dirty limits
# are lowered for the run and restored when it ends, also on failure or Ctrl-C.
#
# usage: sudo bench/wal-stalls.sh [BUILDDIR] [ROUNDS] [SECONDS]
set -eu
cd "$(dirname "$0")/.."
builddir=${1:-build}
rounds=${2:-3}
secs=${3:-10}
[ "$(id -u)" = 0 ] || { echo "wal-stalls: needs root" >&2; exit 1; }
bench=$builddir/bench/wal-stalls
shim=$builddir/shim/libiotier.so
[ -x "$bench" ] && [ -f "$shim" ] || { echo "wal-stalls: build first ($bench, $shim)" >&2; exit 1; }
echo "wal-stalls: $rounds rounds x 4 variants x ${secs}s; kernel $(uname -r), $(nproc) CPUs" >&2
exec "$bench" "$(realpath "$shim")" "$rounds" "$secs"
