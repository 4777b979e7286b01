#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Description: the kernel matrix. Boots Debian 12's own kernel (linux-image-amd64, 6.1) and
# its 6.12 (linux-image-6.12-amd64) in qemu under TCG, both at once, from one initramfs
# that carries the modules of both and the programs of tests/vm/matrix.sh, and runs every
# feature of the matrix inside each: exact `lat` counts under none and mq-deadline, exact
# --pid/--children/--cgroup, `check` on direct and buffered I/O with leak attribution, shim
# tagging by thread name, and cgroup v2 io weights (tests/vm/vm-checks.c). Each kernel's
# results are its column of the README's support table, and the test fails when the README
# says otherwise (IOTIER_UPDATE_README=1 rewrites the column instead). The kernel packages
# are fetched with apt-get download and unpacked with dpkg-deb -x into the build directory,
# never installed. No timing is asserted; qemu gets generous time on a loaded machine.
# A third VM boots 6.12 as a kernel that offers no io weight (bfq not loaded, blkio a v1
# hierarchy: vm_write_init's iotier_v1_nobfq) and runs only the cgroup-weights feature
# there, test-cgroup-v1: it must judge the fallback and pass, with the cell "no: lacks bfq
# ...; fallback judged", and the shim, with the default weight, must say nothing on the
# program's stderr. That VM fills no README column: the host's "(no bfq)" column does.
# Exit 0 pass, 1 fail, 77 skip (qemu or a package not to be had; a failure under
# IOTIER_TEST_STRICT=1).
#
# usage: test-kernels.sh CACHE_DIR README NAME=PATH... (the programs of MATRIX_PROGRAMS)
set -u

here=$(dirname "$0")
cache=$1 readme=$2
shift 2
# shellcheck source=../lib/testlib.sh
. "$here/../lib/testlib.sh"
. "$here/vm-lib.sh"
. "$here/matrix.sh"

# Debian meta-packages, and the README column each one's kernel fills.
KERNELS="linux-image-amd64:6.1 linux-image-6.12-amd64:6.12"
# The kernel booted without bfq, and the cell its cgroup-weights feature must give.
NOBFQ=6.12
NOBFQ_CELL='no: lacks bfq (blkio v1 has no weight file without it); fallback judged'

vm_require_tools
command -v python3 >/dev/null || test_skip "python3 not installed"

work=''
test_tmpdir work /var/tmp/iotier-kernels.XXXXXX
# a killed test (meson timeout) must not leave a VM running
pids=
# shellcheck disable=SC2016 # expanded when the cleanup runs
test_cleanup_add 'for p in $pids; do kill "$p" 2>/dev/null; done'
VM_ROOT=$work/root
mkdir -p "$VM_ROOT/bin" "$VM_ROOT/sbin" "$VM_ROOT/proc" "$VM_ROOT/sys" "$VM_ROOT/dev" \
  "$VM_ROOT/mnt" "$VM_ROOT/tmp" "$VM_ROOT/var/tmp" "$VM_ROOT/etc" "$VM_ROOT/iotier/bin" \
  "$VM_ROOT/iotier/lib"

# ---- the kernels, and their modules side by side in one initramfs ----
for k in $KERNELS; do
  vm_fetch_kernel "$cache" "${k%%:*}"
  vm_add_modules "$VM_TREE" "$VM_ROOT" virtio_pci virtio_blk crc32c_generic crc16 ext4 bfq \
    loop kyber_iosched
  echo "$VM_VMLINUZ" >"$work/vmlinuz.${k#*:}"
done

# ---- programs ----
cp "$VM_BUSYBOX" "$VM_ROOT/bin/busybox"
for arg in "$@"; do
  name=${arg%%=*} path=${arg#*=}
  case " $MATRIX_PROGRAMS " in *" $name "*) ;; *) echo "unknown program $name" >&2; exit 1 ;; esac
  [ -f "$path" ] || { echo "missing program $path" >&2; exit 1; }
  case $name in
    libiotier.so) vm_copy_program /iotier/lib "$path" libiotier.so ;; # the file may be libiotier.so.0.1.0
    *) vm_copy_program /iotier/bin "$path" ;;
  esac
done
for name in $MATRIX_PROGRAMS; do
  [ -e "$VM_ROOT/iotier/bin/$name" ] || [ -e "$VM_ROOT/iotier/lib/$name" ] ||
    { echo "program $name not given" >&2; exit 1; }
