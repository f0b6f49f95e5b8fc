#!/usr/bin/env bash
# Every test layer, in order, stopping at the first failure:
#   1. cargo fmt --check, clippy -D warnings      (style, lints)
#   2. cargo test -p memory_core -p memory_providers -p memory_gateway (the pure core; the model;
#      HTTP clients; the MCP gateway's configuration)
#   3. cargo pgrx test pg$PG                       (#[pg_test] units inside a server)
#   4. pg_regress golden files                     (the user-visible SQL contract)
#   5. client tests through real drivers: Rust postgres (tenancy with real roles, concurrency),
#      Python psycopg, the MCP gateway through the Python MCP SDK, and psql running the README's tour
#   6. backups: pg_dump / pg_restore round trips (custom and plain format) lose and double
#      nothing (tests/python/test_backup.py), the worker runs on a restored database, and a
#      library installed under a running server leaves it and its worker alive
#   7. crashes: kill -9 of client backends and of the postmaster under eight concurrent writers
#      (tests/python/test_crash.py): nothing acknowledged lost, revisions, message numbers,
#      history and statistics whole
#   8. fuzz: a few thousand hostile calls to every API function from a fixed seed
#      (tests/python/test_fuzz.py): no crash, no internal error, nothing half-written
#   9. upgrades from every release (tests/upgrade/run.sh): data intact, the API and the regress
#      suite pass on the upgraded database, its catalog equals a fresh install's; on 17 and 18
#      also pg_upgrade from a 15 cluster with memory_ext data (tests/upgrade/pg_upgrade.sh)
#  10. the background worker and pg_cron (tests/worker): the server restarted with pg_cron
#      preloaded and the worker serving a test database; tests crash and restart it
#  10b. model: every LLM path against a real model, SmolLM2-135M on llama.cpp's server
#      (scripts/llm.sh, tests/worker/tests/model.rs), on the worker layer's server
#  11. Debian packages (scripts/package.sh, tests/package/run.sh): built, linted with lintian,
#      installed by apt into a clean Debian root of the version with Debian's postgresql-NN and
#      pgvector, upgraded from the last release's packages, the README tour run, removed
#  12. Citus (docs/citus.md): Citus built from ../shared/vendor when missing, a coordinator and
#      two workers on 127.0.0.1:$CITUS_PORT.., every table distributed; the psycopg client suite
#      and tests/python/test_citus.py (every API function, tenants apart with real roles, one
#      worker and shard group per single-tenant call, a worker killed under a writer) through
#      the coordinator; then every node restored from a base backup and its WAL archive to one
#      citus_create_restore_point (tests/backup/citus_restore.sh)
#  13. clients: the Python and TypeScript packages (clients/python, clients/js) under their
#      frameworks' own tests, at pinned versions from PyPI and npm (LangGraph's store tests and
#      checkpoint conformance, the Agents SDK's session tests, langchain-core's chat history
#      tests, @langchain/langgraph-checkpoint-validation, the AI SDK's mock model), and the
#      examples (clients/python/tests/run.sh, clients/js/test/run.sh; a virtualenv and
#      node_modules cached outside the checkout)
#  14. inspect: the memory inspector (crates/memory_gateway/src/inspect) in Debian's Chromium
#      driven by Selenium (tests/python/test_inspect.py): log in, search and read the explain
#      bar, edit a block, forget and restore, approve a proposal; read-only tokens, other
#      tenants' ids, CSRF and hostile text refused or shown as text; screenshots into
#      docs/inspector/
# Layers 4-10, 13 and 14 run against a throwaway server on 127.0.0.1:$TEST_PORT, removed on exit.
# PG=17 (or 18) runs them on that PostgreSQL version, on ports and directories of its own
# (scripts/lib.sh); runs on two versions take turns (the HTTP stand-in has one port for all).
# Usage: [PG=NN] scripts/test.sh [layer ...]
#   layers: lint core pgrx regress client backup crash fuzz upgrade worker model package citus
#   clients inspect (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."

