#!/usr/bin/env bash
# The TypeScript package's tests (scripts/test.sh layer `clients`, after the Python package's):
#   1. dist/ (committed, so that `npm install --install-links ./clients/js` needs no build) is
#      what `tsc` makes of src/ now;
#   2. vitest: @langchain/langgraph-checkpoint-validation as published against MemoryExtSaver
#      (test/saver.test.ts), the AI SDK's own mock model driving generateText through tool calls
#      (test/tools.test.ts), the store under the cases LangGraph's store tests use
#      (test/store.test.ts);
#   3. the package installed into a new project with the README's own commands (`npm pack` the
#      folder, `npm install` the tarball with the frameworks), which must survive a later
#      `npm install`, `npm ci` and `npm ls`; the examples (examples/ai_sdk_agent.mjs,
#      examples/langgraph_js_agent.mjs) run from there.
#   clients/js/test/run.sh DSN    DSN: libpq "key=value" or postgres:// URI, a superuser
# node_modules is cached in $MEMORY_EXT_HOME/clients (outside the checkout), keyed by
# package-lock.json, and linked in: a second run installs nothing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pkg=$(dirname "$here")
repo=$(cd "$pkg/../.." && pwd)
dsn=${1:?usage: run.sh DSN}
cache=${MEMORY_EXT_HOME:-/var/tmp/memory_ext}/clients/js-$(md5sum < "$pkg/package-lock.json" | cut -c1-8)
if [ ! -f "$cache/.complete" ]; then
  rm -rf "$cache" && mkdir -p "$cache"
  cp "$pkg/package.json" "$pkg/package-lock.json" "$cache/"
  (cd "$cache" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error)
  touch "$cache/.complete"
fi
# A developer's own `npm install` (a real directory) is left as it is.
if [ ! -d "$pkg/node_modules" ] || [ -L "$pkg/node_modules" ]; then
  ln -sfn "$cache/node_modules" "$pkg/node_modules"
fi
run=$(mktemp -d)
trap 'rm -rf "$run"' EXIT
step() { printf '\n--> %s\n' "$*"; }
cd "$pkg"

step "1. dist/ is the build of src/"
npx tsc -p tsconfig.json --outDir "$run/dist"
diff -r "$run/dist" dist || { echo "clients/js/dist is stale: run 'npm run build' in clients/js and commit it" >&2; exit 1; }

step "2. vitest: checkpointer validation, the AI SDK's mock model, the store's cases"
NO_COLOR=1 MEMORY_EXT_DSN=$dsn npx vitest run

step "3. installed with the README's commands (npm pack, npm install the tarball), then npm install, npm ci, npm ls; the examples"
uri=$(node -e '
  const d = process.argv[1];
  if (/^postgres(ql)?:\/\//.test(d)) { console.log(d); process.exit(0); }
  const kv = Object.fromEntries(d.trim().split(/\s+/).map((p) => p.split("=", 2)));
  console.log(`postgres://${kv.user ?? "postgres"}@${kv.host ?? "127.0.0.1"}:${kv.port ?? 5432}/${kv.dbname ?? "postgres"}`);
' "$dsn")
mkdir "$run/app" && cd "$run/app"
printf '{"name": "app", "private": true, "type": "module"}\n' > package.json
versions=$(node -e 'const d = require(process.argv[1]).devDependencies; for (const p of ["ai", "@langchain/langgraph", "@langchain/core", "pg"]) console.log(`${p}@${d[p]}`)' "$pkg/package.json")
npm=(npm --no-audit --no-fund --prefer-offline --loglevel=error)
# The README's two commands, as written there (with the versions this package is tested with).
grep -q '^npm pack /path/to/memory_ext/clients/js ' "$pkg/README.md"
grep -q '^npm install ./memory-ext-\*.tgz ai pg ' "$pkg/README.md"
npm pack --loglevel=error "$pkg" >/dev/null
"${npm[@]}" install ./memory-ext-*.tgz $versions
# A user's later installs keep it whole: another package, a clean install from the lock file.
"${npm[@]}" install
"${npm[@]}" ci
npm ls --depth=0 >/dev/null
[ -f node_modules/memory-ext/package.json ] && [ ! -L node_modules/memory-ext ]
for example in ai_sdk_agent langgraph_js_agent; do
  echo "examples/$example.mjs"
  cp "$repo/examples/$example.mjs" .
  MEMORY_EXT_DSN=$uri node "$example.mjs" > "$example.out" 2>&1 || { cat "$example.out"; exit 1; }
done
grep -q "Dana is training for the Berlin marathon" ai_sdk_agent.out     # found from the other thread
grep -q "thread friday" langgraph_js_agent.out && grep -q "From memory: I keep bees on the roof" langgraph_js_agent.out
