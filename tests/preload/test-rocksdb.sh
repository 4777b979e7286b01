#!/bin/sh
# SPDX-License-Identifier: MIT
# Description: a real, unmodified program. RocksDB's db_bench (Debian rocksdb-tools, RocksDB
# 7.8, which names its pool threads from the creating thread with pthread_setname_np) runs
# readwhilewriting on a small DB under `iotier run --low 'rocksdb:low*'`. While it runs,
# `iotier threads PID` must list every rocksdb:low thread at class idle, and every
# rocksdb:high thread, the main thread and the benchmark threads at the default (none);
# `ionice -p TID` must agree, so the test does not rest on iotier's own report; and
# db_bench must finish successfully. Skips (77; a failure under IOTIER_TEST_STRICT=1) when
# db_bench is not installed. Usage: test-rocksdb.sh IOTIER
set -u
iotier=$1

# shellcheck source=../lib/testlib.sh
. "$(dirname "$0")/../lib/testlib.sh"
command -v db_bench >/dev/null 2>&1 || test_skip "db_bench not installed (apt-get install rocksdb-tools)"
command -v ionice >/dev/null 2>&1 || test_skip "ionice not installed (util-linux)"

work=''
test_tmpdir work /var/tmp/iotier-test-rocksdb.XXXXXX
pid=''
# shellcheck disable=SC2016 # expanded when the cleanup runs
test_cleanup_add '[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null'

# A small DB that keeps flush (rocksdb:high) and compaction (rocksdb:low) busy: 1 MiB
# memtables and files, four background jobs (three low, one high), a capped writer so that
# two cores are not saturated. fillseq builds the DB, then readwhilewriting runs for 6 s.
"$iotier" run --low 'rocksdb:low*' -- db_bench --db="$work/db" \
  --benchmarks=fillseq,readwhilewriting --num=20000 --value_size=1024 --duration=6 \
  --threads=1 --compression_type=none --write_buffer_size=1048576 \
  --target_file_size_base=1048576 --max_bytes_for_level_base=4194304 \
  --max_background_jobs=4 --benchmark_write_rate_limit=4194304 --seed=1 \
  >"$work/db_bench.log" 2>&1 &
pid=$!

fail=0
# check_once: one `iotier threads` snapshot; sets low/high counts, reports mismatches.
check_once() {
  if ! "$iotier" threads "$pid" >"$work/threads" 2>"$work/threads.err"; then
    return 2
  fi
  low=0
  high=0
  bad=''
  untracked=0
  # Rows: TID NAME TIER BY IOPRIO, after a "pid ..." line and a header line.
  while read -r tid name _ by ioprio _; do
    case $tid in ''|*[!0-9]*) continue ;; esac
    # A thread the shim has no record of yet ("untracked") has not been through the shim,
    # so none of its I/O has either; seen right after db_bench starts its pools, whose
    # threads are named by their creator. Such a snapshot is not judged; the loop below
    # still needs two judged ones within its 15 s, and each judges every thread.
    case $name in rocksdb:*) [ "$by" = untracked ] && untracked=$((untracked + 1)) ;; esac
    actual=$(ionice -p "$tid" 2>/dev/null) || continue # the thread ended meanwhile
    case $name in
      rocksdb:low*) low=$((low + 1)); want=idle; want_ionice=idle ;;
      rocksdb:high*) high=$((high + 1)); want=none; want_ionice='none: prio *' ;;
      *) want=none; want_ionice='none: prio *' ;;
    esac
    [ "$tid" = "$pid" ] && name="$name (main thread)"
    if [ "$ioprio" != "$want" ]; then
      bad="$bad
  tid $tid $name: iotier threads says '$ioprio', want '$want'"
    fi
    # shellcheck disable=SC2254 # want_ionice is a pattern
    case $actual in
      $want_ionice) ;;
      *) bad="$bad
  tid $tid $name: ionice says '$actual', want '$want_ionice'" ;;
    esac
  done <"$work/threads"
  return 0
}

# Wait (up to 15 s) until both pools exist, then take two snapshots a second apart.
samples=0
for _ in $(seq 150); do
  kill -0 "$pid" 2>/dev/null || break
  if check_once && [ "$low" -gt 0 ] && [ "$high" -gt 0 ] && [ "$untracked" = 0 ]; then
    samples=$((samples + 1))
    echo "snapshot $samples: $low rocksdb:low, $high rocksdb:high"
    if [ -n "$bad" ]; then
      echo "FAIL: wrong class:$bad"
      cat "$work/threads"
      fail=1
    fi
    [ "$samples" -ge 2 ] && break
    sleep 1
  else
    sleep 0.1
  fi
done
if [ "$samples" -lt 2 ]; then
  echo "FAIL: db_bench never showed both rocksdb:low and rocksdb:high threads ($samples snapshots)"
  cat "$work/threads" "$work/threads.err" 2>/dev/null
  tail -20 "$work/db_bench.log"
  fail=1
fi
[ "$fail" = 0 ] && { echo "last snapshot:"; cat "$work/threads"; }

status=0
wait "$pid" || status=$?
pid=''
if [ "$status" != 0 ]; then
  echo "FAIL: db_bench under the shim exited with status $status"
  tail -20 "$work/db_bench.log"
  fail=1
elif ! grep -q '^readwhilewriting' "$work/db_bench.log"; then
  echo "FAIL: db_bench printed no readwhilewriting result"
  tail -20 "$work/db_bench.log"
  fail=1
fi
[ "$fail" = 0 ] && echo "ok"
exit "$fail"
