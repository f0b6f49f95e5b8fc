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