# PG, PG_CONFIG, PGBIN, the ports (TEST_PORT, and STANDIN_PORT for the HTTP stand-in of remote
# embedding/LLM endpoints, tests/standin) and the helpers.
. scripts/lib.sh
TEST_DIR=$TEST_PGDATA
OUT=$PWD/.run/pg$PG   # test outputs (README tour) stay in the checkout, ignored by git
mkdir -p "$OUT"
# The Citus cluster of layer 12: its own ports and directory, removed on exit.
CITUS_DIR=$MEMORY_EXT_HOME/citus-$CITUS_PORT
layers=${*:-lint core pgrx regress client backup crash fuzz upgrade worker model package citus clients inspect}

step() { printf '\n==> %s\n' "$*"; }
# Each layer's wall time, printed as it ends and together at the end (a new layer pays for
# itself: docs/testing.md keeps the figures).
timings=() layer_name= layer_began=$SECONDS
want() {
  [[ " $layers " == *" $1 "* ]] || return 1
  [ "$layer_name" = "$1" ] && return 0
  end_layer
  layer_name=$1 layer_began=$SECONDS
}
end_layer() {
  [ -n "$layer_name" ] || return 0
  timings+=("$layer_name $((SECONDS - layer_began))s")
  printf '==> layer %s: %d s\n' "$layer_name" $((SECONDS - layer_began))
  layer_name=
}
psql_test() { psql_at "$TEST_PORT" "$@"; }
# What the layers start, removed on exit: each is named here once it has been started.
standin_pid= test_dir= run_dir= run_port= citus_dir=
# make run's server of the client layer, and the MCP configuration run.sh writes beside it.
stop_run() { scripts/cluster.sh destroy "$run_dir"; rm -f "$(dirname "$run_dir")/mcp-$run_port.json"; run_dir=; }
# One run at a time on these ports: a second run would destroy the first one's servers (the
# throwaway server, make run's, the Citus cluster) as it starts its own. Lint and core start none.
lock=$MEMORY_EXT_HOME/test-$TEST_PORT.running
cleanup() {
  [ "$(cat "$lock" 2>/dev/null)" != $$ ] || rm -f "$lock"
  [ -z "$standin_pid" ] || kill "$standin_pid" 2>/dev/null || true
  [ -z "$test_dir" ] || scripts/cluster.sh destroy "$test_dir"
  [ -z "$run_dir" ] || stop_run
  [ -z "$citus_dir" ] || scripts/citus.sh destroy "$citus_dir"
  [ -z "${model_dir:-}" ] || scripts/llm.sh stop "$model_dir"
}
trap cleanup EXIT
if [ -n "$(tr ' ' '\n' <<<"$layers" | grep -vx 'lint\|core')" ]; then
  other=$(cat "$lock" 2>/dev/null || true)
  if [ -n "$other" ] && [ "$other" != $$ ] && kill -0 "$other" 2>/dev/null; then
    echo "another scripts/test.sh (pid $other) is using 127.0.0.1:$TEST_PORT and its servers; wait for it to end" >&2
    exit 1
  fi
  mkdir -p "$MEMORY_EXT_HOME" && echo $$ > "$lock"
fi

if want lint; then
  step "cargo fmt --check"
  cargo fmt --all -- --check
  step "cargo clippy -D warnings"
  cargo clippy --workspace --all-targets -- -D warnings
  if [ "$PG" != 15 ]; then
    step "cargo clippy -D warnings, memory_ext for PostgreSQL $PG"
    cargo clippy -p memory_ext --all-targets --no-default-features --features "pg$PG" -- -D warnings
  fi
  step "one version in Cargo.toml and the clients' manifests (scripts/version.sh check)"
  scripts/version.sh check
  step "docs/architecture.md's function index is current (scripts/functions.py --check)"
  python3 scripts/functions.py --check
  step "released upgrade scripts are never edited (tests/upgrade/check_released.sh)"
  tests/upgrade/check_released.sh
fi

if want core; then
  step "Postgres-free crates: cargo test -p memory_core -p memory_providers -p memory_gateway"
  cargo test -p memory_core -p memory_providers -p memory_gateway
fi

