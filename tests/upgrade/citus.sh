#!/usr/bin/env bash
# A running Citus cluster upgraded from the last release (tests/upgrade/run.sh calls this after
# its one-node upgrades, with that release's build staged; docs/citus.md, "Upgrade a cluster").
# The release is installed and a coordinator with two workers made on it; a tenant writes
# through the coordinator; then this tree's build is installed (by rename), every node
# restarted and `ALTER EXTENSION memory_ext UPDATE` run once, on the coordinator. Every node must
# be at the new version with its changes (0.7.0: the trigger functions planned per call on every
# node; 0.8.0: the model's HNSW index on every shard), and the tenant's rows must answer through
# the coordinator and take new writes.
#
#   tests/upgrade/citus.sh VERSION STAGE    STAGE: `cargo pgrx package --out-dir` of VERSION
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib.sh
version=${1:?release version}
stage=${2:?its staged build}
port=$CITUS_UPGRADE_PORT
dir=$MEMORY_EXT_HOME/citus-upgrade-$port
current=$(ext_version)
tenant=citus-before   # tests/data/citus_before.sql's

q() { local n=$1; shift; "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p $((port + n)) -U postgres -d postgres "$@"; }
fail() { echo "citus upgrade from $version: $*" >&2; exit 1; }

scripts/deps.sh citus >/dev/null
scripts/citus.sh destroy "$dir"
trap 'scripts/citus.sh destroy "$dir"' EXIT

echo "--- a cluster on $version"
libdir=$("$PG_CONFIG" --pkglibdir); extdir=$("$PG_CONFIG" --sharedir)/extension
tmp="$libdir/.memory_ext.so.new.$$"
as_root install -m 755 "$(find "$stage" -name memory_ext.so -print -quit)" "$tmp"
as_root mv -f "$tmp" "$libdir/memory_ext.so"
as_root install -m 644 "$(find "$stage" -name "memory_ext--$version.sql" -print -quit)" "$extdir/memory_ext--$version.sql"
scripts/citus.sh start "$dir" "$port"
q 0 -c "CREATE EXTENSION vector" -c "CREATE EXTENSION memory_ext VERSION '$version'" \
  -c "SELECT memory_citus_distribute() IS NOT NULL" >/dev/null
q 0 -f tests/data/citus_before.sql >/dev/null
# 0.9.0 normalises stored categories; on a cluster, by the statement docs/citus.md gives.
q 0 -c "SET memory_ext.user_id = '$tenant'" -c "SELECT memory_write('{\"text\": \"Ana booked the night train to Vienna.\", \"category\": \"Travel Plans\"}')" >/dev/null
# A memory purged on the old release: before 0.11.0 its history kept the text (docs/citus.md's
# statement scrubs it after the update).
q 0 -c "SET memory_ext.user_id = '$tenant'" \
  -c "SELECT memory_forget((memory_write('{\"text\": \"Ana hid the spare key under the quokkastone.\"}') ->> 'id')::uuid)" >/dev/null
q 0 -c "UPDATE memory.items SET purge_at = now() - interval '1 minute' WHERE user_id = '$tenant' AND state = 'soft_deleted'" \
  -c "SELECT memory_purge()" >/dev/null
before=$(q 0 -c "SELECT count(*) FROM memory.items WHERE user_id = '$tenant'")

echo "--- this build installed, every node restarted, ALTER EXTENSION memory_ext UPDATE on the coordinator"
scripts/install.sh >/dev/null
scripts/citus.sh start "$dir" "$port"   # restarts every node onto the new library
q 0 -c "ALTER EXTENSION memory_ext UPDATE"
# The tables a release adds are distributed by the call docs/citus.md gives after an update
# (0.11.0: memory.idempotency_keys); a keyed write through the coordinator then writes once.
q 0 -c "SELECT memory_citus_distribute()" >/dev/null
if [ "$(q 0 -c "SELECT to_regclass('memory.idempotency_keys') IS NOT NULL")" = t ]; then
  [ "$(q 0 -c "SELECT count(*) FROM pg_dist_partition WHERE logicalrelid = 'memory.idempotency_keys'::regclass")" = 1 ] ||
    fail "memory.idempotency_keys is not distributed after memory_citus_distribute()"
  for _ in 1 2; do
    q 0 -c "SET memory_ext.user_id = '$tenant'" \
      -c "SELECT memory_write('{\"text\": \"Ana renewed her rail pass.\", \"idempotency_key\": \"upgrade-1\"}')" >/dev/null
  done
  [ "$(q 0 -c "SELECT count(*) FROM memory.items WHERE user_id = '$tenant' AND text = 'Ana renewed her rail pass.'")" = 1 ] ||
    fail "a keyed write repeated through the coordinator wrote twice"
  before=$((before + 1))
fi
# 0.13.0: the spaces and their grants become reference tables (docs/citus.md "Spaces"), and a
# space made through the coordinator admits its member's write on the space's shard.
if [ "$(q 0 -c "SELECT to_regclass('memory.grants') IS NOT NULL")" = t ]; then
  [ "$(q 0 -c "SELECT string_agg(partmethod::text, ',' ORDER BY logicalrelid::text) FROM pg_dist_partition
               WHERE logicalrelid IN ('memory.spaces'::regclass, 'memory.grants'::regclass)")" = n,n ] ||
    fail "memory.spaces and memory.grants are not reference tables after memory_citus_distribute()"
  q 0 -c "SET memory_ext.user_id = '$tenant'" -c "SELECT memory_space_create('upgrade-team')" \
    -c "SELECT memory_write('{\"text\": \"The team meets on Fridays.\", \"space\": \"upgrade-team\"}')" >/dev/null ||
    fail "a space made after the upgrade does not take its admin's write"
fi
for i in 0 1 2; do
  got=$(q "$i" -c "SELECT extversion FROM pg_extension WHERE extname = 'memory_ext'")
  [ "$got" = "$current" ] || fail "node on port $((port + i)) is at $got, not $current"
  # 0.7.0's change (sql/citus.sql): every trigger function that runs statements is planned per
  # call on every node.
  plans=$(q "$i" -c "SELECT count(*) FROM pg_proc WHERE pronamespace = 'memory'::regnamespace
                       AND 'plan_cache_mode=force_custom_plan' = ANY (proconfig)")
  [ "$plans" -ge 9 ] || fail "node on port $((port + i)): $plans trigger functions planned per call, not 9 (0.11.0: with memory._erase_copies)"
done

# 0.8.0's change (sql/embed.sql): the registered model's HNSW index on every shard partition of
# memory.items (0.6.0 and 0.7.0 made none on this coordinator; the upgrade makes them).
model=$(q 0 -c "SELECT model_id FROM memory.embedding_models ORDER BY model_id LIMIT 1")
for i in 1 2; do
  missing=$(q "$i" -c "SET citus.override_table_visibility = off" -c "SELECT count(*) FROM pg_class t
      WHERE t.relnamespace = 'memory'::regnamespace AND t.relkind = 'r' AND t.relname ~ '^items_p[0-9]+_[0-9]+\$'
        AND NOT EXISTS (SELECT FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid JOIN pg_am am ON am.oid = x.relam
                        WHERE i.indrelid = t.oid AND am.amname = 'hnsw' AND x.relname LIKE 'items_emb_' || left(md5('$model'), 12) || '%')")
  [ "$missing" = 0 ] || fail "node on port $((port + i)): $missing shard partitions of memory.items without the HNSW index of $model"
done

if [ "$(printf "%s\n" "$version" 0.9.0 | sort -V | head -1)" != 0.9.0 ]; then  # from a release before 0.9.0
  echo "--- categories normalised on the cluster by docs/citus.md's statement"
  sed -n '/^BEGIN;$/,/^COMMIT;$/p' docs/citus.md > "$dir.categories.sql"
  grep -q "UPDATE memory.items" "$dir.categories.sql" || fail "docs/citus.md has no category statement"
  # The memory's updated_at and history, which the statement must leave as they are.
  kept="SELECT updated_at || ' ' || (SELECT count(*) FROM memory.history h WHERE h.user_id = i.user_id AND h.memory_id = i.id::text)
        FROM memory.items i WHERE user_id = '$tenant' AND text LIKE '%night train%'"
  was=$(q 0 -c "$kept")
  q 0 -f "$dir.categories.sql" >/dev/null
  rm -f "$dir.categories.sql"
  got=$(q 0 -c "SELECT category FROM memory.items WHERE user_id = '$tenant' AND text LIKE '%night train%'")
  [ "$got" = travel_plans ] || fail "the memory's category after the statement: $got"
  [ "$(q 0 -c "$kept")" = "$was" ] || fail "the statement changed the memory's updated_at or history: $was, now $(q 0 -c "$kept")"
  n=$(q 0 -c "SET memory_ext.user_id = '$tenant'" -c "SELECT count(*) FROM memory_search('night train', filters => '{\"category\": \"Travel Plans\"}')")
  [ "$n" = 1 ] || fail "a filter by the old spelling finds $n memories"
  for i in 0 1 2; do
    off=$(q "$i" -c "SELECT count(*) FROM pg_trigger WHERE tgname IN ('items_touch', 'items_audit_update') AND tgenabled = 'D'")
    [ "$off" = 0 ] || fail "node on port $((port + i)): $off triggers left disabled"
  done
fi

if [ "$(printf "%s\n" "$version" 0.11.0 | sort -V | head -1)" != 0.11.0 ]; then  # from a release before 0.11.0
  echo "--- history of the memory purged before the update scrubbed by docs/citus.md's statement"
  sed -n '/^DO \$scrub\$$/,/^END \$scrub\$;$/p' docs/citus.md > "$dir.scrub.sql"
  grep -q "UPDATE memory.history" "$dir.scrub.sql" || fail "docs/citus.md has no history statement"
  held="SELECT count(*) FROM memory.history WHERE user_id = '$tenant' AND (old_ref LIKE '%quokkastone%' OR new_ref LIKE '%quokkastone%' OR meta::text LIKE '%quokkastone%')"
  [ "$(q 0 -c "$held")" -gt 0 ] || fail "the purged memory's text was not in history before the statement (nothing to test)"
  q 0 -f "$dir.scrub.sql" >/dev/null
  rm -f "$dir.scrub.sql"
  [ "$(q 0 -c "$held")" = 0 ] || fail "history still holds the purged memory's text after the statement"
  # A purge after the update erases by itself (sql/triggers.sql), on the shards.
  q 0 -c "SET memory_ext.user_id = '$tenant'" \
    -c "SELECT memory_forget((memory_write('{\"text\": \"Ana keeps a diary in the wombatbox.\"}') ->> 'id')::uuid, hard => true)" >/dev/null
  n=$(q 0 -c "SELECT count(*) FROM memory.history WHERE user_id = '$tenant' AND (new_ref LIKE '%wombatbox%' OR old_ref LIKE '%wombatbox%' OR meta::text LIKE '%wombatbox%')")
  [ "$n" = 0 ] || fail "a hard forget after the update left the text in $n history rows"
fi

echo "--- the tenant's rows through the coordinator"
after=$(q 0 -c "SELECT count(*) FROM memory.items WHERE user_id = '$tenant'")
[ "$after" = "$before" ] || fail "$before memories before the upgrade, $after after"
as_tenant() { q 0 -c "SET memory_ext.user_id = '$tenant'" -c "$1"; }
found=$(as_tenant "SELECT count(*) FROM memory_search('green tea', top_k => 5) WHERE text = 'Ana prefers green tea over coffee.'")
[ "$found" = 1 ] || fail "memory_search does not find the memory written on $version"
ctx=$(as_tenant "SELECT compile_core_blocks('before-agent')")
grep -q "Lives in Lisbon" <<< "$ctx" || fail "the core blocks written on $version do not compile: $ctx"
as_tenant "SELECT memory_write('{\"text\": \"Ana booked the train to Porto.\", \"category\": \"tasks\"}') ->> 'event'" >/dev/null
n=$(as_tenant "SELECT count(*) FROM memory_search('Porto', top_k => 10)")
[ "$n" -ge 2 ] || fail "after a new write, memory_search('Porto') finds $n memories"
echo "cluster upgraded from $version to $current on all 3 nodes by one ALTER EXTENSION on the coordinator; $after memories kept, reads and writes answer"
