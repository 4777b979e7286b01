#!/bin/bash
# SPDX-License-Identifier: MIT
# Description: outside text never reaches the terminal raw (issue 16, item 9). `iotier
# threads` lists threads named with a leading newline, an empty name, an escape sequence and
# bytes that are not UTF-8, each on its own row with visible escapes; --json gives the exact
# bytes back and matches docs/threads-schema.json; as another user it says it cannot tell
# (exit 3), never "not loaded"; a bad value in a flag comes back escaped on one line.
# Usage: test-output.sh IOTIER NAMES_PROBE SCHEMA
set -u
# shellcheck source=threads_fixture.sh
. "$(dirname "$0")/threads_fixture.sh" output "$@"

# One line on stderr, exit 2, the value shown escaped and no raw control byte.
expect_escaped_error() { # want args...
  local want=$1
  shift
  "$iotier" "$@" > /dev/null 2> "$work/err"
  local rc=$?
  [ $rc -eq 2 ] || FAIL "iotier $*: exit $rc, want 2"
  [ "$(wc -l < "$work/err")" -eq 1 ] || { FAIL "iotier $*: not one line:"; cat -A "$work/err"; }
  grep -qF -- "$want" "$work/err" || { FAIL "iotier $*: lacks '$want':"; cat -A "$work/err"; }
  if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$work/err"; then
    FAIL "iotier $*: raw control bytes:"; cat -A "$work/err"
  fi
}
expect_escaped_error "'1\n2' is not a process id" threads $'1\n2'
expect_escaped_error "bad --by '\e[2J'" lat --by $'\e[2J'
expect_escaped_error "unknown command 'a\nb'" $'a\nb'
expect_escaped_error "IOTIER_LOW: bad rule 'comm:[\x01'" run --low $'comm:[\x01' -- true
expect_escaped_error "unknown option '--\xff'" run $'--\xff' -- true

# Thread names a process chose: empty, newline first, escape sequence, invalid UTF-8, tab.
names=("" $'\nnl' $'\e[31mred' $'\xffA' $'a\tb')
shown=("" '\nnl' '\e[31mred' '\xffA' '\tb')
hex=("" "0a6e6c" "1b5b33316d726564" "ff41" "610962")
holder_start "names-probe" "$iotier" run --low 'nomatch*' -- "$probe" "${names[@]}"
if [ "$line" != ready ]; then
  [ -z "$line" ] || FAIL "names-probe did not start: $line"
else
  "$iotier" threads "$holder" > "$work/text"; rc=$?
  cat -A "$work/text"
  [ $rc -eq 0 ] || FAIL "threads: exit $rc"
  rows=$(($(wc -l < "$work/text") - 2))
  [ $rows -eq 6 ] || FAIL "threads: $rows thread rows, want 6 (main + 5 named)"
  for s in "${shown[@]:1}"; do
    grep -qF -- "$s" "$work/text" || FAIL "threads: no row shows '$s'"
  done
  LC_ALL=C grep -q $'[\x01-\x1f\x7f]' "$work/text" && FAIL "threads: raw control bytes in the table"
  LC_ALL=C grep -q $'\xff' "$work/text" && FAIL "threads: raw invalid UTF-8 in the table"
  grep -q 'iotier active' "$work/text" || FAIL "threads: header"

  "$iotier" threads --json "$holder" > "$work/json"; rc=$?
  [ $rc -eq 0 ] || FAIL "threads --json: exit $rc"
  /usr/bin/python3 - "$schema" "$work/json" "${hex[@]}" <<'PY' || FAIL "threads --json: see above"
import json, sys, jsonschema
schema, doc = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
jsonschema.validate(doc, schema)
assert doc["iotier"] == "active", doc["iotier"]
got = sorted(bytes.fromhex(t["name_hex"]) if "name_hex" in t else t["name"].encode()
             for t in doc["threads"])
want = sorted([bytes.fromhex(h) for h in sys.argv[3:]] + [b"names-probe"])
assert got == want, (got, want)
print("json ok:", len(doc["threads"]), "threads")
PY

  # As another user the maps are unreadable: that is "cannot tell", status 3.
  if [ "$(id -u)" -eq 0 ] && command -v setpriv > /dev/null; then
    mkdir -m 755 "$work/bin" && cp "$iotier" "$work/bin/iotier" && chmod 755 "$work" "$work/bin/iotier"
    setpriv --reuid=65534 --regid=65534 --clear-groups "$work/bin/iotier" threads "$holder" \
      > "$work/nobody" 2>&1; rc=$?
    cat "$work/nobody"
    [ $rc -eq 3 ] || FAIL "threads as nobody: exit $rc, want 3"
    grep -q 'cannot tell whether iotier is loaded: permission denied' "$work/nobody" ||
      FAIL "threads as nobody: no 'cannot tell ... permission denied'"
    grep -q 'not loaded' "$work/nobody" && FAIL "threads as nobody: says 'not loaded'"
    [ $(($(wc -l < "$work/nobody") - 2)) -eq 6 ] || FAIL "threads as nobody: rows missing"
    setpriv --reuid=65534 --regid=65534 --clear-groups "$work/bin/iotier" threads --json \
      "$holder" > "$work/nobody.json"; rc=$?
    [ $rc -eq 3 ] || FAIL "threads --json as nobody: exit $rc, want 3"
    grep -q '"iotier": "unknown"' "$work/nobody.json" || FAIL "threads --json as nobody"
  else
    test_skip "the other-user case needs root and setpriv"
  fi
fi
holder_stop

[ $fail -eq 0 ] && echo "ok: output"
exit $fail