if want pgrx; then
  step "cargo pgrx test pg$PG (server runs as postgres: initdb refuses root)"
  pgdata=$(mktemp -d)
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$pgdata"
  runas=(); [ "$(id -u)" = 0 ] && runas=(--runas postgres)
  # Its build is installed by rename (scripts/cargo-pgrx), like every other install here.
  CARGO_PGRX=$PWD/scripts/cargo-pgrx cargo pgrx test "pg$PG" -p memory_ext "${runas[@]}" --pgdata "$pgdata"
  rm -rf "$pgdata"
fi

if want regress || want client || want backup || want crash || want fuzz || want upgrade || want worker || want model || want citus || want clients || want inspect; then
  step "install memory_ext into $("$PG_CONFIG" --pkglibdir) (by rename: scripts/install.sh)"
  scripts/install.sh
  step "throwaway server on 127.0.0.1:$TEST_PORT"
  scripts/cluster.sh destroy "$TEST_DIR"
  step "HTTP stand-in on 127.0.0.1:$STANDIN_PORT"
  cargo build -q -p memory_ext_standin
  "$CARGO_TARGET_DIR"/debug/memory_ext_standin "$STANDIN_PORT" > "$OUT/standin.log" 2>&1 &
  standin_pid=$!
  sleep 0.3
  kill -0 "$standin_pid" 2>/dev/null || {
    cat "$OUT/standin.log" >&2
    echo "the stand-in could not start on 127.0.0.1:$STANDIN_PORT (is another version's test run using it?)" >&2
    exit 1
  }
  test_dir=$TEST_DIR
  # With a Rust backtrace setting in its environment, as a careless service file might give it:
  # the tests check that no backtrace reaches a client anyway.
  CLUSTER_ENV="RUST_BACKTRACE=1" scripts/cluster.sh start "$TEST_DIR" "$TEST_PORT"
fi

