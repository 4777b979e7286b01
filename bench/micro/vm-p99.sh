#!/bin/sh
# SPDX-License-Identifier: MIT
#
# vm-p99.sh: foreground read latency against a buffered background writer, on a real cgroup
# v2 kernel in the throwaway VM of tests/vm/ (bfq on virtio disks, cgroup_no_v1=all). In one
# boot, vm-checks' bench mode alternates two placements of the same writer, twice each:
# left in place (the root cgroup, like the foreground) and moved by cgroup_tier into
# iotier-low.<pid> at weight 10. The foreground does 4 KiB O_DIRECT random reads on the same
# disk and reports P50/P99. With cgroup writeback the flusher's writes are charged to the
# writer's cgroup, so only the second placement lets bfq hold them back.
#
# usage: bench/micro/vm-p99.sh [BUILDDIR [SECONDS]]   (root; default build, 10 s per phase)
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build}
seconds=${2:-10}
ninja -C "$build" tests/vm-checks tools/iotier shim/libiotier.so.0.1.0 tests/cgroup-probe >/dev/null
exec tests/vm/test-vm.sh "$build/vm-cache" "$build/tests/vm-checks" "$build/tools/iotier" \
  "$build/shim/libiotier.so.0" "$build/tests/cgroup-probe" bench "$seconds"
