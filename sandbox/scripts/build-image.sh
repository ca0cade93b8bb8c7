#!/bin/sh
# Build a guest image and store it content-addressed:
#   <cache>/images/<NAME>/<hex>/rootfs.img   ext4 filesystem, attached read-only (the VM writes to a scratch overlay)
#   <cache>/images/<NAME>/<hex>/ref          NAME@sha256:<hex>
#   <cache>/images/tags/<NAME>        the newest ref built under NAME
# <hex> is the SHA-256 of a canonical tar of the root tree (sorted names, numeric owners, no atime/ctime),
# taken before the reference file /etc/mgr-image-ref is written into it, since the file cannot hold its own
# digest. Attestation reads that file back from the running VM.
#
# Usage: build-image.sh [--flavor busybox|debian] [--name NAME] [--suite SUITE] [--mirror URL]
#                       [--chromium-version VERSION] [--print-recipe] [CACHE_DIR]
#   busybox  a few MB, /bin/sh and the busybox applets only; what the tests use
#   debian   debootstrap minbase plus sh, git, ssh, python3, curl, unzip, a gcc toolchain and Debian's chromium
#            (the headless browser), at VERSION when given (spec: Versioning, the browser's version is a build
#            argument; a project driving a browser itself must match it), else the suite's current one
#   DOCDEX_SANDBOX_SECURITY_MIRROR (default http://deb.debian.org/debian-security; empty = none) adds SUITE-security
#   --print-recipe  print what would be installed (packages=..., browser=...) and stop
# Prints ref=..., path=..., digest=... (and browser=<installed chromium version> for debian) on stdout.
. "$(dirname -- "$0")/lib.sh"

FLAVOR=debian NAME='' SUITE=${DOCDEX_SANDBOX_SUITE:-bookworm} MIRROR=${DOCDEX_SANDBOX_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${DOCDEX_SANDBOX_SECURITY_MIRROR-http://deb.debian.org/debian-security}
CHROMIUM_VERSION=${DOCDEX_SANDBOX_CHROMIUM_VERSION:-} PRINT_RECIPE=''
while [ $# -gt 0 ]; do
  case "$1" in
    --flavor) FLAVOR=$2; shift 2 ;;
    --name) NAME=$2; shift 2 ;;
    --suite) SUITE=$2; shift 2 ;;
    --mirror) MIRROR=$2; shift 2 ;;
    --chromium-version) CHROMIUM_VERSION=$2; shift 2 ;;
    --print-recipe) PRINT_RECIPE=1; shift ;;
    --*) die "unknown option $1" ;;
    *) break ;;
  esac
done
CACHE=${1:-$(default_cache_dir)}
[ -n "$NAME" ] || NAME=docdex-$FLAVOR
case "$NAME" in *[!a-z0-9._-]*|'') die "image name must match [a-z0-9._-]+" ;; esac
# A Debian version (epoch:upstream-revision); it goes to apt-get as chromium=VERSION, never as an option.
case "$CHROMIUM_VERSION" in
  '') ;;
  [0-9]*) case "$CHROMIUM_VERSION" in *[!A-Za-z0-9.+~:-]*) die "--chromium-version must be a Debian version like 120.0.6099.224-1~deb12u1" ;; esac ;;
  *) die "--chromium-version must be a Debian version like 120.0.6099.224-1~deb12u1" ;;
esac
PACKAGES=ca-certificates,git,openssh-client,python3,curl,unzip,build-essential,procps,xz-utils,less
BROWSER=chromium${CHROMIUM_VERSION:+=$CHROMIUM_VERSION}
if [ -n "$PRINT_RECIPE" ]; then
  case "$FLAVOR" in
    busybox) printf 'flavor=busybox\npackages=\nbrowser=\n' ;;
    debian) printf 'flavor=debian\npackages=%s\nbrowser=%s\n' "$PACKAGES" "$BROWSER" ;;
    *) die "unknown flavor $FLAVOR" ;;
  esac
  exit 0
fi
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
    # The hosting CLI is packaged in Debian as gh; include it when the suite has it.
    if apt-cache show gh >/dev/null 2>&1; then PACKAGES=$PACKAGES,gh; fi
    log "debootstrap $SUITE ($PACKAGES); this takes a few minutes"
    debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$R" "$MIRROR" >&2
    # debootstrap's --include takes no versions, so the browser comes second, pinned through apt. Debian ships
    # chromium's fixes through the security suite only, so that suite is added first.
    if [ -n "$SECURITY_MIRROR" ]; then
      printf 'deb %s %s-security main\n' "$SECURITY_MIRROR" "$SUITE" > "$R/etc/apt/sources.list.d/security.list"
    fi
    log "installing $BROWSER"
    chroot "$R" apt-get update >&2
    DEBIAN_FRONTEND=noninteractive chroot "$R" apt-get install -y --no-install-recommends "$BROWSER" >&2
    # shellcheck disable=SC2016 # ${Version} is dpkg-query's field, not a shell expansion
    BROWSER_VERSION=$(chroot "$R" dpkg-query -W -f='${Version}' chromium)
    printf 'chromium %s\n' "$BROWSER_VERSION" > "$R/etc/mgr-browser-version"
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
  store_rootfs "$R" "$REF" "$WORK/out" "$DEST"
else
  log "image $REF already stored"
fi
printf '%s\n' "$REF" > "$CACHE/images/tags/.$NAME.tmp" && mv "$CACHE/images/tags/.$NAME.tmp" "$CACHE/images/tags/$NAME"

printf 'ref=%s\n' "$REF"
printf 'path=%s\n' "$DEST/rootfs.img"
printf 'digest=sha256:%s\n' "$DIGEST"
if [ -n "${BROWSER_VERSION:-}" ]; then printf 'browser=chromium %s\n' "$BROWSER_VERSION"; fi
