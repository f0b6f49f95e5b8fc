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
