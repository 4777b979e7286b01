#!/bin/bash
# SPDX-License-Identifier: MIT
# Description: `meson install` gives a working iotier. The build is installed with
# --destdir into a scratch directory; then, in a private mount namespace, that tree is laid
# over PREFIX (a read-only overlay on top of the host's PREFIX, which stays untouched and
# comes back when the namespace ends, even on failure), the source and build trees are
# hidden under empty tmpfs mounts, and installed-checks.sh uses only what was installed.
# Usage: test-install.sh BUILD_ROOT SOURCE_ROOT PREFIX LIBDIR
set -u
here=$(dirname "$(realpath "$0")")

if [ "${1:-}" = --inside ]; then
  # In the namespace: lay the installed tree over PREFIX, hide the trees, check.
  scratch=$2 build=$3 source=$4 prefix=$5 libdir=$6
  mount --make-rprivate / &&
    mount -t overlay iotier-installed -o "lowerdir=$scratch/dest$prefix:$prefix" "$prefix" &&
    mount -t tmpfs -o size=1m iotier-hidden "$build" &&
    mount -t tmpfs -o size=1m iotier-hidden "$source" &&
    mount -t tmpfs -o size=16m iotier-man-cache /var/cache/man || exit 1
  exec bash "$scratch/work/installed-checks.sh" "$prefix" "$libdir" "$scratch/work"
fi

build=$(realpath "$1") source=$(realpath "$2") prefix=$3 libdir=$4
# shellcheck source=tests/lib/testlib.sh
. "$here/../lib/testlib.sh"
[ "$(id -u)" = 0 ] || test_skip "needs root (mount namespaces, chroot)"
for p in unshare meson cc pkg-config man bash; do
  command -v "$p" > /dev/null || test_skip "$p is not installed (scripts/setup installs it)"
done
[ -d "$prefix" ] || test_skip "$prefix does not exist on this host, so nothing can be laid over it"
[ -f /usr/share/bash-completion/bash_completion ] || test_skip "bash-completion is not installed"

test_tmpdir scratch /tmp/iotier-install.XXXXXX
mkdir "$scratch/work"
if ! meson install -C "$build" --no-rebuild --quiet --destdir "$scratch/dest" > "$scratch/install.log" 2>&1; then
  echo "FAIL: meson install --destdir:"; cat "$scratch/install.log"
  exit 1
fi
[ -f "$scratch/dest$prefix/share/bash-completion/completions/iotier" ] ||
  { echo "FAIL: meson install put no share/bash-completion/completions/iotier"; exit 1; }
cp "$here/installed-checks.sh" "$here/tier-user.c" "$0" "$scratch/work/"
unshare --mount --propagation private bash "$scratch/work/$(basename "$0")" --inside \
  "$scratch" "$build" "$source" "$prefix" "$libdir"
