# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# tmpfs-loop.sh: what the overhead benchmarks share, sourced after `set -euo pipefail`.
# Arguments as the benchmark's: [BUILDDIR] [ROUNDS] [SECONDS]; sets builddir, rounds, secs
# and iotier, and checks root and the build. Cleanups come from tests/lib/testlib.sh.
#   tmpfs_loop SCHEDULER [LOSETUP_OPTION...]: a 512 MiB file on a 600 MiB tmpfs behind a
#     4 KiB-sector loop device, so that the device runs at memory speed and the tracer's
#     cost shows; sets work, loop and dev, and all of it goes when the benchmark ends.
# shellcheck source=tests/lib/testlib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tests/lib/testlib.sh"

bench=$(basename "$0" .sh)
builddir=${1:-build}
# shellcheck disable=SC2034 # read by the benchmark that sources this
rounds=${2:-5}
# shellcheck disable=SC2034
secs=${3:-10}
iotier=$builddir/tools/iotier
[ "$(id -u)" = 0 ] || { echo "$bench: needs root" >&2; exit 1; }
[ -x "$iotier" ] || { echo "$bench: no $iotier; build first" >&2; exit 1; }

tmpfs_loop() {
	local scheduler=$1
	shift
	work=''
	test_tmpdir work /tmp/iotier-bench.XXXXXX
	mkdir "$work/tmpfs"
	mount -t tmpfs -o size=600m iotier-bench "$work/tmpfs"
	test_cleanup_add "umount '$work/tmpfs' 2>/dev/null || true"
	dd if=/dev/zero of="$work/tmpfs/backing" bs=1M count=512 status=none
	# The options are wishes (--direct-io=on): without them if the kernel refuses.
	loop=$(losetup --find --show -b 4096 "$@" "$work/tmpfs/backing" 2>/dev/null ||
	       losetup --find --show -b 4096 "$work/tmpfs/backing")
	test_cleanup_add "losetup -d '$loop' 2>/dev/null || true"
	dev=${loop#/dev/}
	echo "$scheduler" > "/sys/block/$dev/queue/scheduler"
}
