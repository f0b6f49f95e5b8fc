# What every script under scripts/ and tests/ shares: which PostgreSQL, its ports and
# directories, and the small helpers each script used to define for itself. Sourced, never run:
#   . "$(dirname "$0")/lib.sh"          (from scripts/)
#
# PG picks the PostgreSQL major version everywhere (`make run PG=17`, `make test PG=18`):
#   15  Debian 12's own packages (the default: apt installs them in seconds, nothing to build);
#   17  Debian 13 (trixie)'s packages, 18 Debian sid's: a Debian root each, made by
#       `scripts/deps.sh` under $MEMORY_EXT_HOME/roots/pgNN, whose server binaries are pointed at
#       the root's own C library (patchelf) so that they run here unchanged
#       (docs/operations.md "PostgreSQL versions").
# PG_CONFIG, when set, wins and PG follows it.

MEMORY_EXT_HOME=${MEMORY_EXT_HOME:-/var/tmp/memory_ext}
SUPPORTED_PG="15 17 18"

# The Debian root holding PostgreSQL $1's packages ("" for the machine's own 15).
pg_root() { [ "$1" = 15 ] || echo "$MEMORY_EXT_HOME/roots/pg$1"; }
# pg_config of PostgreSQL $1.
pg_config_of() { echo "$(pg_root "$1")/usr/lib/postgresql/$1/bin/pg_config"; }
# The Debian release whose packages carry PostgreSQL $1 (15: this machine's own, Debian 12).
debian_suite() { case $1 in 15) echo bookworm ;; 17) echo trixie ;; 18) echo sid ;; esac; }

if [ -n "${PG_CONFIG:-}" ] && [ -x "$PG_CONFIG" ]; then
  PG=$("$PG_CONFIG" --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')
else
  PG=${PG:-15}
  case " $SUPPORTED_PG " in
    *" $PG "*) ;;
    *) echo "PG=$PG: the supported versions are $SUPPORTED_PG" >&2; exit 2 ;;
  esac
  PG_CONFIG=$(pg_config_of "$PG")
fi
# Cargo's build directory: outside the checkout, one per checkout path, so that a fresh clone
# at the same path (as CI makes) finds its dependencies compiled. One per path, not one shared:
# cargo's fingerprints name the workspace's own sources by absolute path, so a checkout could
# take another checkout's build of them for up to date. deps.sh starts a new one from a copy of
# the last one used, and keeps three.
_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$MEMORY_EXT_HOME/target/$(basename "$_top")-$(printf %s "$_top" | md5sum | cut -c1-8)}
export CARGO_TARGET_DIR
# Debian keeps every program of a version next to its pg_config.
PGBIN=$(dirname "$PG_CONFIG")
export PG PG_CONFIG MEMORY_EXT_HOME

# Ports: one block of 100 per version, so servers of different versions run side by side.
# `make run`'s server and gateway keep the numbers users know (15: 55432). The servers the
# tests, benchmarks and evaluation start for themselves live above Linux's ephemeral range
# (32768-60999, /proc/sys/net/ipv4/ip_local_port_range): inside it, any client connection of a
# test may hold a server's port as its own local end and the server cannot bind it (a CI run
# lost pg_upgrade's new server that way). Offsets within a block are fixed by use.
PORT_BASE=$((55432 + (PG - 15) * 100))
OWN_PORT_BASE=$((61432 + (PG - 15) * 100))
RUN_PORT=${RUN_PORT:-$PORT_BASE}                       # make run
MCP_PORT=${MCP_PORT:-$((PORT_BASE + 6))}               # make run's gateway
TEST_PORT=${TEST_PORT:-$((OWN_PORT_BASE + 1))}         # make test's throwaway server
BENCH_PORT=${BENCH_PORT:-$((OWN_PORT_BASE + 2))}       # make bench
EVAL_PORT=${EVAL_PORT:-$((OWN_PORT_BASE + 3))}         # make eval
EVAL_QA_PORT=${EVAL_QA_PORT:-$((OWN_PORT_BASE + 4))}   # make eval-qa
LIVE_PORT=${LIVE_PORT:-$((OWN_PORT_BASE + 5))}         # test's live-install server
CITUS_PORT=${CITUS_PORT:-$((OWN_PORT_BASE + 28))}      # test's Citus cluster (3 ports)
CITUS_UPGRADE_PORT=${CITUS_UPGRADE_PORT:-$((OWN_PORT_BASE + 33))}
BENCH_CITUS_PORT=${BENCH_CITUS_PORT:-$((OWN_PORT_BASE + 38))}
# tests/package/run.sh takes +40, tests/upgrade/pg_upgrade.sh +41 and +42.
# The tests' HTTP stand-in keeps one port for every version: the regress suite's expected
# output names it (tests/pg_regress/expected/embeddings.out), so two versions' test runs take
# turns rather than run at once.
STANDIN_PORT=${STANDIN_PORT:-61480}
BENCH_STANDIN_PORT=${BENCH_STANDIN_PORT:-$((OWN_PORT_BASE + 49))}
# The local model (scripts/llm.sh): the worker layer's on +50, make eval-qa's on +51.
MODEL_PORT=${MODEL_PORT:-$((OWN_PORT_BASE + 50))}
EVAL_MODEL_PORT=${EVAL_MODEL_PORT:-$((OWN_PORT_BASE + 51))}
# Cluster data lives outside the checkout: the server runs as the postgres user, which may not
# be able to enter the directory a checkout is in (e.g. under /root).
RUN_PGDATA=${RUN_PGDATA:-$MEMORY_EXT_HOME/run-$RUN_PORT}
TEST_PGDATA=${TEST_PGDATA:-$MEMORY_EXT_HOME/test-$TEST_PORT}

