//! Running a piece of the extension's own work with the extension owner's rights.
//!
//! Some bookkeeping enforces what the operator decided, so a tenant must not be able to write
//! it even through plain SQL: the embedding-model registry (which models get an HNSW index on
//! every write), the consolidation budget (LLM calls per tenant per day) and its fingerprints.
//! Those tables and functions carry no grants for PUBLIC (sql/security.sql); the extension's
//! own code reaches them through [`as_owner`], the way a `SECURITY DEFINER` function would.

use pgrx::prelude::*;
use pgrx::PgTryBuilder;
use std::cell::Cell;
use std::panic::AssertUnwindSafe;

thread_local! {
    /// The extension owner's OID, read once per backend (ALTER EXTENSION ... OWNER is rare
    /// enough that a new session picking it up is fine).
    static OWNER: Cell<Option<pg_sys::Oid>> = const { Cell::new(None) };
}

fn owner() -> pg_sys::Oid {
    if let Some(o) = OWNER.get() {
        return o;
    }
    let o = Spi::get_one::<pg_sys::Oid>(
        "SELECT extowner FROM pg_catalog.pg_extension WHERE extname = 'memory_ext'",
    )
    .ok()
    .flatten()
    // SAFETY: BOOTSTRAP_SUPERUSERID is a constant; the extension row exists whenever one of
    // its functions runs, so this is only a fallback.
    .unwrap_or(pg_sys::Oid::from(pg_sys::BOOTSTRAP_SUPERUSERID));
    OWNER.set(Some(o));
    o
}

/// Runs `f` as the extension's owner, as `SECURITY DEFINER` does: the current user changes
/// (with `SECURITY_LOCAL_USERID_CHANGE`, so `SET ROLE` inside is refused) and is put back
/// afterwards on both paths. An error inside `f` aborts the (sub)transaction, whose abort also
/// restores the user; the `finally` covers the normal return and a caught error.
pub fn as_owner<R>(f: impl FnOnce() -> R) -> R {
    let owner = owner();
    let (mut prev_user, mut prev_ctx) = (pg_sys::InvalidOid, 0);
    // SAFETY: plain reads and writes of the backend's current-user state, on the backend's own
    // thread inside a transaction, exactly as fmgr_security_definer does around a call.
    unsafe {
        pg_sys::GetUserIdAndSecContext(&mut prev_user, &mut prev_ctx);
        pg_sys::SetUserIdAndSecContext(
            owner,
            prev_ctx | pg_sys::SECURITY_LOCAL_USERID_CHANGE as i32,
        );
    }
    PgTryBuilder::new(AssertUnwindSafe(f))
        .finally(move || {
            // SAFETY: as above; restores what was read before the call.
            unsafe { pg_sys::SetUserIdAndSecContext(prev_user, prev_ctx) }
        })
        .execute()
}

/// Whether the extension's owner reads past row-level security: a superuser or a BYPASSRLS role
/// (the owner of an extension a superuser installed). A search reads its keyword candidates
/// as the owner only then (sql/queries/search_memories_lexical.sql); an owner the policies
/// bind would see rows as its own tenant, not the caller's.
pub fn bypasses_rls() -> bool {
    bypasses(owner())
}

/// Whether the caller itself reads past row-level security: its statements need no detour
/// through the owner (sql/queries/search_memories_lexical.sql).
pub fn caller_bypasses_rls() -> bool {
    // SAFETY: GetUserId reads the backend's current role inside a transaction.
    bypasses(unsafe { pg_sys::GetUserId() })
}

/// A superuser or a BYPASSRLS role (Postgres' own test, which counts superusers).
fn bypasses(role: pg_sys::Oid) -> bool {
    // SAFETY: a read of the role cache inside a transaction.
    unsafe { pg_sys::has_bypassrls_privilege(role) }
}

/// Whether the caller acts with the owner's rights anyway: a superuser, the extension's owner or
/// a member of its role. What only the operator may do (erasing a tenant) asks this.
pub fn caller_is_owner() -> bool {
    // SAFETY: plain reads of the current role and the role cache inside a transaction.
    unsafe { pg_sys::superuser() || pg_sys::has_privs_of_role(pg_sys::GetUserId(), owner()) }
}
