#!/usr/bin/env bash
# The Debian packages as a DBA meets them (scripts/test.sh, layer package): in a clean Debian
# root made by debootstrap from Debian's own packages, with the distribution's postgresql-NN and
# its pgvector installed by apt (on 15, Debian 12, the project's own pgvector package: Debian 12
# has none) and no Rust toolchain or compiler:
#   1. apt installs the previous release's packages (when given), a cluster is made with
#      pg_createcluster, memory_ext preloaded, CREATE EXTENSION memory_ext CASCADE, a memory written;
#   2. apt installs this tree's packages over them (or afresh), the cluster restarts,
#      ALTER EXTENSION memory_ext UPDATE; the memory is still there and the README's tour runs
#      through the root's own psql;
#   3. the gateway package's binary answers, its unit and example are in place;
#   4. DROP EXTENSION, apt removes the packages: no file of theirs is left.
# apt runs with no package source: nothing beyond the local .deb files and what the root holds.
# The root with PostgreSQL installed is made once per version and kept as a tarball.
#
#   tests/package/run.sh DEBS [PREVIOUS_DEBS]     directories of scripts/package.sh's output
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib.sh
debs=$(cd "${1:?directory of this tree\'s packages}" && pwd)
prev=${2:+$(cd "$2" && pwd)}
suite=$(debian_suite "$PG")
base=$MEMORY_EXT_HOME/roots/package-pg$PG.tar
port=$((OWN_PORT_BASE + 40))
OUT=$PWD/.run/pg$PG/package; mkdir -p "$OUT"
fail() { echo "package test (PostgreSQL $PG): $*" >&2; exit 1; }

began=$SECONDS
if [ ! -f "$base" ]; then
  log "a Debian $suite root with Debian's postgresql-$PG$([ "$PG" = 15 ] || echo " and postgresql-$PG-pgvector") ($base)"
  mkdir -p "$MEMORY_EXT_HOME/roots"   # a new machine has no roots yet
  new=$(mktemp -d "$MEMORY_EXT_HOME/roots/package-new.XXXXXX")
  # Debian 12 has no pgvector package: for 15 the project's own comes with the packages tested.
  pgvector=("postgresql-$PG-pgvector"); [ "$PG" = 15 ] && pgvector=()
  debian_root "$new" "$suite" "postgresql-$PG" "${pgvector[@]}" || fail "could not make the root"
  as_root tar -C "$new" -cf "$base.new" .
  as_root mv "$base.new" "$base"
  as_root rm -rf "$new"
  echo "root made in $((SECONDS - began)) s"
fi

root=$(mktemp -d "$MEMORY_EXT_HOME/roots/package-test.XXXXXX")
chmod 755 "$root"
cleanup() {
  as_root chroot "$root" pg_ctlcluster "$PG" main stop -m immediate >/dev/null 2>&1 || true
  mountpoint -q "$root/proc" && as_root umount "$root/proc"
  as_root rm -rf "$root"
}
trap cleanup EXIT
t0=$SECONDS
as_root tar -C "$root" -xf "$base"
as_root chmod 755 "$root"
as_root mount -t proc proc "$root/proc"
in_root() { as_root chroot "$root" "$@"; }
sql() { in_root runuser -u postgres -- psql -X -q -At -v ON_ERROR_STOP=1 -p "$port" -d app "$@"; }
# With no package source configured: only the given files and what the root holds can be used.
apt_install() { DEBIAN_FRONTEND=noninteractive in_root apt-get install -y -qq -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts=/nonexistent "$@" > "$OUT/apt.log" 2>&1 || { tail -20 "$OUT/apt.log"; fail "apt-get install $*"; }; }

for tool in cargo rustc cc gcc clang; do
  if in_root sh -c "command -v $tool" >/dev/null; then fail "the root has $tool"; fi
done

# The extension package of directory $1 and this tree's models package (and, on 15, its pgvector).
pkgs() {
  ls "$1"/postgresql-"$PG"-memory-ext_*.deb "$debs"/memory-ext-models_*.deb
  [ "$PG" != 15 ] || ls "$debs"/postgresql-15-pgvector_*.deb
}
# Copies the given .deb files into the root's /tmp/debs; prints their paths inside the root.
stage_debs() {
  as_root rm -rf "$root/tmp/debs"; as_root mkdir -p "$root/tmp/debs"; as_root cp "$@" "$root/tmp/debs/"
  local f; for f in "$@"; do echo "/tmp/debs/$(basename "$f")"; done
}