log() { printf '==> %s\n' "$*"; }
# Whether Python package $1 is installed at version $2.
pip_has() { python3 -c "import importlib.metadata as m, sys; sys.exit(m.version('$1') != '$2')" 2>/dev/null; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
# A server's programs as the postgres user (initdb refuses root), or as the caller when not root.
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
# psql as postgres on 127.0.0.1:$1, stopping at the first error.
psql_at() { local port=$1; shift; "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres "$@"; }
# A new database $2 on the server at port $1, with memory_ext (and pgvector) created in it.
fresh_db() {
  psql_at "$1" -d postgres -c "DROP DATABASE IF EXISTS $2" -c "CREATE DATABASE $2"
  psql_at "$1" -d "$2" -c "CREATE EXTENSION memory_ext CASCADE"
}
# debian_root DIR SUITE PACKAGE...: a Debian root made by debootstrap from Debian's own packages
# (minbase), with PACKAGE... installed by apt inside it (scripts/deps.sh's PostgreSQL roots, the
# package test's clean roots). No service starts in it and no cluster is made by the package
# scripts; apt's output is kept in DIR.log and shown when it fails. (A registry's snapshot of sid
# may be past its Release file's Valid-Until: the files are still Debian's, checked by their
# signatures.)
debian_root() {
  local dir=$1 suite=$2; shift 2
  as_root debootstrap --variant=minbase "$suite" "$dir" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >/dev/null
  printf '#!/bin/sh\nexit 101\n' | as_root tee "$dir/usr/sbin/policy-rc.d" >/dev/null
  as_root chmod 755 "$dir/usr/sbin/policy-rc.d" "$dir"
  as_root mkdir -p "$dir/etc/postgresql-common"
  echo "create_main_cluster = false" | as_root tee "$dir/etc/postgresql-common/createcluster.conf" >/dev/null
  root_apt "$dir" "$@"
  # Debian's own createcluster.conf back (ucf kept it aside for ours), so that clusters made
  # later are made as on any Debian machine (conf.d included).
  local conf=$dir/etc/postgresql-common/createcluster.conf
  if [ -f "$conf.ucf-dist" ]; then as_root mv "$conf.ucf-dist" "$conf"; fi
}
# apt-get install packages $2.. into the Debian root $1 (from its own suite).
root_apt() {
  local dir=$1; shift
  # postgresql-common's scripts need /proc.
  as_root mount -t proc proc "$dir/proc"
  local rc=0
  { as_root chroot "$dir" apt-get -qq -o Acquire::Check-Valid-Until=false update &&
    DEBIAN_FRONTEND=noninteractive as_root chroot "$dir" apt-get install -y -qq --no-install-recommends "$@" &&
    as_root chroot "$dir" apt-get clean
  } > "$dir.log" 2>&1 || rc=$?
  as_root umount "$dir/proc"
  [ $rc = 0 ] || { tail -20 "$dir.log" >&2; echo "apt-get install $* in $dir failed" >&2; return 1; }
  rm -f "$dir.log"
}
# The README's tour, as SQL (between its tour markers, without the fences): run by the client
# layer and, in a clean Debian root, by the package test.
readme_tour() { sed -n '/<!-- tour:start -->/,/<!-- tour:end -->/p' README.md | grep -v '^<!--\|^```'; }
# The extension's version: Cargo.toml's [workspace.package] (run from the checkout's top).
ext_version() { sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1; }
