#!/bin/sh
# Build (or reuse) everything the microVM boots from: the kernel (build-kernel.sh) and an initramfs holding
# busybox-static, the guest modules, the guest init and the command agent.
#   <cache>/boot/<key>/vmlinux            (hard link or copy of the kernel)
#   <cache>/boot/<key>/initramfs.cpio     uncompressed: under TCG, decompressing costs more boot time than
#                                         reading the extra megabytes
#   <cache>/boot/<key>/manifest           key=value lines, also printed on stdout
# <key> hashes every input, so a change to the agent, the init or the kernel yields a new directory.
# Usage: build-boot.sh [CACHE_DIR]
. "$(dirname -- "$0")/lib.sh"

CACHE=${1:-$(default_cache_dir)}
BUSYBOX=${DOCDEX_SANDBOX_BUSYBOX:-/bin/busybox}
CC=${CC:-cc}
need sha256sum "coreutils"
[ -x "$BUSYBOX" ] || die "busybox not found at $BUSYBOX (apt-get install busybox-static)"
# A dynamically linked busybox would boot into "not found" with no libraries in the initramfs.
if command -v readelf >/dev/null 2>&1 && readelf -l "$BUSYBOX" | grep -q 'INTERP'; then
  die "$BUSYBOX is dynamically linked; the initramfs needs busybox-static"
fi

KDIR=$("$SANDBOX_SRC/scripts/build-kernel.sh" "$CACHE")
KEY=$(cat "$SANDBOX_SRC/agent/mgr-agent.c" "$SANDBOX_SRC/init/init.sh" "$SANDBOX_SRC/scripts/build-boot.sh" \
        "$KDIR/release" "$KDIR/package" "$KDIR/modules/load-order" "$BUSYBOX" | sha256sum | cut -c1-16)
OUT="$CACHE/boot/$KEY"

if [ ! -f "$OUT/manifest" ]; then
  need "$CC" "gcc and libc6-dev (static glibc)"
  mkdir -p "$CACHE/boot"
  WORK=$(mktemp -d "$CACHE/boot/.work.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
  R="$WORK/root"
  mkdir -p "$R/bin" "$R/proc" "$R/sys" "$R/dev" "$R/mnt" "$R/newroot" "$R/lib/modules"
  cp "$BUSYBOX" "$R/bin/busybox"
  for applet in $("$BUSYBOX" --list); do
    [ "$applet" = busybox ] || ln -s busybox "$R/bin/$applet"
  done
  log "compiling mgr-agent"
  "$CC" -static -O2 -s -Wall -Wextra -o "$R/bin/mgr-agent" "$SANDBOX_SRC/agent/mgr-agent.c"
  cp "$SANDBOX_SRC/init/init.sh" "$R/init"
  chmod 0755 "$R/init" "$R/bin/mgr-agent"
  cp "$KDIR"/modules/*.ko "$KDIR/modules/load-order" "$R/lib/modules/"
  (cd "$R" && find . -mindepth 1 | LC_ALL=C sort | "$BUSYBOX" cpio -o -H newc -R 0:0 > "$WORK/initramfs.cpio" 2>/dev/null)
  mkdir "$WORK/out"
  mv "$WORK/initramfs.cpio" "$WORK/out/initramfs.cpio"
  ln "$KDIR/vmlinux" "$WORK/out/vmlinux" 2>/dev/null || cp "$KDIR/vmlinux" "$WORK/out/vmlinux"
  {
    printf 'key=%s\n' "$KEY"
    printf 'kernel_release=%s\n' "$(cat "$KDIR/release")"
    printf 'kernel_package=%s\n' "$(cat "$KDIR/package")"
    printf 'agent=%s\n' "$("$R/bin/mgr-agent" --version)"
  } > "$WORK/out/manifest"
  publish_dir "$WORK/out" "$OUT"
  log "boot files ready in $OUT"
fi

printf 'dir=%s\n' "$OUT"
printf 'kernel=%s\n' "$OUT/vmlinux"
printf 'initramfs=%s\n' "$OUT/initramfs.cpio"
cat "$OUT/manifest"
