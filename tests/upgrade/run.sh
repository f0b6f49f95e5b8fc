#!/usr/bin/env bash
# Upgrade test (make test, layer "upgrade"): every released version upgrades to this one with
# its users' data intact, and an upgraded schema is the same as a fresh install's.
#
# For each release (RELEASES below: version and the commit it was built from, also tagged
# v<version>):
#   1. build that release from its commit (a git worktree under target/, same target directory,
#      so only memory_ext itself recompiles) and install its library and install script;
#   2. restart the test server (it preloads memory_ext) and create the extension at that version
#      in a new database; write data through that release's API (tests/data/rows.sql);
#   3. install this tree's build, restart, ALTER EXTENSION memory_ext UPDATE;
#   4. every row of every table that existed before is unchanged (a hash per table over the
#      columns it had), and the API works on it (tests/upgrade/after.sql); what an upgrade is
#      meant to change, written after the hashes by tests/upgrade/changes_before.sql under a
#      tenant of its own, has changed as tests/upgrade/changes_after.sql says;
#   5. an empty database created at that version and updated has the catalog of a fresh
#      install (tests/upgrade/catalog.sql, compared with diff), and the whole regress suite passes
#      on it.
# Then a running Citus cluster made on the last release is upgraded (tests/upgrade/citus.sh).
# Expects the throwaway server of scripts/test.sh: PGDATA and PORT in the environment.
set -euo pipefail
cd "$(dirname "$0")/../.."

. scripts/lib.sh
: "${TEST_DIR:?}" "${TEST_PORT:?}"
OUT=$PWD/.run/pg$PG/upgrade; mkdir -p "$OUT"
# RELEASES (version=commit of every release, the last one only on 17 and 18) and release_stage.
. tests/upgrade/releases.sh
current=$(ext_version)

psql_t() { psql_at "$TEST_PORT" "$@"; }
restart() { scripts/cluster.sh start "$TEST_DIR" "$TEST_PORT"; }

# Hash per table (columns it has now, in name order) of database $1 -> stdout. $2: column list
# file to use (the old release's columns), written when absent.
table_hashes() {
  local db=$1 cols=$2
  if [ ! -s "$cols" ]; then
    psql_t -d "$db" -At -c "SELECT c.relname || ' ' || string_agg(quote_ident(a.attname), ',' ORDER BY a.attname)
        FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        WHERE c.relnamespace = 'memory'::regnamespace AND c.relkind IN ('r', 'p')
        GROUP BY c.relname ORDER BY c.relname" > "$cols"
  fi
  while read -r table columns; do
    printf '%s ' "$table"
    # The tenant of tests/upgrade/changes_before.sql holds what the upgrade is meant to change.
    local only=""
    [[ ",$columns," == *,user_id,* ]] && only="WHERE user_id IS DISTINCT FROM 'upgrade-changes'"
    psql_t -d "$db" -At -c "SELECT count(*) || ' ' || coalesce(md5(string_agg(r, E'\n' ORDER BY r)), '-')
        FROM (SELECT ROW($columns)::text AS r FROM memory.$table $only) t"
  done < "$cols"
}

