#!/bin/sh
# SPDX-License-Identifier: MIT
# Description: tests that need a feature the build went without (BPF, jansson, liburing,
# libaio) are not defined at all, so they cannot skip; this test stands in for them. It
# passes when the build has everything, and otherwise skips, naming what is missing, which
# is a failure under IOTIER_TEST_STRICT=1: a CI build that lost BPF must not pass on the
# third of the suite that is left. Usage: check-features.sh [MISSING...]
# shellcheck source=testlib.sh
. "$(dirname "$0")/../lib/testlib.sh"
if [ $# -eq 0 ]; then
  echo "ok: every optional feature was built, every test is defined"
  exit 0
fi
echo "built without: $*; their tests are not defined"
test_skip "build without $*"