if want regress; then
  step "golden SQL: no expected output holds a day near today's (tests/pg_regress/check_days.sh)"
  # A golden recorded with the day it was run fails the day after: it must mask that day.
  tests/pg_regress/check_days.sh tests/pg_regress/expected/*.out tests/upgrade/*.out
  step "golden SQL: pg_regress tests/pg_regress"
  # FILE=entities (make test LAYERS=regress FILE=entities) runs those files only.
  tests=${FILE:-$(cd tests/pg_regress/sql && ls *.sql | sed 's/\.sql$//' | sort)}
  tests=${tests//,/ }
  if ! "$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress" \
      --inputdir=tests/pg_regress --outputdir=tests/pg_regress --bindir="$PGBIN" \
      --host=127.0.0.1 --port="$TEST_PORT" --user=postgres --dbname=memory_ext_regress \
      --create-role=regress_memory_user --load-extension=vector --load-extension=memory_ext $tests; then
    cat tests/pg_regress/regression.diffs 2>/dev/null | head -200
    exit 1
  fi
fi

if want client; then
  step "client tests: Rust postgres driver against the server"
  fresh_db "$TEST_PORT" memory_ext_client
  MEMORY_EXT_TEST_DSN="host=127.0.0.1 port=$TEST_PORT user=postgres dbname=memory_ext_client" \
    cargo test -p memory_ext_client_tests -- --test-threads=4
  step "client tests: Python psycopg against the server"
  fresh_db "$TEST_PORT" memory_ext_py
  MEMORY_EXT_TEST_DSN="host=127.0.0.1 port=$TEST_PORT user=postgres dbname=memory_ext_py" \
    python3 tests/python/test_psycopg.py
  step "client tests: agent tools through psycopg (JSON Schema validator, Anthropic memory tool transcript)"
  MEMORY_EXT_TEST_DSN="host=127.0.0.1 port=$TEST_PORT user=postgres dbname=memory_ext_py" \
  MEMORY_EXT_STANDIN="http://127.0.0.1:$STANDIN_PORT" python3 tests/python/test_tools.py
  step "client tests: the surfaces a model drives, in parallel and with hostile text (tests/python/test_agents.py)"
  MEMORY_EXT_TEST_DSN="host=127.0.0.1 port=$TEST_PORT user=postgres dbname=memory_ext_py" \
    python3 tests/python/test_agents.py
  step "client tests: the MCP gateway with the Python MCP SDK over stdio and streamable HTTP (tests/python/test_mcp.py)"
  cargo build -q -p memory_gateway
  MEMORY_EXT_TEST_DSN="host=127.0.0.1 port=$TEST_PORT user=postgres dbname=memory_ext_py" \
  MEMORY_MCP_BIN="$CARGO_TARGET_DIR/debug/memory-mcp" python3 tests/python/test_mcp.py
  step "client tests: the MCP gateway under slow, hostile and flooding clients (tests/python/test_mcp_limits.py)"
  MEMORY_EXT_TEST_DSN="host=127.0.0.1 port=$TEST_PORT user=postgres dbname=memory_ext_py" \
  MEMORY_MCP_BIN="$CARGO_TARGET_DIR/debug/memory-mcp" python3 tests/python/test_mcp_limits.py
  step "client tests: the gateway's /metrics after a workload of known calls (tests/python/test_metrics.py)"
  MEMORY_EXT_TEST_DSN="host=127.0.0.1 port=$TEST_PORT user=postgres dbname=memory_ext_py" \
  MEMORY_MCP_BIN="$CARGO_TARGET_DIR/debug/memory-mcp" python3 tests/python/test_metrics.py
  step "client tests: hardening through psycopg (server log, environment, concurrent tenants)"
  MEMORY_EXT_TEST_DSN="host=127.0.0.1 port=$TEST_PORT user=postgres dbname=memory_ext_py" \
  MEMORY_EXT_TEST_PGDATA="$TEST_DIR" MEMORY_EXT_STANDIN="http://127.0.0.1:$STANDIN_PORT" python3 tests/python/test_hardening.py
  step "client: the README's tour, pasted into psql"
  fresh_db "$TEST_PORT" memory_ext_tour
  readme_tour > "$OUT/tour.sql"
  [ -s "$OUT/tour.sql" ] || { echo "README tour not found" >&2; exit 1; }
  psql_test -d memory_ext_tour -f "$OUT/tour.sql" > "$OUT/tour.out"
  echo "tour ran: $(grep -c '' "$OUT/tour.sql") lines of SQL, output in $OUT/tour.out"
  step "client: make run's script (scripts/run.sh) on a server of its own, run three times"
  # On its own port and directory, so a `make run` server of the user's is never touched.
  run_port=$((TEST_PORT + 6)); run_dir=$MEMORY_EXT_HOME/run-test-$run_port
  psql_demo() { psql_at "$run_port" -d memory_demo "$@"; }
  scripts/cluster.sh destroy "$run_dir"
  RUN_PORT=$run_port RUN_PGDATA=$run_dir scripts/run.sh > "$OUT/run.out"
  grep -q "memory_ext is running" "$OUT/run.out"
  # The inspector token it prints opens the inspector of the gateway it configures.
  inspect_token=$(sed -n 's/.*log in with the token \([0-9a-f]*\).*/\1/p' "$OUT/run.out")
  mcp_listen=127.0.0.1:$((TEST_PORT + 7))
  "$CARGO_TARGET_DIR"/debug/memory-mcp http --config "$(dirname "$run_dir")/mcp-$run_port.json" \
    --listen "$mcp_listen" > "$OUT/run-mcp.log" 2>&1 &
  mcp_pid=$!
  for _ in $(seq 1 50); do curl -sf "http://$mcp_listen/healthz" >/dev/null && break; sleep 0.2; done
  curl -s -o /dev/null -c "$OUT/run-cookies" -w '%{http_code}' -d "token=$inspect_token" "http://$mcp_listen/inspect/login" | grep -q 303
  curl -s -b "$OUT/run-cookies" "http://$mcp_listen/inspect/" | grep -q "<h1>Overview</h1>"
  kill "$mcp_pid"; wait "$mcp_pid" 2>/dev/null || true
  echo "run.sh: the inspector token it printed opened the inspector's overview"
  psql_demo -c "SET memory_ext.user_id = 'demo-user'" -c "SELECT memory_write('{\"text\": \"run.sh keeps me\"}')" > /dev/null
  # A second run keeps the demo database and what was written to it.
  RUN_PORT=$run_port RUN_PGDATA=$run_dir scripts/run.sh > "$OUT/run.out"
  [ "$(psql_demo -tAc "SELECT count(*) FROM memory.items WHERE text = 'run.sh keeps me'")" = 1 ]
  # One made by another build of the same version is made again, not left half-working.
  psql_demo -c "COMMENT ON DATABASE memory_demo IS 'memory_ext another build'"
  RUN_PORT=$run_port RUN_PGDATA=$run_dir scripts/run.sh > "$OUT/run.out"
  grep -q "made by another build" "$OUT/run.out"
  [ "$(psql_demo -tAc "SELECT count(*) FROM memory.items WHERE text = 'run.sh keeps me'")" = 0 ]
  stop_run
  echo "run.sh: started, kept the demo's data on a second run, remade a database of another build"
