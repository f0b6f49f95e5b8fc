#!/usr/bin/env bash
# pg_upgrade from a PostgreSQL 15 cluster holding memory_ext data to PostgreSQL $PG (17 or 18;
# scripts/test.sh, layer upgrade; docs/operations.md, "Moving to a newer PostgreSQL"):
#   1. a 15 cluster with this tree's build, data written through the API (tests/data/rows.sql),
#      the API's answers (tests/upgrade/answers.sql), a hash of every memory.* table and the list
#      of its indexes;
#   2. a new $PG cluster (this tree's build installed there too), pg_upgrade --check, pg_upgrade;
#   3. on the new cluster: every table's rows and every index the same (all valid), the API
#      answers the same, and new writes work (the HNSW index of the model used by memory_query).
# Both clusters are our own (ports and directories of this script), removed on exit.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib.sh
[ "$PG" != 15 ] || { echo "pg_upgrade: nothing to do on 15 (the test goes from 15 to 17 and 18)"; exit 0; }
new_pg=$PG
old_config=$(pg_config_of 15)
[ -x "$old_config" ] || { echo "pg_upgrade from 15: SKIPPED, PostgreSQL 15 is not installed (make deps PG=15)"; exit 0; }
old_bin=$(dirname "$old_config") new_bin=$PGBIN
old_port=$((OWN_PORT_BASE + 41)) new_port=$((OWN_PORT_BASE + 42))
work=$MEMORY_EXT_HOME/pg_upgrade-$new_pg
old=$work/old new=$work/new
OUT=$PWD/.run/pg$new_pg/pg_upgrade; mkdir -p "$OUT"
fail() { echo "pg_upgrade 15 -> $new_pg: $*" >&2; exit 1; }
q_old() { "$old_bin/psql" -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$old_port" -U postgres -d app "$@"; }
q_new() { "$new_bin/psql" -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$new_port" -U postgres -d app "$@"; }

cleanup() {
  PG=15 PG_CONFIG= scripts/cluster.sh destroy "$old" >/dev/null 2>&1 || true
  scripts/cluster.sh destroy "$new" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
cleanup
mkdir -p "$work"; chmod 755 "$work"
# pg_upgrade writes its logs into the directory it runs in, as the postgres user.
[ "$(id -u)" = 0 ] && chown postgres:postgres "$work"

# This tree's build for 15 as well (the default version's layers installed it already in CI).
PG=15 PG_CONFIG= scripts/install.sh > "$OUT/install-15.log" 2>&1 || { cat "$OUT/install-15.log"; fail "install for 15"; }

# 1. The old cluster and its data.
PG=15 PG_CONFIG= scripts/cluster.sh start "$old" "$old_port"
"$old_bin/psql" -X -q -h 127.0.0.1 -p "$old_port" -U postgres -d postgres -c "CREATE DATABASE app"
q_old -c "CREATE EXTENSION memory_ext CASCADE" 2>/dev/null
q_old -f tests/data/rows.sql > "$OUT/rows.out"
q_old -f tests/upgrade/answers.sql > "$OUT/answers-15.out"
# Every row of every memory.* table (in column-name order) and every index with its definition.
hashes() {
  "$1" -c "SELECT c.relname FROM pg_class c WHERE c.relnamespace = 'memory'::regnamespace AND c.relkind IN ('r', 'p') ORDER BY 1" |
  while read -r t; do
    printf '%s %s\n' "$t" "$("$1" -c "SELECT count(*) || ' ' || coalesce(md5(string_agg(r, E'\n' ORDER BY r)), '-')
      FROM (SELECT (to_jsonb(x) - 'tsv')::text AS r FROM memory.$t x) s")"
  done
  "$1" -c "SELECT indexrelid::regclass || ' ' || indisvalid || ' ' || pg_get_indexdef(indexrelid)
           FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
           WHERE c.relnamespace = 'memory'::regnamespace ORDER BY 1"
}
hashes q_old > "$OUT/tables-15"
items=$(q_old -c "SELECT count(*) FROM memory.items")
# This machine's PostgreSQL 15 (Debian 12's 15.20-0+deb12u1) tags every column of every table
# with an attribute option `pg_attver`, which PostgreSQL 18.6 (Debian sid) does not know: its
# restore of any table fails ("unrecognized parameter"), memory_ext's or not. When the new
# version refuses the option, it is taken out of the old catalog first (the one step here that a
# stock PostgreSQL 15 would not need); docs/operations.md says so.
# (grep on the binary itself: `strings | grep -q` fails under pipefail when grep stops early.)
if [ "$(q_old -c "SELECT count(*) FROM pg_attribute WHERE array_to_string(attoptions, ',') LIKE '%pg_attver=%'")" != 0 ] &&
   ! grep -qaF pg_attver "$new_bin/postgres"; then
  echo "pg_upgrade 15 -> $new_pg: PostgreSQL $new_pg does not know this 15's column option pg_attver; removed from the old catalog"
  for db in app postgres template1; do
    "$old_bin/psql" -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$old_port" -U postgres -d "$db" -c \
      "UPDATE pg_attribute SET attoptions = nullif(ARRAY(SELECT o FROM unnest(attoptions) o WHERE o NOT LIKE 'pg_attver=%'), '{}')
       WHERE array_to_string(attoptions, ',') LIKE '%pg_attver=%'"
  done
fi
PG=15 PG_CONFIG= scripts/cluster.sh stop "$old"

# 2. The new cluster, made as the old one was (pg_upgrade needs the same encoding, locale and
# checksum setting: 18's initdb turns checksums on unless told otherwise).
checksums=(); [ "$new_pg" -ge 18 ] && checksums=(--no-data-checksums)
mkdir -p "$new"; chown postgres:postgres "$new" 2>/dev/null || true; chmod 700 "$new"
as_pg "$new_bin/initdb" -D "$new" -U postgres -A trust --no-instructions -E UTF8 --locale=C.UTF-8 "${checksums[@]}" >/dev/null
# The old cluster's settings that matter: memory_ext preloaded (its worker), 127.0.0.1 only.
sed -n '/# memory_ext local server/,$p' "$old/postgresql.conf" | sed "s/^port = .*/port = $new_port/" >> "$new/postgresql.conf"
scripts/install.sh > "$OUT/install-$new_pg.log" 2>&1 || { cat "$OUT/install-$new_pg.log"; fail "install for $new_pg"; }
( cd "$work" && as_pg "$new_bin/pg_upgrade" -b "$old_bin" -B "$new_bin" -d "$old" -D "$new" \
    -p "$old_port" -P "$new_port" -U postgres --check > "$OUT/check.out" 2>&1 ) ||
  { cat "$OUT/check.out"; fail "pg_upgrade --check"; }
began=$SECONDS
( cd "$work" && as_pg "$new_bin/pg_upgrade" -b "$old_bin" -B "$new_bin" -d "$old" -D "$new" \
    -p "$old_port" -P "$new_port" -U postgres > "$OUT/upgrade.out" 2>&1 ) ||
  { rm -rf "$OUT/pg_upgrade_output.d"; cp -r "$new/pg_upgrade_output.d" "$OUT/" 2>/dev/null || true
    tail -30 "$OUT"/pg_upgrade_output.d/*/log/pg_upgrade_dump_*.log 2>/dev/null || tail -30 "$OUT/upgrade.out"
    fail "pg_upgrade"; }
echo "pg_upgrade 15 -> $new_pg: $items memories moved in $((SECONDS - began)) s"

# 3. The same rows, indexes and answers on the new cluster.
scripts/cluster.sh start "$new" "$new_port"
hashes q_new > "$OUT/tables-$new_pg"
diff -u "$OUT/tables-15" "$OUT/tables-$new_pg" || fail "tables or indexes differ after pg_upgrade (above)"
echo "every row of $(grep -vc ' true \| false ' "$OUT/tables-15") memory.* tables and all $(grep -c ' true ' "$OUT/tables-15") indexes the same"
q_new -f tests/upgrade/answers.sql > "$OUT/answers-$new_pg.out"
diff -u "$OUT/answers-15.out" "$OUT/answers-$new_pg.out" || fail "the API answers differently after pg_upgrade (above)"
echo "the API answers the same ($(grep -c '' "$OUT/answers-15.out") lines)"
got=$(q_new -c "SET memory_ext.user_id = 'upgrade-user'" \
  -c "SELECT memory_write('{\"text\": \"Written after pg_upgrade.\"}') ->> 'event'" \
  -c "SELECT count(*) FROM jsonb_array_elements(memory_query('{\"query\": \"written after pg_upgrade\", \"top_k\": 3}') -> 'items') i WHERE i ->> 'text' LIKE '%Written after pg_upgrade.'")
[ "$(echo "$got" | tail -1)" = 1 ] || fail "a new write is not found: $got"
echo "new writes are found on $new_pg"
