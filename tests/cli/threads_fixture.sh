# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# threads_fixture.sh: what the tests of `iotier threads` on a live process share
# (test-output.sh, test-adaptive-view.sh): their arguments, a scratch directory, FAIL, and one
# program held running to look at. Needs bash (coproc). Source it with the test's short name
# and the test's own arguments (IOTIER NAMES_PROBE SCHEMA):
#   . "$(dirname "$0")/threads_fixture.sh" NAME "$@"
# It sets $iotier, $probe, $schema, $fail (0) and $work (from /tmp/iotier-test-NAME.XXXXXX,
# removed at the end), and gives:
#   FAIL WHY          say "FAIL: WHY"; the test fails at its end
#   holder_start WHAT CMD...
#                     run CMD as the holder ($holder; killed however the test ends); its first
#                     line (ready, or a pid) in $line; FAIL and return 1 if none comes in 20 s
#   holder_stop       close the holder's stdin and reap it
# shellcheck disable=SC2034 # the variables are for the tests that source this
# shellcheck source=../lib/testlib.sh
. "$(dirname "$0")/../lib/testlib.sh"
iotier=$2
probe=$3
schema=$4
fail=0
work=''
test_tmpdir work "/tmp/iotier-test-$1.XXXXXX"
holder=""
# shellcheck disable=SC2016 # expanded when the cleanup runs
test_cleanup_add '[ -n "$holder" ] && kill "$holder" 2>/dev/null'

FAIL() { echo "FAIL: $*"; fail=1; }

holder_start() {
  local what=$1
  shift
  coproc HOLD { exec "$@"; }
  holder=$HOLD_PID
  line=""
  read -r -t 20 line <&"${HOLD[0]}"
  [ -n "$line" ] || { FAIL "$what did not start"; return 1; }
}

holder_stop() {
  [ -n "$holder" ] || return 0
  eval "exec ${HOLD[1]}>&-"
  wait "$holder" 2>/dev/null
  holder=""
}
