//! Lifecycle (docs/api.md "Lifecycle", docs/design.md "TTL and soft delete"): forget, restore,
//! the TTL sweep and the purge. The work is in src/ops/lifecycle.rs; the worker runs the
//! sweep and the purge, and any scheduler (pg_cron) can call them instead.

use crate::error::OrRaise;
use crate::ops::lifecycle as ops;
use memory_core::validate;
use pgrx::prelude::*;
use pgrx::JsonB;

/// User-initiated delete: soft-deleted now (retrieval stops returning it at once), purged
/// `memory_ext.purge_after_days` later; `memory_restore` undoes it until then. With `hard`,
/// purged at once: the memory and every copy of what it said are gone (sql/triggers.sql,
/// memory._erase_copies), and nothing can restore it.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_forget(id: Option<pgrx::Uuid>, hard: default!(Option<bool>, false)) -> JsonB {
    let id = validate::required("id", id.as_ref()).or_raise().to_string();
    JsonB(ops::forget(&id, hard.unwrap_or(false)))
}

/// Back to active, `purge_at` cleared: undoes a forget, a TTL expiry or a merge (the merged-away
/// memory returns; the survivor keeps what it absorbed).
#[pg_extern(volatile, parallel_unsafe)]
fn memory_restore(id: Option<pgrx::Uuid>) -> JsonB {
    let id = validate::required("id", id.as_ref()).or_raise().to_string();
    JsonB(ops::restore(&id))
}

/// Soft-deletes what nobody retrieved for `memory_ext.ttl_days`, unless pinned or of importance
/// `memory_ext.ttl_min_importance` or more; returns how many. Covers the current tenant when one
/// is set, else every tenant the caller may see.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_ttl_sweep() -> i64 {
    ops::ttl_sweep_current()
}

/// Removes soft-deleted memories whose `purge_at` has passed; returns how many. History keeps
/// a PURGE event for each; threads get no new change-log entry (they already saw it go).
/// Consolidation fingerprints past their 14 days and usage rows older than a week go too.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_purge() -> i64 {
    ops::purge_current()
}
