#!/bin/bash
# SPDX-License-Identifier: MIT
# Description: what a user does with an installed iotier, from installed files only. Runs
# inside the scratch root the 'install' and 'debs' tests built (a mount namespace or a
# chroot), where PREFIX holds the installed tree at its real path:
#   - a program built with `pkg-config --cflags --libs iotier` calls iotier_set_tier() and
#     gets class idle, without the shim and with PREFIX's libiotier.so.0 preloaded;
#   - `iotier run --low 'inst-bg*'` tags that program's inst-bg thread idle through the
#     installed shim (found by `iotier run` itself), and `iotier threads` shows it low;
#   - `man iotier` finds and renders the installed page;
#   - bash-completion loads the installed completion, which completes --low-class.
# Usage: installed-checks.sh PREFIX LIBDIR WORKDIR (WORKDIR holds tier-user.c, writable).
# IOTIER_TEST_CFLAGS: extra compiler flags for tier-user (a sanitizer build's).
set -u
prefix=$1
libdir=$2
work=$3
fail=0
holder=""
cleanup() {
  [ -n "$holder" ] && { touch "$work/named/stop"; kill "$holder" 2>/dev/null; wait "$holder"; }
}
trap cleanup EXIT
unset LD_PRELOAD LD_LIBRARY_PATH IOTIER_SHIM IOTIER_LOW IOTIER_HIGH IOTIER_CONFIG PKG_CONFIG_PATH
export PATH=$prefix/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin
bad() { echo "FAIL: $*"; fail=1; }

iotier=$(command -v iotier)
[ "$iotier" = "$prefix/bin/iotier" ] || bad "iotier is '$iotier', not the installed $prefix/bin/iotier"
shim=$libdir/libiotier.so.0
[ -e "$shim" ] || bad "no $shim"

# The API through pkg-config.
[ "$(pkg-config --variable=prefix iotier)" = "$prefix" ] ||
  bad "pkg-config finds iotier.pc with prefix '$(pkg-config --variable=prefix iotier)'"
# shellcheck disable=SC2046,SC2086 # the flags are words
if cc ${IOTIER_TEST_CFLAGS:-} -o "$work/tier-user" "$work/tier-user.c" $(pkg-config --cflags --libs iotier) 2> "$work/cc.err"; then
  out=$("$work/tier-user" api) || bad "iotier_set_tier() without the shim: $out"
  [[ $out == *"shim none"* ]] || bad "a shim was mapped without LD_PRELOAD: $out"
  out=$(LD_PRELOAD=$shim "$work/tier-user" api) || bad "iotier_set_tier() under the shim: $out"
  [[ $out == *"shim $libdir/libiotier.so.0"* ]] || bad "LD_PRELOAD=$shim did not map it: $out"
else
  bad "cc \$(pkg-config --cflags --libs iotier) failed: $(cat "$work/cc.err")"
fi

# iotier run and iotier threads, on the same program.
if [ -x "$work/tier-user" ]; then
  mkdir -p "$work/named"
  # --cgroup off: the chroot shares the host's cgroups, and the tier is what is checked here.
  iotier run --low 'inst-bg*' --cgroup off -- "$work/tier-user" named "$work/named" > "$work/named.out" 2>&1 &
  holder=$!
  for _ in $(seq 300); do
    [ -e "$work/named/ready" ] || ! kill -0 "$holder" 2> /dev/null && break
    sleep 0.1
  done
  if [ -e "$work/named/ready" ] && read -r pid tid class < "$work/named/ready"; then
    [ "$class" = 3 ] || bad "iotier run --low 'inst-bg*': the inst-bg thread has class $class, not idle (3)"
    grep -q "shim $libdir/libiotier.so.0" "$work/named.out" ||
      bad "iotier run preloaded another shim: $(cat "$work/named.out")"
    iotier threads "$pid" > "$work/threads.out" 2>&1 || bad "iotier threads $pid: $(cat "$work/threads.out")"
    awk -v tid="$tid" '$1 == tid && $2 == "inst-bg" && $3 == "low" && $5 == "idle" { found = 1 }
      END { exit !found }' "$work/threads.out" ||
      bad "iotier threads does not show $tid inst-bg low idle: $(cat "$work/threads.out")"
  else
    bad "tier-user under iotier run never got ready: $(cat "$work/named.out")"
  fi
  touch "$work/named/stop"
  wait "$holder" || bad "tier-user under iotier run exited $?: $(cat "$work/named.out")"
  holder=""
fi

# The manual page.
# (/usr/local/man may be a link to /usr/local/share/man: compare real paths.)
page=$(man -w iotier 2>&1)
[[ $(realpath "$page") == "$(realpath "$prefix/share/man/man1")/iotier.1"* ]] ||
  bad "man -w iotier gives '$page', not the installed page"
MANPAGER=cat MANWIDTH=80 man iotier > "$work/man.out" 2> "$work/man.err" || bad "man iotier: $(cat "$work/man.err")"
grep -q 'iotier run' "$work/man.out" || bad "man iotier renders no 'iotier run': $(head -5 "$work/man.out")"

# The completion, loaded the way an interactive bash loads it: on first use, by name.
completion=$(bash -c '
  source /usr/share/bash-completion/bash_completion || exit 1
  __load_completion iotier || { echo "not found"; exit 1; }
  complete -p iotier
  COMP_LINE="iotier run --low-class " COMP_POINT=24 COMP_WORDS=(iotier run --low-class "") COMP_CWORD=3
  _iotier iotier "" --low-class
  echo "${COMPREPLY[*]}"' 2>&1) || bad "bash-completion does not load the installed completion: $completion"
[[ $completion == *"complete -F _iotier iotier"*"idle be:0"* ]] ||
  bad "the installed completion does not complete --low-class: $completion"

[ $fail -eq 0 ] && echo "ok: the installed iotier runs, tags, shows, links, has its page and completion"
exit $fail
