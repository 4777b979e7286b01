#!/bin/bash
# SPDX-License-Identifier: MIT
# Description: the bash completion (tools/completion/iotier.bash) completes what the CLI
# really accepts. It is loaded into this bash and driven as bash's readline would drive it:
# COMP_LINE, COMP_POINT and COMP_WORDS (split at COMP_WORDBREAKS, ':' included) for a line,
# then the function `complete -p iotier` names, then COMPREPLY is checked against exact
# expectations: subcommands, flags, the values of --low-class, --high-class, --log, --cgroup,
# --format, --by, --op, --attach, block devices for -d, pids for `threads`, and the command
# after `--`. Usage: test-completion.sh COMPLETION_SCRIPT IOTIER
set -u
script=$1
iotier=$(realpath "$2")
fail=0

# shellcheck source=/dev/null
source "$script"
spec=$(complete -p iotier 2>/dev/null) || { echo "FAIL: $script defines no completion for iotier"; exit 1; }
func=${spec#*-F }
func=${func%% *}

# Complete LINE (the cursor at its end) the way readline would, into REPLY_SORTED.
complete_line() {
  COMP_LINE=$1
  COMP_POINT=${#COMP_LINE}
  COMP_TYPE=9
  COMP_KEY=9
  # bash's own split: blanks end words, and each COMP_WORDBREAKS character such as ':' or
  # '=' is a word of its own.
  local spaced
  spaced=$(printf '%s' "$COMP_LINE" | sed 's/\([:=]\)/ \1 /g')
  read -ra COMP_WORDS <<< "$spaced"
  [[ $COMP_LINE == *' ' || $COMP_LINE == *[:=] ]] && COMP_WORDS+=("")
  COMP_WORDS[0]=$iotier
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  "$func" iotier "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]:-}"
  REPLY_SORTED=$(printf '%s\n' "${COMPREPLY[@]}" | sort -u | tr '\n' ' ')
  REPLY_SORTED=${REPLY_SORTED% }
}

# LINE's completions are exactly WANT (space-separated, any order).
expect_exact() {
  local want
  complete_line "$1"
  want=$(printf '%s\n' $2 | sort -u | tr '\n' ' ')
  want=${want% }
  if [[ $REPLY_SORTED != "$want" ]]; then
    echo "FAIL: '$1' completes to '$REPLY_SORTED', want '$want'"
    fail=1
  fi
}

# LINE's completions include every word of WANT.
expect_includes() {
  complete_line "$1"
  local w
  for w in $2; do
    if [[ " $REPLY_SORTED " != *" $w "* ]]; then
      echo "FAIL: '$1' completes to '${REPLY_SORTED:0:200}', which lacks '$w'"
      fail=1
    fi
  done
}

commands=$("$iotier" --help | awk '/^commands:/ { on = 1; next } on && /^$/ { exit } on { print $1 }')
expect_exact "iotier " "$commands help --help --version"
expect_exact "iotier th" "threads"
expect_exact "iotier help r" "run"
expect_exact "iotier run --lo" "--low --low-class --low-min-rate --low-rate --log"
expect_exact "iotier run --de" "--debt-log"
expect_exact "iotier run --writeback" "--writeback --writeback-strict"
expect_exact "iotier run --low-class " "idle be:0 be:1 be:2 be:3 be:4 be:5 be:6 be:7"
# After 'be:' bash replaces only the part after the colon.
expect_exact "iotier run --low-class be:" "0 1 2 3 4 5 6 7"
expect_exact "iotier run --high-class r" "rt:0 rt:1 rt:2 rt:3 rt:4 rt:5 rt:6 rt:7"
expect_exact "iotier run --log " "off warn debug"
expect_exact "iotier run --cgroup " "auto v1 v2 off"
expect_exact "iotier run --low 'x*' --cgroup-weight 10 --log w" "warn"
# A rule with a colon is one word to iotier: the next word is still a flag's value.
expect_exact "iotier run --low rocksdb:low* --low-class i" "idle"
# Quoted and escaped blanks stay inside one word.
expect_exact "iotier run --low 'cmdline:postgres: *autovacuum*' --log w" "warn"
expect_exact "iotier run --low \"a b\" --low a\\ b --log d" "debug"
expect_includes "iotier run --low 'x*' -- " "echo true"
expect_exact "iotier run --low 'x*' -- ech" "echo"
expect_exact "iotier run --log off true --lo" "$(compgen -f -- --lo)"

threads_pids="$$"
expect_includes "iotier threads " "$threads_pids 1"
expect_exact "iotier threads $$" "$(cd /proc && compgen -W "$(printf '%s\n' [0-9]*)" -- "$$")"
expect_exact "iotier threads --he" "--help"

if "$iotier" lat --help 2>/dev/null | grep -q -- '--format'; then
  expect_exact "iotier lat --format " "text json prom"
  expect_exact "iotier lat --format=j" "json"
  expect_exact "iotier lat -f p" "prom"
  expect_exact "iotier lat --by " "class level"
  expect_exact "iotier lat --attach " "auto tp_btf raw_tp"
  expect_exact "iotier lat --op read,w" "read,write"
  expect_exact "iotier lat --pid $$" "$(cd /proc && compgen -W "$(printf '%s\n' [0-9]*)" -- "$$")"
  devices=$(ls /sys/class/block)
  [ -n "$devices" ] || { echo "FAIL: no block devices in /sys/class/block to complete"; fail=1; }
  expect_exact "iotier lat -d " "$devices"
  first=$(ls /sys/class/block | head -n 1)
  expect_includes "iotier lat --disk ${first:0:2}" "$first"
else
  echo "FAIL: 'iotier lat --help' lists no --format (a build without BPF?)"
  fail=1
fi
if "$iotier" check --help >/dev/null 2>&1; then
  expect_exact "iotier check -d " "$devices"
  expect_exact "iotier check --low-class b" "be:0 be:1 be:2 be:3 be:4 be:5 be:6 be:7"
  expect_includes "iotier check --expect 'low.leak.bytes == 0' -- " "echo"
fi

[ $fail -eq 0 ] && echo "ok: completions match the CLI"
exit $fail
