# Shared helpers for the sandbox build scripts (sourced, not executed).
# shellcheck shell=sh
set -eu

log() { printf '[sandbox-build] %s\n' "$*" >&2; }
die() { printf '[sandbox-build] error: %s\n' "$*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || die "missing host tool '$1' ($2)"; }

# The sandbox folder, whatever the caller's working directory.
SANDBOX_SRC=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)

# Build outputs never go into the source tree: callers pass the cache directory or we pick the user cache.
default_cache_dir() {
  if [ -n "${DOCDEX_SANDBOX_CACHE:-}" ]; then printf '%s\n' "$DOCDEX_SANDBOX_CACHE"
  elif [ -n "${DOCDEX_HOME:-}" ]; then printf '%s/sandbox\n' "$DOCDEX_HOME"
  else printf '%s/docdex/sandbox\n' "${XDG_CACHE_HOME:-$HOME/.cache}"; fi
}

sha256_of() { sha256sum "$@" | cut -d' ' -f1; }

# Publish a finished directory atomically: a half-written build must never look complete to a concurrent reader.
publish_dir() { # tmpdir finaldir
  mkdir -p "$(dirname -- "$2")"
  if ! mv -T "$1" "$2" 2>/dev/null; then
    # Another builder won the race with identical inputs; theirs is as good as ours.
    [ -e "$2" ] || die "cannot move $1 to $2"
    rm -rf "$1"
  fi
}

# Pack a root tree read-only into ext4 and publish it: <dest>/rootfs.img and <dest>/ref. The reference goes into
# the tree as /etc/mgr-image-ref first, which attestation reads back from the running VM. A tree whose /etc is a
# symlink (or whose reference file is one) is refused: writing through it would land outside the tree.
store_rootfs() { # root ref workdir dest
  if [ -L "$1/etc" ] || { [ -e "$1/etc" ] && [ ! -d "$1/etc" ]; }; then die "the image's /etc is not a directory"; fi
  mkdir -p "$1/etc"
  rm -f "$1/etc/mgr-image-ref"
  printf '%s\n' "$2" > "$1/etc/mgr-image-ref"
  _kib=$(du -sk "$1" | cut -f1)
  _inodes=$(find "$1" | wc -l)
  # Room for ext4 metadata; the image is mounted read-only, so free space inside it is wasted.
  _size_kib=$(( _kib + _kib / 5 + 8192 ))
  mkdir "$3"
  mke2fs -q -F -t ext4 -L mgr-image -N $(( _inodes + _inodes / 5 + 256 )) -E root_owner=0:0 \
    -d "$1" "$3/rootfs.img" "${_size_kib}k" >&2
  printf '%s\n' "$2" > "$3/ref"
  publish_dir "$3" "$4"
  log "image $2 stored in $4"
}
