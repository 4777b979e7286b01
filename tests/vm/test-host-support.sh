#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Description: the host kernel's column of the README's support table. Runs every feature
# of tests/vm/matrix.sh on the host, exactly as the VMs of tests/vm/test-kernels.sh do on
# 6.1 and 6.12 (cgroup weights through the host's blkio v1), and fails when the README's
# column for this kernel says otherwise; IOTIER_UPDATE_README=1 rewrites it (and adds it).
# The column is major.minor of uname -r, followed by what the kernel lacks when a test
# judged a fallback for it ("6.18 (no bfq)": matrix_column), so two hosts of one version
# with different kernel configs each keep their own column. Exit 0 pass, 1 fail, 77 skip
# (not root, python3 missing, or no column for this kernel in the table; a failure under
# IOTIER_TEST_STRICT=1).
#
# usage: test-host-support.sh README NAME=PATH... (the programs of MATRIX_PROGRAMS)
set -u

here=$(dirname "$0")
readme=$1
shift
# shellcheck source=../lib/testlib.sh
. "$here/../lib/testlib.sh"
. "$here/vm-lib.sh" # test_skip
. "$here/matrix.sh"

[ "$(id -u)" = 0 ] || test_skip "needs root"
command -v python3 >/dev/null || test_skip "python3 not installed"
version=$(uname -r | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p')

work=''
test_tmpdir work /var/tmp/iotier-host-support.XXXXXX
BIN=$work/bin SHIM=
mkdir -p "$BIN"
for arg in "$@"; do
  ln -s "${arg#*=}" "$BIN/${arg%%=*}"
  [ "${arg%%=*}" = libiotier.so ] && SHIM=${arg#*=}
done
MATRIX_WHERE=host
failed=0
for f in $MATRIX_FEATURES; do
  if ! matrix_feature "$f" "$work/$f.log" >>"$work/column"; then
    sed "s/^/$f: /" "$work/$f.log" | tail -n 40
    failed=1
  fi
done
cat "$work/column"
sed -i 's/^MATRIX //' "$work/column"
col=$(matrix_column "$version" "$work"/*.log)
echo "column: $col"
[ "${IOTIER_UPDATE_README:-0}" = 1 ] || grep -qF "| $col |" "$readme" ||
  test_skip "the README's support table has no column for this kernel ($col)"
python3 "$here/support-table.py" "$readme" "$col" "$work/column" "$here/matrix.sh" || failed=1
exit $failed
