//! Erasure (docs/operations.md "Privacy"): `memory_erase_tenant`. The work is in
//! src/ops/erase.rs and sql/erase.sql.

use crate::error::OrRaise;
use crate::ops::erase as ops;
use memory_core::validate;
use pgrx::prelude::*;
use pgrx::JsonB;

/// Removes everything tenant `user_id` has from every memory_ext table, in one transaction, and
/// returns the receipt (the tenant's id hashed, who, when, why, rows per table; no content),
/// which stays in `memory.erasures`.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_erase_tenant(user_id: Option<&str>, reason: Option<&str>) -> JsonB {
    let user = validate::text("user_id", user_id).or_raise();
    let reason = validate::text("reason", reason).or_raise();
    if user.trim().is_empty() || reason.trim().is_empty() {
        crate::error::raise(
            memory_core::SqlState::InvalidParameterValue,
            "user_id and reason must not be empty",
            None,
        );
    }
    JsonB(ops::tenant(user, reason))
}
