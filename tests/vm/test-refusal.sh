#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Description: clear refusal on a kernel that lacks what a feature needs, shown on this one
# by hiding tracepoints from iotier's BTF probe (IOTIER_TEST_HIDE_BTF, tools/trace/common/kernel_probe.h).
# Each refusal is one line on stderr naming what is missing and the kernel that has it,
# exit status 1, nothing on stdout, and no command started:
#   - lat --pid and --children with neither block_io_start nor block_getrq (no exact
#     submitter), while plain lat, which needs no submitter, still runs;
#   - check with neither of those, and check without writeback_dirty_folio;
#   - the support table's cell for a refused feature (tests/vm/matrix.sh) is what is missing.
# Exit 0 pass, 1 fail, 77 skip (not root, no kernel BTF; a failure under
# IOTIER_TEST_STRICT=1).
#
# usage: test-refusal.sh NAME=PATH... (iotier, check-test, check-workload)
set -u

here=$(dirname "$0")
# shellcheck source=../lib/testlib.sh
. "$here/../lib/testlib.sh"
. "$here/vm-lib.sh" # test_skip
. "$here/matrix.sh"
[ "$(id -u)" = 0 ] || test_skip "needs root"
[ -r /sys/kernel/btf/vmlinux ] || test_skip "no kernel BTF"

work=''
test_tmpdir work /var/tmp/iotier-refusal.XXXXXX
BIN=$work/bin
mkdir -p "$BIN"
for arg in "$@"; do ln -s "${arg#*=}" "$BIN/${arg%%=*}"; done
iotier=$BIN/iotier
fail=0
NO_SUBMITTER=block_io_start,block_getrq

# refuses HIDE WANT... -- ARGS: iotier ARGS with HIDE hidden must refuse naming every WANT.
refuses() {
  local hide=$1 want rc
  shift
  want=
  while [ "$1" != -- ]; do want="$want
$1"; shift; done
  shift
  rm -f "$work/ran"
  IOTIER_TEST_HIDE_BTF=$hide "$iotier" "$@" >"$work/out" 2>"$work/err"
  rc=$?
  [ $rc = 1 ] || { echo "FAIL: iotier $* (hiding $hide): exit $rc, want 1"; fail=1; }
  [ -e "$work/ran" ] && { echo "FAIL: iotier $*: started the command"; fail=1; }
  [ -s "$work/out" ] && { echo "FAIL: iotier $*: printed on stdout:"; cat "$work/out"; fail=1; }
  [ "$(wc -l <"$work/err")" = 1 ] ||
    { echo "FAIL: iotier $*: want one line on stderr:"; cat "$work/err"; fail=1; }
  echo "$want" | while read -r w; do
    [ -z "$w" ] || grep -qF -- "$w" "$work/err" ||
      { echo "FAIL: iotier $*: stderr lacks '$w':"; cat "$work/err"; touch "$work/bad"; }
  done
  [ -e "$work/bad" ] && fail=1
  rm -f "$work/bad"
  echo "ok: iotier $* (hiding $hide): $(cat "$work/err")"
}

refuses $NO_SUBMITTER block_io_start "Linux 6.5" block_getrq -- lat --pid $$ --duration 1
refuses $NO_SUBMITTER block_io_start "Linux 6.5" -- lat --pid $$ --children --duration 1
refuses $NO_SUBMITTER block_io_start "Linux 6.5" -- check -- touch "$work/ran"
refuses writeback_dirty_folio writeback_dirty_folio "Linux 5.18" -- check -- touch "$work/ran"

# Plain latency needs no submitter: it runs where --pid refuses.
IOTIER_TEST_HIDE_BTF=$NO_SUBMITTER "$iotier" lat --duration 1 --format json >"$work/out" 2>"$work/err"
rc=$?
if [ $rc != 0 ] || ! grep -q '"schema"' "$work/out"; then
  echo "FAIL: plain lat with $NO_SUBMITTER hidden: exit $rc"; cat "$work/err"; fail=1
else
  echo "ok: plain lat runs without a submitter"
fi

# The support table shows a refused feature as what the kernel lacks.
got=$(IOTIER_TEST_HIDE_BTF=writeback_dirty_folio matrix_feature check-direct "$work/feature.log")
want="MATRIX check-direct no: lacks the writeback_dirty_folio tracepoint in its BTF (Linux 5.18 and later have it)"
if [ "$got" != "$want" ]; then
  echo "FAIL: matrix cell: got '$got', want '$want'"; tail -n 20 "$work/feature.log"; fail=1
else
  echo "ok: $got"
fi
exit $fail
