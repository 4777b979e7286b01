#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Description: boot a throwaway VM on a real cgroup v2 kernel and run the io-weight checks
# (tests/vm/vm-checks.c) there, since the host's cgroups are hybrid and its cgroup2 has no
# io controller. qemu with TCG (nested KVM does not work on these machines), Debian's
# linux-image-*-amd64 package with vmlinuz and the few modules needed taken out of the .deb
# (never installed to /boot; the .deb is cached under the build directory), a busybox-static
# initramfs, cgroup_no_v1=all, bfq on two virtio disks (ext4 on vda, raw vdb). The static
# checker, libiotier.so, iotier, cgroup-probe and the host's loader and libc are copied in.
# One boot runs every check. Exit 0 pass, 1 fail, 77 skip (qemu or the kernel package not
# to be had; a failure under IOTIER_TEST_STRICT=1).
#
# usage: test-vm.sh CACHE_DIR VM_CHECKS IOTIER LIBIOTIER CGROUP_PROBE [checks|bench [SECONDS]]
set -u

cache=$1 checks=$2 cli=$3 shim=$4 probe=$5 mode=${6:-checks} seconds=${7:-10}

# shellcheck source=../lib/testlib.sh
. "$(dirname "$0")/../lib/testlib.sh"
. "$(dirname "$0")/vm-lib.sh"
vm_require_tools
vm_fetch_kernel "$cache" linux-image-amd64

work=''
test_tmpdir work /var/tmp/iotier-vm.XXXXXX
root=$work/root
VM_ROOT=$root
mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/dev" "$root/mnt" "$root/tmp" \
  "$root/iotier/bin" "$root/iotier/lib"
vm_add_modules "$VM_TREE" "$root" virtio_pci virtio_blk crc32c_generic crc16 ext4 bfq

# ---- programs: static checker, dynamic ones with their loader and libraries ----
cp "$VM_BUSYBOX" "$root/bin/busybox"
cp "$checks" "$root/iotier/bin/vm-checks"
vm_copy_program /iotier/bin "$cli"
vm_copy_program /iotier/bin "$probe"
vm_copy_program /iotier/lib "$shim" libiotier.so # whatever its versioned file name

vm_write_init <<'EOF'
mode=$(sed -n 's/.*iotier\.mode=\([a-z]*\).*/\1/p' /proc/cmdline)
secs=$(sed -n 's/.*iotier\.seconds=\([0-9]*\).*/\1/p' /proc/cmdline)
/iotier/bin/vm-checks ${mode:-checks} ${secs:-10}
echo "VMEXIT $?"
EOF
vm_pack_initramfs "$work/initrd.gz"
vm_make_disks "$work"

log=$work/console.log
start=$(date +%s)
vm_boot "$work/initrd.gz" "$log" \
  "cgroup_no_v1=all iotier.mode=$mode iotier.seconds=$seconds" "$work/vda.img" "$work/vdb.img"
qpid=$VM_PID
# a killed test (meson timeout) must not leave the VM running
# shellcheck disable=SC2016 # expanded when the cleanup runs
test_cleanup_add 'kill $qpid 2>/dev/null'
wait $qpid
status=$?
echo "vm: qemu exited $status after $(( $(date +%s) - start )) s"
grep -E '^(VMCHECK|VMINFO|VMBENCH|VMEXIT)' "$log" | tr -d '\r'

if [ "$mode" = bench ]; then
  grep -q '^VMBENCH DONE' "$log" && exit 0
  tail -n 40 "$log" >&2
  exit 1
fi
if grep -q '^VMCHECK DONE 0 failed' "$log"; then
  exit 0
fi
echo "--- console tail ---" >&2
tail -n 60 "$log" | tr -d '\r' >&2
exit 1
