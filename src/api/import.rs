//! Import (docs/api.md "Import"): `memory_import`. The work is in src/ops/import.rs and
//! sql/import.sql; the formats of other systems are memory_core::import's.

use crate::error::OrRaise;
use crate::ops::import as ops;
use crate::pg::json::Json;
use memory_core::validate;
use pgrx::prelude::*;
use pgrx::JsonB;

/// Brings a document into the tenant (the current one, or `options.remap.user_id`): memory_ext's
/// own export, mem0's memories or a Letta agent file (`options.format`, else told from the
/// document). `{user_id, format, inserted, skipped, notes}`. Importing it again changes nothing.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_import(document: Option<Json>, options: default!(Option<Json>, "'{}'")) -> JsonB {
    let Json(doc) = validate::required("document", document.as_ref()).or_raise();
    let opts = options.map(|Json(v)| v).unwrap_or(serde_json::json!({}));
    JsonB(ops::import(doc, &opts))
}
