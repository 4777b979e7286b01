#!/bin/sh
# SPDX-License-Identifier: MIT
# Description: the reference disk (bench/refdisk/refdisk) end to end. It comes up with its driver
# depth at 4 under mq-deadline, checked (through debugfs, or by the in-flight peak on a
# kernel without block debugfs, where a full-depth device is told apart), and `refdisk
# sched` switches again without debugfs; bfq, where the kernel lacks it, is refused with
# exit 3 and the scheduler kept; data written through the loop device reads back the same;
# the model is applied (40 QD1 reads at 5 ms of model latency each cannot take less than
# 200 ms, a lower bound only, and the daemon counted them); and it is torn down with no
# mount, loop device, daemon or state left behind, after a normal run, after the command
# fails, after Ctrl-C, and when the daemon cannot start. Needs root and /dev/fuse: skips
# (77) otherwise, a failure under IOTIER_TEST_STRICT=1.
# Usage: test-refdisk.sh BENCH_REFDISK BUILDDIR
set -u
refdisk=$1
builddir=$2

# shellcheck source=tests/lib/testlib.sh
. "$(dirname "$0")/../lib/testlib.sh"

[ "$(id -u)" = 0 ] || test_skip "needs root (FUSE mount, loop device)"
[ -c /dev/fuse ] || test_skip "no /dev/fuse"
[ -x "$builddir/bench/refdisk-fs" ] || test_skip "refdisk-fs not built (libfuse3-dev missing)"
command -v losetup >/dev/null 2>&1 || test_skip "losetup missing (util-linux)"

# Its own state root, so that nothing here meets another refdisk on the machine.
root=""
test_tmpdir root /tmp/iotier-test-refdisk.XXXXXX
seen=$root/seen # what the command saw while the disk was up: dev, mnt, pid
# A failed assertion must not leave the rig behind either (runs before the rm of root).
test_cleanup_add 'for s in "$root"/state/*; do [ -d "$s" ] && "$refdisk" down "$s"; done'
export REFDISK_STATE_ROOT="$root/state" IOTIER_BUILDDIR="$builddir"

# alive PID: running, not a zombie waiting for us to reap it
alive() {
  st=$(ps -o stat= -p "$1" 2>/dev/null)
  [ -n "$st" ] && [ "${st#Z}" = "$st" ]
}

# assert_gone: nothing of the last disk is left (its daemon, loop device, mount, state).
assert_gone() {
  dev=$(sed -n 1p "$seen") mnt=$(sed -n 2p "$seen") pid=$(sed -n 3p "$seen")
  [ -n "$dev" ] && [ -n "$mnt" ] && [ -n "$pid" ] || test_fail "$1: the command did not see the disk"
  alive "$pid" && test_fail "$1: refdisk-fs ($pid) still runs"
  grep -q " $mnt " /proc/mounts && test_fail "$1: $mnt still mounted"
  if [ -f "/sys/block/$dev/loop/backing_file" ] &&
    grep -q "^$mnt/" "/sys/block/$dev/loop/backing_file"; then
    test_fail "$1: $dev still attached to $mnt/disk"
  fi
  [ -z "$(ls -A "$root/state" 2>/dev/null)" ] || test_fail "$1: state left in $root/state"
  rm -f "$seen"
}

