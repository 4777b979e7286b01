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
# After the IOPS rounds, one more run per tracer with kernel.bpf_stats_enabled=1 gives the
# CPU time its BPF programs spend per request: steadier than IOPS on a shared machine (the
# stats themselves cost time, which is why they are off during the IOPS rounds).
#
# usage: sudo bench/micro/lat-overhead.sh [BUILDDIR] [ROUNDS] [SECONDS]
# Needs root; installs fio, bpfcc-tools and bpftrace from Debian when missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=bench/micro/tmpfs-loop.sh
. bench/micro/tmpfs-loop.sh
missing=""
for p in fio jq bpfcc-tools bpftrace; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
fi

tracer=""
stats_was=$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo 0)
tmpfs_loop none --direct-io=on
# shellcheck disable=SC2016 # expanded when the cleanup runs
test_cleanup_add '[ -n "$tracer" ] && kill -INT "$tracer" 2>/dev/null && wait "$tracer" 2>/dev/null || true
echo "$stats_was" > /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || true'
dio=$(cat "/sys/block/$dev/loop/dio" 2>/dev/null || echo "?")

# Which biolatency can run here?
bio_kind=biolatency-bpfcc
if ! timeout 60 biolatency-bpfcc 1 1 >"$work/bio-probe" 2>&1; then
	bio_kind=biolatency.bt
	bio_reason=$(grep -m1 -iE 'headers|kprobe|error' "$work/bio-probe" || echo "it failed to start")
fi
# bpftrace's tracepoints need tracefs (iotier lat does not); mount it for the run only.
if [ "$bio_kind" != biolatency-bpfcc ] && ! grep -q ' /sys/kernel/tracing ' /proc/mounts; then
	mount -t tracefs tracefs /sys/kernel/tracing &&
		test_cleanup_add 'umount /sys/kernel/tracing 2>/dev/null || true'
fi
cat > "$work/biolatency.bt" <<'BT'
// biolatency's algorithm on tracepoints: issue time per (dev, sector), log2 hist per disk.
tracepoint:block:block_rq_issue { @start[args->dev, args->sector] = nsecs; }
tracepoint:block:block_rq_complete /@start[args->dev, args->sector]/ {
	@usecs[args->dev] = hist((nsecs - @start[args->dev, args->sector]) / 1000);
	delete(@start[args->dev, args->sector]);
}
BT

fio_run() { # prints "IOPS TOTAL_IOS"
	fio --name=randread --filename="$loop" --rw=randread --bs=4k --direct=1 \
	    --ioengine=io_uring --iodepth=16 --numjobs=1 --time_based --runtime="$secs" \
	    --ramp_time=1 --randrepeat=0 --norandommap --group_reporting \
	    --output-format=json 2>/dev/null | jq -r '"\(.jobs[0].read.iops) \(.jobs[0].read.total_ios)"'
}

prog_ids() { bpftool prog show -j | jq -r '.[].id' | sort; }
# BPF run time (ns) of the block-tracing programs loaded since prog_ids wrote
# $work/ids.before (named btf_*/raw_* by iotier, *block* by bcc and bpftrace).
bpf_time() {
	prog_ids > "$work/ids.now"
	comm -13 "$work/ids.before" "$work/ids.now" | while read -r id; do
		bpftool prog show id "$id" -j |
			jq -r 'select(.name | test("^(btf|raw)_|block|trace_req")) | .run_time_ns // 0'
	done | awk '{t += $1} END {print t + 0}'
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
		read -r iops _ < <(fio_run)
		[ "$c" = none ] || stop_tracer
		case $c in none) base+=("$iops") ;; iotier) lat+=("$iops") ;; bio) bio+=("$iops") ;; esac
		printf 'round %d %-7s %12.0f IOPS\n' "$r" "$c" "$iops" >&2
	done
done

# CPU time of the tracers' BPF programs per request, one run each with stats on.
echo 1 > /proc/sys/kernel/bpf_stats_enabled
declare -A ns_per_req
for c in iotier bio; do
	prog_ids > "$work/ids.before"
	start_tracer "$c"
	read -r _ ios < <(fio_run)
	t=$(bpf_time)
	stop_tracer
	ns_per_req[$c]=$(awk -v t="$t" -v n="$ios" 'BEGIN {printf "%.0f", n ? t / n : 0}')
	printf 'bpf time %-7s %6s ns per request\n' "$c" "${ns_per_req[$c]}" >&2
done
echo "$stats_was" > /proc/sys/kernel/bpf_stats_enabled

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
echo "| tracer | median IOPS | IOPS lost vs none | BPF time per request |"
echo "| --- | ---: | ---: | ---: |"
printf '| none | %.0f | - | - |\n' "$mb"
printf '| iotier lat | %.0f | %s%% | %s ns |\n' "$ml" "$ll" "${ns_per_req[iotier]}"
printf '| %s | %.0f | %s%% | %s ns |\n' "$bio_kind" "$mo" "$lo" "${ns_per_req[bio]}"
echo
echo "iotier lat loss / $bio_kind loss = $ratio"
# Paired within each round too: slow drifts in the machine's load cancel out.
paired_l=(); paired_o=()
for i in "${!base[@]}"; do
	paired_l+=("$(awk -v b="${base[$i]}" -v t="${lat[$i]}" 'BEGIN {print (1 - t / b) * 100}')")
	paired_o+=("$(awk -v b="${base[$i]}" -v t="${bio[$i]}" 'BEGIN {print (1 - t / b) * 100}')")
done
printf 'median of per-round losses: iotier lat %.2f%%, %s %.2f%%\n' \
	"$(median "${paired_l[@]}")" "$bio_kind" "$(median "${paired_o[@]}")"
echo "all rounds: none ${base[*]}; iotier ${lat[*]}; $bio_kind ${bio[*]}"
