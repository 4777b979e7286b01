# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034 # work, log, die2 come from bench/run, which reads rig_*
# SPDX-License-Identifier: MIT
#
# bench/common/rig.sh: the disk under bench/run, sourced by it (and by bench/postgres/pg-vacuum,
# bench/wal/wal-stalls.sh and examples/demo/run-demo). Three kinds (--disk):
#   ref[:PRESET]  the reference disk (bench/refdisk/refdisk, docs/refdisk.md): a model's speed, the
#                 same on every host; the default, preset sata
#   loop          a loop device on a file on the host's own disk (the old rig: its speed is
#                 whatever the host's virtio disk does)
#   /dev/X        a whole block device you give up to the benchmark (it is reformatted)
# Every kind gets the same queue: driver depth 4, so that further requests wait in the
# scheduler where priority acts (bench/refdisk/refdisk sched). Needs: work, log, die2; finds
# the reference disk's driver next to itself, whoever sources it.
#
#   rig_check DISK      validate --disk before anything starts (exit 2 on bad input)
#   rig_up DISK SIZE    build it; sets rig_dev (e.g. loop3), rig_desc (one line for the
#                       report), rig_bw (the disk's bandwidth in bytes/s, 0 when unknown)
#   rig_bdi_defaults    the device's writeback limits back to the kernel's defaults
#   set_scheduler S     switch the scheduler, keeping the driver depth (checked through
#                       debugfs, or by the in-flight peak where the kernel has no block
#                       debugfs; a depth it cannot check is logged, not fatal)
#   rig_has_sched S     can the disk take scheduler S (no bfq on some kernels)
#   rig_depth_note      one line: the depths and how the driver's was checked
#   rig_trim MNT        give freed blocks back (the reference disk's memory)
#   rig_down            undo rig_up; idempotent, for the EXIT trap
# The driver of the reference disk, found from this file (bench/common/ -> bench/refdisk/refdisk/).
rig_refdisk=$(cd "$(dirname "${BASH_SOURCE[0]}")/../refdisk" && pwd)/refdisk

rig_kind='' rig_preset='' rig_dev='' rig_desc='' rig_state='' rig_loop='' rig_old_sched='' rig_bw=0

