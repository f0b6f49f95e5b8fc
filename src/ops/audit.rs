//! memory_history and memory_export (docs/api.md; docs/design.md "History"): what happened to a
//! memory, and everything a tenant has.

use crate::error::raise;
use crate::pg::json::JsonText;
use crate::pg::{spi, tenant};
use memory_core::SqlState;
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::json;

/// A history row: event, old_ref, new_ref, actor, meta, ts.
pub type Event = (
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    JsonB,
    TimestampWithTimeZone,
);

/// A memory's (or block's, file's, message's) events, newest first, within the current tenant
/// when one is set.
pub fn history(id: &str) -> Vec<Event> {
    spi::rows(
        include_str!("../../sql/queries/audit_history.sql"),
        &[id.into(), tenant::acting().into()],
        "reading history",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<String>(2)?,
                r.get::<String>(3)?,
                r.get::<String>(4)?,
                r.get::<JsonText>(5)?
                    .map(|j| JsonB(j.value()))
                    .unwrap_or(JsonB(json!({}))),
                r.get::<TimestampWithTimeZone>(6)?
                    .unwrap_or_else(|| raise(SqlState::NoDataFound, "no timestamp", None)),
            ))
        },
    )
}

/// Everything the tenant has, as one JSON document (sql/queries/audit_export.sql), passed
/// through as jsonb: a value no Rust reader could parse (written around the API by plain SQL)
/// is exported as stored instead of failing the whole export.
///
/// `format` rewrites it for another system (memory_core::import::export, docs/migrating.md
/// "Leaving"): `letta_af`, a Letta agent file; `mem0`, mem0's `get_all` answer.
pub fn export(user_id: Option<&str>, format: Option<&str>) -> JsonText {
    let user = tenant::resolve(user_id);
    let format = format.unwrap_or("memory_ext");
    if !["memory_ext", "letta_af", "mem0"].contains(&format) {
        crate::error::raise(
            memory_core::SqlState::InvalidParameterValue,
            format!(
                "unknown format \"{}\" (memory_ext, letta_af, mem0)",
                memory_core::names::shown(format)
            ),
            None,
        );
    }
    let doc = spi::one_opt::<JsonText>(
        include_str!("../../sql/queries/audit_export.sql"),
        &[user.as_str().into()],
        "exporting",
    )
    .unwrap_or_else(|| JsonText("{}".into()));
    let converted = match format {
        "letta_af" => memory_core::import::export::to_letta(&doc.value()),
        "mem0" => memory_core::import::export::to_mem0(&doc.value(), &user),
        _ => return doc,
    };
    JsonText(converted.to_string())
}
