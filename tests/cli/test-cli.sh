#!/bin/bash
# SPDX-License-Identifier: MIT
# Description: the iotier CLI as a user meets it. `iotier run` refuses every bad flag, rule
# and class with exit status 2 and one line naming the bad token, before it starts
# anything; it returns the command's own exit status; `iotier threads` shows the tier and
# ioprio iotier gave each thread of a running program. Usage: test-cli.sh IOTIER TIER_PROBE
set -u
iotier=$1
probe=$2
fail=0
# shellcheck source=../lib/testlib.sh
. "$(dirname "$0")/../lib/testlib.sh"
work=''
test_tmpdir work /tmp/iotier-test-cli.XXXXXX
holder=""
# shellcheck disable=SC2016 # expanded when the cleanup runs
test_cleanup_add '[ -n "$holder" ] && kill "$holder" 2>/dev/null'

expect_usage_error() { # expected-stderr-substring args...
  local want=$1
  shift
  rm -f "$work/ran"
  "$iotier" "$@" > "$work/out" 2> "$work/err"
  local rc=$?
  if [ $rc -ne 2 ]; then echo "FAIL: iotier $*: exit $rc, want 2"; fail=1; fi
  if [ -e "$work/ran" ]; then echo "FAIL: iotier $*: started the command"; fail=1; fi
  if [ "$(wc -l < "$work/err")" -ne 1 ]; then echo "FAIL: iotier $*: want one line:"; cat "$work/err"; fail=1; fi
  if ! grep -qF -- "$want" "$work/err"; then echo "FAIL: iotier $*: stderr lacks '$want':"; cat "$work/err"; fail=1; fi
}

touch_cmd=(touch "$work/ran")
expect_usage_error "unknown option '--bogus'" run --bogus -- "${touch_cmd[@]}"
expect_usage_error "IOTIER_LOW: bad rule 'thread:': empty glob" run --low 'thread:' -- "${touch_cmd[@]}"
expect_usage_error "IOTIER_HIGH: bad rule 'comm:[x'" run --high 'comm:[x' -- "${touch_cmd[@]}"
expect_usage_error "bad low class 'rt:0'" run --low-class rt:0 -- "${touch_cmd[@]}"
expect_usage_error "bad high class 'idle'" run --high-class idle -- "${touch_cmd[@]}"
expect_usage_error "bad log level 'loud'" run --log loud -- "${touch_cmd[@]}"
expect_usage_error "option '--low' needs a value" run --low
expect_usage_error "no command given" run --low 'x*'
# An explicitly empty --low/--high is refused whether alone or repeated; an empty
# IOTIER_LOW in the environment means no rules.
expect_usage_error "--low needs at least one rule" run --low '' -- "${touch_cmd[@]}"
expect_usage_error "--low needs at least one rule" run --low 'a' --low '' -- "${touch_cmd[@]}"
expect_usage_error "--high needs at least one rule" run --high '' -- "${touch_cmd[@]}"
expect_usage_error "--low needs at least one rule" check --low '' -e 'low.count >= 0' -- "${touch_cmd[@]}"
IOTIER_LOW= "$iotier" run -- true || { echo "FAIL: empty IOTIER_LOW refused"; fail=1; }
expect_usage_error "--config $work/none" run --config "$work/none" -- "${touch_cmd[@]}"
# A FIFO as the config file is refused at once, by the CLI and by the shim (which used to
# hang the program's constructor waiting for a writer).
mkfifo "$work/fifo"
timeout 10 "$iotier" run --config "$work/fifo" -- "${touch_cmd[@]}" 2> "$work/err"
rc=$?
if [ $rc -ne 2 ] || ! grep -qF -- "--config $work/fifo: not a regular file" "$work/err"; then
  echo "FAIL: run --config FIFO: exit $rc (124: it hung), want 2:"; cat "$work/err"; fail=1
fi
shim=$(dirname "$iotier")/../shim/libiotier.so.0
out=$(echo input | timeout 10 env IOTIER_CONFIG="$work/fifo" \
  LD_PRELOAD="$shim${LD_PRELOAD:+ $LD_PRELOAD}" cat 2> "$work/err")
rc=$?
if [ $rc -ne 0 ] || [ "$out" != input ] || [ "$(grep -c 'not a regular file' "$work/err")" -ne 1 ]; then
  echo "FAIL: IOTIER_CONFIG=FIFO under the shim: exit $rc (124: it hung), output '$out':"
  cat "$work/err"; fail=1
fi
out=$(echo input | timeout 10 env IOTIER_CONFIG=/dev/stdin \
  LD_PRELOAD="$shim${LD_PRELOAD:+ $LD_PRELOAD}" cat 2> /dev/null)
