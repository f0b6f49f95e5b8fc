//! Erasure (docs/operations.md "Privacy"): `memory_erase_tenant` removes everything a tenant has
//! from every table of schema memory in one transaction and returns the receipt the erasure
//! leaves in `memory.erasures` (sql/erase.sql does the work). What a single purge erases is in
//! sql/triggers.sql (`memory._erase_copies`).

use crate::error::raise;
use crate::gucs;
use crate::pg::json::JsonText;
use crate::pg::{owner, spi, tenant};
use memory_core::SqlState;
use serde_json::Value;

/// The advisory lock that keeps the worker and an erasure of one tenant apart (with the hash of
/// the tenant as its second key; a collision between two tenants only makes one wait).
///
/// # Why
/// The worker writes a tenant's rows in transactions of its own (extraction, run ends,
/// consolidation, roll-ups). An erasure that ran beside one deadlocked with it, or failed on
/// rows the worker committed after the erasure had deleted the tables they hang from, and rolled
/// back whole. Now the erasure takes this lock first, exclusively: it waits for the worker's
/// work in flight for that tenant to commit, then erases it all; the worker takes it shared,
/// without waiting, and leaves the tenant alone when an erasure holds it.
const ERASURE_LOCK: i32 = 7323;

/// The worker's hold on tenant `user` for the rest of its transaction: false while an erasure
/// of the tenant is under way (the work is dropped: the erasure removes what it was for).
pub fn hold_tenant(user: &str) -> bool {
    spi::one_opt::<bool>(
        "SELECT pg_try_advisory_xact_lock_shared($1, hashtext($2))",
        &[ERASURE_LOCK.into(), user.into()],
        "holding a tenant for the worker",
    )
    .unwrap_or(false)
}

/// Erases tenant `user` for `reason`. The operator (superuser, the extension's owner or a member
/// of its role) may erase any tenant; a tenant may erase itself when `memory_ext.self_erase` is
/// on (a setting only a superuser can change).
pub fn tenant(user: &str, reason: &str) -> Value {
    let own = tenant::current().as_deref() == Some(user);
    let allowed = owner::caller_is_owner() || (own && gucs::self_erase());
    if !allowed {
        raise(
            SqlState::InsufficientPrivilege,
            format!("permission denied to erase tenant {user:?}"),
            Some(
                if own {
                    "a tenant may erase itself only when memory_ext.self_erase is on"
                } else {
                    "erasing a tenant is for the extension's owner or a superuser"
                }
                .to_string(),
            ),
        );
    }
    // On Citus this hands the session's tenant to the workers; each statement below names the
    // tenant, so it is routed to that tenant's shards.
    let _ = tenant::acting();
    // Work of the worker's in flight for this tenant commits first (ERASURE_LOCK says why).
    spi::run(
        "SELECT pg_advisory_xact_lock($1, hashtext($2))",
        &[ERASURE_LOCK.into(), user.into()],
        "waiting for the worker's work on the tenant",
    );
    owner::as_owner(|| {
        spi::one_opt::<JsonText>(
            "SELECT memory._erase_tenant($1, $2)",
            &[user.into(), reason.into()],
            "erasing a tenant",
        )
    })
    .map(|j| j.value())
    .unwrap_or(Value::Null)
}
