#!/usr/bin/env bash
# The release version lives in Cargo.toml's [workspace.package] (memory_ext and memory-mcp
# inherit it; the Python package's __version__ reads its installed metadata). The clients'
# manifests are other ecosystems' files and carry it too; this script keeps them equal:
#   scripts/version.sh check        every manifest agrees with Cargo.toml (the lint layer runs it)
#   scripts/version.sh set 0.14.0   writes the version everywhere (docs/architecture.md "Recipes")
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

# file and the expression that finds the version in it (a sed -n script printing it).
manifests=(
  'clients/js/package.json|1,5s/^  "version": "\(.*\)",$/\1/p'
  'clients/js/package-lock.json|1,10s/^  *"version": "\(.*\)",$/\1/p'
  'clients/python/pyproject.toml|s/^version = "\(.*\)"$/\1/p'
)

case "${1:-check}" in
check)
  want=$(ext_version) bad=0
  for m in "${manifests[@]}"; do
    f=${m%%|*} expr=${m#*|}
    for got in $(sed -n "$expr" "$f"); do
      if [ "$got" != "$want" ]; then
        echo "version: $f says $got, Cargo.toml says $want (scripts/version.sh set $want)" >&2
        bad=1
      fi
    done
  done
  [ "$bad" = 0 ] && echo "version $want in Cargo.toml and every client manifest"
  exit "$bad"
  ;;
set)
  new=${2:?usage: scripts/version.sh set X.Y.Z}
  [[ "$new" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "not a version: $new" >&2; exit 2; }
  old=$(ext_version)
  sed -i "0,/^version = \"$old\"/s//version = \"$new\"/" Cargo.toml
  sed -i "1,5s/^  \"version\": \"$old\",$/  \"version\": \"$new\",/" clients/js/package.json
  sed -i "1,10s/^\(  *\)\"version\": \"$old\",$/\1\"version\": \"$new\",/" clients/js/package-lock.json
  sed -i "s/^version = \"$old\"$/version = \"$new\"/" clients/python/pyproject.toml
  cargo metadata --format-version 1 --no-deps >/dev/null  # Cargo.lock follows at the next build
  "$0" check
  ;;
*) echo "usage: scripts/version.sh check | set X.Y.Z" >&2; exit 2 ;;
esac