[ "$out" = input ] || { echo "FAIL: IOTIER_CONFIG=/dev/stdin ate the program's input"; fail=1; }
printf 'IOTIER_LOW = bg-*\nIOTIER_BOGUS = 1\n' > "$work/bad.conf"
# IOTIER_SHIM is checked the way ld.so will use it: ld.so skips a preload it cannot use with
# a warning only, and the program would run untagged while iotier exited 0.
shim_real=$(realpath "$shim")
mkdir "$work/a dir" "$work/a:dir"
cp "$shim_real" "$work/a dir/libiotier.so"
cp "$shim_real" "$work/a:dir/libiotier.so"
cp "$shim_real" "$work/libiotier.so.bak"
IOTIER_SHIM=libiotier.so expect_usage_error "/libiotier.so): No such file or directory" run -- "${touch_cmd[@]}"
IOTIER_SHIM=$work expect_usage_error "): not a regular file" run -- "${touch_cmd[@]}"
IOTIER_SHIM=/etc/passwd expect_usage_error "): not an ELF file" run -- "${touch_cmd[@]}"
IOTIER_SHIM=$(type -P true) expect_usage_error "an executable, not a shared object" run -- "${touch_cmd[@]}"
IOTIER_SHIM="$work/a dir/libiotier.so" expect_usage_error "a space or colon" run -- "${touch_cmd[@]}"
IOTIER_SHIM="$work/a:dir/libiotier.so" expect_usage_error "a space or colon" run -- "${touch_cmd[@]}"
IOTIER_SHIM=/etc/passwd expect_usage_error "): not an ELF file" check -e 'low.count >= 0' -- "${touch_cmd[@]}"
# a relative IOTIER_SHIM is made absolute, so that the program may chdir
iotier_abs=$(realpath "$iotier")
shim_soname=$(cd "$(dirname "$shim")" && pwd -P)/libiotier.so.0
out=$(cd "$(dirname "$shim_soname")" && IOTIER_SHIM=libiotier.so.0 "$iotier_abs" run -- printenv LD_PRELOAD)
case " $out " in *" $shim_soname "*) ;; *) echo "FAIL: relative IOTIER_SHIM gave LD_PRELOAD '$out'"; fail=1 ;; esac
# the lookup beside a build tree is checked too: a build directory with a space
mkdir -p "$work/b dir/tools" "$work/b dir/shim"
cp "$iotier_abs" "$work/b dir/tools/iotier"
cp "$shim_real" "$work/b dir/shim/libiotier.so.0"
iotier_saved=$iotier
iotier="$work/b dir/tools/iotier"
IOTIER_SHIM= expect_usage_error "b dir/shim/libiotier.so.0): holds a space or colon" run -- "${touch_cmd[@]}"
iotier=$iotier_saved
# libiotier.so.bak in LD_PRELOAD is not the shim "already preloaded"
out=$(LD_PRELOAD="$work/libiotier.so.bak" IOTIER_SHIM=$shim_real "$iotier" run -- printenv LD_PRELOAD)
[ "$out" = "$shim_real $work/libiotier.so.bak" ] || { echo "FAIL: with libiotier.so.bak preloaded, LD_PRELOAD '$out'"; fail=1; }
expect_usage_error "IOTIER_CONFIG line 2: unknown key 'IOTIER_BOGUS'" run --config "$work/bad.conf" -- "${touch_cmd[@]}"
# Low-path flags (docs/low-paths.md) are validated like the rules.
expect_usage_error "IOTIER_WRITEBACK: bad size '1X'" run --writeback 1X -- "${touch_cmd[@]}"
expect_usage_error "IOTIER_WRITEBACK: bad size '100': 0 (off) or at least 4096" run --writeback 100 -- "${touch_cmd[@]}"
expect_usage_error "IOTIER_DROP_BEHIND: bad glob list '*.log,': empty glob at offset 6" run --drop-behind '*.log' --drop-behind '' -- "${touch_cmd[@]}"
expect_usage_error "IOTIER_LOW_RATE: bad size '10 M'" run --low-rate '10 M' -- "${touch_cmd[@]}"
expect_usage_error "option '--low-rate' needs a value" run --low-rate
# The adaptive target and floor (docs/adaptive.md), from a flag and from the environment.
expect_usage_error "IOTIER_TARGET: bad target 'read.p98<=2x': unknown percentile 'p98'" run --target 'read.p98<=2x' -- "${touch_cmd[@]}"
expect_usage_error "IOTIER_TARGET: bad target 'read.p99<=2': bad unit in '2'" run --target 'read.p99<=2' -- "${touch_cmd[@]}"
expect_usage_error "IOTIER_TARGET: bad target 'read.p99<=1x': factor '1x' is outside" run --target 'read.p99<=1x' -- "${touch_cmd[@]}"
IOTIER_TARGET='write.p99<=2ms' expect_usage_error "unknown metric 'write.p99'" run -- "${touch_cmd[@]}"
expect_usage_error "IOTIER_LOW_MIN_RATE: bad size '8Q'" run --low-min-rate 8Q -- "${touch_cmd[@]}"
expect_usage_error "IOTIER_DEBT_LOG: bad glob '*/LOG[': '[' at offset 5 is never closed" run --debt-log '*/LOG[' -- "${touch_cmd[@]}"
expect_usage_error "IOTIER_DEBT_LOG: bad glob '/db/': ends in '/'" run --debt-log /db/ -- "${touch_cmd[@]}"
IOTIER_DEBT_LOG='x[' expect_usage_error "IOTIER_DEBT_LOG: bad glob 'x['" run -- "${touch_cmd[@]}"
out=$("$iotier" run --target 'read.p99<=1.5ms' --low-min-rate 8M --debt-log '*/LOG' -- env)
for want in 'IOTIER_TARGET=read.p99<=1.5ms' IOTIER_LOW_MIN_RATE=8M 'IOTIER_DEBT_LOG=*/LOG'; do
  grep -qxF -- "$want" <<< "$out" || { echo "FAIL: run does not pass $want"; fail=1; }