rig_check() {
	case $1 in
	ref) rig_kind=ref rig_preset=sata ;;
	ref:*)
		rig_kind=ref rig_preset=${1#ref:}
		"$rig_refdisk" presets | grep -q "^$rig_preset " ||
			die2 "unknown reference disk preset '$rig_preset' (presets: $("$rig_refdisk" presets | cut -d' ' -f1 | tr '\n' ' '))" ;;
	loop) rig_kind=loop ;;
	/dev/*)
		rig_kind=dev
		[ -b "$1" ] || die2 "--disk $1 is not a block device"
		[ -d "/sys/block/${1#/dev/}/queue" ] || die2 "--disk $1 is not a whole disk (no queue in /sys/block)"
		if findmnt -rn -S "$1" >/dev/null || grep -q "^$1" /proc/swaps; then
			die2 "--disk $1 is in use (mounted or swap)"
		fi ;;
	*) die2 "--disk '$1': want ref[:PRESET], loop or /dev/X" ;;
	esac
}

set_scheduler() {
	local depths rc=0
	depths=$("$rig_refdisk" sched "$rig_dev" "$1") || rc=$?
	case $rc in
	0) ;;
	3) log "rig: $rig_dev: this kernel has no scheduler $1"; return 1 ;;
	*) log "rig: cannot set scheduler $1 on $rig_dev (refdisk sched: exit $rc, its reason above)"; return 1 ;;
	esac
	# said once per run, not at every switch: the check is the same each time
	if [[ $depths == *unchecked ]] && [ ! -f "$work/depths" ]; then
		log "rig: $rig_dev: driver depth NOT checked (no block debugfs, and the in-flight probe (fio) could not fill the queue); set to 4 under none, as nr_requests read back"
	fi
	echo "$depths" >"$work/depths"
}

# rig_has_sched S: can the rig's disk take scheduler S (bfq: a module, loaded on demand;
# absent from kernels built without it)?
rig_has_sched() {
	"$rig_refdisk" has-sched "$rig_dev" "$1"
}

# rig_depth_note: the depths and how the driver's was known (debugfs, the in-flight peak
# on a kernel without block debugfs, or not at all), one line for the log.
rig_depth_note() {
	local d s how
	read -r d s how <"$work/depths"
	case $how in
	debugfs) echo "driver depth $d (read from debugfs), scheduler depth $s" ;;
	inflight) echo "driver depth $d (no block debugfs: the peak of /sys/block/$rig_dev/inflight under 16 concurrent reads), scheduler depth $s" ;;
	*) echo "driver depth not checked (set to 4 under none), scheduler depth $s" ;;
	esac
}

rig_up() {
	local size=$2
	case $rig_kind in
	ref)
		rig_state=$("$rig_refdisk" up --preset "$rig_preset" --size "$size" --name "bench-$$") || return 1
		rig_dev=$(cat "$rig_state/dev")
		local bw ch
		read -r _ bw ch <"$rig_state/model"
		rig_bw=$((bw * ch))
		rig_desc="the reference disk, preset \`$rig_preset\` (model $(cat "$rig_state/model"): latency µs, bytes/s per channel, channels; \`bench/refdisk/refdisk\`, docs/refdisk.md), loop device \`$rig_dev\` with direct I/O on its FUSE file" ;;
	loop)
		truncate -s "$size" "$work/backing"
		rig_loop=$(losetup --find --show --direct-io=on "$work/backing")
		rig_dev=${rig_loop#/dev/}
		rig_desc="a file on the host's disk ($(df --output=source,fstype "$work" | tail -1 | tr -s ' ')) behind a loop device (\`$rig_dev\`, direct I/O)" ;;
	dev)
		rig_dev=${1#/dev/}
		rig_old_sched=$(sed 's/.*\[\(.*\)\].*/\1/' "/sys/block/$rig_dev/queue/scheduler")
		rig_desc="the block device \`$1\` ($(cat "/sys/block/$rig_dev/device/model" 2>/dev/null || echo 'model unknown'))" ;;
	esac
	[ "$rig_kind" = dev ] || rig_bdi_defaults
	set_scheduler mq-deadline
}

# Loop devices are reused, and their writeback limits (/sys/class/bdi/MAJ:MIN) outlive a
# detach: a test that gave one a strict 4 MiB limit leaves every later writer on it
# throttled (measured: a lone WAL writer paused 9 s in 10). Ours start at the kernel's
# defaults. A disk given with /dev/X keeps its own.
rig_bdi_defaults() {
	local bdi
	bdi=/sys/class/bdi/$(cat "/sys/block/$rig_dev/dev")
	if ! { echo 0 >"$bdi/strict_limit" && echo 0 >"$bdi/min_ratio" && echo 100 >"$bdi/max_ratio"; }; then
		log "rig: cannot reset the writeback limits in $bdi"
		return 1
	fi
}

rig_trim() {
	[ "$rig_kind" = ref ] || return 0
	# FUSE turns the loop device's discards into holes in refdisk-fs's memory, free in model
	# time; without it every fresh DB copy would take new memory.
	fstrim "$1" 2>/dev/null || true
}

rig_down() {
	case $rig_kind in
	ref) [ -z "$rig_state" ] || "$rig_refdisk" down "$rig_state" ;;
	loop) [ -z "$rig_loop" ] || losetup -d "$rig_loop" 2>/dev/null || true ;;
	dev)
		# back to the device's full tag depth (as allocated) and its own scheduler
		if [ -n "$rig_old_sched" ]; then
			local q=/sys/block/$rig_dev/queue
			# Leaving the scheduler resets nr_requests to nr_tags without growing the
			# driver's tags back, and writing the value it reads is a no-op: one less first.
			local n
			n=$(cat "/sys/block/$rig_dev/mq/0/nr_tags" 2>/dev/null) &&
				echo none >"$q/scheduler" 2>/dev/null &&
				echo $((n - 1)) >"$q/nr_requests" 2>/dev/null &&
				echo "$n" >"$q/nr_requests" 2>/dev/null
			echo "$rig_old_sched" >"$q/scheduler" 2>/dev/null || true
		fi ;;
	esac
	rig_state='' rig_loop='' rig_old_sched=''
}
