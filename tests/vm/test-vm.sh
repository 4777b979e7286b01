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

qemu=$(command -v qemu-system-x86_64) || test_skip "qemu-system-x86_64 not installed"
"$qemu" -version >/dev/null 2>&1 || test_skip "qemu-system-x86_64 does not run"
busybox=/bin/busybox
[ -x "$busybox" ] && "$busybox" --list 2>/dev/null | grep -qx insmod ||
  test_skip "busybox-static not installed"
for tool in cpio dpkg-deb mkfs.ext4 modinfo depmod gzip; do
  command -v $tool >/dev/null || test_skip "$tool not installed"
done

# ---- the kernel package, cached ----
mkdir -p "$cache"
deb=$(ls "$cache"/linux-image-*-amd64_*.deb 2>/dev/null | head -n1)
if [ -z "$deb" ]; then
  pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/.*Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -n1)
  if [ -z "$pkg" ] && [ "$(id -u)" = 0 ]; then
    apt-get update -qq >/dev/null 2>&1
    pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/.*Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -n1)
  fi
  [ -n "$pkg" ] || test_skip "cannot resolve linux-image-amd64 (apt lists missing?)"
  (cd "$cache" && apt-get download -o APT::Sandbox::User=root "$pkg" >/dev/null 2>&1) ||
    test_skip "cannot download $pkg"
  deb=$(ls "$cache"/linux-image-*-amd64_*.deb 2>/dev/null | head -n1)
  [ -n "$deb" ] || test_skip "no kernel package after download"
fi
tree=$cache/extract
if [ ! -f "$tree/.from" ] || [ "$(cat "$tree/.from")" != "$(basename "$deb")" ]; then
  rm -rf "$tree"
  mkdir -p "$tree"
  dpkg-deb -x "$deb" "$tree" || { echo "cannot extract $deb" >&2; exit 1; }
  basename "$deb" >"$tree/.from"
fi
kver=$(ls "$tree/lib/modules" | head -n1)
vmlinuz=$tree/boot/vmlinuz-$kver
[ -f "$vmlinuz" ] || { echo "no vmlinuz in $deb" >&2; exit 1; }

work=''
test_tmpdir work /var/tmp/iotier-vm.XXXXXX
root=$work/root
mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/dev" "$root/mnt" "$root/tmp" \
  "$root/iotier/bin" "$root/iotier/lib" "$root/modules"

# ---- modules: the wanted ones and their dependencies, in load order ----
moddir=$tree/lib/modules/$kver
order=$work/modules.order
: >"$order"
add_module() {
  local file alt dep # recursion: dash and busybox sh both have local
  grep -qx "$1" "$order.names" 2>/dev/null && return
  file=$(find "$moddir" -name "$1.ko" -o -name "$1.ko.xz" | head -n1)
  if [ -z "$file" ]; then
    # built in, or named with '-' against '_'
    alt=$(echo "$1" | tr _ -)
    file=$(find "$moddir" -name "$alt.ko" -o -name "$alt.ko.xz" | head -n1)
    [ -n "$file" ] || return 0
  fi
  for dep in $(modinfo -F depends "$file" | tr , ' '); do
    add_module "$dep"
  done
  echo "$1" >>"$order.names"
  case $file in
    *.xz) xz -dc "$file" >"$root/modules/$1.ko" ;;
    *) cp "$file" "$root/modules/$1.ko" ;;
  esac
  echo "$1.ko" >>"$order"
}
for m in virtio_pci virtio_blk crc32c_generic crc16 ext4 bfq; do
  add_module $m
done

# ---- programs: static checker, dynamic ones with their loader and libraries ----
cp "$busybox" "$root/bin/busybox"
cp "$checks" "$root/iotier/bin/vm-checks"
cp "$cli" "$root/iotier/bin/iotier"
cp "$probe" "$root/iotier/bin/cgroup-probe"
cp "$shim" "$root/iotier/lib/libiotier.so"
for f in "$cli" "$probe" "$shim"; do
  ldd "$f" | sed -n 's/.*=> \(\/[^ ]*\).*/\1/p; s/^\s*\(\/[^ ]*\) (.*/\1/p'
done | sort -u | while read -r lib; do
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done

cat >"$root/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev
/bin/busybox --install -s /bin
export PATH=/bin
for m in $(cat /modules.order); do insmod /modules/$m || echo "VMINFO insmod $m failed"; done
mount -t cgroup2 cgroup2 /sys/fs/cgroup || echo "VMINFO no cgroup2"
for d in vda vdb; do
  i=0
  while [ ! -e /sys/block/$d ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
  echo bfq >/sys/block/$d/queue/scheduler || echo "VMINFO no bfq on $d"
done
mount -t ext4 /dev/vda /mnt || echo "VMINFO cannot mount /dev/vda"
echo "VMINFO kernel $(uname -r), controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
mode=$(sed -n 's/.*iotier\.mode=\([a-z]*\).*/\1/p' /proc/cmdline)
secs=$(sed -n 's/.*iotier\.seconds=\([0-9]*\).*/\1/p' /proc/cmdline)
/iotier/bin/vm-checks ${mode:-checks} ${secs:-10}
echo "VMEXIT $?"
umount /mnt
poweroff -f
EOF
chmod +x "$root/init"
cp "$order" "$root/modules.order"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/initrd.gz"

# ---- disks: ext4 on vda for buffered writes, raw vdb for direct readers ----
truncate -s 512M "$work/vda.img"
truncate -s 256M "$work/vdb.img"
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$work/vda.img" ||
  { echo "mkfs.ext4 failed" >&2; exit 1; }

log=$work/console.log
start=$(date +%s)
timeout --foreground 900 "$qemu" -accel tcg,thread=multi -cpu max -smp 2 -m 1024 \
  -display none -monitor none -serial stdio -no-reboot -nodefaults \
  -kernel "$vmlinuz" -initrd "$work/initrd.gz" \
  -append "console=ttyS0 cgroup_no_v1=all panic=-1 quiet loglevel=3 iotier.mode=$mode iotier.seconds=$seconds" \
  -drive "file=$work/vda.img,if=virtio,format=raw,cache=unsafe" \
  -drive "file=$work/vdb.img,if=virtio,format=raw,cache=unsafe" \
  </dev/null >"$log" 2>&1 &
qpid=$!
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
