#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Description: runs the example CI gate (examples/ci/db-bench-check.sh) as shipped: db_bench
# readwhilewriting for 5 s under `iotier check` on its own loop device, and checks that it
# passes and archives a JSON report in which compaction ('rocksdb:low*') did I/O at idle.
# The gate's latency ceiling is switched off (P99_LIMIT=) because tests never assert
# timing; its leak and activity expectations stay. Exits 0 pass, 1 fail, 77 skip (no root,
# no db_bench; a failure under IOTIER_TEST_STRICT=1).
set -u
iotier=$1
script=$2

# shellcheck source=../lib/testlib.sh
. "$(dirname "$0")/../lib/testlib.sh"

[ "$(id -u)" = 0 ] || test_skip "needs root"
[ -x /usr/bin/db_bench ] || test_skip "no /usr/bin/db_bench (rocksdb-tools)"
command -v mkfs.ext4 >/dev/null || test_skip "no mkfs.ext4"
command -v python3 >/dev/null || test_skip "no python3"

out=''
test_tmpdir out /tmp/iotier-example-ci.XXXXXX

IOTIER=$iotier OUT=$out DURATION=5 P99_LIMIT= sh "$script" > "$out/stdout" 2>&1
status=$?
cat "$out/stdout"
if [ $status = 1 ] && grep -q "cannot load the BPF program" "$out/stdout"; then
  test_skip "the BPF tracer cannot load here"
fi
[ $status = 0 ] || test_fail "the example gate exited $status"
[ -s "$out/iotier-check.json" ] || test_fail "no JSON report archived"
python3 - "$out/iotier-check.json" <<'PY' || test_fail "the report does not show compaction I/O at idle"
import json, sys
r = json.load(open(sys.argv[1]))
low = r["tiers"]["low"]
idle = sum(op["classes"].get("idle", {}).get("bytes", 0) for op in low["ops"].values())
print("low bytes", low["bytes"], "at idle", idle, "leaked", low["leak_bytes"])
assert r["exit_status"] == 0
assert idle > 0 and low["leak_bytes"] * 100 < low["bytes"]
assert [e["holds"] for e in r["expectations"]] == [True, True]
PY
echo "PASS"
