#!/bin/sh
# Fetch Debian's stock kernel without installing it, and keep only what the microVM needs:
#   <cache>/kernel/<package-version>/vmlinux       uncompressed ELF; QEMU boots it through its PVH note
#   <cache>/kernel/<package-version>/modules/*.ko  the guest modules, dependencies resolved
#   <cache>/kernel/<package-version>/modules/load-order  one module name per line, dependencies first
#   <cache>/kernel/current -> <package-version>
# Usage: build-kernel.sh [--refresh] [CACHE_DIR]   Prints the kernel directory on stdout.
. "$(dirname -- "$0")/lib.sh"

REFRESH=0
if [ "${1:-}" = "--refresh" ]; then REFRESH=1; shift; fi
CACHE=${1:-$(default_cache_dir)}
KROOT="$CACHE/kernel"
mkdir -p "$KROOT"

if [ "$REFRESH" = 0 ] && [ -f "$KROOT/current/vmlinux" ] && [ -f "$KROOT/current/modules/load-order" ]; then
  (cd "$KROOT/current" && pwd -P)
  exit 0
fi

need apt-get "apt"
need apt-cache "apt"
need dpkg-deb "dpkg"
need od "coreutils"

# Modules the guest loads. The stock kernel builds all of these as modules (checked against
# /boot/config-6.1.0-*-amd64): virtio transport + console for the agent port, 9p for the shared roots,
# virtio_blk + ext4 + overlay for the read-only image with a writable scratch layer. crc32c_generic is a
# soft dependency of ext4 (metadata checksums) that depends= does not list.
MODULES="virtio_ring virtio virtio_mmio virtio_console 9pnet 9pnet_virtio netfs fscache 9p virtio_blk crc32c_generic ext4 overlay"

META=${DOCDEX_SANDBOX_KERNEL_PACKAGE:-linux-image-amd64}
PKG=$(apt-cache depends "$META" 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n1)
[ -n "$PKG" ] || PKG=$META
VERSION=$(apt-cache policy "$PKG" | sed -n 's/^ *Candidate: //p')
[ -n "$VERSION" ] && [ "$VERSION" != "(none)" ] || die "apt knows no candidate for $PKG (run apt-get update)"
NAME="$PKG-$VERSION"

if [ "$REFRESH" = 1 ] && [ -f "$KROOT/$NAME/vmlinux" ]; then
  ln -sfn "$NAME" "$KROOT/current.tmp" && mv -T "$KROOT/current.tmp" "$KROOT/current"
  (cd "$KROOT/current" && pwd -P)
  exit 0
fi

WORK=$(mktemp -d "$KROOT/.work.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
log "downloading $PKG=$VERSION"
# apt-get download writes into the current directory; world-writable so the _apt user can too.
chmod 0777 "$WORK"
(cd "$WORK" && apt-get download -q "$PKG=$VERSION" >&2)
DEB=$(ls "$WORK"/*.deb)
mkdir "$WORK/x"
dpkg-deb -x "$DEB" "$WORK/x"
VMLINUZ=$(ls "$WORK"/x/boot/vmlinuz-* | head -n1)
KREL=${VMLINUZ##*/vmlinuz-}

# bzImage layout (Documentation/x86/boot.rst): the compressed kernel sits payload_offset bytes into the
# protected-mode part, which starts after (setup_sects+1) 512-byte sectors.
u8_at() { od -An -tu1 -j"$2" -N1 "$1" | tr -d ' '; }
u32_at() { od -An -tu4 -j"$2" -N4 "$1" | tr -d ' '; }
SETUP=$(u8_at "$VMLINUZ" 497); [ "$SETUP" = 0 ] && SETUP=4
POFF=$(u32_at "$VMLINUZ" 584)
PLEN=$(u32_at "$VMLINUZ" 588)
START=$(( (SETUP + 1) * 512 + POFF ))
tail -c +$((START + 1)) "$VMLINUZ" | head -c "$PLEN" > "$WORK/payload"
MAGIC=$(od -An -tx1 -N6 "$WORK/payload" | tr -d ' \n')
case "$MAGIC" in
  fd377a585a00) need xz "xz-utils"; xz -dc --single-stream < "$WORK/payload" > "$WORK/vmlinux" ;;
  1f8b*) gzip -dcq < "$WORK/payload" > "$WORK/vmlinux" || true ;; # trailing size word makes gzip complain
  28b52ffd*) need zstd "zstd"; zstd -dcq < "$WORK/payload" > "$WORK/vmlinux" ;;
  *) die "unknown kernel compression (magic $MAGIC)" ;;
esac
[ "$(od -An -tx1 -N4 "$WORK/vmlinux" | tr -d ' \n')" = 7f454c46 ] || die "decompressed kernel is not an ELF file"

OUT="$WORK/out"
mkdir -p "$OUT/modules"
mv "$WORK/vmlinux" "$OUT/vmlinux"
cp "$WORK/x/boot/config-$KREL" "$OUT/config"
printf '%s\n' "$KREL" > "$OUT/release"
printf '%s=%s\n' "$PKG" "$VERSION" > "$OUT/package"

MODDIR="$WORK/x/lib/modules/$KREL"
find "$MODDIR" -name '*.ko*' > "$WORK/ko-index"
ko_path() { grep -E "/$1\.ko(\.[a-z]+)?\$" "$WORK/ko-index" | head -n1; }
ko_deps() { tr '\0' '\n' < "$1" | sed -n 's/^depends=//p' | tr ',' ' '; }
: > "$OUT/modules/load-order"
add_module() { # depth-first: dependencies are written before the module that needs them
  grep -qx "$1" "$OUT/modules/load-order" && return 0
  if grep -qE "/$1\.ko\$" "$MODDIR/modules.builtin"; then return 0; fi
  p=$(ko_path "$1")
  [ -n "$p" ] || die "module $1 not found in $PKG"
  case "$p" in *.ko) ;; *) die "compressed module $p is not supported (busybox insmod)";; esac
  for d in $(ko_deps "$p"); do add_module "$d"; done
  p=$(ko_path "$1")
  cp "$p" "$OUT/modules/$1.ko"
  printf '%s\n' "$1" >> "$OUT/modules/load-order"
}
for m in $MODULES; do add_module "$m"; done

publish_dir "$OUT" "$KROOT/$NAME"
ln -sfn "$NAME" "$KROOT/current.tmp" && mv -T "$KROOT/current.tmp" "$KROOT/current"
log "kernel $KREL ready in $KROOT/$NAME"
(cd "$KROOT/current" && pwd -P)
