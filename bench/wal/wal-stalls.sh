#!/bin/bash
# SPDX-License-Identifier: MIT
#
# wal-stalls.sh: run wal-stalls (bench/wal/wal-stalls.c) and print its Markdown table: a WAL
# writer's append and fdatasync latency and the stalls behind them, against a bulk buffered
# writer that is untagged, low, or low with IOTIER_DIRTY_BUDGET, and the bulk writer's
# throughput. The disk is bench/run's (bench/common/rig.sh): the reference disk by default, a loop
# device on the host's disk, or a whole disk you give up; ext4 on it with driver depth 4 and
# mq-deadline. Needs root (the disk, mount, vm.dirty_*, BPF), mkfs.ext4. The disk is torn
# down and the dirty limits (lowered for the run) restored when it ends, also on failure or
# Ctrl-C.
#
# usage: sudo bench/wal/wal-stalls.sh [--disk ref[:PRESET]|loop|/dev/X] [BUILDDIR] [ROUNDS] [SECONDS]
#        (defaults: ref:sata, build, 3 rounds, 10 s per variant)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
die2() { echo "wal-stalls: $*" >&2; exit 2; }
log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

disk=ref:sata
case ${1:-} in
--disk) [ $# -ge 2 ] || die2 "--disk needs ref[:PRESET], loop or /dev/X"; disk=$2; shift 2 ;;
--disk=*) disk=${1#--disk=}; shift ;;
-*) die2 "unknown option '$1' (usage: bench/wal/wal-stalls.sh [--disk D] [BUILDDIR] [ROUNDS] [SECONDS])" ;;
esac
[ $# -le 3 ] || die2 "too many arguments (usage: bench/wal/wal-stalls.sh [--disk D] [BUILDDIR] [ROUNDS] [SECONDS])"
builddir=${1:-build}
rounds=${2:-3}
secs=${3:-10}
if ! [[ $rounds =~ ^[0-9]+$ ]] || [ "$rounds" -lt 1 ] || [ "$rounds" -gt 16 ]; then
	die2 "ROUNDS '$rounds': want 1..16"
fi
if ! [[ $secs =~ ^[0-9]+(\.[0-9]+)?$ && $secs =~ [1-9] ]]; then
	die2 "SECONDS '$secs': want a number > 0"
fi
# shellcheck source=bench/common/rig.sh
. "$here/../common/rig.sh"
rig_check "$disk"

[ "$(id -u)" = 0 ] || { echo "wal-stalls: needs root" >&2; exit 1; }
bench=$builddir/bench/wal-stalls
shim=$builddir/shim/libiotier.so
if ! [ -x "$bench" ] || ! [ -f "$shim" ]; then
	echo "wal-stalls: build first ($bench, $shim)" >&2
	exit 1
fi
command -v mkfs.ext4 >/dev/null || { echo "wal-stalls: mkfs.ext4 not found; run scripts/setup" >&2; exit 1; }

work=$(mktemp -d /var/tmp/iotier-walstalls.XXXXXX)
mnt='' child=''
# shellcheck disable=SC2317 # run by the traps
cleanup() {
	local rc=$?
	trap - EXIT
	trap "" INT TERM # the teardown runs to its end
	# wal-stalls restores the dirty limits on any exit; its worker dies with it.
	if [ -n "$child" ]; then
		kill -TERM "$child" 2>/dev/null || true
		wait "$child" 2>/dev/null || true
	fi
	if [ -n "$mnt" ] && mountpoint -q "$mnt"; then
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			umount "$mnt" 2>/dev/null && break
			sleep 0.5
		done
		mountpoint -q "$mnt" && umount -l "$mnt"
	fi
	rig_down
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

rig_up "$disk" $((2 << 30))
# No lazy inode-table or journal initialisation: ext4lazyinit would write during the runs.
mkfs.ext4 -q -F -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 "/dev/$rig_dev"
mnt=$work/mnt
mkdir "$mnt"
mount "/dev/$rig_dev" "$mnt"
log "rig: $rig_desc; driver depth and scheduler depth $(cat "$work/depths"); ext4 at $mnt"
log "wal-stalls: $rounds rounds x 4 variants x ${secs}s; kernel $(uname -r), $(nproc) CPUs"
# In the background so that a signal to us is handled at once (bash runs traps only between
# commands); cleanup ends it and waits before the unmount.
"$bench" "$(realpath "$shim")" "$mnt" "$rounds" "$secs" &
child=$!
rc=0
wait "$child" || rc=$?
child=''
exit "$rc"
