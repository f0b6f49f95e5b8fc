#!/usr/bin/env bash
# The background worker serves a database restored from a dump (scripts/test.sh, layer backup:
# the server was restarted with memory_ext.database = memory_ext_backup_restored_custom). A
# requested TTL sweep must run there and be recorded in the restored worker bookkeeping.
set -euo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"
q() { "$PGBIN/psql" -X -At -h 127.0.0.1 -p "$TEST_PORT" -U postgres -d memory_ext_backup_restored_custom -c "$1"; }
before=$(q "SELECT runs FROM memory.worker_status WHERE job = 'ttl_sweep'")
q "SELECT memory_worker_run('ttl_sweep')" >/dev/null
for _ in $(seq 1 30); do
  now=$(q "SELECT runs || ' ' || coalesce(worker_database, '-') || ' ' || (requested_at IS NULL) FROM memory.worker_status WHERE job = 'ttl_sweep'")
  read -r runs db done <<< "$now"
  if [ "$runs" -gt "$before" ] && [ "$db" = memory_ext_backup_restored_custom ] && [ "$done" = true ]; then
    echo "worker ran ttl_sweep on the restored database (runs $before -> $runs)"
    exit 0
  fi
  sleep 1
done
echo "worker did not run on the restored database: $now (runs before: $before)" >&2
exit 1