done
out=$("$iotier" run --writeback 2M --writeback-strict --drop-behind '*.log' --drop-behind '*/wal/*' --low-rate 20M -- env)
for want in IOTIER_WRITEBACK=2M IOTIER_WRITEBACK_STRICT=1 'IOTIER_DROP_BEHIND=*.log,*/wal/*' IOTIER_LOW_RATE=20M; do
  grep -qxF -- "$want" <<< "$out" || { echo "FAIL: run does not pass $want"; fail=1; }
done
expect_usage_error "unknown command 'frobnicate'" frobnicate
expect_usage_error "'12x' is not a process id" threads 12x

# Exit status is the command's own; 127 when it cannot be found.
"$iotier" run --low 'x*' -- sh -c 'exit 7'; rc=$?
[ $rc -eq 7 ] || { echo "FAIL: run returned $rc, want 7"; fail=1; }
"$iotier" run -- /nonexistent/cmd 2>/dev/null; rc=$?
[ $rc -eq 127 ] || { echo "FAIL: missing command returned $rc, want 127"; fail=1; }
"$iotier" run -- true || { echo "FAIL: run true"; fail=1; }
# LD_PRELOAD reaches the command, and what was already preloaded is kept.
out=$(LD_PRELOAD=libc.so.6 "$iotier" run -- sh -c 'echo "$LD_PRELOAD"')
case "$out" in *libiotier.so*libc.so.6*) ;; *) echo "FAIL: LD_PRELOAD is '$out'"; fail=1;; esac
# Help works for every command and shows examples.
for c in run threads lat check; do
  "$iotier" help $c | grep -q '^examples:' || { echo "FAIL: help $c has no examples"; fail=1; }
done
"$iotier" --help | grep -q '^commands:' || { echo "FAIL: --help"; fail=1; }

# `iotier threads` on a live program under the shim.
coproc HOLD { exec "$iotier" run --low 'bg-*' -- "$probe" hold; }
holder=$HOLD_PID
read -r -t 10 line <&"${HOLD[0]}"
if [ "$line" != ready ]; then
  echo "FAIL: holder did not start"; fail=1
else
  "$iotier" threads "$holder" > "$work/threads"
  cat "$work/threads"
  grep -qE '^ *[0-9]+ +bg-hold +low +thread +idle +(-|[0-9]+) +[^ ]+$' "$work/threads" ||
    { echo "FAIL: bg-hold not shown low/idle"; fail=1; }
  grep -qE '^ *[0-9]+ +fg-hold +- +- +none +(-|[0-9]+) +[^ ]+$' "$work/threads" ||
    { echo "FAIL: fg-hold not shown untagged"; fail=1; }
  grep -q 'iotier active, low class idle, high class keep' "$work/threads" ||
    { echo "FAIL: header"; fail=1; }
fi
eval "exec ${HOLD[1]}>&-"
wait "$holder" 2>/dev/null
holder=""
"$iotier" threads $$ | grep -q 'iotier is not loaded' || { echo "FAIL: threads on a plain process"; fail=1; }

[ $fail -eq 0 ] && echo "ok: cli"
exit $fail
