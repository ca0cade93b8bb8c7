#!/bin/sh
# Build a guest image and store it content-addressed:
#   <cache>/images/<NAME>/<hex>/rootfs.img   ext4 filesystem, attached read-only (the VM writes to a scratch overlay)
#   <cache>/images/<NAME>/<hex>/ref          NAME@sha256:<hex>
#   <cache>/images/tags/<NAME>        the newest ref built under NAME
# <hex> is the SHA-256 of a canonical tar of the root tree (sorted names, numeric owners, no atime/ctime),
# taken before the reference file /etc/mgr-image-ref is written into it, since the file cannot hold its own
# digest. Attestation reads that file back from the running VM.
#
# Usage: build-image.sh [--flavor busybox|debian] [--name NAME] [--suite SUITE] [--mirror URL] [CACHE_DIR]
#   busybox  a few MB, /bin/sh and the busybox applets only; what the tests use
#   debian   debootstrap minbase plus sh, git, ssh, python3, curl, unzip and a gcc toolchain
# Prints ref=..., path=... and digest=... on stdout.
. "$(dirname -- "$0")/lib.sh"

FLAVOR=debian NAME='' SUITE=${DOCDEX_SANDBOX_SUITE:-bookworm} MIRROR=${DOCDEX_SANDBOX_MIRROR:-http://deb.debian.org/debian}
while [ $# -gt 0 ]; do
  case "$1" in
    --flavor) FLAVOR=$2; shift 2 ;;
    --name) NAME=$2; shift 2 ;;
    --suite) SUITE=$2; shift 2 ;;
    --mirror) MIRROR=$2; shift 2 ;;
    --*) die "unknown option $1" ;;
    *) break ;;
  esac
done
CACHE=${1:-$(default_cache_dir)}
[ -n "$NAME" ] || NAME=docdex-$FLAVOR
case "$NAME" in *[!a-z0-9._-]*|'') die "image name must match [a-z0-9._-]+" ;; esac
need mke2fs "e2fsprogs"
need tar "tar"

mkdir -p "$CACHE/images/tags"
WORK=$(mktemp -d "$CACHE/images/.work.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
R="$WORK/root"
mkdir -p "$R"

case "$FLAVOR" in
  busybox)
    BUSYBOX=${DOCDEX_SANDBOX_BUSYBOX:-/bin/busybox}
    [ -x "$BUSYBOX" ] || die "busybox not found at $BUSYBOX (apt-get install busybox-static)"
    mkdir -p "$R/bin" "$R/sbin" "$R/usr/bin" "$R/usr/sbin" "$R/etc" "$R/root" "$R/proc" "$R/sys" "$R/dev" "$R/tmp"
    cp "$BUSYBOX" "$R/bin/busybox"
    for applet in $("$BUSYBOX" --list-full); do
      [ -e "$R/$applet" ] || [ -L "$R/$applet" ] || ln -s /bin/busybox "$R/$applet"
    done
    printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' > "$R/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' > "$R/etc/group"
    chmod 1777 "$R/tmp"
    # Fixed times keep the digest of an unchanged busybox stable across builds.
    find "$R" -exec touch -h -d @0 {} +
    ;;
  debian)
    need debootstrap "apt-get install debootstrap"
    [ "$(id -u)" = 0 ] || die "debootstrap needs root"
    PACKAGES=ca-certificates,git,openssh-client,python3,curl,unzip,build-essential,procps,xz-utils,less
    # The hosting CLI is packaged in Debian as gh; include it when the suite has it.
    if apt-cache show gh >/dev/null 2>&1; then PACKAGES=$PACKAGES,gh; fi
    log "debootstrap $SUITE ($PACKAGES); this takes a few minutes"
    debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$R" "$MIRROR" >&2
    rm -rf "$R"/var/cache/apt/archives/*.deb "$R"/var/lib/apt/lists/* "$R"/var/log/* "$R"/tmp/*
    ;;
  *) die "unknown flavor $FLAVOR" ;;
esac

DIGEST=$(tar -C "$R" --sort=name --numeric-owner --format=posix \
  --pax-option='exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime' -cf - . | sha256sum | cut -d' ' -f1)
REF="$NAME@sha256:$DIGEST"
# Keyed by name too: the same tree built under two names is two images, each carrying its own ref file.
DEST="$CACHE/images/$NAME/$DIGEST"

if [ ! -f "$DEST/rootfs.img" ]; then
  printf '%s\n' "$REF" > "$R/etc/mgr-image-ref"
  KIB=$(du -sk "$R" | cut -f1)
  INODES=$(find "$R" | wc -l)
  # Room for ext4 metadata; the image is mounted read-only, so free space inside it is wasted.
  SIZE_KIB=$(( KIB + KIB / 5 + 8192 ))
  mkdir "$WORK/out"
  mke2fs -q -F -t ext4 -L mgr-image -N $(( INODES + INODES / 5 + 256 )) -E root_owner=0:0 \
    -d "$R" "$WORK/out/rootfs.img" "${SIZE_KIB}k" >&2
  printf '%s\n' "$REF" > "$WORK/out/ref"
  publish_dir "$WORK/out" "$DEST"
  log "image $REF stored in $DEST"
else
  log "image $REF already stored"
fi
printf '%s\n' "$REF" > "$CACHE/images/tags/.$NAME.tmp" && mv "$CACHE/images/tags/.$NAME.tmp" "$CACHE/images/tags/$NAME"

printf 'ref=%s\n' "$REF"
printf 'path=%s\n' "$DEST/rootfs.img"
printf 'digest=sha256:%s\n' "$DIGEST"
