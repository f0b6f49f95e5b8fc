#!/usr/bin/env bash
# Builds memory_ext and installs it into the Postgres that PG_CONFIG names, the way Postgres's
# own `make install` (install(1)) does: each file is written next to its destination under a
# temporary name and renamed over it. A server that has the old memory_ext.so loaded keeps its
# mapping of the old file (a rename never changes the bytes under an open mapping, while an
# in-place copy rewrites them under every running backend); backends started afterwards load
# the new one.
#
#   scripts/install.sh            debug build (what `make test` and `make run` use)
#   scripts/install.sh --release  release build (bench, eval)
#   scripts/install.sh ARGS...    other arguments go to `cargo pgrx package` (`cargo pgrx test`
#                                 installs its --test build through here: scripts/cargo-pgrx)
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/lib.sh
args=(); debug=1
while [ $# -gt 0 ]; do
  case "$1" in
    --release) debug=0 ;;
    --sudo) ;;                                   # as_root below does what --sudo would
    --pg-config) PG_CONFIG=$2; shift ;;
    --profile) debug=0; args+=("$1" "$2"); shift ;;
    *) args+=("$1") ;;
  esac
  shift
done
[ $debug = 1 ] && args=(--debug "${args[@]}")
stage=target/install-stage-$$
trap 'rm -rf "$stage"' EXIT
rm -rf "$stage"
cargo pgrx package --pg-config "$PG_CONFIG" "${args[@]}" --out-dir "$stage" >/dev/null

pkglibdir=$("$PG_CONFIG" --pkglibdir)
extdir=$("$PG_CONFIG" --sharedir)/extension

# install_atomically SRC DEST MODE: a temporary file in DEST's directory, then rename(2).
install_atomically() {
  local tmp; tmp="$(dirname "$2")/.$(basename "$2").new.$$"
  as_root install -m "$3" "$1" "$tmp"
  as_root mv -f "$tmp" "$2"
}

so=$(find "$stage" -name 'memory_ext.so' -print -quit)
[ -n "$so" ] || { echo "install: no memory_ext.so in $stage" >&2; exit 1; }
install_atomically "$so" "$pkglibdir/memory_ext.so" 755
find "$stage" \( -name 'memory_ext.control' -o -name 'memory_ext--*.sql' \) -print0 |
  while IFS= read -r -d '' f; do install_atomically "$f" "$extdir/$(basename "$f")" 644; done
echo "installed memory_ext $(ext_version) for $("$PG_CONFIG" --version) into $pkglibdir and $extdir"
