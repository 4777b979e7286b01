#!/bin/bash
# SPDX-License-Identifier: MIT
#
# exporter-cost.sh: what `iotier lat --listen` costs a host in CPU while it runs for days.
# A loop device over a file on tmpfs (bench/micro/tmpfs-loop.sh) takes a steady 4 KiB random-read
# load (fio, $RATE IOPS, default 2000) while the exporter runs, scraped the way Prometheus
# would: at the default interval (15 s collection, a scrape every 15 s) and at 1 s
# (collection and scrape every second). The exporter traces only that device, so other I/O
# on the machine does not change the load. The figure is the exporter process's CPU time
# (user + system, from /proc/PID/stat) over the wall time: the ratio of one core it keeps
# busy. The BPF programs run in the context of whoever completes the I/O, not in the
# exporter; their per-request cost is measured by bench/micro/lat-overhead.sh. Also printed: the
# mean time one scrape takes (collect + render).
#
# usage: sudo [RATE=IOPS] bench/micro/exporter-cost.sh [BUILDDIR] [ROUNDS] [SECONDS]
# (each round measures both settings for SECONDS each; e.g. `build 1 60`)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=bench/micro/tmpfs-loop.sh
. bench/micro/tmpfs-loop.sh
rate=${RATE:-2000}
command -v fio >/dev/null || { echo "exporter-cost: needs fio" >&2; exit 1; }
command -v curl >/dev/null || { echo "exporter-cost: needs curl" >&2; exit 1; }

tmpfs_loop none
fio --name=steady --filename="$loop" --rw=randread --bs=4k --direct=1 --ioengine=psync \
	--rate_iops="$rate" --time_based --runtime=100000 --output=/dev/null &
load=$!
test_cleanup_add "kill $load 2>/dev/null; wait $load 2>/dev/null || true"
sleep 2

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# measure INTERVAL: the exporter collecting every INTERVAL s and scraped every INTERVAL s
measure() {
	local interval=$1 url="" t0 t1 c0 c1 end metrics exporter
	"$iotier" lat --listen 127.0.0.1:0 -d "$dev" --by class --interval "$interval" --no-shim \
		2> "$work/err" &
	exporter=$!
	test_cleanup_add "kill $exporter 2>/dev/null || true"
	for _ in $(seq 100); do
		url=$(grep -o 'http://[^ ]*' "$work/err" || true)
		[ -n "$url" ] && break
		sleep 0.1
	done
	[ -n "$url" ] || { cat "$work/err" >&2; exit 1; }
	c0=$(cpu_ticks "$exporter")
	t0=$(date +%s.%N)
	end=$(( $(date +%s) + secs ))
	while [ "$(date +%s)" -lt "$end" ]; do
		curl -s -o /dev/null "$url"
		sleep "$interval"
	done
	c1=$(cpu_ticks "$exporter")
	t1=$(date +%s.%N)
	metrics=$(curl -s "$url")
	kill "$exporter"
	wait "$exporter" || true
	awk -v c="$((c1 - c0))" -v hz="$(getconf CLK_TCK)" -v t0="$t0" -v t1="$t1" -v i="$interval" \
	    -v r="$rate" '
		/^iotier_exporter_scrape_duration_seconds_sum/ { sum = $2 }
		/^iotier_exporter_scrape_duration_seconds_count/ { n = $2 }
		/^iotier_block_requests_total/ { reqs += $2 }
		END { printf "interval %5s s: %.5f of a core (%.2f ms CPU per s), %.2f ms per scrape, %d requests traced at %d IOPS\n",
			i, c / hz / (t1 - t0), 1000 * c / hz / (t1 - t0), n ? 1000 * sum / n : 0, reqs, r }' <<< "$metrics"
}

echo "exporter-cost: ${secs} s per setting, ${rounds} round(s), fio at ${rate} IOPS, $(nproc) CPUs, kernel $(uname -r)"
for _ in $(seq "$rounds"); do
	measure 15
	measure 1
done
