#!/usr/bin/env bash
# `make package [PG=NN]`: Debian packages of this tree for PostgreSQL $PG (scripts/lib.sh), from
# a release build, into target/debian/pgNN/:
#
#   postgresql-NN-memory-ext_<v>-1_amd64.deb  the library, control file and SQL scripts, exactly
#       the files scripts/install.sh installs, at Debian's paths for PostgreSQL NN; Depends on
#       postgresql-NN, its pgvector and memory-ext-models. Its extension's models directory is a
#       link to the models package's.
#   memory-ext-models_<v>-1_all.deb           the built-in models (all-MiniLM-L6-v2,
#       bge-small-en-v1.5, ms-marco-MiniLM-L-12-v2), once for every PostgreSQL version, under
#       /usr/share/memory-ext/models.
#   memory-mcp_<v>-1_amd64.deb                the MCP gateway (/usr/bin/memory-mcp), a systemd unit
#       and a sample configuration (docs/mcp.md).
#
# Usage: scripts/package.sh [--stage DIR --version V] [OUT_DIR]
#   --stage DIR --version V   package release V from its staged build instead (`cargo pgrx package
#                             --out-dir DIR`; tests/package/release.sh): the extension only
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

version=$(ext_version) stage=
while [ $# -gt 0 ]; do
  case "$1" in
    --stage) stage=$2; shift 2 ;;
    --version) version=$2; shift 2 ;;
    *) break ;;
  esac
done
debver=$version-1
out=${1:-$PWD/target/debian/pg$PG}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
# Whoever publishes the packages names themselves here.
maintainer=${DEB_MAINTAINER:-memory_ext developers <memory-ext@example.org>}

# control PKGDIR NAME ARCH DEPENDS DESCRIPTION...: the package's DEBIAN/control, md5sums, and
# the copyright and changelog every Debian package carries in /usr/share/doc/NAME.
control() {
  local dir=$1 name=$2 arch=$3 depends=$4 short=$5 long=$6
  local doc="$dir/usr/share/doc/$name"
  mkdir -p "$dir/DEBIAN" "$doc"
  cp "${copyright:-packaging/copyright}" "$doc/copyright"
  # Debian's changelog format, one entry for this version; the project's history is in
  # CHANGELOG.md.
  printf '%s (%s) unstable; urgency=medium\n\n  * memory_ext %s, see CHANGELOG.md.\n\n -- %s  %s\n' \
    "$name" "$debver" "$version" "$maintainer" "$(date -R -d @"${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}")" |
    gzip -9n > "$doc/changelog.Debian.gz"
  local size; size=$(du -sk --exclude=DEBIAN "$dir" | cut -f1)
  {
    echo "Package: $name"
    echo "Version: $debver"
    echo "Architecture: $arch"
    echo "Maintainer: $maintainer"
    echo "Installed-Size: $size"
    [ -n "$depends" ] && echo "Depends: $depends"
    echo "Section: database"
    echo "Priority: optional"
    echo "Description: $short"
    # shellcheck disable=SC2001
    echo "$long" | fold -s -w 78 | sed 's/ *$//; s/^/ /'
  } > "$dir/DEBIAN/control"
  (cd "$dir" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) > "$dir/DEBIAN/md5sums"
  find "$dir" -type d -exec chmod 755 {} +
  # xz, as Debian's archive takes it, at its fastest level: the models hardly compress, and
  # the default level spent a minute finding that out.
  dpkg-deb --root-owner-group -Zxz -z1 --build "$dir" "$out/${name}_${debver}_$arch.deb" >/dev/null
  echo "$out/${name}_${debver}_$arch.deb"
}

