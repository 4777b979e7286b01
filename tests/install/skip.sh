# SPDX-License-Identifier: MIT
# Sourced by the install tests: the suite's skip convention for shell. Exit 77 (skip) when
# the test cannot run here, but fail instead under IOTIER_TEST_STRICT=1, where it must run.
skip() {
  echo "SKIP: $*"
  if [ "${IOTIER_TEST_STRICT:-0}" != 0 ]; then
    echo "FAIL (strict mode, would skip)"
    exit 1
  fi
  exit 77
}

# Skip unless root and every named program is there.
require_root_and() {
  [ "$(id -u)" = 0 ] || skip "needs root (mount namespaces, chroot)"
  local p
  for p in "$@"; do
    command -v "$p" > /dev/null || skip "$p is not installed (scripts/setup installs it)"
  done
}
