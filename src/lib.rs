//! memory_ext: long-term memory for AI agents inside PostgreSQL.
//!
//! Layout (docs/architecture.md): `api/` declares the SQL functions, `ops/` does each
//! feature's Postgres-side work for them and for `worker/` (the background worker), `embed/`
//! holds embeddings (model, write path, backfill), `pg/` the Postgres glue (SPI, tenancy,
//! lookups, events), `gucs.rs` every setting, `error.rs` the SQLSTATE boundary, `ddl.rs` the
//! DDL files of `sql/`; the logic that needs no Postgres is in `crates/memory_core`.

use pgrx::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

mod api;
mod ddl;
mod embed;
mod error;
mod gucs;
mod ops;
mod pg;
mod worker;

::pgrx::pg_module_magic!(name, version);

/// Schema `memory` (tables and internal helpers). sql/schema.sql creates it; pgrx needs this
/// declaration to place `#[pg_extern(schema = "memory")]` functions in it.
#[pg_schema]
mod memory {}

/// Whether `_PG_init` has run in this process.
///
/// # Why a guard
/// Postgres calls `_PG_init` again when the library file was replaced on disk after this
/// process loaded it (a reinstall while a server runs): it sees a new inode, asks `dlopen`
/// for the same path, gets back the copy already mapped, and initialises it a second time.
/// The second run would redefine every setting (an ERROR in the middle of whatever statement
/// loaded the function) and register hooks twice; the library is already initialised, so it
/// has nothing to do.
static INITIALISED: AtomicBool = AtomicBool::new(false);

#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    if INITIALISED.swap(true, Ordering::SeqCst) {
        return;
    }
    error::no_backtraces();
    gucs::init();
    worker::register();
    embed::preload::in_postmaster();
}

/// Required by `cargo pgrx test`.
#[cfg(test)]
pub mod pg_test {
    pub fn setup(_options: Vec<&str>) {}

    #[must_use]
    pub fn postgresql_conf_options() -> Vec<&'static str> {
        vec![]
    }
}
