//! memory_configure (docs/api.md "Categories and allowlists"): a tenant's categories and agent
//! allowlists. The document is checked by `memory_core::config`, written by
//! src/ops/config.rs.

use crate::error::OrRaise;
use crate::gucs;
use crate::ops::config as ops;
use crate::pg::json::Json;
use memory_core::{config, validate};
use pgrx::prelude::*;
use pgrx::JsonB;

/// `{"categories": [...], "allowlists": {...}}`. Categories are docs/design.md's YAML as JSON: either a
/// list of `{"name", "context": "all"|"rag", "rag_length"}` or `{"system": [...], "custom": [...]}`;
/// allowlists map an agent to its category names. Optional `"user_id"` (else the current tenant).
/// Replaces the tenant's previous configuration atomically; returns the counts.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_configure(config: Option<Json>) -> JsonB {
    let Json(cfg) = validate::required("config", config.as_ref()).or_raise();
    let cfg = config::parse(cfg, gucs::max_categories()).or_raise();
    JsonB(ops::configure(&cfg))
}
