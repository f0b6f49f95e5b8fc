#!/usr/bin/env bash
# Installs what memory_ext needs on a Debian 12 machine, skipping every step that is already done,
# so a warm machine finishes in seconds. Facts behind each step: ../shared/ENVIRONMENT.md.
# Usage: scripts/deps.sh [all|apt|pgvector|pgrx|model]   (default: all)
set -euo pipefail

PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
PGRX_VERSION=0.18.0
PGVECTOR_VERSION=0.8.0
step=${1:-all}

log() { printf '==> %s\n' "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_step() {
  local want=(postgresql-15 postgresql-server-dev-15 postgresql-15-cron libclang-dev clang pkg-config sudo)
  local missing=()
  for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then log "debian packages: present"; return; fi
  log "debian packages: installing ${missing[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null
}

pgvector_step() {
  local sharedir; sharedir=$("$PG_CONFIG" --sharedir)
  if [ -f "$sharedir/extension/vector--$PGVECTOR_VERSION.sql" ]; then log "pgvector $PGVECTOR_VERSION: present"; return; fi
  # Debian 12 has no pgvector package; Debian 13 has the source package. A private apt
  # configuration fetches it without touching the machine's own sources.
  log "pgvector $PGVECTOR_VERSION: building from Debian trixie's source package"
  local d; d=$(mktemp -d); chmod 755 "$d"; mkdir -p "$d/lists/partial"
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' > "$d/trixie.sources"
  local o=(-oDir::Etc::SourceList=/dev/null -oDir::Etc::SourceParts="$d" -oDir::State::Lists="$d/lists")
  apt-get "${o[@]}" update -qq
  (cd "$d" && apt-get "${o[@]}" source --download-only pgvector >/dev/null)
  tar xzf "$d/pgvector_$PGVECTOR_VERSION.orig.tar.gz" -C "$d"
  make -s -C "$d/pgvector-$PGVECTOR_VERSION" PG_CONFIG="$PG_CONFIG" >/dev/null
  as_root make -s -C "$d/pgvector-$PGVECTOR_VERSION" PG_CONFIG="$PG_CONFIG" install >/dev/null
  rm -rf "$d"
}

pgrx_step() {
  if cargo pgrx --version 2>/dev/null | grep -q " $PGRX_VERSION\$"; then
    log "cargo-pgrx $PGRX_VERSION: present"
  else
    log "cargo-pgrx $PGRX_VERSION: installing (about 9 minutes on 2 cores)"
    cargo install cargo-pgrx --version "$PGRX_VERSION" --locked
  fi
  # `cargo pgrx init` writes ~/.pgrx/config.toml; pointing it at the system pg_config means
  # nothing is downloaded or compiled.
  if grep -qs "pg15 = \"$PG_CONFIG\"" "${PGRX_HOME:-$HOME/.pgrx}/config.toml"; then
    log "cargo pgrx init: done before"
  else
    log "cargo pgrx init --pg15 $PG_CONFIG"
    cargo pgrx init --pg15 "$PG_CONFIG"
  fi
}

case "$step" in
  apt) apt_step ;;
  pgvector) pgvector_step ;;
  pgrx) pgrx_step ;;
  all) apt_step; pgvector_step; pgrx_step ;;
  *) echo "unknown step: $step" >&2; exit 2 ;;
esac
