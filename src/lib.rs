//! memory_ext: long-term memory for AI agents inside PostgreSQL.
//!
//! Layout: `api/` is the SQL contract, `pg/` the Postgres glue (tenancy, lookups), `embed/` the
//! configured embedding provider, `worker/` the background worker, `gucs.rs` every setting,
//! `error.rs` the SQLSTATE boundary; the logic that needs no Postgres is in
//! `crates/memory_core`. DDL is in `sql/`.

use pgrx::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

mod api;
mod embed;
mod error;
mod gucs;
mod pg;
mod worker;

::pgrx::pg_module_magic!(name, version);

extension_sql_file!("../sql/schema.sql", name = "schema", bootstrap);
extension_sql_file!(
    "../sql/triggers.sql",
    name = "triggers",
    requires = ["schema"]
);
extension_sql_file!(
    "../sql/embeddings.sql",
    name = "embeddings",
    requires = ["schema"]
);
extension_sql_file!(
    "../sql/retrieval.sql",
    name = "retrieval",
    requires = ["schema"]
);
extension_sql_file!(
    "../sql/lifecycle.sql",
    name = "lifecycle",
    requires = ["schema"]
);
extension_sql_file!("../sql/worker.sql", name = "worker", requires = ["schema"]);
extension_sql_file!(
    "../sql/backup.sql",
    name = "backup",
    requires = ["schema", "embeddings", "retrieval", "lifecycle", "worker"]
);
extension_sql_file!("../sql/security.sql", name = "security", finalize);

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
