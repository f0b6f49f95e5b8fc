#!/usr/bin/env bash
# The Python package's tests (scripts/test.sh layer `clients`): LangGraph's own Postgres store
# tests, from the sdist of langgraph-checkpoint-postgres on PyPI at the version pinned here, run
# against MemoryExtStore (tests/langgraph_store/conftest.py binds the names they import).
#   clients/python/tests/run.sh DSN     DSN: a superuser on a server with memory_ext installed
# The virtualenv and the sdist are cached in $MEMORY_EXT_HOME/clients (outside the checkout):
# a second run installs nothing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pkg=$(dirname "$here")
dsn=${1:?usage: run.sh DSN}
LANGGRAPH_CHECKPOINT=4.3.2
LANGGRAPH_CHECKPOINT_POSTGRES=3.1.1   # whose tests/ we run
pins="langgraph-checkpoint==$LANGGRAPH_CHECKPOINT langchain-core==1.8.1 pytest==9.2.0 pytest-asyncio==1.5.0 pytest-mock==3.17.0 anyio==4.16.0 psycopg[binary]==3.3.9 psycopg-pool==3.3.3"
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
sdist=$cache/langgraph_checkpoint_postgres-$LANGGRAPH_CHECKPOINT_POSTGRES
if [ ! -d "$sdist/tests" ]; then
  "$venv/bin/pip" download -q --no-deps --no-binary :all: -d "$cache/dl" "langgraph-checkpoint-postgres==$LANGGRAPH_CHECKPOINT_POSTGRES"
  tar xzf "$cache/dl/langgraph_checkpoint_postgres-$LANGGRAPH_CHECKPOINT_POSTGRES.tar.gz" -C "$cache"
fi
run=$(mktemp -d)
trap 'rm -rf "$run"' EXIT
cp -r "$sdist/tests" "$run/tests"
cp "$here/langgraph_store/conftest.py" "$run/conftest.py"
# The one edit: where the server is (the tests name a docker-compose Postgres on port 5441).
uri=$(python3 -c "import sys; from psycopg.conninfo import conninfo_to_dict as c; d=c(sys.argv[1]); print(f\"postgres://{d.get('user','postgres')}@{d.get('host','127.0.0.1')}:{d.get('port','5432')}/{d.get('dbname','postgres')}\")" "$dsn" 2>/dev/null ||
      "$venv/bin/python" -c "import sys; from psycopg.conninfo import conninfo_to_dict as c; d=c(sys.argv[1]); print(f\"postgres://{d.get('user','postgres')}@{d.get('host','127.0.0.1')}:{d.get('port','5432')}/{d.get('dbname','postgres')}\")" "$dsn")
sed -i "s|^DEFAULT_URI = .*|DEFAULT_URI = \"$uri\"|; s|^DEFAULT_POSTGRES_URI = .*|DEFAULT_POSTGRES_URI = \"${uri%/*}/\"|" "$run/tests/conftest.py"
cd "$run"
"$venv/bin/python" -m pytest -q -rs -p no:cacheprovider -o asyncio_mode=auto \
  tests/test_store.py tests/test_async_store.py "${@:2}"
