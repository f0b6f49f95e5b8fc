//! Citus (docs/citus.md): whether this database is part of a Citus cluster. The statements are
//! the same with and without it; only how some of them are planned differs.

use pgrx::pg_sys;

/// True when the citus extension is installed in this database. A syscache lookup (no SPI), so
/// cheap enough to ask before every retrieval.
pub fn present() -> bool {
    // SAFETY: get_extension_oid reads the catalog by name; missing_ok = true returns InvalidOid
    // instead of raising.
    unsafe { pg_sys::get_extension_oid(c"citus".as_ptr(), true) != pg_sys::InvalidOid }
}

/// Whether `table` (schema-qualified) is ready for statements that join it with the other
/// tenant tables: always on one node; on Citus once it is distributed. A table a release adds
/// is local on the coordinator until `memory_citus_distribute()` runs after the update
/// (docs/citus.md "Upgrade a cluster"): a worker job that joined it with a distributed table
/// in between failed ("direct joins between distributed and local tables"), and one that held
/// it while memory_citus_distribute waited for the distributed table deadlocked with it.
pub fn distributed(table: &str) -> bool {
    if !present() {
        return true;
    }
    crate::pg::spi::one_opt::<bool>(
        "SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = to_regclass($1))",
        &[table.into()],
        "asking Citus whether a table is distributed",
    )
    .unwrap_or(false)
}
