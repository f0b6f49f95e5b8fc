#!/usr/bin/env bash
# A library installed under a running server leaves that server alone (scripts/test.sh, layer
# backup). A second server of its own (like `make run`'s: memory_ext preloaded, its worker
# running) serves an open session and a stream of new connections while this tree is rebuilt
# and installed with scripts/install.sh. Afterwards the open session still answers, new
# sessions do too, the worker is the same process, and the server log shows no crash.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib.sh
port=$LIVE_PORT
dir=$MEMORY_EXT_HOME/live-$port
q() { "$PGBIN/psql" -X -q -At -h 127.0.0.1 -p "$port" -U postgres -d memory_ext_live "$@"; }

scripts/cluster.sh destroy "$dir"
trap 'kill $(jobs -p) 2>/dev/null; scripts/cluster.sh destroy "$dir"' EXIT
scripts/cluster.sh start "$dir" "$port"
"$PGBIN/psql" -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres \
  -c "CREATE DATABASE memory_ext_live" -c "ALTER SYSTEM SET memory_ext.database = 'memory_ext_live'" \
  -c "ALTER SYSTEM SET memory_ext.worker_naptime = '1s'"
q -c "CREATE EXTENSION memory_ext CASCADE" >/dev/null
scripts/cluster.sh start "$dir" "$port"   # restart: the worker moves to memory_ext_live
for _ in $(seq 1 20); do
  worker=$(q -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'memory_ext worker'")
  [ -n "$worker" ] && break; sleep 0.5
done
[ -n "$worker" ] || { echo "live install: no worker" >&2; exit 1; }

# An open session that used the library before the install, and keeps using it after.
coproc SESSION { "$PGBIN/psql" -X -q -At -h 127.0.0.1 -p "$port" -U postgres -d memory_ext_live 2>&1; }
echo "SET memory_ext.user_id = 'live'; SELECT memory_write('{\"text\": \"written before the install\"}') ->> 'event';" >&"${SESSION[1]}"
read -r -t 60 first <&"${SESSION[0]}"
[ "$first" = created ] || { echo "live install: open session said \"$first\"" >&2; exit 1; }
# New connections all through the install.
( n=0; while :; do q -c "SET memory_ext.user_id = 'live'" -c "SELECT count_tokens('still here $n')" >/dev/null 2>&1 || echo "fail $n"; n=$((n+1)); sleep 0.1; done ) > .run/live_install_loop.out &
loop=$!

touch src/lib.rs          # a real rebuild, not a copy of the same file
scripts/install.sh >/dev/null 2>&1
sleep 2
kill "$loop"

echo "SELECT memory_write('{\"text\": \"written after the install\"}') ->> 'event';" >&"${SESSION[1]}"
read -r -t 60 after <&"${SESSION[0]}" || after="(no answer)"
new=$(q -c "SET memory_ext.user_id = 'live'" -c "SELECT count(*) FROM memory.items")
worker_after=$(q -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'memory_ext worker'")
crashes=$(grep -cE "terminated by signal|server process .* was terminated|startup process" "$dir/server.log" || true)
failed=$(grep -c '^fail' .run/live_install_loop.out || true)
echo "live install: open session answered \"$after\"; new session sees $new memories; worker $worker -> $worker_after; $failed failed connections; $crashes crash lines in the server log"
[ "$after" = created ] && [ "$new" = 2 ] && [ "$worker" = "$worker_after" ] && [ "$crashes" = 0 ] && [ "$failed" = 0 ]
