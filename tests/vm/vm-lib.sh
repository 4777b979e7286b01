# SPDX-License-Identifier: MIT
#
# vm-lib.sh: what the qemu tests share (sourced by tests/vm/test-vm.sh and
# tests/vm/test-kernels.sh, after tests/lib/testlib.sh, whose test_skip it uses): fetching
# a Debian kernel package without installing it (apt-get download, dpkg-deb -x, cached
# under the build directory), taking
# the modules a test needs out of it, copying dynamic programs with their loader and
# libraries into an initramfs tree, and booting qemu under TCG (nested KVM does not work on
# these machines) so that a killed test never leaves a VM behind.

# qemu, a static busybox and the packaging tools, or skip.
vm_require_tools() {
  VM_QEMU=$(command -v qemu-system-x86_64) || test_skip "qemu-system-x86_64 not installed"
  "$VM_QEMU" -version >/dev/null 2>&1 || test_skip "qemu-system-x86_64 does not run"
  VM_BUSYBOX=/bin/busybox
  [ -x "$VM_BUSYBOX" ] && "$VM_BUSYBOX" --list 2>/dev/null | grep -qx insmod ||
    test_skip "busybox-static not installed"
  for tool in cpio dpkg-deb mkfs.ext4 modinfo gzip xz; do
    command -v $tool >/dev/null || test_skip "$tool not installed"
  done
}

# The kernel package that Debian meta-package $2 depends on (e.g. linux-image-amd64 for 6.1,
# linux-image-6.12-amd64), downloaded once into $1/$2 and extracted there. Sets VM_TREE,
# VM_KVER and VM_VMLINUZ.
vm_fetch_kernel() {
  local dir deb pkg
  dir=$1/$2
  mkdir -p "$dir"
  deb=$(ls "$dir"/linux-image-*-amd64_*.deb 2>/dev/null | head -n1)
  if [ -z "$deb" ]; then
    pkg=$(apt-cache depends "$2" 2>/dev/null | sed -n 's/.*Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -n1)
    if [ -z "$pkg" ] && [ "$(id -u)" = 0 ]; then
      apt-get update -qq >/dev/null 2>&1
      pkg=$(apt-cache depends "$2" 2>/dev/null | sed -n 's/.*Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -n1)
    fi
    [ -n "$pkg" ] || test_skip "cannot resolve $2 (apt lists missing?)"
    (cd "$dir" && apt-get download -o APT::Sandbox::User=root "$pkg" >/dev/null 2>&1) ||
      test_skip "cannot download $pkg"
    deb=$(ls "$dir"/linux-image-*-amd64_*.deb 2>/dev/null | head -n1)
    [ -n "$deb" ] || test_skip "no kernel package after downloading $pkg"
  fi
  VM_TREE=$dir/extract
  if [ ! -f "$VM_TREE/.from" ] || [ "$(cat "$VM_TREE/.from")" != "$(basename "$deb")" ]; then
    rm -rf "$VM_TREE"
    mkdir -p "$VM_TREE"
    dpkg-deb -x "$deb" "$VM_TREE" || { echo "cannot extract $deb" >&2; exit 1; }
    basename "$deb" >"$VM_TREE/.from"
  fi
  VM_KVER=$(ls "$VM_TREE/lib/modules" | head -n1)
  VM_VMLINUZ=$VM_TREE/boot/vmlinuz-$VM_KVER
  [ -f "$VM_VMLINUZ" ] || { echo "no vmlinuz in $deb" >&2; exit 1; }
}

# Copy modules $3... of kernel tree $1 (release $VM_KVER) and their dependencies into
# $2/modules/$VM_KVER/, with their load order in .../order. Built-in ones are skipped.
vm_add_modules() {
  local tree=$1 root=$2 m
  shift 2
  VM_MODDIR=$tree/lib/modules/$VM_KVER
  VM_MODOUT=$root/modules/$VM_KVER
  mkdir -p "$VM_MODOUT"
  : >"$VM_MODOUT/order"
  : >"$VM_MODOUT/.names"
  for m in "$@"; do
    vm_add_module "$m"
  done
  rm -f "$VM_MODOUT/.names"
}

vm_add_module() {
  local file alt dep # recursion: dash and busybox sh both have local
  grep -qx "$1" "$VM_MODOUT/.names" && return
  file=$(find "$VM_MODDIR" -name "$1.ko" -o -name "$1.ko.xz" | head -n1)
  if [ -z "$file" ]; then
    # built in, or named with '-' against '_'
    alt=$(echo "$1" | tr _ -)
    file=$(find "$VM_MODDIR" -name "$alt.ko" -o -name "$alt.ko.xz" | head -n1)
    [ -n "$file" ] || return 0
  fi
  for dep in $(modinfo -F depends "$file" | tr , ' '); do
    vm_add_module "$dep"
  done
  echo "$1" >>"$VM_MODOUT/.names"
  case $file in
    *.xz) xz -dc "$file" >"$VM_MODOUT/$1.ko" ;;
    *) cp "$file" "$VM_MODOUT/$1.ko" ;;
  esac
  echo "$1.ko" >>"$VM_MODOUT/order"
}

