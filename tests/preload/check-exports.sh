#!/bin/sh
# SPDX-License-Identifier: MIT
# Description: libiotier.so exports exactly the names its version script lists (the wrapped
# libc functions and the iotier.h API) and nothing else, so that its internals can never
# capture a symbol the program or another library defines. Usage: check-exports.sh SO MAP
set -eu
# shellcheck source=../lib/testlib.sh
. "$(dirname "$0")/../lib/testlib.sh"
so=$1
map=$2
command -v nm >/dev/null || test_skip "nm not installed"

expected=$(sed -n '/global:/,/local:/p' "$map" | grep -v -e 'global:' -e 'local:' |
  tr ';' '\n' | tr -d ' \t' | grep -v '^$' | sort -u)
actual=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TtWwDdBb]$/ { print $3 }' | sed 's/@.*//' | sort -u)

if [ "$expected" != "$actual" ]; then
  echo "exported symbols differ from $map:"
  printf '%s\n' "$expected" > /tmp/iotier-exports-expected.$$
  printf '%s\n' "$actual" > /tmp/iotier-exports-actual.$$
  diff /tmp/iotier-exports-expected.$$ /tmp/iotier-exports-actual.$$ || true
  rm -f /tmp/iotier-exports-expected.$$ /tmp/iotier-exports-actual.$$
  exit 1
fi
echo "ok: $(printf '%s\n' "$actual" | wc -l) exported symbols, as listed"
