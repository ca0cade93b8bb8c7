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
