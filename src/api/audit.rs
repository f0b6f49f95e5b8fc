//! memory_history and memory_export (docs/api.md; docs/design.md "History"): what happened to a memory, and
//! everything a tenant has.

use crate::error::{OrRaise, SpiOk};
use crate::pg::json::Json;
use crate::pg::{spi, tenant};
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
    let tenant = tenant::current();
    let rows = Spi::connect(|c| {
        c.select(
            "SELECT event, old_ref, new_ref, actor, meta, ts FROM memory.history
             WHERE memory_id = $1 AND ($2::text IS NULL OR user_id = $2) ORDER BY ts DESC, id",
            None,
            &[id.to_string().into(), tenant.into()],
        )?
        .map(|r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<String>(2)?,
                r.get::<String>(3)?,
                r.get::<String>(4)?,
                r.get::<Json>(5)?
                    .map(|j| JsonB(j.0))
                    .unwrap_or(JsonB(serde_json::json!({}))),
                r.get::<TimestampWithTimeZone>(6)?.unwrap_or_else(|| {
                    crate::error::raise(memory_core::SqlState::NoDataFound, "no timestamp", None)
                }),
            ))
        })
        .collect::<Result<Vec<_>, pgrx::spi::Error>>()
    })
    .spi("reading history");
    TableIterator::new(rows)
}

/// Everything the tenant has, as one JSON document: agents and their blocks, threads and their
/// messages, memories (without their vectors: the model is named, the text re-embeds), relations,
/// history, categories, allowlists, checkpoints and events. One jsonb value holds at most 256 MB
/// of JSON: beyond that, memory_export_rows streams the same content as rows.
#[pg_extern(stable, parallel_restricted)]
fn memory_export(user_id: Option<&str>) -> JsonB {
    let user = tenant::resolve(user_id);
    let doc = spi::one_opt::<Json>(
        include_str!("../../sql/queries/export.sql"),
        &[user.as_str().into()],
        "exporting",
    )
    .map_or_else(|| JsonB(serde_json::json!({})), |j| JsonB(j.0));
    doc
}

// memory_export_rows: the export as a stream of rows, for tenants whose export exceeds what one
// jsonb value can hold (sql/export.sql).
extension_sql_file!(
    "../../sql/export.sql",
    name = "export",
    requires = ["checkpoints"]
);
