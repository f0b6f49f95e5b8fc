//! Consent (docs/api.md "Consent"): the user's decisions on inferred changes to sensitive
//! fields. `memory_proposals` is PL/pgSQL (sql/consent.sql); the decisions are in
//! src/ops/consent.rs, and an approved proposal is written by src/ops/write.rs.

use crate::error::OrRaise;
use crate::ops::consent as ops;
use memory_core::validate;
use pgrx::prelude::*;
use pgrx::JsonB;

/// Approves a pending proposal: its memory is written (through memory_write's path) and the
/// decision recorded. `{proposal_id, status, memory_id, event, superseded}`. P0002 unknown;
/// 22023 decided already or expired.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_approve(id: Option<pgrx::Uuid>) -> JsonB {
    let id = validate::required("id", id.as_ref()).or_raise().to_string();
    JsonB(crate::ops::write::approve(&id, None))
}

/// Rejects a pending proposal: nothing is written; the decision is recorded.
/// `{proposal_id, status}`. P0002 unknown; 22023 decided already or expired.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_reject(id: Option<pgrx::Uuid>) -> JsonB {
    let id = validate::required("id", id.as_ref()).or_raise().to_string();
    JsonB(ops::reject(&id, None))
}
