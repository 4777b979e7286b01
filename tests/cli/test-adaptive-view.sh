#!/bin/bash
# SPDX-License-Identifier: MIT
# Description: `iotier threads` shows the adaptive controller of a process under a target
# (issue 12, item 6): the target, the bound in force, the level and cap, and the creator
# pid of the region, which a forked child shares with its tree's root; the JSON matches
# docs/threads-schema.json; a process without a target shows nothing new ("adaptive": null);
# a region of another layout is said in one line (exit 3).
# No I/O is needed: the controller is there, at full, from the start.
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
  [ $(($(wc -l < "$work/text") - 5)) -eq 2 ] || FAIL "threads: want 2 thread rows after 5 lines"
  "$iotier" threads --json "$holder" > "$work/json"; rc=$?
  [ $rc -eq 0 ] || FAIL "threads --json: exit $rc"
  check_json "$work/json" "
assert a is not None, 'no adaptive object'
assert a['target'] == 'read.p99<=1500us', a['target']
assert a['bound_ns'] == 1500000 and a['baseline_ns'] is None, a
assert a['creator_pid'] == $holder, a['creator_pid']
assert a['level'] == a['level_full'] == 12 and a['cap'] == 'unlimited', a
assert a['chunk_bytes'] == 'unlimited' and a['misses'] == 0, a
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
