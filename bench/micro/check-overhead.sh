#!/bin/bash
# SPDX-License-Identifier: MIT
#
# check-overhead.sh: what `iotier check` costs the program it watches. fio (4 KiB random
# reads, io_uring, depth 16) drives a loop device backed by a file on tmpfs at its maximum
# IOPS, once under `iotier run` (the shim alone) and once under `iotier check` (the shim plus
# bpf/iotrack: a hash update at block_io_start, lookups at insert/issue, a histogram update
# at completion). Rounds alternate the order, in one run, so the machine's noise hits both
# alike. Prints the median IOPS of each and the ratio.
#
# usage: sudo bench/micro/check-overhead.sh [BUILDDIR] [ROUNDS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=bench/micro/tmpfs-loop.sh
. bench/micro/tmpfs-loop.sh
command -v fio >/dev/null && command -v jq >/dev/null ||
	{ echo "check-overhead: needs fio and jq" >&2; exit 1; }

tmpfs_loop mq-deadline

fio_args=(fio --name=randread --filename="$loop" --rw=randread --bs=4k --direct=1
	--ioengine=io_uring --iodepth=16 --numjobs=1 --time_based --runtime="$secs"
	--ramp_time=1 --randrepeat=0 --norandommap --output-format=json
	--output="$work/fio.json")

run_one() { # $1: run | check
	case $1 in
	run) "$iotier" run --low 'no-such-thread' -- "${fio_args[@]}" >/dev/null ;;
	check) "$iotier" check --low 'no-such-thread' -d "$dev" --no-sync -- "${fio_args[@]}" \
		>"$work/check.out" ;;
	esac
	jq '.jobs[0].read.iops' "$work/fio.json"
}

runs=() ; checks=()
for r in $(seq "$rounds"); do
	if [ $((r % 2)) = 1 ]; then order="run check"; else order="check run"; fi
	for c in $order; do
		iops=$(run_one "$c")
		case $c in run) runs+=("$iops") ;; check) checks+=("$iops") ;; esac
		printf 'round %d %-6s %12.0f IOPS\n' "$r" "$c" "$iops" >&2
	done
done
grep -q 'default  *read' "$work/check.out" ||
	{ echo "check-overhead: iotier check saw no reads" >&2; cat "$work/check.out" >&2; exit 1; }

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
m_run=$(median "${runs[@]}")
m_check=$(median "${checks[@]}")
printf 'fio 4k randread io_uring qd16 on a tmpfs-backed loop device (mq-deadline), %d rounds of %ds\n' \
	"$rounds" "$secs"
printf 'iotier run    median %10.0f IOPS\n' "$m_run"
printf 'iotier check  median %10.0f IOPS  (%.3f of iotier run)\n' "$m_check" \
	"$(awk -v a="$m_check" -v b="$m_run" 'BEGIN {print a / b}')"
