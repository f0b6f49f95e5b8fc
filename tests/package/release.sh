#!/usr/bin/env bash
# The last release's Debian package for PostgreSQL $PG (the extension; the models package of this
# tree serves it), from its
# build (tests/upgrade/releases.sh: cached by commit, built when missing), for the package test
# to upgrade from. Prints the directory they are in.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib.sh
. tests/upgrade/releases.sh
last=${RELEASES[-1]}
version=${last%%=*}
stage=$(release_stage "$version" "${last#*=}") || { echo "release $version: could not build it" >&2; exit 1; }
out=$PWD/target/debian/pg$PG-$version
rm -rf "$out"
scripts/package.sh --stage "$stage" --version "$version" "$out" >&2
echo "$out"
