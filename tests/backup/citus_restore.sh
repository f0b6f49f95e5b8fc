#!/usr/bin/env bash
# A Citus cluster restored from its backups to one point every node agrees on (docs/citus.md,
# "What scale-out means for backups"; scripts/test.sh, layer citus). Each node archives its WAL
# and has a base backup (pg_basebackup); a tenant writes, the coordinator creates a restore
# point with citus_create_restore_point(), the tenant writes again. Every node is then replaced
# by its base backup and replays its archive to that point: the first writes must be back on
# their worker and answer through the coordinator, the later ones must be gone on every node,
# and the restored cluster must take new writes.
#
#   tests/backup/citus_restore.sh DIR PORT    the cluster of scripts/citus.sh start DIR PORT
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib.sh
dir=${1:?citus cluster directory}
port=${2:?coordinator port}
# Every node of the cluster (the citus layer has added a third worker by now): the coordinator on
# PORT, workerN on PORT+N (scripts/citus.sh).
nodes=(coordinator)
for d in "$dir"/worker*; do nodes[${d##*worker}]=worker${d##*worker}; done
tenant=citus-restore

# psql on node $1 (0 = coordinator), the rest are psql's arguments.
q() { local n=$1; shift; "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p $((port + n)) -U postgres -d postgres "$@"; }
# A tenant's call through the coordinator.
as_tenant() { q 0 -c "SET memory_ext.user_id = '$tenant'" -c "$1"; }
fail() { echo "citus restore: $*" >&2; exit 1; }

echo "--- WAL archiving on every node, then a base backup of each"
mkdir -p "$dir/base" "${nodes[@]/#/$dir/wal/}"
# The server (and pg_basebackup, run as its user) writes there.
if [ "$(id -u)" = 0 ]; then chown postgres: "$dir/base" "$dir/wal" "${nodes[@]/#/$dir/wal/}"; fi
for i in "${!nodes[@]}"; do
  q "$i" -c "ALTER SYSTEM SET archive_mode = on" \
    -c "ALTER SYSTEM SET archive_command = 'test ! -f $dir/wal/${nodes[$i]}/%f && cp %p $dir/wal/${nodes[$i]}/%f'"
done
scripts/citus.sh stop "$dir"
scripts/citus.sh start "$dir" "$port"   # archive_mode takes a restart
for i in "${!nodes[@]}"; do
  as_pg "$PGBIN/pg_basebackup" -h 127.0.0.1 -p $((port + i)) -U postgres -D "$dir/base/${nodes[$i]}" -X stream -c fast
done

echo "--- writes, the restore point, more writes"
as_tenant "SELECT memory_write('{\"text\": \"Rui keeps bees on the roof.\", \"category\": \"hobbies\", \"thread_id\": \"restore-thread\"}') ->> 'event'" >/dev/null
as_tenant "SELECT message_append('restore-thread', 'user', 'The bees made honey this year.') IS NOT NULL" >/dev/null
q 0 -c "SELECT citus_create_restore_point('memory_ext_restore_test')" >/dev/null
as_tenant "SELECT memory_write('{\"text\": \"Rui sold the beehives in March.\", \"category\": \"hobbies\"}') ->> 'event'" >/dev/null
as_tenant "SELECT message_append('restore-thread', 'user', 'Written after the restore point.') IS NOT NULL" >/dev/null
# Close each node's current WAL segment and wait until its archive holds it: the restore point
# and everything before it must be in the archive.
for i in "${!nodes[@]}"; do
  seg=$(q "$i" -c "SELECT pg_walfile_name(pg_switch_wal())")
  for _ in $(seq 1 60); do
    done_=$(q "$i" -c "SELECT coalesce(last_archived_wal, '') >= '$seg' FROM pg_stat_archiver")
    [ "$done_" = t ] && break
    sleep 0.5
  done
  [ "$done_" = t ] || fail "${nodes[$i]}: segment $seg not archived: $(q "$i" -c 'SELECT * FROM pg_stat_archiver')"
done

echo "--- every node replaced by its base backup, replaying its archive to the restore point"
scripts/citus.sh stop "$dir"
mkdir -p "$dir/before-restore"
for i in "${!nodes[@]}"; do
  d="$dir/${nodes[$i]}"
  rm -rf "$dir/before-restore/${nodes[$i]}"
  mv "$d" "$dir/before-restore/${nodes[$i]}"
  cp -a "$dir/base/${nodes[$i]}" "$d"
  as_pg touch "$d/recovery.signal"
  cat >> "$d/postgresql.auto.conf" <<CONF
restore_command = 'cp $dir/wal/${nodes[$i]}/%f %p'
recovery_target_name = 'memory_ext_restore_test'
recovery_target_action = 'promote'
CONF
  scripts/cluster.sh start "$d" $((port + i))
done
# pg_ctl returns once a node takes read-only connections; the cluster is back when every node
# has reached the point and been promoted. Its node metadata is the restored coordinator's.
for i in "${!nodes[@]}"; do
  for _ in $(seq 1 120); do
    [ "$(q "$i" -c "SELECT pg_is_in_recovery()" 2>/dev/null)" = f ] && break
    sleep 0.5
  done
  [ "$(q "$i" -c "SELECT pg_is_in_recovery()")" = f ] || fail "${nodes[$i]} is still in recovery"
  grep -q "recovery stopping at restore point \"memory_ext_restore_test\"" "$dir/${nodes[$i]}/server.log" ||
    fail "${nodes[$i]}: its log does not show recovery stopping at the restore point"
done

echo "--- what the restored cluster holds"
kept=$(as_tenant "SELECT count(*) FROM memory_search('bees on the roof', top_k => 5) WHERE text = 'Rui keeps bees on the roof.'")
[ "$kept" = 1 ] || fail "the memory written before the restore point is not found through the coordinator ($kept)"
later=$(q 0 -c "SELECT count(*) FROM memory.items WHERE user_id = '$tenant' AND text LIKE '%sold the beehives%'")
[ "$later" = 0 ] || fail "the memory written after the restore point came back ($later rows)"
msgs=$(q 0 -c "SELECT string_agg(content, ' | ' ORDER BY seq) FROM memory.messages WHERE user_id = '$tenant'")
[ "$msgs" = "The bees made honey this year." ] || fail "messages after restore: $msgs"
# Nothing of the tenant's rows sits on the coordinator: they were restored on the worker.
shard_node=$(q 0 -c "SELECT nodeport FROM pg_dist_shard_placement p JOIN pg_dist_shard s USING (shardid)
  WHERE s.logicalrelid = 'memory.items'::regclass AND get_shard_id_for_distribution_column('memory.items', '$tenant') = s.shardid")
[ -n "$shard_node" ] && [ "$shard_node" != "$port" ] || fail "the tenant's shard is on port '$shard_node', not on a worker"
as_tenant "SELECT memory_write('{\"text\": \"Rui plans to keep bees again next spring.\", \"category\": \"hobbies\"}') ->> 'event'" >/dev/null
after=$(as_tenant "SELECT count(*) FROM memory_search('keep bees', top_k => 5)")
[ "$after" = 2 ] || fail "the restored cluster's tenant has $after memories after a new write, not 2"
echo "restored to the restore point on all ${#nodes[@]} nodes: the earlier memory and message back on port $shard_node, the later ones gone, new writes taken"