# Copy program $2 into directory $1 (in the initramfs tree $VM_ROOT), with the host's loader
# and every library it links, at their host paths. $3, when given, names the copy.
vm_copy_program() {
  cp "$2" "$VM_ROOT$1/${3:-}"
  ldd "$2" 2>/dev/null | sed -n 's/.*=> \(\/[^ ]*\).*/\1/p; s/^\s*\(\/[^ ]*\) (.*/\1/p' |
    while read -r lib; do
      [ -e "$VM_ROOT$lib" ] && continue
      mkdir -p "$VM_ROOT$(dirname "$lib")"
      cp -L "$lib" "$VM_ROOT$lib"
    done
}

# Pack $VM_ROOT into $1 (gzip'd newc cpio).
vm_pack_initramfs() {
  (cd "$VM_ROOT" && find . | cpio -o -H newc --quiet | gzip -1) >"$1"
}

# Boot $VM_VMLINUZ with initramfs $1, console to $2, kernel command line $3 and the raw disk
# images that follow, in the background; VM_PID is qemu's pid. It powers itself off; the
# timeout (VM_TIMEOUT seconds, 900 by default) is the last resort.
vm_boot() {
  local initrd=$1 log=$2 append=$3 disk drives=
  shift 3
  for disk in "$@"; do
    drives="$drives -drive file=$disk,if=virtio,format=raw,cache=unsafe"
  done
  # shellcheck disable=SC2086 # $drives is a list of words
  timeout --foreground "${VM_TIMEOUT:-900}" "$VM_QEMU" -accel tcg,thread=multi -cpu max \
    -smp "${VM_CPUS:-2}" -m "${VM_MEM:-1024}" \
    -display none -monitor none -serial stdio -no-reboot -nodefaults \
    -kernel "$VM_VMLINUZ" -initrd "$initrd" \
    -append "console=ttyS0 panic=-1 quiet loglevel=3 $append" $drives \
    </dev/null >"$log" 2>&1 &
  VM_PID=$!
}

# Write $VM_ROOT/init: mount the pseudo file systems, load this kernel's modules (from
# /modules/$(uname -r), as vm_add_modules put them), mount cgroup2, put bfq on the virtio
# disks vda and vdb and mount vda's ext4 on /mnt; then the commands on standard input; then
# power off. Booted with "iotier_v1_nobfq" on its command line (and without cgroup_no_v1),
# the guest is instead a kernel that offers no io weight: bfq is not loaded, blkio is a v1
# hierarchy at /sys/fs/cgroup/blkio (cgroup2 at /sys/fs/cgroup/unified, as on a hybrid
# host), the disks keep their default scheduler, and $VM_NOBFQ is 1 for the commands.
vm_write_init() {
  {
    cat <<'EOF'
#!/bin/busybox sh
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev
/bin/busybox --install -s /bin
export PATH=/bin
k=$(uname -r)
VM_NOBFQ=0
case " $(cat /proc/cmdline) " in *" iotier_v1_nobfq "*) VM_NOBFQ=1 ;; esac
for m in $(cat /modules/$k/order); do
  [ $VM_NOBFQ = 1 ] && [ "$m" = bfq.ko ] && continue
  insmod /modules/$k/$m || echo "VMINFO insmod $m failed"
done
if [ $VM_NOBFQ = 1 ]; then
  mount -t tmpfs cgroup /sys/fs/cgroup && mkdir /sys/fs/cgroup/blkio /sys/fs/cgroup/unified &&
    mount -t cgroup -o blkio blkio /sys/fs/cgroup/blkio || echo "VMINFO no blkio v1"
  mount -t cgroup2 cgroup2 /sys/fs/cgroup/unified || echo "VMINFO no cgroup2"
else
  mount -t cgroup2 cgroup2 /sys/fs/cgroup || echo "VMINFO no cgroup2"
fi
for d in vda vdb; do
  i=0
  while [ ! -e /sys/block/$d ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  [ $VM_NOBFQ = 1 ] && continue
  echo bfq >/sys/block/$d/queue/scheduler || echo "VMINFO no bfq on $d"
done
mount -t ext4 /dev/vda /mnt || echo "VMINFO cannot mount /dev/vda"
if [ $VM_NOBFQ = 1 ]; then
  echo "VMINFO kernel $k without bfq, blkio v1: $(ls /sys/fs/cgroup/blkio | grep -c weight) weight files"
else
  echo "VMINFO kernel $k, controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
fi
EOF
    cat
    printf 'umount /mnt\npoweroff -f\n'
  } >"$VM_ROOT/init"
  chmod +x "$VM_ROOT/init"
}

# The two disks in directory $1: vda.img, ext4 for buffered writes, and vdb.img, raw for
# direct readers.
vm_make_disks() {
  truncate -s 512M "$1/vda.img"
  truncate -s 256M "$1/vdb.img"
  mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$1/vda.img" ||
    { echo "mkfs.ext4 failed" >&2; exit 1; }
}