fi

if want backup; then
  step "backups: pg_dump / pg_restore round trips (tests/python/test_backup.py)"
  fresh_db "$TEST_PORT" memory_ext_backup
  MEMORY_EXT_TEST_DSN="host=127.0.0.1 port=$TEST_PORT user=postgres dbname=memory_ext_backup" \
  MEMORY_EXT_PGBIN="$PGBIN" python3 tests/python/test_backup.py
  step "backups: the worker runs on a restored database"
  psql_test -d postgres -c "ALTER SYSTEM SET memory_ext.database = 'memory_ext_backup_restored_custom'" \
    -c "ALTER SYSTEM SET memory_ext.worker_naptime = '1s'"
  CLUSTER_ENV="RUST_BACKTRACE=1" scripts/cluster.sh start "$TEST_DIR" "$TEST_PORT"
  TEST_PORT=$TEST_PORT tests/backup/worker_on_restored.sh
  psql_test -d postgres -c "ALTER SYSTEM RESET memory_ext.database" -c "ALTER SYSTEM RESET memory_ext.worker_naptime"
  step "live install: a rebuilt library installed under a running server (tests/backup/live_install.sh)"
  tests/backup/live_install.sh
fi

if want clients; then
  fresh_db "$TEST_PORT" memory_ext_clients
  step "clients: the Python package under its frameworks' own tests (clients/python/tests/run.sh)"
  clients/python/tests/run.sh "host=127.0.0.1 port=$TEST_PORT user=postgres dbname=memory_ext_clients"
  step "clients: the TypeScript package under its frameworks' own tests (clients/js/test/run.sh)"
  clients/js/test/run.sh "host=127.0.0.1 port=$TEST_PORT user=postgres dbname=memory_ext_clients"
fi

if want inspect; then
  step "inspect: the memory inspector in Debian's Chromium through Selenium (tests/python/test_inspect.py)"
  fresh_db "$TEST_PORT" memory_ext_inspect
  cargo build -q -p memory_gateway
  MEMORY_EXT_TEST_DSN="host=127.0.0.1 port=$TEST_PORT user=postgres dbname=memory_ext_inspect" \
  MEMORY_MCP_BIN="$CARGO_TARGET_DIR/debug/memory-mcp" python3 tests/python/test_inspect.py
fi

if want crash; then
  step "crashes: kill -9 of backends and of the postmaster under concurrent writers (tests/python/test_crash.py)"
  fresh_db "$TEST_PORT" memory_ext_crash
  MEMORY_EXT_TEST_DSN="host=127.0.0.1 port=$TEST_PORT user=postgres dbname=memory_ext_crash" \
  MEMORY_EXT_TEST_PGDATA="$TEST_DIR" MEMORY_EXT_TEST_PORT="$TEST_PORT" python3 tests/python/test_crash.py
fi

if want fuzz; then
  step "fuzz: hostile calls to every API function (tests/python/test_fuzz.py, fixed seed)"
  fresh_db "$TEST_PORT" memory_ext_fuzz
  cargo build -q -p memory_gateway
  MEMORY_EXT_TEST_DSN="host=127.0.0.1 port=$TEST_PORT user=postgres dbname=memory_ext_fuzz" \
  MEMORY_MCP_BIN="$CARGO_TARGET_DIR/debug/memory-mcp" \
    python3 tests/python/test_fuzz.py "${FUZZ_CALLS:-10000}" "${FUZZ_SEED:-15}"
