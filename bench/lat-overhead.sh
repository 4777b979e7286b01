#!/bin/bash
# SPDX-License-Identifier: MIT
#
# lat-overhead.sh: what tracing costs. Drives a loop device backed by a file on tmpfs at its
# maximum IOPS (fio, 4 KiB random reads, io_uring) with no tracer, under `iotier lat`, and
# under bcc's biolatency-bpfcc, interleaved round by round in one run so that the machine's
# noise hits all three alike, and prints the median IOPS and the loss against no tracer.
#
# biolatency-bpfcc compiles its C at run time against kernel headers and attaches kprobes;
# where either is missing (no /lib/modules/$(uname -r)/build, kprobes refused) it cannot run,
# and the script measures its stand-in instead: the same algorithm (start time per request
# in a hash map, log2 histogram per disk at completion) written in bpftrace on the
# block_rq_issue/block_rq_complete tracepoints. The report says which one ran.
#
# usage: sudo bench/lat-overhead.sh [BUILDDIR] [ROUNDS] [SECONDS]
# Needs root; installs fio, bpfcc-tools and bpftrace from Debian when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
builddir=${1:-build}
rounds=${2:-5}
secs=${3:-10}
iotier=$builddir/tools/iotier

[ "$(id -u)" = 0 ] || { echo "lat-overhead: needs root" >&2; exit 1; }
[ -x "$iotier" ] || { echo "lat-overhead: no $iotier; build first" >&2; exit 1; }
missing=""
for p in fio jq bpfcc-tools bpftrace; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
fi

work=$(mktemp -d /tmp/iotier-bench.XXXXXX)
loop=""
tracer=""
cleanup() {
	[ -n "$tracer" ] && kill -INT "$tracer" 2>/dev/null && wait "$tracer" 2>/dev/null || true
	[ -n "$loop" ] && losetup -d "$loop" 2>/dev/null || true
	umount "$work/tmpfs" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

mkdir "$work/tmpfs"
mount -t tmpfs -o size=600m iotier-bench "$work/tmpfs"
dd if=/dev/zero of="$work/tmpfs/backing" bs=1M count=512 status=none
loop=$(losetup --find --show -b 4096 --direct-io=on "$work/tmpfs/backing" 2>/dev/null ||
       losetup --find --show -b 4096 "$work/tmpfs/backing")
dev=${loop#/dev/}
echo none > "/sys/block/$dev/queue/scheduler"
dio=$(cat "/sys/block/$dev/loop/dio" 2>/dev/null || echo "?")

# Which biolatency can run here?
bio_kind=biolatency-bpfcc
if ! timeout 60 biolatency-bpfcc 1 1 >"$work/bio-probe" 2>&1; then
	bio_kind=biolatency.bt
	bio_reason=$(grep -m1 -iE 'headers|kprobe|error' "$work/bio-probe" || echo "it failed to start")
fi
grep -q ' /sys/kernel/tracing ' /proc/mounts || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true
cat > "$work/biolatency.bt" <<'BT'
// biolatency's algorithm on tracepoints: issue time per (dev, sector), log2 hist per disk.
tracepoint:block:block_rq_issue { @start[args->dev, args->sector] = nsecs; }
tracepoint:block:block_rq_complete /@start[args->dev, args->sector]/ {
	@usecs[args->dev] = hist((nsecs - @start[args->dev, args->sector]) / 1000);
	delete(@start[args->dev, args->sector]);
}
BT

fio_run() {
	fio --name=randread --filename="$loop" --rw=randread --bs=4k --direct=1 \
	    --ioengine=io_uring --iodepth=16 --numjobs=1 --time_based --runtime="$secs" \
	    --ramp_time=1 --randrepeat=0 --norandommap --group_reporting \
	    --output-format=json 2>/dev/null | jq '.jobs[0].read.iops'
}

start_tracer() { # $1: iotier | bio; waits until it is attached
	: >"$work/tracer.err"
	case $1 in
	iotier) "$iotier" lat -d "$dev" >/dev/null 2>"$work/tracer.err" & tracer=$!
		ready='Hit Ctrl-C' ;;
	bio) if [ "$bio_kind" = biolatency-bpfcc ]; then
			biolatency-bpfcc -D >/dev/null 2>"$work/tracer.err" & tracer=$!
			ready=''
		else
			bpftrace "$work/biolatency.bt" >/dev/null 2>"$work/tracer.err" & tracer=$!
			ready=''
		fi ;;
	esac
	for _ in $(seq 300); do
		if [ -n "$ready" ] && grep -q "$ready" "$work/tracer.err"; then return 0; fi
		kill -0 "$tracer" 2>/dev/null || { cat "$work/tracer.err" >&2; exit 1; }
		sleep 0.1
	done
	[ -z "$ready" ] || { echo "lat-overhead: $1 did not attach" >&2; exit 1; }
	# bcc and bpftrace print their banner to stdout; give them their compile time instead.
	sleep 2
}

stop_tracer() {
	kill -INT "$tracer" 2>/dev/null || true
	wait "$tracer" 2>/dev/null || true
	tracer=""
}

base=() ; lat=() ; bio=()
for r in $(seq "$rounds"); do
	# Rotate the order each round so no configuration always runs first or last.
	case $((r % 3)) in
	1) order="none iotier bio" ;; 2) order="iotier bio none" ;; 0) order="bio none iotier" ;;
	esac
	for c in $order; do
		[ "$c" = none ] || start_tracer "$c"
		iops=$(fio_run)
		[ "$c" = none ] || stop_tracer
		case $c in none) base+=("$iops") ;; iotier) lat+=("$iops") ;; bio) bio+=("$iops") ;; esac
		printf 'round %d %-7s %12.0f IOPS\n' "$r" "$c" "$iops" >&2
	done
done

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mb=$(median "${base[@]}"); ml=$(median "${lat[@]}"); mo=$(median "${bio[@]}")
loss() { awk -v b="$mb" -v t="$1" 'BEGIN {printf "%.2f", (1 - t / b) * 100}'; }
ll=$(loss "$ml"); lo=$(loss "$mo")
ratio=$(awk -v a="$ll" -v b="$lo" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "n/a"}')

echo
echo "kernel $(uname -r), $(nproc) CPUs; $loop on tmpfs (loop dio=$dio), scheduler none;"
echo "fio 4 KiB randread, io_uring, iodepth 16, 1 job, ${secs} s x $rounds rounds, medians"
[ "$bio_kind" = biolatency-bpfcc ] || echo "biolatency-bpfcc cannot run here ($bio_reason); measured biolatency.bt, its algorithm in bpftrace on tracepoints"
echo
echo "| tracer | median IOPS | IOPS lost vs none |"
echo "| --- | ---: | ---: |"
printf '| none | %.0f | - |\n' "$mb"
printf '| iotier lat | %.0f | %s%% |\n' "$ml" "$ll"
printf '| %s | %.0f | %s%% |\n' "$bio_kind" "$mo" "$lo"
echo
echo "iotier lat loss / $bio_kind loss = $ratio"
echo "all rounds: none ${base[*]}; iotier ${lat[*]}; $bio_kind ${bio[*]}"
