#!/usr/bin/env bash
# The Python package's tests (scripts/test.sh layer `clients`), each framework's own tests run as
# published, at the versions pinned here, from PyPI:
#   1. LangGraph's Postgres store tests (tests/ of the langgraph-checkpoint-postgres sdist)
#      against MemoryExtStore and AsyncMemoryExtStore (tests/langgraph_store/conftest.py binds
#      the names they import);
#   2. langgraph-checkpoint-conformance against MemoryExtSaver and AsyncMemoryExtSaver, every
#      capability (tests/conformance/run_conformance.py);
#   3. the OpenAI Agents SDK's session tests (tests/memory of the openai-agents sdist), first on
#      the SDK's own SQLiteSession, then on MemoryExtSession (tests/agents_session/conftest.py);
#   4. langchain-core's chat history tests (its sdist), first on InMemoryChatMessageHistory,
#      then on MemoryExtChatMessageHistory (tests/langchain_history/conftest.py);
#   5. ours: a real Runner on both sessions (test_agents_runner.py); the adapters under
#      parallel calls and hostile text, a real LangGraph graph, memory_tools (test_adapters.py);
#   6. the examples (examples/*.py), each with a scripted model: a fact carried to a new thread;
#   7. the README's examples, each in a fresh virtualenv with only the extra the README names
#      for it (tests/readme_examples.py says which run), and its command-line export and import.
#   8. moving in and out (test_migrate.py): every Letta agent file and mem0 output in tests/data,
#      a LangGraph graph moved from PostgresSaver/PostgresStore and resumed, an Agents SDK
#      SQLiteSession file moved; exported agent files checked by Letta's own schema (letta 0.16.8,
#      the last release of Letta's server, in a virtualenv of its own: its dependencies and
#      LangGraph's do not share one).
#   clients/python/tests/run.sh DSN     DSN: a superuser on a server with memory_ext installed
# The virtualenv and the sdists are cached in $MEMORY_EXT_HOME/clients (outside the checkout):
# a second run installs nothing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pkg=$(dirname "$here")
dsn=${1:?usage: run.sh DSN}
LANGGRAPH_CHECKPOINT_POSTGRES=3.1.1   # whose tests/ we run
OPENAI_AGENTS=0.24.0                  # whose tests/memory we run
LANGCHAIN_CORE=1.8.1                  # whose chat history tests we run
pins="langgraph-checkpoint==4.3.2 langgraph==1.2.22 langgraph-checkpoint-conformance==0.0.2
      langchain-core==$LANGCHAIN_CORE openai-agents==$OPENAI_AGENTS pytest==9.2.0 pytest-asyncio==1.5.0
      pytest-mock==3.17.0 anyio==4.16.0 blockbuster==1.5.26 psycopg[binary]==3.3.9 psycopg-pool==3.3.3
      langgraph-checkpoint-postgres==$LANGGRAPH_CHECKPOINT_POSTGRES"
# Letta's schema (letta/schemas/agent_file.py) and what importing it needs; letta itself with
# --no-deps: the server's full dependency list is hundreds of packages the schema never imports.
# (fastapi 0.115: later ones want an OpenTelemetry newer than the 1.30 Letta pins.)
letta_pins="pydantic==2.14.4 pydantic-settings==2.16.3 cryptography==50.0.2 PyYAML==6.0.4 demjson3==3.0.6
      pathvalidate==3.3.1 SQLAlchemy==2.1.9 fastapi==0.115.12 opentelemetry-api==1.30.0 opentelemetry-sdk==1.30.0
      opentelemetry-exporter-otlp==1.30.0 opentelemetry-instrumentation-requests==0.51b0
      opentelemetry-instrumentation-sqlalchemy==0.51b0 pytz==2026.6 openai==3.57.0 docstring_parser==0.18.0
      mcp==2.3.0 asyncpg==0.32.0 numpy==2.4.6 anthropic==2.14.0 httpx==0.28.1 aiohttp==3.14.5
      marshmallow==4.4.0 marshmallow-sqlalchemy==1.6.0"