fi

if want upgrade; then
  step "upgrades from every release (tests/upgrade/run.sh)"
  TEST_DIR="$TEST_DIR" TEST_PORT="$TEST_PORT" tests/upgrade/run.sh
  if [ "$PG" != 15 ]; then
    step "pg_upgrade from a PostgreSQL 15 cluster with memory_ext data to $PG (tests/upgrade/pg_upgrade.sh)"
    tests/upgrade/pg_upgrade.sh
  fi
fi

# The server of the worker and model layers: memory_ext and pg_cron preloaded, the worker
# serving memory_ext_worker, a fresh database for each layer (the worker layer leaves threads
# and runs the worker would otherwise go on with, with the model, before the model layer's).
worker_ready=
worker_server() {
  if [ -n "$worker_ready" ]; then
    step "a fresh memory_ext_worker database (its worker and pg_cron reconnect)"
    psql_test -d postgres -c "DROP DATABASE memory_ext_worker WITH (FORCE)"
    fresh_db "$TEST_PORT" memory_ext_worker
    return 0
  fi
  step "worker: restart with memory_ext.database = memory_ext_worker and pg_cron preloaded"
  fresh_db "$TEST_PORT" memory_ext_worker
  # The worker's own schedule without consolidation: that is left to pg_cron and to
  # memory_worker_run(), as docs/operations.md "Scheduling with pg_cron" sets it.
  psql_test -d postgres \
    -c "ALTER SYSTEM SET shared_preload_libraries = memory_ext, pg_cron" \
    -c "ALTER SYSTEM SET memory_ext.database = 'memory_ext_worker'" \
    -c "ALTER SYSTEM SET memory_ext.worker_jobs = 'ttl_sweep,purge,backfill'" \
    -c "ALTER SYSTEM SET memory_ext.worker_naptime = '1s'" \
    -c "ALTER SYSTEM SET memory_ext.ttl_interval = '2s'"
  scripts/cluster.sh start "$TEST_DIR" "$TEST_PORT"
  # pg_cron's settings exist once it is loaded: a second restart for them.
  psql_test -d postgres \
    -c "ALTER SYSTEM SET cron.database_name = 'memory_ext_worker'" \
    -c "ALTER SYSTEM SET cron.use_background_workers = on"
  scripts/cluster.sh start "$TEST_DIR" "$TEST_PORT"
  worker_ready=1
}
worker_env=(MEMORY_EXT_TEST_DSN="host=127.0.0.1 port=$TEST_PORT user=postgres dbname=memory_ext_worker"
  MEMORY_EXT_TEST_PGDATA="$TEST_DIR" MEMORY_EXT_TEST_PORT="$TEST_PORT")

if want worker; then
  worker_server
  # WORKER_TESTS="--test summaries" scripts/test.sh worker runs those files only.
  env "${worker_env[@]}" cargo test -p memory_ext_worker_tests ${WORKER_TESTS:---test worker --test extract --test refine --test summaries} -- --test-threads=1
fi

if want model; then
  worker_server
  # A real model for every LLM path (tests/worker/tests/model.rs): SmolLM2-135M on llama.cpp's
  # server, scripts/llm.sh.
  step "model: SmolLM2-135M on 127.0.0.1:$MODEL_PORT (scripts/llm.sh)"
  model_dir=$MEMORY_EXT_HOME/llm-$MODEL_PORT
  scripts/llm.sh start "$model_dir" "$MODEL_PORT" smollm2
  env "${worker_env[@]}" MEMORY_EXT_TEST_LLM_URL="http://127.0.0.1:$MODEL_PORT/v1" \
    MEMORY_EXT_TEST_LLM_DIR="$model_dir" MEMORY_EXT_TEST_LLM_PORT="$MODEL_PORT" \
    cargo test -p memory_ext_worker_tests --test model -- --test-threads=1
fi

