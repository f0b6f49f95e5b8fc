//! memory_history and memory_export (docs/api.md; docs/design.md "History"): what happened to a
//! memory, and everything a tenant has. The work is in src/ops/audit.rs.

use crate::error::OrRaise;
use crate::ops::audit as ops;
use memory_core::validate;
use pgrx::prelude::*;
use pgrx::JsonB;

/// A memory's (or block's) events, newest first.
#[pg_extern(stable, parallel_restricted)]
#[allow(clippy::type_complexity)]
fn memory_history(
    memory_id: Option<pgrx::Uuid>,
) -> TableIterator<
    'static,
    (
        name!(event, String),
        name!(old_ref, Option<String>),
        name!(new_ref, Option<String>),
        name!(actor, Option<String>),
        name!(meta, JsonB),
        name!(ts, TimestampWithTimeZone),
    ),
> {
    let id = validate::required("memory_id", memory_id.as_ref()).or_raise();
    TableIterator::new(ops::history(&id.to_string()))
}

/// Everything the tenant has, as one JSON document: agents and their blocks, threads and their
/// messages, memories (without their vectors: the model is named, the text re-embeds), relations,
/// history, categories, allowlists, checkpoints and events. One jsonb value holds at most 256 MB
/// of JSON: beyond that, memory_export_rows (sql/audit.sql) streams the same content as rows.
/// `format` 'letta_af' or 'mem0' writes it as those systems read it (docs/migrating.md).
#[pg_extern(stable, parallel_restricted)]
fn memory_export(
    user_id: Option<&str>,
    format: default!(Option<&str>, "'memory_ext'"),
) -> crate::pg::json::JsonText {
    ops::export(user_id, format)
}