LETTA=0.16.8
cache=${MEMORY_EXT_HOME:-/var/tmp/memory_ext}/clients
venv=$cache/venv-$(printf %s "$pins" | md5sum | cut -c1-8)
mkdir -p "$cache"
if [ ! -f "$venv/.complete" ]; then   # a venv cannot be moved: built in place, marked when whole
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q $pins
  touch "$venv/.complete"
fi
"$venv/bin/pip" install -q --no-deps --force-reinstall "$pkg" >/dev/null
letta_venv=$cache/letta-$LETTA-$(printf %s "$letta_pins" | md5sum | cut -c1-8)
if [ ! -f "$letta_venv/.complete" ]; then
  rm -rf "$letta_venv"
  python3 -m venv "$letta_venv"
  "$letta_venv/bin/pip" install -q $letta_pins
  "$letta_venv/bin/pip" install -q --no-deps "letta==$LETTA"
  touch "$letta_venv/.complete"
fi
py=$venv/bin/python
# sdist NAME VERSION: the unpacked sdist's directory (downloaded once).
sdist() {
  local dir="$cache/$1-$2"
  if [ ! -d "$dir/tests" ]; then
    "$venv/bin/pip" download -q --no-deps --no-binary :all: -d "$cache/dl" "$1==$2"
    tar xzf "$cache/dl/$1-$2.tar.gz" -C "$cache"
  fi
  echo "$dir"
}
run=$(mktemp -d)
trap 'rm -rf "$run"' EXIT
pytest=("$py" -m pytest -q -rs -p no:cacheprovider -o asyncio_mode=auto -o asyncio_default_fixture_loop_scope=function)
export MEMORY_EXT_DSN=$dsn
step() { printf '\n--> %s\n' "$*"; }

step "1. LangGraph's Postgres store tests on MemoryExtStore (langgraph-checkpoint-postgres $LANGGRAPH_CHECKPOINT_POSTGRES)"
src=$(sdist langgraph_checkpoint_postgres "$LANGGRAPH_CHECKPOINT_POSTGRES")
mkdir "$run/store" && cp -r "$src/tests" "$run/store/tests" && cp "$here/langgraph_store/conftest.py" "$run/store/conftest.py"
# The one edit: where the server is (the tests name a docker-compose Postgres on port 5441).
uri=$("$py" -c "import sys; from psycopg.conninfo import conninfo_to_dict as c; d=c(sys.argv[1]); print(f\"postgres://{d.get('user','postgres')}@{d.get('host','127.0.0.1')}:{d.get('port','5432')}/{d.get('dbname','postgres')}\")" "$dsn")
sed -i "s|^DEFAULT_URI = .*|DEFAULT_URI = \"$uri\"|; s|^DEFAULT_POSTGRES_URI = .*|DEFAULT_POSTGRES_URI = \"${uri%/*}/\"|" "$run/store/tests/conftest.py"
(cd "$run/store" && "${pytest[@]}" tests/test_store.py tests/test_async_store.py)

step "2. langgraph-checkpoint-conformance on MemoryExtSaver and AsyncMemoryExtSaver"
"$py" "$here/conformance/run_conformance.py" "$dsn"

step "3. the Agents SDK's session tests (openai-agents $OPENAI_AGENTS): on SQLiteSession, then on MemoryExtSession"
src=$(sdist openai_agents "$OPENAI_AGENTS")
mkdir "$run/agents" && cp -r "$src/tests" "$run/agents/tests" && cp "$here/agents_session/conftest.py" "$run/agents/conftest.py"
(cd "$run/agents" && MEMORY_EXT_DSN= "${pytest[@]}" tests/memory/test_session.py tests/memory/test_session_limit.py)
(cd "$run/agents" && "${pytest[@]}" tests/memory/test_session.py tests/memory/test_session_limit.py)

