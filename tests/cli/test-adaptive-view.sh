#!/bin/bash
# SPDX-License-Identifier: MIT
# Description: `iotier threads` shows the adaptive controller of a process under a target
# (issue 12, item 6): the target, the bound in force, the level and cap, and the creator
# pid of the region, which a forked child shares with its tree's root; the JSON matches
# docs/threads-schema.json; a process without a target shows nothing new ("adaptive": null);
# a region of another layout is said in one line (exit 3).
# No I/O is needed: the controller is there, at full, from the start.
# Issue 23: a low writer that writes RocksDB's LOG (its triggers, an lsm_state event) shows
# L0, the trigger and the floor level they set, in the text, the JSON and the state file;
# the age of the last step, fresh while it writes and stale once it stopped for longer
# than the cap's lease (only low threads step); the probes and the slots taken back.
# Usage: test-adaptive-view.sh IOTIER NAMES_PROBE SCHEMA
set -u
# shellcheck source=threads_fixture.sh
. "$(dirname "$0")/threads_fixture.sh" adaptive-view "$@"

# check_json FILE PYTHON-ASSERTIONS: validate against the schema, then run the assertions
# with the document as `doc` and its controller as `a`.
check_json() {
  /usr/bin/python3 - "$schema" "$1" "$2" <<'PY'
import json, sys, jsonschema
schema, doc = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
jsonschema.validate(doc, schema)
a = doc["adaptive"]
exec(sys.argv[3])
print("json ok")
PY
}

# An absolute target: the bound is the target itself, no baseline, at full, its own root.
if holder_start "names-probe under a target" \
     "$iotier" run --low 'nomatch*' --target 'read.p99 <= 1.5ms' -- "$probe" a; then
  "$iotier" threads "$holder" > "$work/text"; rc=$?
  cat "$work/text"
  [ $rc -eq 0 ] || FAIL "threads: exit $rc"
  grep -qF "adaptive: target read.p99<=1500us, baseline -, bound 1.50ms, tree root pid $holder" \
    "$work/text" || FAIL "threads: no target line"
  grep -qF "adaptive: level 12/12, cap unlimited, chunk unlimited" "$work/text" ||
    FAIL "threads: no level line"
  grep -qF "adaptive: held 0us in all; 0 windows" "$work/text" || FAIL "threads: no held line"
  grep -qF "adaptive: L0 unknown, no L0 floor; 0 L0 lifts" "$work/text" || FAIL "threads: no L0 line"
  grep -qF "adaptive: 0 probes gave a baseline, 0 void (urgent threads' I/O), 0 short in a row" \
    "$work/text" || FAIL "threads: no probes line"
  grep -qF "adaptive: 0 gate slots taken back from dead or stopped holders, 0 steps taken over" \
    "$work/text" || FAIL "threads: no gate line"
  grep -qxF "adaptive: 0 misses cut at a look, 0 held windows missed anyway (the outside's: level restored)" \
    "$work/text" || FAIL "threads: no looks line"
  grep -qE "^adaptive: last step [0-9.]+(us|ms|s) ago" "$work/text" || FAIL "threads: no step age"
  [ $(($(wc -l < "$work/text") - 10)) -eq 2 ] || FAIL "threads: want 2 thread rows after 10 lines"
  "$iotier" threads --json "$holder" > "$work/json"; rc=$?
  [ $rc -eq 0 ] || FAIL "threads --json: exit $rc"
  check_json "$work/json" "
assert a is not None, 'no adaptive object'
assert a['target'] == 'read.p99<=1500us', a['target']
assert a['bound_ns'] == 1500000 and a['baseline_ns'] is None, a
assert a['creator_pid'] == $holder, a['creator_pid']
assert a['level'] == a['level_full'] == 12 and a['cap'] == 'unlimited', a
assert a['chunk_bytes'] == 'unlimited' and a['misses'] == 0, a
assert a['l0_files'] is None and a['l0_trigger'] is None and a['l0_floor'] == 0, a
assert a['baseline_reads'] is None and a['void_probes'] == a['short_probes'] == 0, a
assert a['slots_taken_back'] == a['step_takeovers'] == 0, a
assert a['early_misses'] == a['outside_restores'] == 0 and a['slow_start'] is False, a
assert a['queued_alone_permille'] == a['queue_misses'] == 0, a
assert a['last_step_age_seconds'] >= 0 and a['stale'] == (a['last_step_age_seconds'] >= 1), a
assert doc['adaptive_why'] is None" || FAIL "threads --json, absolute target: see above"
  holder_stop
