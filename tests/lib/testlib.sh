# shellcheck shell=sh
# SPDX-License-Identifier: MIT
# testlib.sh: what the shell tests share with tests/lib's C helpers (test_env.h, cleanup.h).
# Source it as  . "$(dirname "$0")/../lib/testlib.sh"  (POSIX sh).
#   test_skip WHY       exit 77 (meson: skipped), or 1 under IOTIER_TEST_STRICT=1, saying why
#   test_fail WHY       exit 1, saying why
#   test_kernel_lacks F WHY
#                       the running kernel lacks feature F (no failed setup): say so, record
#                       it as test_env.h's test_kernel_lacks() does, and go on to judge the
#                       fallback
#   test_cleanup_add C  run the shell command C when the test ends (on exit, and on INT, TERM
#                       and HUP, which then end it with status 1); last added runs first
#   test_tmpdir VAR T   make a directory from mktemp template T, removed at the end, into $VAR

test_skip() {
  if [ "${IOTIER_TEST_STRICT:-0}" != 0 ]; then
    echo "FAIL (strict mode, would skip): $*"
    exit 1
  fi
  echo "SKIP: $*"
  exit 77
}

test_fail() {
  echo "FAIL: $*"
  exit 1
}

test_kernel_lacks() {
  _test_feature=$1
  shift
  echo "KERNEL LACKS $_test_feature: $*; judging the fallback"
  [ -n "${IOTIER_TEST_KERNEL_LACKS:-}" ] || return 0
  printf '%s\t%s\t%s\n' "$_test_feature" "${IOTIER_TEST_NAME:-$(basename "$0")}" "$*" \
    >>"$IOTIER_TEST_KERNEL_LACKS" || :
}

_test_cleanups=''

test_cleanup_add() {
  _test_cleanups="$1
$_test_cleanups"
}

_test_cleanup_run() {
  _test_todo=$_test_cleanups
  _test_cleanups=''
  eval "$_test_todo"
}

test_tmpdir() {
  _test_dir=$(mktemp -d "$2") || test_fail "cannot create a directory from $2"
  test_cleanup_add "rm -rf '$_test_dir'"
  eval "$1=\$_test_dir"
}

trap '_test_cleanup_run' EXIT
trap 'exit 1' INT TERM HUP