# 1. Up, depth, data, model. 5 ms per request, no transfer time, one channel.
"$refdisk" run --model '5000 0 1' --size 67108864 --name "t$$" -- sh -c '
  set -eu
  s=$REFDISK_STATE dev=$(cat "$s/dev") mnt=$(cat "$s/mnt")
  printf "%s\n%s\n%s\n" "$dev" "$mnt" "$(cat "$s/pid")" >"$1"
  grep -q "\[mq-deadline\]" "/sys/block/$dev/queue/scheduler" || { echo "FAIL: scheduler"; exit 1; }
  read -r d sd how <"$s/depths"
  [ "$sd" -gt 4 ] || { echo "FAIL: scheduler depth $sd: nothing left to reorder"; exit 1; }
  # Checked, through debugfs or (a kernel without block debugfs) the in-flight peak.
  [ "$d" = 4 ] || { echo "FAIL: driver depth $d ($how), not a checked 4"; exit 1; }
  # A switch later on (bench/run switches before every run) must work without debugfs too:
  # it used to end with set -e on the debugfs read, which bench/run took for "cannot set".
  out=$("$0" sched "$dev" mq-deadline) || { echo "FAIL: refdisk sched exited $? ($out)"; exit 1; }
  case $out in "4 "*" debugfs" | "4 "*" inflight") ;; *) echo "FAIL: refdisk sched said \"$out\""; exit 1 ;; esac
  # The check can fail: a second loop device on the same file, at its full depth. A loop
  # device is reused with the tags its last user left (nr_requests under none may read
  # 128 over 4 tags, and writing what it reads changes nothing): one less first.
  extra=$(losetup --find --show --direct-io=on "$mnt/disk")
  eq=/sys/block/${extra#/dev/}/queue n=$(cat "/sys/block/${extra#/dev/}/mq/0/nr_tags")
  echo none >"$eq/scheduler" && echo $((n - 1)) >"$eq/nr_requests" && echo "$n" >"$eq/nr_requests"
  full=$("$0" depth "${extra#/dev/}")
  losetup -d "$extra"
  case $full in 4\ * | \?*) echo "FAIL: a full-depth device checked as \"$full\""; exit 1 ;; esac
  # A kernel without bfq: bfq is refused with exit 3 and the disk keeps its scheduler.
  if "$0" has-sched "$dev" bfq; then
    "$0" sched "$dev" bfq >/dev/null || { echo "FAIL: refdisk sched bfq failed with bfq present"; exit 1; }
    "$0" sched "$dev" mq-deadline >/dev/null
  else
    rc=0
    "$0" sched "$dev" bfq >/dev/null 2>&1 || rc=$?
    [ "$rc" = 3 ] || { echo "FAIL: refdisk sched bfq without bfq exited $rc, not 3"; exit 1; }
  fi
  grep -q "\[mq-deadline\]" "/sys/block/$dev/queue/scheduler" || { echo "FAIL: scheduler lost"; exit 1; }
  # a pattern that differs in every 4 KiB block, written and read back with O_DIRECT
  seq 1 300000 >"$2/pattern"
  head -c 1048576 "$2/pattern" >"$2/want"
  dd if="$2/want" of="$REFDISK_DEV" bs=64k seek=16 oflag=direct status=none
  dd if="$REFDISK_DEV" of="$2/got" bs=64k skip=16 count=16 iflag=direct status=none
  cmp "$2/want" "$2/got" || { echo "FAIL: data read back differs"; exit 1; }
  r0=$(sed -n "s/^reads //p" "$mnt/stats")
  t0=$(date +%s%N)
  dd if="$REFDISK_DEV" of=/dev/null bs=4k count=40 iflag=direct status=none
  t1=$(date +%s%N)
  r1=$(sed -n "s/^reads //p" "$mnt/stats")
  [ $((r1 - r0)) -ge 40 ] || { echo "FAIL: the daemon saw $((r1 - r0)) reads, not 40"; exit 1; }
  ms=$(((t1 - t0) / 1000000))
  [ "$ms" -ge 200 ] || { echo "FAIL: 40 reads at 5 ms took $ms ms: the model is not applied"; exit 1; }
  echo "ok: data read back; 40 reads took $ms ms (model floor 200 ms)"
' "$refdisk" "$seen" "$root" || test_fail "the run on the disk failed"
assert_gone "after a normal run"

# 2. The command fails: its status comes back, the disk goes.
rc=0
"$refdisk" run --preset sata --size 67108864 --name "f$$" -- sh -c '
  printf "%s\n%s\n%s\n" "$(cat "$REFDISK_STATE/dev")" "$(cat "$REFDISK_STATE/mnt")" \
    "$(cat "$REFDISK_STATE/pid")" >"$1"
  exit 3' refdisk-check "$seen" || rc=$?
[ "$rc" = 3 ] || test_fail "a failing command's status 3 came back as $rc"
assert_gone "after the command failed"

# 3. Ctrl-C while the command runs: SIGINT to the whole process group, as a terminal sends
# it (refdisk run in a session of its own, so that the test itself is not hit, and with
# SIGINT not ignored: a shell starts background jobs with it ignored, a terminal does not).
python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.setsid()
os.execvp(sys.argv[1], sys.argv[1:])' "$refdisk" run --preset cloud --size 67108864 --name "i$$" -- sh -c '
  printf "%s\n%s\n%s\n" "$(cat "$REFDISK_STATE/dev")" "$(cat "$REFDISK_STATE/mnt")" \
    "$(cat "$REFDISK_STATE/pid")" >"$1"
  exec sleep 60' refdisk-check "$seen" &
runner=$!
i=0
while [ ! -s "$seen" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
[ -s "$seen" ] || test_fail "the disk did not come up within 30 s"
kill -s INT -- "-$runner"
i=0
while alive "$runner" && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
alive "$runner" && test_fail "refdisk run did not end on SIGINT"
rc=0
wait "$runner" || rc=$?
[ "$rc" = 130 ] || test_fail "refdisk run ended with $rc on SIGINT, not 130"
assert_gone "after SIGINT"

# 4. The daemon cannot start: up fails, and leaves no state (a stand-in refdisk-fs).
mkdir -p "$root/fake/bench"
printf '#!/bin/sh\necho "stand-in refdisk-fs: refusing" >&2\nexit 1\n' >"$root/fake/bench/refdisk-fs"
chmod +x "$root/fake/bench/refdisk-fs"
if IOTIER_BUILDDIR="$root/fake" "$refdisk" up --preset sata --size 67108864 --name "d$$" >/dev/null 2>&1; then
  test_fail "up succeeded with a daemon that exits"
fi
[ -z "$(ls -A "$root/state" 2>/dev/null)" ] || test_fail "a failed up left state in $root/state"

# 5. Bad input: one line, exit 2, nothing started.
rc=0
"$refdisk" up --preset nosuch >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || test_fail "an unknown preset exited $rc, not 2"
rc=0
"$refdisk" up --model '100 200 0' >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || test_fail "a model with 0 channels exited $rc, not 2"
echo "ok: torn down after a normal run, a failing command, SIGINT and a daemon that fails"