fi

# A relative target in a forked child (a subshell: fork, no exec): the region is the root's.
# shellcheck disable=SC2016 # $BASHPID is the child's, expanded there
if holder_start "the forked child" "$iotier" run --low 'nomatch*' --target 'read.p99<=2x' -- \
     bash -c '( echo "$BASHPID"; read -r _ ); :'; then
  child=$line
  "$iotier" threads --json "$child" > "$work/child.json"; rc=$?
  [ $rc -eq 0 ] || FAIL "threads --json child: exit $rc"
  check_json "$work/child.json" "
assert a is not None, 'no adaptive object in the child'
assert a['target'] == 'read.p99<=2x', a['target']
assert a['creator_pid'] == $holder != $child, (a['creator_pid'], $holder, $child)
assert a['baseline_ns'] is None and a['bound_ns'] is None, a" ||
    FAIL "threads --json, forked child: see above"
  "$iotier" threads "$child" | grep -qF "baseline not measured yet, bound none yet, tree root pid $holder" ||
    FAIL "threads child: no target line naming the root"
  holder_stop
fi

# A low writer that writes RocksDB's LOG: the triggers at open (20 and 36: the floor keeps
# under 20), then a flush event with 15 files in L0, a floor of level 7 (adaptive_l0_floor).
# It writes a block every 20 ms until told to stop, so the controller steps (every 100 ms).
mkdir -m 1733 "$work/state"
db="$work/db.py"
cat > "$db" <<'PY'
import os, select, sys, time
d = sys.argv[1]
log = os.open(d + "/LOG", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
os.write(log, b"2026/12/04-20:44:01.453339 1 Options.level0_slowdown_writes_trigger: 20\n"
              b"2026/12/04-20:44:01.453340 1 Options.level0_stop_writes_trigger: 36\n"
              b'2026/12/04-20:44:01.477931 2 EVENT_LOG_v1 {"time_micros": 1, "job": 2, '
              b'"event": "flush_finished", "lsm_state": [15, 4, 0, 0, 0, 0, 0]}\n')
data = os.open(d + "/data", os.O_RDWR | os.O_CREAT, 0o644)
print(os.getpid(), flush=True)
while not select.select([sys.stdin], [], [], 0.02)[0]:
    os.pwrite(data, b"x" * 4096, 0)
sys.stdin.readline()
print("stopped", flush=True)
sys.stdin.read()
PY
# view_json NAME: `iotier threads --json` of the holder into $work/NAME.json
view_json() { "$iotier" threads --json "$holder" > "$work/$1.json"; }
if IOTIER_STATE_DIR="$work/state" holder_start "the LOG writer" "$iotier" run \
     --low 'comm:python3*' --target 'read.p99<=1.5ms' --debt-log '*/LOG' -- \
     /usr/bin/python3 "$db" "$work"; then
  # Until a step has read the LOG and the first window has closed (100 ms after the start;
  # a look 10 ms in already reads the LOG, so the one can come without the other).
  for _ in $(seq 100); do
    view_json l0
    grep -q '"l0_files": 15' "$work/l0.json" && grep -q '"windows": [1-9]' "$work/l0.json" &&
      break
    sleep 0.1
  done
  "$iotier" threads "$holder" > "$work/l0.text"
  cat "$work/l0.text"
  grep -qF "adaptive: L0 15 files, trigger 20, floor level 7; 0 L0 lifts" "$work/l0.text" ||
    FAIL "threads: no L0 line with the LOG's numbers"
  grep -E "^adaptive: last step" "$work/l0.text" | grep -q stale &&
    FAIL "threads: stale while the low writer steps"
  check_json "$work/l0.json" "
assert a['l0_files'] == 15 and a['l0_trigger'] == 20 and a['l0_floor'] == 7, a
assert a['windows'] > 0 and a['level'] >= 7, a
assert not a['stale'] and a['last_step_age_seconds'] < 1, a" ||
    FAIL "threads --json, the LOG writer: see above"
  # The state file: the old lines in their order, the new ones after them.
  sf="$work/state/$holder.state"
  for _ in $(seq 50); do
    grep -qx 'adaptive_l0_files 15' "$sf" 2>/dev/null && break
    sleep 0.1
  done
  cat "$sf"
  for want in 'adaptive_l0_files 15' 'adaptive_l0_trigger 20' 'adaptive_l0_floor 7' \
      'adaptive_l0_lifts 0' 'adaptive_void_probes 0' 'adaptive_slots_taken_back 0'; do
    grep -qx "$want" "$sf" || FAIL "state file: no '$want'"
  done
  grep -qE '^adaptive_last_step_ns [1-9][0-9]*$' "$sf" || FAIL "state file: no last step"
  [ "$(grep '^adaptive_' "$sf" | sed -n '4p;19p;20p' | cut -d' ' -f1 | tr '\n' ' ')" = \
    "adaptive_creator_pid adaptive_debt_lifts adaptive_l0_files " ] ||
    FAIL "state file: the adaptive lines moved"
  # Stopped: nothing steps. Past the cap's lease (1 s) the view says it is stale.
  echo stop >&"${HOLD[1]}"
  read -r -t 20 line <&"${HOLD[0]}"
  [ "$line" = stopped ] || FAIL "the LOG writer did not stop: '$line'"
  sleep 0.5 # its last calls (the line it printed, the read it waits in) may step once more
  view_json stopped
  sleep 1.5
  view_json stale
  "$iotier" threads "$holder" > "$work/stale.text"
  grep -E "^adaptive: last step" "$work/stale.text"
  grep -qE "^adaptive: last step [0-9.]+s ago, stale: no low thread has called since" \
    "$work/stale.text" || FAIL "threads: not stale 1.5 s after the last low call"
  /usr/bin/python3 -c '
import json, sys
a, b = (json.load(open(f))["adaptive"] for f in sys.argv[1:])
assert b["stale"] and b["last_step_age_seconds"] >= 1.5, b
assert b["windows"] == a["windows"], (a["windows"], b["windows"])' \
    "$work/stopped.json" "$work/stale.json" || FAIL "threads --json: not stale, or still stepping"
  check_json "$work/stale.json" "assert a['l0_files'] == 15" || FAIL "threads --json: stale: see above"
  holder_stop
fi

# No target: nothing new.
if holder_start "names-probe without a target" "$iotier" run --low 'nomatch*' -- "$probe" a; then
  "$iotier" threads "$holder" > "$work/plain"
  grep -q 'adaptive' "$work/plain" && FAIL "threads without a target mentions adaptive"
  "$iotier" threads --json "$holder" > "$work/plain.json"
  check_json "$work/plain.json" "
assert doc['iotier'] == 'active', doc['iotier']
assert a is None and doc['adaptive_why'] is None, (a, doc['adaptive_why'])" ||
    FAIL "threads --json without a target: see above"
  holder_stop
fi

# A region of another layout (another iotier version) is named in one line, never misread,
# and is "cannot tell" (status 3). A plain process maps one by hand: no shim needed.
if holder_start "the old-layout holder" /usr/bin/python3 -c '
import mmap, os, struct, sys
fd = os.memfd_create("iotier-adaptive")
os.ftruncate(fd, 1 << 16)
m = mmap.mmap(fd, 1 << 16)
m[0:16] = struct.pack("<QII", 0x444150414954, 1, 4096)  # magic, layout 1, a size
print("ready", flush=True)
sys.stdin.read()'; then
  "$iotier" threads "$holder" > "$work/old"; rc=$?
  cat "$work/old"
  [ $rc -eq 3 ] || FAIL "threads, old layout: exit $rc, want 3"
  [ "$(grep -c adaptive "$work/old")" -eq 1 ] || FAIL "threads, old layout: not one line"
  grep -qF "adaptive: cannot read the controller: its region in this process has another layout" \
    "$work/old" || FAIL "threads, old layout: does not say so"
  "$iotier" threads --json "$holder" > "$work/old.json"
  check_json "$work/old.json" "
assert a is None, a
assert 'another layout' in doc['adaptive_why'], doc['adaptive_why']" ||
    FAIL "threads --json, old layout: see above"
  holder_stop
fi

[ $fail -eq 0 ] && echo "ok: adaptive view"
exit $fail
