# SPDX-License-Identifier: MIT
#
# matrix.sh: the kernel matrix, as one list of features and the test behind each. It is
# sourced inside the VMs that tests/vm/test-kernels.sh boots (Debian's 6.1 and 6.12) and
# on the host by tests/vm/test-host-support.sh (the host kernel's column), so every kernel
# runs exactly the same commands. Each feature's result is one cell of the README's
# support table: "yes"; what the kernel lacks when iotier refused it in one line; or, when
# the test found the kernel without a feature it falls back from (tests/lib's
# test_kernel_lacks: no bfq, so blkio v1 has no weight file) and judged the fallback, "no:
# lacks F (why); fallback judged". Such a host fills a column of its own, "6.18 (no bfq)"
# (matrix_column), so that two machines on one kernel version never fight over a column.
#
# To add a feature (the adaptive controller's integration test, for one):
#   1. add its name to MATRIX_FEATURES and its README row title to matrix_title;
#   2. add its command to matrix_cmd, using programs from $BIN;
#   3. add each program it needs to MATRIX_PROGRAMS, and pass it from tests/meson.build
#      (test-kernels.sh and test-host-support.sh take them as NAME=PATH arguments);
#   4. run the vm suite with IOTIER_UPDATE_README=1 once to write its row.
# POSIX sh: busybox runs it in the guest, dash on the host.

MATRIX_FEATURES="lat-exact lat-pid check-direct check-buffered shim-thread cgroup-weights adaptive"

# Programs the features run, copied into the guest's /iotier/bin (libiotier.so: /iotier/lib).
MATRIX_PROGRAMS="iotier libiotier.so lat-test check-test check-workload tier-probe vm-checks cgroup-probe test-cgroup-v1 adaptive-test"

matrix_title() {
  case $1 in
    lat-exact) echo '`iotier lat`: exact counts per class and level (none, mq-deadline)' ;;
    lat-pid) echo '`iotier lat --pid`, `--children`, `--cgroup`: exact submitter' ;;
    check-direct) echo '`iotier check`: direct I/O per tier' ;;
    check-buffered) echo '`iotier check`: buffered writes, writeback leak attributed' ;;
    shim-thread) echo 'shim: tagging by thread name' ;;
    cgroup-weights) echo 'cgroup io weights (v2 in the VMs, v1 on the host)' ;;
    adaptive) echo 'shim: adaptive low tier held under contention, released after' ;;
  esac
}

# The test of feature $1, with the programs in $BIN and the shim at $SHIM. $MATRIX_WHERE is
# "guest" (cgroup v2 only, bfq on virtio disks), "host" (hybrid cgroups, blkio v1) or
# "guest-v1" (test-kernels.sh's VM without bfq, blkio v1: the fallback, cgroup-weights only).
matrix_cmd() {
  case $1 in
    lat-exact)
      "$BIN/lat-test" "$BIN/iotier" exact none &&
        "$BIN/lat-test" "$BIN/iotier" exact mq-deadline ;;
    lat-pid)
      "$BIN/lat-test" "$BIN/iotier" pid mq-deadline &&
        "$BIN/lat-test" "$BIN/iotier" pid none &&
        "$BIN/lat-test" "$BIN/iotier" children &&
        "$BIN/lat-test" "$BIN/iotier" cgroup ;;
    check-direct)
      IOTIER_WRITEBACK=0 "$BIN/check-test" "$BIN/iotier" "$BIN/check-workload" direct ;;
    check-buffered)
      IOTIER_WRITEBACK=0 "$BIN/check-test" "$BIN/iotier" "$BIN/check-workload" buffered ;;
    shim-thread)
      LD_PRELOAD=$SHIM IOTIER_LOW='bg-*' IOTIER_LOG=warn "$BIN/tier-probe" naming &&
        LD_PRELOAD=$SHIM IOTIER_LOW='bg-*' IOTIER_LOG=warn "$BIN/tier-probe" rename-back ;;
    cgroup-weights)
      # Not bfq_weight_order: a throughput order, which TCG on a loaded machine cannot
      # promise (it stays in test-vm.sh, run by bench/micro/vm-p99.sh's kind of measurement).
      if [ "$MATRIX_WHERE" = guest ]; then
        "$BIN/vm-checks" only io_weight exit_cleanup v2_no_thread_split cli_cgroup_weight \
          writeback_charged
      else
        "$BIN/test-cgroup-v1" "$SHIM" "$BIN/iotier" "$BIN/cgroup-probe"
      fi ;;
    adaptive)
      "$BIN/adaptive-test" "$SHIM" ;;
    *) echo "matrix: no feature $1" >&2; return 1 ;;
  esac
}

# The kernel features the test outputs $@ found missing ("KERNEL LACKS F: why; ..." lines
# of test_kernel_lacks), one line each, sorted.
matrix_lacks() {
  sed -n 's/^KERNEL LACKS \([^:]*\): .*/\1/p' "$@" | sort -u
}

# The support table's column for kernel version $1 whose tests wrote outputs $2...: "6.18",
# or "6.18 (no bfq)" when a test judged a fallback because the kernel lacks bfq.
matrix_column() {
  local col=$1 lacks
  shift
  lacks=$(matrix_lacks "$@" | sed 's/^/no /' | paste -sd, - | sed 's/,/, /g')
  [ -n "$lacks" ] && col="$col ($lacks)"
  echo "$col"
}

# Run feature $1, its output in $2; print "MATRIX <name> <cell>" with the cell "yes", "no:
# <what the kernel lacks>" (iotier refused in one line), "no: lacks F (why); fallback
# judged" (passed, judging the fallback for a kernel without F) or "FAIL" (anything else).
matrix_feature() {
  local status refusal lack
  matrix_cmd "$1" >"$2" 2>&1
  status=$?
  lack=$(sed -n 's/^KERNEL LACKS \([^:]*\): \(.*\); judging the fallback$/lacks \1 (\2)/p' "$2" |
    sort -u | paste -sd, - | sed 's/,/, /g')
  if [ $status = 0 ] && [ -n "$lack" ]; then
    echo "MATRIX $1 no: $lack; fallback judged"
    return 0
  fi
  if [ $status = 0 ]; then
    echo "MATRIX $1 yes"
    return 0
  fi
  # A refusal names what is missing and which kernel has it: "... lacks ... (Linux N ...)".
  refusal=$(sed -n 's/^iotier [a-z]*: .*\(lacks .*(Linux [0-9.]* and later[^)]*)\).*/\1/p' "$2" | head -n1)
  if [ $status = 1 ] && [ -n "$refusal" ]; then
    echo "MATRIX $1 no: $refusal"
    return 0
  fi
  echo "MATRIX $1 FAIL (exit $status)"
  return 1
}