for release in "${RELEASES[@]}"; do
  version=${release%%=*}; commit=${release#*=}
  if ! stage=$(release_stage "$version" "$commit"); then
    # Only a shallow clone may lack a release's commit; in a full one its absence is a failure.
    if [ "$(git rev-parse --is-shallow-repository)" = true ]; then
      echo "upgrade from $version: NOT TESTED, its commit $commit is not in this shallow clone (git fetch --unshallow)"
      continue
    fi
    echo "upgrade from $version: its commit $commit is not in this repository, or its build failed" >&2; exit 1
  fi
  echo "--- upgrade from $version ($commit, built in $stage) to $current"
  libdir=$("$PG_CONFIG" --pkglibdir); extdir=$("$PG_CONFIG" --sharedir)/extension
  tmp="$libdir/.memory_ext.so.new.$$"
  as_root install -m 755 "$(find "$stage" -name memory_ext.so -print -quit)" "$tmp" && as_root mv -f "$tmp" "$libdir/memory_ext.so"
  as_root install -m 644 "$(find "$stage" -name "memory_ext--$version.sql" -print -quit)" "$extdir/memory_ext--$version.sql"
  restart

  db=memory_ext_upgrade_data
  psql_t -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
  psql_t -d "$db" -c "CREATE EXTENSION vector" -c "CREATE EXTENSION memory_ext VERSION '$version'"
  psql_t -d "$db" -f tests/data/rows.sql > "$OUT/data-$version.out"
  rm -f "$OUT/columns-$version"
  table_hashes "$db" "$OUT/columns-$version" > "$OUT/before-$version"
  psql_t -d "$db" -f tests/upgrade/changes_before.sql > "$OUT/changes-$version.out"

  kept=$(psql_t -d "$db" -At -f tests/upgrade/changes_kept.sql)
  scripts/install.sh >/dev/null
  restart
  psql_t -d "$db" -c "ALTER EXTENSION memory_ext UPDATE"
  got=$(psql_t -d "$db" -At -c "SELECT extversion FROM pg_extension WHERE extname = 'memory_ext'")
  [ "$got" = "$current" ] || { echo "upgrade: extension is at $got, not $current" >&2; exit 1; }
  table_hashes "$db" "$OUT/columns-$version" > "$OUT/after-$version"
  if ! diff -u "$OUT/before-$version" "$OUT/after-$version"; then
    echo "upgrade from $version changed stored rows (above)" >&2; exit 1
  fi
  echo "rows of $(wc -l < "$OUT/before-$version") tables unchanged by the upgrade"
  psql_t -d "$db" -At -f tests/upgrade/after.sql > "$OUT/after-api-$version.out"
  if grep -qx 'f' "$OUT/after-api-$version.out"; then
    echo "upgrade: an API check failed on the upgraded database:" >&2; cat "$OUT/after-api-$version.out" >&2; exit 1
  fi
  echo "API checks on the upgraded data: $(grep -c '' "$OUT/after-api-$version.out") answers, none false"
  psql_t -d "$db" -At -f tests/upgrade/changes_after.sql > "$OUT/changes-after-$version.out"
  if grep -qvx 't' "$OUT/changes-after-$version.out"; then
    echo "upgrade: what the upgrade is meant to change did not change as meant:" >&2
    cat "$OUT/changes-after-$version.out" >&2; exit 1
  fi
  after_kept=$(psql_t -d "$db" -At -f tests/upgrade/changes_kept.sql)
  if [ "$after_kept" != "$kept" ]; then
    echo "upgrade: it changed what it should have left alone (tests/upgrade/changes_kept.sql):" >&2
    printf 'before: %s\nafter:  %s\n' "$kept" "$after_kept" >&2; exit 1
  fi
  echo "changes the upgrade makes: $(grep -c '' "$OUT/changes-after-$version.out") checks, all true"

  # Same schema as a fresh install.
  psql_t -d postgres -c "DROP DATABASE IF EXISTS memory_ext_fresh" -c "CREATE DATABASE memory_ext_fresh" \
         -c "DROP DATABASE IF EXISTS memory_ext_regress" -c "CREATE DATABASE memory_ext_regress"
  psql_t -d memory_ext_fresh -c "CREATE EXTENSION memory_ext CASCADE"
  psql_t -d memory_ext_regress -c "CREATE EXTENSION vector" -c "CREATE EXTENSION memory_ext VERSION '$version'" \
         -c "ALTER EXTENSION memory_ext UPDATE"
  psql_t -d memory_ext_fresh -f tests/upgrade/catalog.sql > "$OUT/catalog-fresh"
  psql_t -d memory_ext_regress -f tests/upgrade/catalog.sql > "$OUT/catalog-upgraded-$version"
  if ! diff -u "$OUT/catalog-fresh" "$OUT/catalog-upgraded-$version"; then
    echo "upgrade from $version: the upgraded schema differs from a fresh install (above)" >&2; exit 1
  fi
  echo "catalog of an upgraded install = a fresh install's ($(grep -c '' "$OUT/catalog-fresh") lines)"

  # The whole regress suite on the database upgraded from the last release. (From older ones the
  # catalog check above is what holds: their upgraded schema equals a fresh install's, on which
  # the regress layer runs the suite.)
  [ "$version" = "${RELEASES[-1]%%=*}" ] || continue
  tests=$(cd tests/pg_regress/sql && ls *.sql | sed 's/\.sql$//' | sort)
  psql_t -d postgres -c "DO \$\$ BEGIN CREATE ROLE regress_memory_user; EXCEPTION WHEN duplicate_object THEN NULL; END \$\$"
  if ! "$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress" \
      --inputdir=tests/pg_regress --outputdir="$OUT" --bindir="$PGBIN" \
      --host=127.0.0.1 --port="$TEST_PORT" --user=postgres --dbname=memory_ext_regress --use-existing $tests; then
    cat "$OUT/regression.diffs" 2>/dev/null | head -200
    exit 1
  fi
done
echo "upgrade: every release upgrades to $current"

# A running Citus cluster upgraded from the last release (tests/upgrade/citus.sh), with the
# build the loop above staged for it; Citus comes from ../shared/vendor as for the citus layer.
last=${RELEASES[-1]%%=*}
if [ "$PG" = 18 ]; then
  echo "citus upgrade: not on PostgreSQL 18, which Citus 13.2 does not support (docs/citus.md)"
elif [ ! -f "${stage:-}/.built" ] || [[ "$stage" != "$RELEASE_CACHE/$last-"* ]]; then
  echo "citus upgrade from $last: NOT TESTED, the release was not built (shallow clone)"
elif [ -f "$("$PG_CONFIG" --pkglibdir)/citus.so" ] || [ -f "${CITUS_VENDOR:-$PWD/../shared/vendor}/citus-13.2.2.tar.gz" ]; then
  tests/upgrade/citus.sh "$last" "$stage"
else
  echo "citus upgrade from $last: SKIPPED, Citus is not installed and its source is not in ../shared/vendor"
fi
