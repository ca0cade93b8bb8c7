#!/bin/sh
# Pull an OCI image from a registry and store it as a guest image:
#   <cache>/images/oci/<KEY>/<hex>/rootfs.img   ext4 filesystem built from the image's layers
#   <cache>/images/oci/<KEY>/<hex>/ref          the reference as given (also /etc/mgr-image-ref inside)
#   <cache>/images/oci/<KEY>/current            sha256:<hex>, the manifest digest skopeo resolved, for the
#                                               next boot to find the image without a pull
# KEY is the SHA-256 of the reference string, so a reference can never name a path. The caller
# (src/core/sandbox/oci-pull.ts) validates the reference and checks the registry against the outbound policy first.
#
# Usage: pull-image.sh [--plain-http] --key KEY CACHE_DIR REF
#   --plain-http  talk HTTP to the registry (the caller allows it for loopback registries only)
# Prints ref=..., path=... and digest=... on stdout.
. "$(dirname -- "$0")/lib.sh"

TLS_VERIFY=true KEY=''
while [ $# -gt 0 ]; do
  case "$1" in
    --plain-http) TLS_VERIFY=false; shift ;;
    --key) KEY=$2; shift 2 ;;
    --) shift; break ;;
    -*) die "unknown option $1" ;;
    *) break ;;
  esac
done
[ $# -eq 2 ] || die "usage: pull-image.sh [--plain-http] --key KEY CACHE_DIR REF"
CACHE=$1 REF=$2
case "$KEY" in *[!0-9a-f]*|'') die "--key must be lowercase hex" ;; esac
[ ${#KEY} -eq 64 ] || die "--key must be 64 hex digits"
# Belt and braces: the caller's parser is the real check; nothing that reads as an option reaches skopeo.
case "$REF" in -*|*[!A-Za-z0-9._:/@-]*|'') die "not an image reference: $REF" ;; esac
need skopeo "apt-get install skopeo"
need umoci "apt-get install umoci"
need mke2fs "e2fsprogs"

BASE="$CACHE/images/oci/$KEY"
mkdir -p "$BASE"
WORK=$(mktemp -d "$BASE/.work.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

log "pulling $REF"
# --retry-times 0: SANDBOX_START_TIMEOUT_MS bounds the whole pull, so retries are the caller's business.
skopeo copy --quiet --retry-times 0 --src-tls-verify="$TLS_VERIFY" --digestfile "$WORK/digest" \
  "docker://$REF" "oci:$WORK/layout:image" >&2
DIGEST=$(cat "$WORK/digest")
case "$DIGEST" in sha256:*) ;; *) die "skopeo reported an unexpected digest $DIGEST" ;; esac
HEX=${DIGEST#sha256:}
case "$HEX" in *[!0-9a-f]*|'') die "skopeo reported an unexpected digest $DIGEST" ;; esac
DEST="$BASE/$HEX"

if [ ! -f "$DEST/rootfs.img" ]; then
  # As root, unpack keeps the image's owners and modes; otherwise --rootless makes every file the builder's.
  if [ "$(id -u)" = 0 ]; then ROOTLESS=''; else ROOTLESS=--rootless; fi
  # shellcheck disable=SC2086
  umoci unpack $ROOTLESS --image "$WORK/layout:image" "$WORK/bundle" >&2
  store_rootfs "$WORK/bundle/rootfs" "$REF" "$WORK/out" "$DEST"
else
  log "image $REF ($DIGEST) already stored"
fi
printf '%s\n' "$DIGEST" > "$BASE/.current.tmp" && mv "$BASE/.current.tmp" "$BASE/current"

printf 'ref=%s\n' "$REF"
printf 'path=%s\n' "$DEST/rootfs.img"
printf 'digest=%s\n' "$DIGEST"