if want package; then
  step "Debian packages for PostgreSQL $PG (scripts/package.sh), linted"
  debs=$PWD/target/debian/pg$PG
  rm -rf "$debs"
  scripts/package.sh "$debs"
  ls -l "$debs" | awk 'NR > 1 {print "  " $5 " bytes  " $9}'
  # lintian's errors fail the layer; its warnings are printed. A package byte for byte the same
  # as one linted before (the models package, copied from scripts/package.sh's cache) is not
  # linted again.
  lint=() stamps=()
  for deb in "$debs"/*.deb; do
    stamp=$MEMORY_EXT_HOME/debian-cache/linted/$(basename "$deb").$(md5sum < "$deb" | cut -c1-12)
    [ -f "$stamp" ] && { echo "  $(basename "$deb"): linted before ($stamp)"; continue; }
    lint+=("$deb") stamps+=("$stamp")
  done
  if [ ${#lint[@]} -gt 0 ]; then
    lintian --fail-on error "${lint[@]}"
    mkdir -p "$MEMORY_EXT_HOME/debian-cache/linted" && touch "${stamps[@]}"
  fi
  step "the packages as a DBA meets them, in a clean Debian root (tests/package/run.sh)"
  # The last release's packages, from its build (cached by tests/upgrade/run.sh, or built here).
  # Only a shallow clone may lack the release's commit: then the upgrade by apt is not tested.
  if ! prev=$(tests/package/release.sh); then
    [ "$(git rev-parse --is-shallow-repository)" = true ] || exit 1
    echo "package upgrade: NOT TESTED, the last release's commit is not in this shallow clone"
    prev=
  fi
  tests/package/run.sh "$debs" $prev
fi

citus_available() {
  [ -f "$("$PG_CONFIG" --pkglibdir)/citus.so" ] || [ -f "${CITUS_VENDOR:-$PWD/../shared/vendor}/citus-13.2.2.tar.gz" ]
}
if want citus && ! citus_available; then
  # Citus is built from the source vendored next to this checkout (../shared/vendor); a checkout
  # without it cannot run this layer. Said loudly, not passed silently.
  step "Citus: SKIPPED: not installed and ${CITUS_VENDOR:-../shared/vendor}/citus-13.2.2.tar.gz not found"
  layers="${layers/citus/} (citus SKIPPED)"
elif want citus; then
  step "$(scripts/deps.sh citus | sed "s/^==> //")"
  step "Citus cluster: coordinator on 127.0.0.1:$CITUS_PORT, workers on the next two ports"
  scripts/citus.sh destroy "$CITUS_DIR"
  citus_dir=$CITUS_DIR
  scripts/citus.sh start "$CITUS_DIR" "$CITUS_PORT"
  citus_dsn="host=127.0.0.1 port=$CITUS_PORT user=postgres dbname=postgres"
  # A one-node install adopting Citus: rows written before distributing (tests/data/citus_before.sql)
  # must move into the shards (test_citus.py reads them back).
  "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$citus_dsn" -c "CREATE EXTENSION memory_ext CASCADE" >/dev/null
  "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$citus_dsn" -f tests/data/citus_before.sql >/dev/null
  "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$citus_dsn" -c "SELECT memory_citus_distribute() ->> 'model' AS registered_model"
  step "Citus: the psycopg client suite through the coordinator (tests/python/test_psycopg.py)"
  MEMORY_EXT_TEST_DSN="$citus_dsn" python3 tests/python/test_psycopg.py
  step "Citus: API, tenancy, routing and a killed worker through the coordinator (tests/python/test_citus.py)"
  MEMORY_EXT_TEST_DSN="$citus_dsn" MEMORY_EXT_CITUS_DIR="$CITUS_DIR" MEMORY_EXT_PGBIN="$PGBIN" \
    MEMORY_EXT_STANDIN="http://127.0.0.1:$STANDIN_PORT" python3 tests/python/test_citus.py
  step "Citus: every node restored from its backup to one restore point (tests/backup/citus_restore.sh)"
  tests/backup/citus_restore.sh "$CITUS_DIR" "$CITUS_PORT"
  scripts/citus.sh destroy "$CITUS_DIR"
fi

end_layer
step "all requested layers passed: $layers"
echo "wall time per layer: ${timings[*]}; total $SECONDS s"
