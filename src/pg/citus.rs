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

/// The body of every `*_for` form (`memory_query_for`, `memory_write_for`, ...; docs/citus.md
/// "One round trip"): `f` acting for `user_id` as [`tenant::scoped`] rules (the session's own
/// tenant when one is set, which `user_id` must then be: 42501 otherwise).
///
/// # Why the forms exist
/// memory_citus_distribute makes them Citus distributed functions by `user_id`, so that Citus
/// sends a call that names a tenant to that tenant's worker as one statement, where it runs
/// wholly (its statements reach the local shards), instead of one round trip from the
/// coordinator per statement. They are strict because Citus 13.2.2 crashes the coordinator
/// (SIGSEGV) on a call of a distributed function whose distribution argument is NULL: a strict
/// function with a NULL argument is folded to NULL by the planner before Citus looks at it.
/// The functions with an optional `user_id` (message_append) cannot be distributed for that
/// reason.
///
/// # Why custom plans on a Citus node
/// A delegated call's statements run through Citus's local execution on the worker, and there a
/// statement whose kept plan is generic made the backend that serves the coordinator's
/// connection grow by about 48 kB a call and never give it back (memory_query, 5,000 calls:
/// 283 to 475 MB; with custom plans, 238 to 242 MB). sql/citus.sql plans the trigger functions
/// per call on Citus nodes for the same reason.
///
/// [`tenant::scoped`]: crate::pg::tenant::scoped
pub fn routed<R>(user_id: &str, f: impl FnOnce() -> R) -> R {
    let call = || crate::pg::tenant::scoped(Some(user_id), |_| f());
    if present() {
        return crate::pg::spi::with_custom_plan(call);
    }
    call()
}
