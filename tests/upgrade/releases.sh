# Every release of memory_ext and how to build one (sourced by tests/upgrade/run.sh and
# tests/package/release.sh, after scripts/lib.sh, from the checkout's top).

# version=commit of every release (each also tagged v<version>); the current version is
# Cargo.toml's. On 17 and 18 only the last one: memory_ext builds for them from 0.9.0 on.
RELEASES=("0.1.0=6e87ca2" "0.2.0=ab265c9" "0.3.0=8e8c5ff" "0.4.0=d751432" "0.5.0=7c1a6d4" "0.6.0=0f6ea0b" "0.7.0=1a50eca" "0.8.0=a82101e" "0.9.0=31add44" "0.10.0=2d06bd1" "0.11.0=470cd4b" "0.12.0=253f0e1")
[ "$PG" = 15 ] || RELEASES=("${RELEASES[-1]}")
RELEASE_CACHE=${MEMORY_EXT_RELEASE_CACHE:-$MEMORY_EXT_HOME/releases}

clean_ours() { cargo clean -q -p memory_ext -p memory_core -p memory_providers; }

# The last release before 0.9.0 is built for PostgreSQL 17 and 18 with what src/pg/version.rs
# carries, applied to its tree: the version features, PGPROC's lxid, pqsignal_be and GUC strings
# in GUC memory. Only Rust that compiles against the server changes; the release's SQL, which is
# what an upgrade starts from, stays its own.
port_tree() {
  local t=$1
  grep -q '^pg17 = ' "$t/Cargo.toml" ||
    sed -i 's|^pg15 = \["pgrx/pg15", "pgrx-tests/pg15"\]$|&\npg17 = ["pgrx/pg17", "pgrx-tests/pg17"]\npg18 = ["pgrx/pg18", "pgrx-tests/pg18"]|' "$t/Cargo.toml"
  grep -rl 'MyProc).lxid' "$t/src" | xargs -r sed -i 's/(\*pg_sys::MyProc)\.lxid/(*pg_sys::MyProc).vxid.lxid/'
  if [ "$PG" = 18 ]; then grep -rl 'pg_sys::pqsignal(' "$t/src" | xargs -r sed -i 's/pg_sys::pqsignal(/pg_sys::pqsignal_be(/'; fi
  sed -i 's/libc::strdup(/pg_sys::guc_strdup(pg_sys::LOG as i32, /; s/libc::free(v as \*mut c_void)/pg_sys::guc_free(v as *mut c_void)/' "$t/src/gucs.rs"
}

# release_stage VERSION COMMIT: prints the directory holding that release's build for
# PostgreSQL $PG (`cargo pgrx package --debug --out-dir`), building it when it is not there yet.
# A release's build depends only on its commit, the PostgreSQL it is built for and the compiler:
# kept outside the checkout under those, a machine builds each release once, and a later run (a
# fresh clone included) takes it from there. Fails when the commit is not in the repository.
release_stage() {
  local version=$1 commit
  commit=$(git rev-parse --verify -q "v$version^{commit}" || git rev-parse --verify -q "$2^{commit}") || return 1
  local stage
  stage=$RELEASE_CACHE/$version-${commit:0:12}-pg$("$PG_CONFIG" --version | awk '{print $2}')-$(rustc -V | md5sum | cut -c1-8)
  if [ ! -f "$stage/.built" ]; then
    local tree=target/release-trees/$version
    [ "$PG" = 15 ] || tree=$tree-pg$PG
    if [ ! -d "$tree" ]; then
      git worktree prune
      git worktree add --detach "$tree" "$commit" >/dev/null 2>&1
      [ "$PG" = 15 ] || port_tree "$tree"
    fi
    rm -rf "$stage"
    # The release tree shares this tree's target directory, so only our own crates recompile.
    # Their artifacts must go before each build: cargo's dep-info names source files by absolute
    # path, so the other tree's artifacts would otherwise pass for up to date.
    clean_ours
    (cd "$tree" && cargo pgrx package --debug --pg-config "$PG_CONFIG" --out-dir "$stage" >/dev/null 2>&1) || return 1
    clean_ours
    touch "$stage/.built"
  fi
  echo "$stage"
}
