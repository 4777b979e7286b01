#!/bin/bash
# SPDX-License-Identifier: MIT
# Description: secure mode. A setuid-root copy of secure-probe, run as nobody with the shim
# loaded and IOTIER_HIGH_CLASS=rt:0 or IOTIER_LOW set, gets neither the realtime class nor a
# cgroup: the shim ignores every IOTIER_* setting there, and says so in one line only at
# IOTIER_LOG=debug. The same probe run as root, not setuid, is the control: it must get
# both, so the probe is shown to see what the shim does.
# Usage: test-secure.sh LIBIOTIER SECURE_PROBE   (needs root; skips with 77 otherwise)
set -u
lib=$1
probe=$2

# shellcheck source=../lib/testlib.sh
. "$(dirname "$0")/../lib/testlib.sh"
[ "$(id -u)" = 0 ] || test_skip "needs root to make a setuid-root program"
command -v setpriv >/dev/null || test_skip "setpriv (util-linux) not installed"
id nobody >/dev/null 2>&1 || test_skip "no user nobody"

work=''
test_tmpdir work /tmp/iotier-secure.XXXXXX
# A directory nobody can enter, on a file system that honours setuid.
chmod 755 "$work"
cp "$lib" "$work/libiotier.so" && chmod 644 "$work/libiotier.so" || exit 1
cp "$probe" "$work/secure-probe" && chown root:root "$work/secure-probe" || exit 1
findmnt -no OPTIONS -T "$work" | grep -qw nosuid && test_skip "$work is mounted nosuid"

failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# run NAME AS_NOBODY KEY=VALUE...: the probe's stdout in $out, its stderr in $err
run() {
  local name=$1 as_nobody=$2
  shift 2
  if [ "$as_nobody" = 1 ]; then
    out=$(env -i PATH=/usr/bin:/bin "$@" setpriv --reuid=65534 --regid=65534 --clear-groups \
      -- "$work/secure-probe" "$work/libiotier.so" 2>"$work/$name.err")
  else
    out=$(env -i PATH=/usr/bin:/bin "$@" \
      "$work/secure-probe" "$work/libiotier.so" 2>"$work/$name.err")
  fi
  err=$(cat "$work/$name.err")
  echo "$name: $out${err:+ (stderr: $err)}"
}

high=(IOTIER_HIGH='*' IOTIER_HIGH_CLASS=rt:0 IOTIER_CGROUP=off)
low=(IOTIER_LOW=comm:secure-probe IOTIER_CGROUP=auto)

# Control: not setuid, as root. rt:0 is IOPRIO_CLASS_RT (1).
chmod 755 "$work/secure-probe"
run control-high 0 "${high[@]}"
[[ $out == "class=1 "* ]] || fail "control: IOTIER_HIGH_CLASS=rt:0 did not give class 1"
run control-low 0 "${low[@]}"
control_cgroup=${out##*low_cgroup=}
[ "$control_cgroup" = 1 ] || echo "note: no cgroup for the control here; only rt is proven"

# Secure: setuid root, run as nobody.
chmod 4755 "$work/secure-probe"
run secure-high 1 "${high[@]}"
[[ $out == "class=1 "* ]] && fail "secure: nobody got the realtime class"
[[ $out == class=* ]] || fail "secure: the probe did not run"
[ -z "$err" ] || fail "secure: the shim printed something without IOTIER_LOG=debug"
run secure-low 1 "${low[@]}"
[[ $out == *"low_cgroup=0" ]] || fail "secure: the process was put in a cgroup"
# An inherited adaptive region is an IOTIER_* setting too: not looked at, not warned about.
run secure-tree 1 "${low[@]}" IOTIER_TARGET='read.p99<=1ms' IOTIER_ADAPTIVE_FD=0
[ -z "$err" ] || fail "secure: the shim looked at IOTIER_ADAPTIVE_FD"
run secure-debug 1 "${low[@]}" IOTIER_LOG=debug
[ "$(printf '%s\n' "$err" | grep -c .)" = 1 ] && [[ $err == *"secure mode"* ]] ||
  fail "secure: IOTIER_LOG=debug should give exactly one line about secure mode"

[ "$failures" = 0 ] || exit 1
echo "ok: secure mode ignores IOTIER_* (control: rt class${control_cgroup/1/ and cgroup})"
