#!/bin/sh
# SPDX-License-Identifier: MIT
#
# db-bench-check.sh: a CI gate a team can copy. It runs RocksDB's db_bench readwhilewriting
# under `iotier check` on a throwaway loop device with ext4, with compaction threads
# ('rocksdb:low*') in the low tier and the benchmark's own threads ('db_bench', the readers)
# in the high tier, and fails the job when:
#   - compaction did no I/O (the gate would check nothing),
#   - more than 1% of compaction's bytes reached the disk outside idle (writeback, journal),
#   - foreground read p99 exceeds an absolute ceiling,
#   - with a baseline report, foreground read p99.9 regressed by more than half.
# The whole report is written to $OUT/iotier-check.json, to be archived by the CI job; copy
# it to the baseline path on the main branch to make it the next baseline.
#
# Run as root (loop devices, BPF). Environment:
#   IOTIER      the iotier binary (default: iotier on PATH)
#   OUT         where the JSON report goes (default: ./iotier-artifacts)
#   BASELINE    a report from an earlier run to compare against (optional)
#   DURATION    seconds of readwhilewriting (default: 60)
#   P99_LIMIT   absolute ceiling on foreground read p99 (default: 20ms); empty to skip it
# Exit status: that of `iotier check` (0 all expectations hold, 1 one failed or db_bench
# failed, 2 usage error), or 1 when the setup fails.
set -eu

IOTIER=${IOTIER:-iotier}
OUT=${OUT:-./iotier-artifacts}
DURATION=${DURATION:-60}
P99_LIMIT=${P99_LIMIT-20ms}
BASELINE=${BASELINE:-}
DB_BENCH=${DB_BENCH:-/usr/bin/db_bench}

mkdir -p "$OUT"
work=$(mktemp -d /var/tmp/iotier-ci.XXXXXX)
loop=""
cleanup() {
  if mountpoint -q "$work/mnt" 2>/dev/null; then umount "$work/mnt"; fi
  if [ -n "$loop" ]; then losetup -d "$loop" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

# A loop device with direct I/O, so that reads reach the block layer, and mq-deadline, which
# honours priority classes. A shallow queue (nr_requests, set while the scheduler is none)
# makes requests wait in the scheduler, where priority matters.
truncate -s 2G "$work/disk.img"
loop=$(losetup --direct-io=on --find --show "$work/disk.img")
dev=$(basename "$loop")
echo none > "/sys/block/$dev/queue/scheduler"
echo 4 > "/sys/block/$dev/queue/nr_requests"
echo mq-deadline > "/sys/block/$dev/queue/scheduler"
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$loop"
mkdir "$work/mnt"
mount "$loop" "$work/mnt"

# Compaction and flush use direct I/O: buffered compaction writes would reach the disk
# through the kernel's flusher at the default class, and the leak check would (rightly) fail.
db_opts="--db=$work/mnt/db --num=500000 --value_size=400 --compression_type=none
  --use_direct_reads=true --use_direct_io_for_flush_and_compaction=true
  --write_buffer_size=8388608 --target_file_size_base=8388608
  --max_bytes_for_level_base=33554432"

# Load outside the measurement: only readwhilewriting is judged.
# shellcheck disable=SC2086
"$DB_BENCH" --benchmarks=fillrandom $db_opts > "$OUT/fill.log" 2>&1

set -- --expect 'low.bytes > 0' --expect 'low.leak.ratio < 1%'
if [ -n "$P99_LIMIT" ]; then
  set -- "$@" --expect "high.read.p99 < $P99_LIMIT"
fi
if [ -n "$BASELINE" ]; then
  set -- "$@" --baseline "$BASELINE" --expect 'high.read.p99.9 <= 1.5 * baseline.read.p99.9'
fi

status=0
# shellcheck disable=SC2086
"$IOTIER" check --low 'rocksdb:low*' --high 'db_bench' -d "$loop" \
  --json "$OUT/iotier-check.json" "$@" -- \
  "$DB_BENCH" --benchmarks=readwhilewriting --use_existing_db=1 $db_opts \
  --duration="$DURATION" --threads=4 --benchmark_write_rate_limit=8000000 \
  || status=$?
exit "$status"
