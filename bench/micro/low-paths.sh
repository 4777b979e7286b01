#!/bin/sh
# SPDX-License-Identifier: MIT
#
# low-paths.sh: run low-paths-bench (bench/micro/low-paths-bench.c) and print its Markdown table:
# foreground P99, writer throughput and bytes written back outside class idle, for an
# untagged writer, a low writer, and a low writer with writeback steering, side by side in
# one run. Needs root (loop device, mount, vm.dirty_*), BPF, mkfs.ext4. The dirty limits
# are lowered for the run and restored when it ends, also on failure or Ctrl-C.
#
# usage: sudo bench/micro/low-paths.sh [BUILDDIR] [ROUNDS] [SECONDS]
set -eu
cd "$(dirname "$0")/../.."
builddir=${1:-build}
rounds=${2:-3}
secs=${3:-10}
[ "$(id -u)" = 0 ] || { echo "low-paths: needs root" >&2; exit 1; }
bench=$builddir/bench/low-paths-bench
shim=$builddir/shim/libiotier.so.0
[ -x "$bench" ] && [ -f "$shim" ] || { echo "low-paths: build first ($bench, $shim)" >&2; exit 1; }
echo "low-paths: $rounds rounds x 3 variants x ${secs}s; kernel $(uname -r), $(nproc) CPUs" >&2
exec "$bench" "$(realpath "$shim")" "$rounds" "$secs"