step "4. langchain-core's chat history tests ($LANGCHAIN_CORE): on InMemoryChatMessageHistory, then on MemoryExtChatMessageHistory"
src=$(sdist langchain_core "$LANGCHAIN_CORE")
mkdir "$run/langchain" && cp -r "$src/tests" "$run/langchain/tests" && cp "$here/langchain_history/conftest.py" "$run/langchain/conftest.py"
history_tests=(tests/unit_tests/chat_history tests/unit_tests/runnables/test_history.py)
(cd "$run/langchain" && MEMORY_EXT_DSN= "${pytest[@]}" "${history_tests[@]}")
(cd "$run/langchain" && "${pytest[@]}" "${history_tests[@]}")

step "5. a Runner on both sessions; the adapters under parallel calls and hostile text"
(cd "$here" && "${pytest[@]}" test_agents_runner.py test_adapters.py "${@:2}")

step "6. the examples, each with a scripted model (examples/*.py)"
for example in langgraph_agent agents_sdk langchain_history; do
  echo "examples/$example.py"
  "$py" "$pkg/../../examples/$example.py" > "$run/$example.out" 2>&1 || { cat "$run/$example.out"; exit 1; }
done
grep -q "I am allergic to peanuts" "$run/langgraph_agent.out"   # the fact, found from the other thread
grep -q "daughter is called Mia" "$run/agents_sdk.out"
grep -Eq "\(thread trip-planning, turn [0-9]+\) user: I'm going to Lisbon" "$run/langchain_history.out"

step "7. the README's examples, each in a virtualenv with only its documented extra"
# Fresh for each version of the package's dependencies (pyproject.toml), then kept: what a user
# gets from PyPI today for that extra, not the pins above.
readme_venv() {
  local extra=$1 v
  v=$cache/readme-$extra-$(cat "$pkg/pyproject.toml" | md5sum | cut -c1-8)
  if [ ! -f "$v/.complete" ]; then
    rm -rf "$v" && python3 -m venv "$v"
    "$v/bin/pip" install -q --disable-pip-version-check "$pkg${extra:+[$extra]}" >/dev/null
    touch "$v/.complete"
  fi
  "$v/bin/pip" install -q --disable-pip-version-check --no-deps --force-reinstall "$pkg" >/dev/null
  echo "$v"
}
v=$(readme_venv langgraph)
"$v/bin/python" "$here/readme_examples.py" "$pkg/README.md" "LangGraph store" "$dsn"
"$v/bin/python" "$here/readme_examples.py" "$pkg/README.md" "LangGraph checkpointer" "$dsn"
v=$(readme_venv langchain)
"$v/bin/python" "$here/readme_examples.py" "$pkg/README.md" "LangChain chat history" "$dsn"
# The command line, as the README writes it, with the base package alone.
v=$(readme_venv "")
grep -q '^memory-ext export --dsn "$DSN" --user-id ann > ann.json' "$pkg/README.md"
ann=ann-cli-$$ bob=bob-cli-$$
"$py" - "$dsn" "$ann" <<'PY'
import sys, psycopg
with psycopg.connect(sys.argv[1], autocommit=True) as c:
    c.execute("SELECT set_config('memory_ext.user_id', %s, false)", (sys.argv[2],))
    c.execute("""SELECT memory_write('{"text": "Ann drinks green tea."}')""")
PY
(cd "$run" && export DSN=$dsn PATH=$v/bin:$PATH &&
  memory-ext export --dsn "$DSN" --user-id "$ann" > ann.json && grep -q "green tea" ann.json &&
  memory-ext import --dsn "$DSN" --user-id "$bob" ann.json)

step "8. moving in and out: Letta's agent files, mem0's outputs, LangGraph's Postgres tables, the Agents SDK's SQLite sessions (test_migrate.py)"
(cd "$run" && LETTA_PYTHON="$letta_venv/bin/python" "$py" "$here/test_migrate.py" "$dsn")