done
# check-test formats its scratch file system itself.
vm_copy_program /sbin "$(command -v mkfs.ext4)"
cp "$here/matrix.sh" "$VM_ROOT/iotier/matrix.sh"
printf 'root:x:0:0::/:/bin/sh\nnobody:x:65534:65534::/:/bin/false\n' >"$VM_ROOT/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$VM_ROOT/etc/group"

vm_write_init <<'EOF'
export PATH=/iotier/bin:/sbin:/bin
mount -t tmpfs -o size=768m tmpfs /var/tmp
mount -t tmpfs tmpfs /tmp
export IOTIER_TEST_STRICT=1 IOTIER_SHIM=/iotier/lib/libiotier.so
BIN=/iotier/bin SHIM=/iotier/lib/libiotier.so MATRIX_WHERE=guest
. /iotier/matrix.sh
features=$MATRIX_FEATURES
if [ $VM_NOBFQ = 1 ]; then
  # a kernel with no io weight: the fallback, through blkio v1 as on a hybrid host
  MATRIX_WHERE=guest-v1 features=cgroup-weights
  LD_PRELOAD=$SHIM IOTIER_LOW=comm:cgroup-probe IOTIER_LOG=warn cgroup-probe exit \
    </dev/null >/tmp/probe.out 2>/tmp/probe.err
  echo "VMNOBFQ shim exit $? stderr $(wc -c </tmp/probe.err) bytes: $(head -c 300 /tmp/probe.err)"
fi
for f in $features; do
  matrix_feature "$f" /tmp/$f.log || sed "s/^/VMLOG $f: /" /tmp/$f.log | tail -n 40
  [ $VM_NOBFQ = 1 ] && sed -n "s/^KERNEL LACKS/VMLOG $f: KERNEL LACKS/p" /tmp/$f.log
done
echo "VMEXIT"
EOF
vm_pack_initramfs "$work/initrd.gz"
vm_make_disks "$work"

# ---- boot every kernel at once ----
start=$(date +%s)
VM_MEM=1536
for k in $KERNELS $NOBFQ-nobfq; do
  col=${k#*:} append=cgroup_no_v1=all
  case $col in *-nobfq) append=iotier_v1_nobfq VM_MEM=1024 ;; esac
  cp --sparse=always "$work/vda.img" "$work/vda.$col.img"
  cp --sparse=always "$work/vdb.img" "$work/vdb.$col.img"
  VM_VMLINUZ=$(cat "$work/vmlinuz.${col%-nobfq}")
  vm_boot "$work/initrd.gz" "$work/console.$col.log" "$append" \
    "$work/vda.$col.img" "$work/vdb.$col.img"
  pids="$pids $VM_PID"
done
for p in $pids; do wait "$p"; done
pids=
echo "vm: all kernels done after $(( $(date +%s) - start )) s"

# ---- each kernel's column, against the README ----
failed=0
for k in $KERNELS; do
  col=${k#*:} log=$work/console.$col.log
  echo "---- $col"
  tr -d '\r' <"$log" | grep -E '^(VMINFO|MATRIX|VMCHECK|VMLOG)'
  if ! grep -q '^VMEXIT' "$log"; then
    echo "kernel $col did not finish; console tail:" >&2
    tail -n 60 "$log" | tr -d '\r' >&2
    failed=1
    continue
  fi
  tr -d '\r' <"$log" | sed -n 's/^MATRIX //p' >"$work/column.$col"
  grep -q ' FAIL' "$work/column.$col" && failed=1
  python3 "$here/support-table.py" "$readme" "$col" "$work/column.$col" "$here/matrix.sh" ||
    failed=1
done

# ---- the kernel without a weight: the fallback judged, and the shim silent ----
log=$work/console.$NOBFQ-nobfq.log
echo "---- $NOBFQ without bfq (blkio v1)"
tr -d '\r' <"$log" | grep -E '^(VMINFO|MATRIX|VMNOBFQ|VMLOG)'
cell=$(tr -d '\r' <"$log" | sed -n 's/^MATRIX cgroup-weights //p')
if ! grep -q '^VMEXIT' "$log"; then
  echo "kernel $NOBFQ without bfq did not finish; console tail:" >&2
  tail -n 60 "$log" | tr -d '\r' >&2
  failed=1
elif [ "$cell" != "$NOBFQ_CELL" ]; then
  echo "FAIL: cgroup-weights without bfq gave '$cell', want '$NOBFQ_CELL'"
  failed=1
elif ! tr -d '\r' <"$log" | grep -q '^VMNOBFQ shim exit 0 stderr 0 bytes'; then
  echo "FAIL: the shim with the default weight was not silent without bfq"
  failed=1
fi
exit $failed