# The shared libraries' packages a binary needs, as dpkg-shlibdeps finds them on this machine
# (Debian 12's versions: every later release has at least these).
shlibs() {
  mkdir -p "$work/shlibs/debian"
  printf 'Source: memory-ext\n\nPackage: memory-ext\nArchitecture: any\n' > "$work/shlibs/debian/control"
  (cd "$work/shlibs" && dpkg-shlibdeps -O "$@" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
}

if [ -z "$stage" ]; then
  echo "==> release build of memory_ext $version for $("$PG_CONFIG" --version)" >&2
  stage=$work/stage
  cargo pgrx package --pg-config "$PG_CONFIG" --out-dir "$stage" >/dev/null
  cargo build -q --release -p memory_gateway
  whole=1
else
  whole=0
fi

# postgresql-NN-memory-ext
ext=$work/ext
lib=$ext/usr/lib/postgresql/$PG/lib share=$ext/usr/share/postgresql/$PG/extension
mkdir -p "$lib" "$share/memory_ext"
so=$(find "$stage" -name memory_ext.so -print -quit)
install -m 644 "$so" "$lib/memory_ext.so"
strip --strip-unneeded "$lib/memory_ext.so"
find "$stage" \( -name 'memory_ext.control' -o -name 'memory_ext--*.sql' \) -exec install -m 644 {} "$share/" \;
ln -s ../../../../memory-ext/models "$share/memory_ext/models"
deps=$(shlibs "$lib/memory_ext.so")
control "$ext" "postgresql-$PG-memory-ext" amd64 \
  "postgresql-$PG, postgresql-$PG-pgvector, memory-ext-models (>= $debver), $deps" \
  "long-term memory for AI agents inside PostgreSQL $PG" \
  "memory_ext gives AI agents long-term memory in the database they already use: core blocks, recall of conversations, archival memories with hybrid ranking, extraction, consent and a background worker, all through plain SQL (SELECT memory_query(...)). This package is the extension for PostgreSQL $PG; CREATE EXTENSION memory_ext CASCADE installs it with pgvector."

[ "$whole" = 1 ] || exit 0

# postgresql-15-pgvector: Debian 12 has no pgvector package for the extension package to depend
# on, so for 15 the project builds its own from Debian trixie's source of pgvector (the source
# scripts/deps.sh builds from), with pgvector's own `make install` into the package's tree.
if [ "$PG" = 15 ]; then
  pgv=$work/pgvector
  src=$(scripts/deps.sh pgvector-source)
  pv=$(basename "$src" | sed 's/^pgvector_\(.*\)\.orig\.tar\.gz$/\1/')
  mkdir -p "$pgv" "$work/pgvector-src"
  tar xzf "$src" -C "$work/pgvector-src"
  make -s -C "$work/pgvector-src/pgvector-$pv" PG_CONFIG="$PG_CONFIG" >/dev/null
  make -s -C "$work/pgvector-src/pgvector-$pv" PG_CONFIG="$PG_CONFIG" DESTDIR="$pgv" install >/dev/null
  strip --strip-unneeded "$pgv/usr/lib/postgresql/15/lib/vector.so"
  pgv_deps=$(shlibs "$pgv/usr/lib/postgresql/15/lib/vector.so")
  ( debver=$pv-0memoryext1 version=$pv copyright=packaging/pgvector-copyright
    control "$pgv" postgresql-15-pgvector amd64 "postgresql-15, $pgv_deps" \
      "open-source vector similarity search for PostgreSQL 15 (pgvector $pv)" \
      "pgvector $pv, built by memory_ext's packaging from Debian trixie's source package for Debian 12, which has no pgvector package. Exact and approximate nearest neighbour search (HNSW, IVFFlat) for PostgreSQL 15." )
fi

# memory-ext-models: the files deps.sh installed for this version (a link for versions that
# share another's copy).
# It is the same for every PostgreSQL version and every commit of a release, and compressing
# 150 MB took a minute: one build per version, models and copyright is kept in
# $MEMORY_EXT_HOME/debian-cache and copied from there (its changelog keeps the date of that
# build).
models_src=$("$PG_CONFIG" --sharedir)/extension/memory_ext/models
models_key=$({ echo "$debver $maintainer"; cat "${copyright:-packaging/copyright}";
               (cd -L "$models_src" && find -L . -type f ! -name '.git*' -print0 | sort -z | xargs -0 md5sum); } |
             md5sum | cut -c1-12)
models_cache=$MEMORY_EXT_HOME/debian-cache/memory-ext-models_${debver}_all.$models_key.deb
if [ -f "$models_cache" ]; then
  cp "$models_cache" "$out/memory-ext-models_${debver}_all.deb"
  echo "$out/memory-ext-models_${debver}_all.deb (built before: $models_cache)"
else
  models=$work/models
  mkdir -p "$models/usr/share/memory-ext"
  cp -rL "$models_src" "$models/usr/share/memory-ext/models"
  find "$models/usr/share/memory-ext" -name '.git*' -delete
  find "$models/usr/share/memory-ext" -type f -exec chmod 644 {} +
  control "$models" memory-ext-models all "" \
    "built-in embedding and reranking models for memory_ext" \
    "The models memory_ext runs inside PostgreSQL without a remote service: all-MiniLM-L6-v2 (Apache-2.0) and bge-small-en-v1.5 (MIT) for embeddings, ms-marco-MiniLM-L-12-v2 (Apache-2.0) for reranking. One copy serves the extension packages of every PostgreSQL version."
  mkdir -p "$(dirname "$models_cache")"
  cp "$out/memory-ext-models_${debver}_all.deb" "$models_cache.tmp" && mv "$models_cache.tmp" "$models_cache"
fi

# memory-mcp
mcp=$work/mcp
mkdir -p "$mcp/usr/bin" "$mcp/usr/lib/systemd/system" "$mcp/usr/share/doc/memory-mcp/examples"
install -m 755 "$CARGO_TARGET_DIR"/release/memory-mcp "$mcp/usr/bin/memory-mcp"
strip --strip-unneeded "$mcp/usr/bin/memory-mcp"
install -m 644 packaging/memory-mcp.service "$mcp/usr/lib/systemd/system/memory-mcp.service"
install -m 644 packaging/memory-mcp.json "$mcp/usr/share/doc/memory-mcp/examples/config.json"
deps=$(shlibs "$mcp/usr/bin/memory-mcp")
control "$mcp" memory-mcp amd64 "$deps" \
  "MCP gateway to memory_ext's agent memory tools" \
  "memory-mcp serves memory_ext's agent tools (core blocks, recall and archival memory, the memory tool) over the Model Context Protocol, on stdio for a desktop host or on streamable HTTP with bearer tokens per tenant. It connects to a PostgreSQL database with the memory_ext extension as an ordinary role, so row-level security keeps tenants apart. See /usr/share/doc/memory-mcp/examples/config.json and the memory-mcp systemd unit."
