#!/bin/bash
# SPDX-License-Identifier: MIT
# Description: the Debian packages build, are lintian clean, and work once installed.
# dpkg-buildpackage -us -uc -b runs as nobody on a copy of the source tree (vmlinux.h from
# IOTIER_VMLINUX_H, so no BTF or network is needed); lintian must report no error and no
# warning (overrides carry their reasons). Then, in a private mount namespace, the packages
# are installed with dpkg into a chroot on an overlay of / whose upper layer is a tmpfs, so
# the host's /usr and dpkg database never change and everything goes when the namespace
# ends, even on failure. In the chroot: iotier run finds the shim from libiotier0 alone,
# then the autopkgtest debian/tests/installed (installed-checks.sh) runs with all three.
# Usage: test-debs.sh SOURCE_ROOT VMLINUX_H
set -u
here=$(dirname "$(realpath "$0")")

if [ "${1:-}" = --inside ]; then
  scratch=$2 multiarch=$3
  root=$scratch/overlay/root
  debs=/tmp/iotier-debs
  mount --make-rprivate / &&
    mount -t tmpfs -o size=512m iotier-overlay "$scratch/overlay" &&
    mkdir "$scratch/overlay/upper" "$scratch/overlay/work" "$root" &&
    mount -t overlay iotier-chroot \
      -o "lowerdir=/,upperdir=$scratch/overlay/upper,workdir=$scratch/overlay/work" "$root" &&
    mount --rbind /dev "$root/dev" && mount -t proc proc "$root/proc" &&
    mount --rbind /sys "$root/sys" && mount -t tmpfs tmpfs "$root/run" &&
    mount -t tmpfs tmpfs "$root/tmp" || exit 1
  mkdir -p "$root$debs/work" "$root$debs/src/debian" "$root$debs/src/tests"
  cp "$scratch"/out/*.deb "$root$debs/"
  # The autopkgtest and what it runs, from the tree the packages were built from.
  cp -r "$scratch/src/iotier/debian/tests" "$root$debs/src/debian/"
  cp -r "$scratch/src/iotier/tests/install" "$root$debs/src/tests/"
  for f in /usr/bin/iotier /usr/lib/$multiarch/libiotier.so.0; do
    [ -e "$root$f" ] && { echo "FAIL: $f exists before the packages are installed"; exit 1; }
  done
  in_root() {
    chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin:/usr/sbin:/sbin HOME=/root \
      DEBIAN_FRONTEND=noninteractive "$@"
  }
  # man-db's trigger would rebuild the whole index: not what this test is about.
  echo 'man-db man-db/auto-update boolean false' | in_root debconf-set-selections
  deb() { echo "$debs/$(cd "$scratch/out" && echo "$1"_*.deb)"; } # its path in the chroot
  if ! in_root dpkg -i "$(deb libiotier0)" "$(deb iotier)" > "$scratch/dpkg.log" 2>&1; then
    echo "FAIL: dpkg -i libiotier0 iotier:"; cat "$scratch/dpkg.log"; exit 1
  fi
  # Without libiotier-dev there is no bare libiotier.so: iotier must use the SONAME.
  out=$(in_root iotier run --low 'x*' -- sh -c 'echo "$LD_PRELOAD"' 2>&1)
  [ "$out" = "/usr/lib/$multiarch/libiotier.so.0" ] ||
    { echo "FAIL: with libiotier0 and iotier only, iotier run preloads '$out'"; exit 1; }
  # The exporter's unit is where systemd looks, runs the packaged iotier, and is neither
  # enabled nor started by the package.
  unit=/lib/systemd/system/iotier-exporter.service
  grep -qx 'ExecStart=/usr/bin/iotier lat --listen :9586 --by class' "$root$unit" ||
    { echo "FAIL: $unit missing or not running /usr/bin/iotier"; exit 1; }
  [ -z "$(find "$root/etc/systemd/system" -name iotier-exporter.service 2>/dev/null)" ] ||
    { echo "FAIL: the package enabled $unit"; exit 1; }
  if ! in_root dpkg -i "$(deb libiotier-dev)" > "$scratch/dpkg.log" 2>&1; then
    echo "FAIL: dpkg -i libiotier-dev:"; cat "$scratch/dpkg.log"; exit 1
  fi
  exec chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root AUTOPKGTEST_TMP="$debs/work" \
    sh -c "cd $debs/src && exec debian/tests/installed"
fi

source_root=$(realpath "$1") vmlinux_h=$(realpath "$2")
# shellcheck source=tests/lib/testlib.sh
. "$here/../lib/testlib.sh"
[ "$(id -u)" = 0 ] || test_skip "needs root (mount namespaces, chroot)"
for p in unshare setpriv chroot dpkg-buildpackage dh lintian cc pkg-config man; do
  command -v "$p" > /dev/null || test_skip "$p is not installed (scripts/setup installs it)"
done
[ -f /usr/share/bash-completion/bash_completion ] || test_skip "bash-completion is not installed"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
# The chroot starts as a copy of the host: with iotier already there, it could not show
# what the packages install.
if [ -e /usr/bin/iotier ] || dpkg-query -W libiotier0 > /dev/null 2>&1; then
  test_skip "iotier or libiotier0 is installed on this host"
fi

test_tmpdir scratch /tmp/iotier-debs.XXXXXX
chmod 755 "$scratch"
mkdir -p "$scratch/src/iotier" "$scratch/home" "$scratch/work" "$scratch/out" "$scratch/overlay"
# The tree as git sees it (tracked and new files, nothing ignored such as build dirs).
if git -C "$source_root" rev-parse --git-dir > /dev/null 2>&1; then
  git -C "$source_root" ls-files -co --exclude-standard -z |
    (cd "$source_root" && tar --null --ignore-failed-read -cf - -T - 2> /dev/null) |
    tar -xf - -C "$scratch/src/iotier"
else
  tar -C "$source_root" --exclude='./build*' --exclude=./obj-* -cf - . | tar -xf - -C "$scratch/src/iotier"
fi
cp "$vmlinux_h" "$scratch/vmlinux.h"
chown -R nobody:nogroup "$scratch"

build_env=(env -i PATH=/usr/bin:/bin:/usr/sbin:/sbin HOME="$scratch/home" LANG=C.UTF-8)
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "${build_env[@]}" "$@"; }
if ! (cd "$scratch/src/iotier" &&
      as_nobody IOTIER_VMLINUX_H="$scratch/vmlinux.h" dpkg-buildpackage -us -uc -b) > "$scratch/build.log" 2>&1; then
  echo "FAIL: dpkg-buildpackage -us -uc -b as nobody:"; tail -n 40 "$scratch/build.log"
  exit 1
fi
for pkg in libiotier0 iotier libiotier-dev; do
  cp "$scratch/src/${pkg}_"*.deb "$scratch/out/" || { echo "FAIL: no $pkg package"; exit 1; }
done
if ! (cd "$scratch/src" && as_nobody lintian --fail-on error,warning ./*.changes) > "$scratch/lintian.log" 2>&1; then
  echo "FAIL: lintian:"; cat "$scratch/lintian.log"
  exit 1
fi
soname=$(objdump -p "$scratch/src/iotier/debian/libiotier0/usr/lib/$multiarch/libiotier.so.0" | awk '$1 == "SONAME" { print $2 }')
[ "$soname" = libiotier.so.0 ] || { echo "FAIL: libiotier0's library has SONAME '$soname'"; exit 1; }

cp "$0" "$scratch/work/"
unshare --mount --propagation private bash "$scratch/work/$(basename "$0")" --inside "$scratch" "$multiarch"
status=$?
if [ -e /usr/bin/iotier ] || dpkg-query -W libiotier0 > /dev/null 2>&1; then
  echo "FAIL: the host's /usr or dpkg database changed"
  status=1
fi
[ $status -eq 0 ] && echo "ok: packages built as nobody, lintian clean, installed and used in a chroot"
exit $status
