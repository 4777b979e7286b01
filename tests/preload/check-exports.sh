#!/bin/bash
# SPDX-License-Identifier: MIT
# Description: libiotier.so exports exactly the names its version script lists (the wrapped
# libc functions and the iotier.h API) and nothing else, so that its internals can never
# capture a symbol the program or another library defines. With SYMBOLS, the Debian symbols
# file (debian/libiotier0.symbols) must list exactly the same names, each with a version.
# Usage: check-exports.sh SO MAP [SYMBOLS]
set -eu
# shellcheck source=../lib/testlib.sh
. "$(dirname "$0")/../lib/testlib.sh"
so=$1
map=$2
symbols=${3:-}
command -v nm >/dev/null || test_skip "nm not installed"

expected=$(sed -n '/global:/,/local:/p' "$map" | grep -v -e 'global:' -e 'local:' |
  tr ';' '\n' | tr -d ' \t' | grep -v '^$' | sort -u)
actual=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TtWwDdBb]$/ { print $3 }' | sed 's/@.*//' | sort -u)

if [ "$expected" != "$actual" ]; then
  echo "exported symbols differ from $map:"
  # mktemp, not a name from the pid: this runs as root, and /tmp is everyone's.
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
  printf '%s\n' "$expected" > "$dir/expected"
  printf '%s\n' "$actual" > "$dir/actual"
  diff "$dir/expected" "$dir/actual" || true
  exit 1
fi
if [ -n "$symbols" ]; then
  # Lines " NAME@Base VERSION" after the "libiotier.so.0 libiotier0 #MINVER#" header.
  bad=$(grep '^ ' "$symbols" | grep -v -E '^ [A-Za-z0-9_]+@Base [0-9][0-9.~+]*$' || true)
  listed=$(grep '^ ' "$symbols" | sed 's/^ \([^@]*\)@.*/\1/' | sort -u)
  if [ -n "$bad" ] || [ "$expected" != "$listed" ]; then
    echo "$symbols does not follow $map (add new exports as ' name@Base VERSION'):"
    [ -n "$bad" ] && printf 'malformed: %s\n' "$bad"
    diff <(printf '%s\n' "$expected") <(printf '%s\n' "$listed") || true
    exit 1
  fi
  head -n 1 "$symbols" | grep -q '^libiotier\.so\.0 libiotier0 ' ||
    { echo "$symbols: first line is not 'libiotier.so.0 libiotier0 ...'"; exit 1; }
fi
echo "ok: $(printf '%s\n' "$actual" | wc -l) exported symbols, as listed${symbols:+ in the map and $symbols}"