first=$debs; [ -n "$prev" ] && first=$prev
apt_install $(stage_debs $(pkgs "$first"))
in_root pg_createcluster "$PG" main -p "$port" -- --auth-local=trust > "$OUT/createcluster.log" 2>&1
in_root pg_conftool "$PG" main set shared_preload_libraries memory_ext
in_root pg_ctlcluster "$PG" main start
in_root runuser -u postgres -- createdb -p "$port" app
sql -c "CREATE EXTENSION memory_ext CASCADE" 2>/dev/null
sql -c "SET memory_ext.user_id = 'dba'" -c "SELECT memory_write('{\"text\": \"The packages were installed by apt.\"}') ->> 'event'" > "$OUT/write.out"
got=$(sql -c "SET memory_ext.user_id = 'dba'" -c "SELECT memory_query('{\"query\": \"who installed the packages?\"}') -> 'items' -> 0 ->> 'text'")
[[ "$got" == *"The packages were installed by apt." ]] || fail "memory_query after install answered: $got"
echo "from an empty root to a working memory_query: $((SECONDS - t0)) s (root unpacked from $base)"
first_version=$(sql -c "SELECT extversion FROM pg_extension WHERE extname = 'memory_ext'")

if [ -n "$prev" ]; then
  apt_install $(stage_debs $(pkgs "$debs"))
  in_root pg_ctlcluster "$PG" main restart
  sql -c "ALTER EXTENSION memory_ext UPDATE"
  now=$(sql -c "SELECT extversion FROM pg_extension WHERE extname = 'memory_ext'")
  [ "$now" = "$(ext_version)" ] || fail "after the upgrade the extension is at $now"
  got=$(sql -c "SET memory_ext.user_id = 'dba'" -c "SELECT count(*) FROM memory.items WHERE text = 'The packages were installed by apt.'")
  [ "$got" = 1 ] || fail "the memory written on $first_version is gone after the upgrade"
  echo "upgraded $first_version -> $now by apt and ALTER EXTENSION ... UPDATE; the memory is there"
fi

# The README's tour, through the root's psql, on a database of its own.
in_root runuser -u postgres -- createdb -p "$port" tour
readme_tour | as_root tee "$root/tmp/tour.sql" >/dev/null
in_root runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 -p "$port" -d tour -c "CREATE EXTENSION memory_ext CASCADE" -f /tmp/tour.sql > "$OUT/tour.out"
echo "README tour ran in the root: $(grep -c '' "$OUT/tour.out") lines of output"

# The gateway's package.
apt_install $(stage_debs "$debs"/memory-mcp_*.deb)
in_root memory-mcp --help > "$OUT/mcp-help.out" 2>&1 || { cat "$OUT/mcp-help.out"; fail "memory-mcp --help"; }
for f in /usr/lib/systemd/system/memory-mcp.service /usr/share/doc/memory-mcp/examples/config.json; do
  [ -f "$root$f" ] || fail "memory-mcp: $f missing"
done

# Removal: what apt installed is gone.
sql -c "DROP EXTENSION memory_ext" -d app
in_root runuser -u postgres -- dropdb -p "$port" tour
in_root pg_conftool "$PG" main remove shared_preload_libraries
in_root pg_ctlcluster "$PG" main restart
files=$(in_root dpkg -L "postgresql-$PG-memory-ext" memory-ext-models memory-mcp | sort -u)
DEBIAN_FRONTEND=noninteractive in_root apt-get remove --purge -y -qq "postgresql-$PG-memory-ext" memory-ext-models memory-mcp > "$OUT/remove.log" 2>&1 ||
  { tail "$OUT/remove.log"; fail "apt-get remove"; }
left=0
while read -r f; do
  [ -n "$f" ] && [ ! -d "$root$f" ] && { [ -e "$root$f" ] || [ -L "$root$f" ]; } && { echo "left behind: $f"; left=1; }
done <<< "$files"
[ $left = 0 ] || fail "files left after apt-get remove --purge"
[ -z "$(ls "$root/usr/share/postgresql/$PG/extension/" | grep memory_ext)" ] || fail "extension files left"
sql -c "SELECT 1" -d postgres >/dev/null || fail "the server does not answer after the removal"
echo "removed: no file of the three packages left; the server runs on"
echo "package test (PostgreSQL $PG, Debian $suite): passed in $((SECONDS - began)) s"
